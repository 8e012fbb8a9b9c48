#include "greenrl/report/monitor_csv.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "greenrl/core/atomic_file.h"

namespace greenrl::report {
namespace {

// SB3's header, spaced as Python's json.dumps writes it: a '#' and a JSON object, then the CSV
// column names.
std::string Header(const std::string& env_id, double t_start) {
  return fmt::format("#{{\"t_start\": {}, \"env_id\": {}}}\nr,l,t\n", t_start,
                     nlohmann::json(env_id).dump());
}

// Python's round(x, 6) as text: at most 6 decimals, shortest form.
std::string Round6(double x) { return fmt::format("{}", std::round(x * 1e6) / 1e6); }

std::FILE* OpenOrThrow(const std::string& path, const char* mode) {
  std::FILE* file = std::fopen(path.c_str(), mode);
  if (file == nullptr) {
    throw std::runtime_error("cannot open '" + path + "' for writing: " + std::strerror(errno));
  }
  return file;
}

// `text` without the spaces around it and a '\r' at its end (a file saved with CRLF rows, as
// Python's csv module writes them).
std::string Trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// An episode row as WriteEpisode writes it: three numbers, return, length and time (spaces
// around a cell are allowed, as pandas reads them).
bool IsEpisodeRow(const std::string& line) {
  if (std::count(line.begin(), line.end(), ',') != 2) return false;
  std::istringstream cells(line);
  std::string cell;
  while (std::getline(cells, cell, ',')) {
    cell = Trimmed(cell);
    char* end = nullptr;
    std::strtod(cell.c_str(), &end);
    if (cell.empty() || end != cell.c_str() + cell.size()) return false;
  }
  return true;
}

// `path`.damaged, or the first of `path`.damaged.1, .2, ... that does not exist: an earlier
// damaged file kept there is not replaced.
std::string FreeDamagedName(const std::string& path) {
  std::error_code ec;
  std::string name = path + ".damaged";
  for (int k = 1; std::filesystem::exists(name, ec); ++k) {
    name = path + ".damaged." + std::to_string(k);
  }
  return name;
}

}  // namespace

MonitorCsv::MonitorCsv(const std::string& path, std::FILE* file, double t_start)
    : path_(path), file_(file), t_start_(t_start) {}

MonitorCsv::~MonitorCsv() {
  if (file_ == nullptr) return;
  try {
    Flush();  // rows of a run that ends on an exception, as far as they can be written
  } catch (const std::exception&) {
  }
  std::fclose(file_);
}

std::unique_ptr<MonitorCsv> MonitorCsv::Create(const std::string& path, const std::string& env_id,
                                               double t_start_unix_s) {
  std::FILE* file = OpenOrThrow(path, "w");  // a new file: nothing to lose, as metrics.csv
  std::unique_ptr<MonitorCsv> monitor(new MonitorCsv(path, file, t_start_unix_s));
  AppendWhole(fileno(file), path, Header(env_id, t_start_unix_s));
  return monitor;
}

std::unique_ptr<MonitorCsv> MonitorCsv::Resume(const std::string& path, const std::string& env_id,
                                               int64_t rows, double t_start_unix_s,
                                               std::vector<std::string>* notes) {
  std::error_code ec;
  // Missing, or empty (nothing was written before the run stopped): nothing to keep.
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) {
    return Create(path, env_id, t_start_unix_s);
  }
  std::istringstream in(ReadFile(path));
  std::string meta, columns, line;
  double t_start = t_start_unix_s;
  bool sb3_header = std::getline(in, meta) && std::getline(in, columns);
  meta = Trimmed(meta);
  columns = Trimmed(columns);
  sb3_header = sb3_header && !meta.empty() && meta[0] == '#' && columns == "r,l,t";
  if (sb3_header) {
    try {
      t_start = nlohmann::json::parse(meta.substr(1)).at("t_start").get<double>();
    } catch (const std::exception&) {
      sb3_header = false;
    }
  }
  if (!sb3_header) {
    // Its rows cannot be kept without their t_start: the file stays beside, whole.
    const std::string aside = FreeDamagedName(path);
    std::filesystem::rename(path, aside, ec);
    if (ec) {
      throw std::runtime_error("cannot move '" + path + "' (no SB3 Monitor header) to '" + aside +
                               "': " + ec.message());
    }
    if (notes != nullptr) {
      notes->push_back(path +
                       " has no SB3 Monitor header (#{\"t_start\": ...} then r,l,t): kept "
                       "as " +
                       aside + "; a new one starts");
    }
    return Create(path, env_id, t_start_unix_s);
  }
  std::string kept = meta + "\n" + columns + "\n";
  std::vector<int64_t> damaged;  // line numbers (1-based) of rows that are not r,l,t numbers
  int64_t line_number = 2;
  int64_t kept_rows = 0;
  for (int64_t k = 0; k < rows && std::getline(in, line); ++k) {
    ++line_number;
    if (IsEpisodeRow(line)) {
      kept += Trimmed(line) + "\n";
      ++kept_rows;
    } else {
      damaged.push_back(line_number);  // a torn last line of a killed run, or a damaged one
    }
  }
  WriteFileAtomic(path, kept);
  if (notes != nullptr && !damaged.empty()) {
    notes->push_back(fmt::format("{}: dropped {} damaged row{} (line{} {}), not r,l,t numbers",
                                 path, damaged.size(), damaged.size() == 1 ? "" : "s",
                                 damaged.size() == 1 ? "" : "s", fmt::join(damaged, ", ")));
  }
  std::unique_ptr<MonitorCsv> monitor(new MonitorCsv(path, OpenOrThrow(path, "a"), t_start));
  monitor->rows_in_file_ = kept_rows;
  return monitor;
}

void MonitorCsv::WriteEpisode(double episode_return, int64_t episode_length, double end_unix_s) {
  pending_ += fmt::format("{},{},{}\n", Round6(episode_return), episode_length,
                          Round6(end_unix_s - t_start_));
  ++pending_rows_;
}

void MonitorCsv::Flush() {
  if (pending_.empty()) return;
  std::string rows;
  rows.swap(pending_);  // not written twice, even when this write fails
  const int64_t count = pending_rows_;
  pending_rows_ = 0;
  AppendWhole(fileno(file_), path_, rows);
  rows_in_file_ += count;
}

}  // namespace greenrl::report
