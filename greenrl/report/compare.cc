#include "greenrl/report/compare.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "greenrl/core/errors.h"
#include "greenrl/core/file_lock.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/energy/units.h"
#include "greenrl/report/run_report.h"

namespace greenrl::report {

namespace fs = std::filesystem;

namespace {

using energy::kJoulesPerWh;

[[noreturn]] void BadRunDir(const std::string& dir, const std::string& what) {
  throw ConfigError("RUN_DIR", dir, "a run directory written by `greenrl train` (" + what + ")");
}

double NumberOr(const nlohmann::json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// A Markdown table cell: '|' would end the cell and a line break the row; '<' and '&' would
// start HTML, which GitHub's Markdown renders (a run directory named "<b>").
std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      case '<':
        out += "&lt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Whether a `greenrl train` process holds `dir`'s train.lock now (train/checkpointing.h
// RunDirLock: flock on <run_dir>/train.lock, dropped by the kernel when the holder ends): a shared
// flock that would block means the run is still training. Nothing is created or written.
bool TrainingNow(const std::string& dir) { return FileLockHeld(dir + "/train.lock"); }

std::string Cell(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("n/a");
}

}  // namespace

std::string FormatSeconds(double seconds) {
  if (!(seconds > 0.0) || !std::isfinite(seconds)) return fmt::format("{:.1f}", seconds);
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(seconds))), 1, 9);
  return fmt::format("{:.{}f}", seconds, decimals);  // 3 significant digits, zeros kept
}

std::string CarbonCell(const ComparisonRow& row) {
  return row.g_co2e ? FormatAmount(*row.g_co2e) : std::string("n/a");
}

std::string CarbonBasisCell(const ComparisonRow& row) {
  return row.carbon_basis.empty() ? std::string("n/a") : row.carbon_basis;
}

std::string FormatAmount(double value) {
  int decimals = 4;
  if (value != 0.0 && std::isfinite(value)) {
    decimals = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(value)))), 4, 12);
  }
  return fmt::format("{:.{}f}", value, decimals);
}

int RunData::MetricsColumn(const std::string& column) const {
  for (size_t c = 0; c < metrics_header.size(); ++c) {
    if (metrics_header[c] == column) return static_cast<int>(c);
  }
  return -1;
}

namespace {
// A run killed before it wrote energy.json (SIGKILL, a crash, a lost node): energy.json's fields
// from what it left, its last metrics.csv row (global_step, time_s, energy/total_wh,
// carbon/g_co2e, all written as it went) and config.yaml (algo, env_id, seed), with "killed".
// header, rows: metrics.csv as LoadRun read it; read_error: why it did not read ("" when it did).
// Errors: as LoadRun's, naming what is missing.
nlohmann::json KilledRunJson(const std::string& dir, const std::vector<std::string>& header,
                             const std::vector<std::vector<double>>& rows,
                             const std::string& read_error) {
  if (!read_error.empty()) BadRunDir(dir, "metrics.csv is malformed: " + read_error);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() || rows.empty() ? NAN : rows.back()[it - header.begin()];
  };
  const double step = column("global_step"), time_s = column("time_s"),
               wh = column("energy/total_wh");
  if (!std::isfinite(step) || !std::isfinite(time_s) || !std::isfinite(wh)) {
    BadRunDir(dir,
              "energy.json is missing and metrics.csv has no row with global_step, time_s and "
              "energy/total_wh: did the run start?");
  }
  nlohmann::json j;
  YAML::Node config;
  try {
    config = YAML::LoadFile(dir + "/config.yaml");
    j["algo"] = config["algo"].as<std::string>();
    j["env_id"] = config["env_id"].as<std::string>();
    j["seed"] = config["seed"].as<uint64_t>();
  } catch (const std::exception& e) {  // missing file or key, not YAML
    BadRunDir(dir,
              std::string("energy.json is missing and config.yaml is unreadable: ") + e.what());
  }
  j["steps"] = static_cast<int64_t>(step);
  j["wall_time_s"] = time_s;
  j["total_energy_wh"] = wh;
  if (std::isfinite(column("carbon/g_co2e"))) {
    j["carbon"] = {{"kg_co2e", column("carbon/g_co2e") / 1000.0}};
    // What it was priced at, from config.yaml's carbon keys as the run read them (a time series
    // is left unsaid: its mean needs the energy's times).
    try {
      const YAML::Node carbon = config["carbon"];
      if (carbon && carbon["intensity_csv"].as<std::string>("").empty()) {
        energy::CarbonOptions options;
        options.region = carbon["region"].as<std::string>("");
        options.pue = carbon["pue"].as<double>(energy::kDefaultPue);
        const std::string intensity = carbon["intensity_g_per_kwh"].as<std::string>("auto");
        if (intensity != "auto") options.intensity_g_per_kwh = std::stod(intensity);
        const energy::CarbonResult c = energy::ComputeCarbon(wh * kJoulesPerWh, options);
        j["carbon"].update({{"pue", c.pue},
                            {"intensity_g_per_kwh", c.intensity_g_per_kwh},
                            {"region", c.region},
                            {"intensity_source", c.intensity_source},
                            {"intensity_is_default", c.intensity_is_default}});
      }
    } catch (const std::exception&) {  // an older or hand-made config.yaml: the figure alone
    }
  }
  j["killed"] = true;
  return j;
}
}  // namespace

RunData LoadRun(const std::string& dir) {
  if (!fs::is_directory(dir)) BadRunDir(dir, "it is not a directory");
  const std::string energy_path = dir + "/energy.json";
  const std::string metrics_path = dir + "/metrics.csv";
  if (!fs::exists(metrics_path)) {
    BadRunDir(dir, fs::exists(energy_path) ? "metrics.csv is missing"
                                           : "energy.json and metrics.csv are missing");
  }
  for (const std::string& path : {metrics_path, energy_path}) {
    if (fs::exists(path) && !fs::is_regular_file(path)) {
      BadRunDir(dir, fs::path(path).filename().string() + " is not a file");
    }
  }
  // A run still training: its figures so far (its rows, or the earlier segment's energy.json
  // where a resumed one has none yet), said as "running" rather than as a killed run's.
  const bool training_now = TrainingNow(dir);
  // metrics.csv, read once: a killed run's figures, and the run's curves.
  std::vector<std::string> metrics_header;
  std::vector<std::vector<double>> metrics_rows;
  std::string metrics_error;
  try {
    std::tie(metrics_header, metrics_rows) = ReadMetricsCsv(metrics_path);
  } catch (const std::exception& e) {  // std::stod on a malformed cell, unreadable file
    metrics_error = e.what();
  }
  nlohmann::json j;
  if (training_now && !fs::exists(energy_path) && metrics_rows.empty()) {
    BadRunDir(dir,
              "it is still starting: a `greenrl train` holds its train.lock and it has no "
              "metrics.csv row yet");
  }
  if (!fs::exists(energy_path)) {
    j = KilledRunJson(dir, metrics_header, metrics_rows, metrics_error);
  } else {
    std::ifstream in(energy_path);
    if (!in) BadRunDir(dir, "energy.json cannot be read: " + std::string(std::strerror(errno)));
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      BadRunDir(dir, std::string("energy.json is not valid JSON: ") + e.what());
    }
    // A resumed run killed before it wrote its own energy.json leaves the earlier segment's,
    // while metrics.csv goes on past it: the rows are the run's latest word, as for a run killed
    // in its first segment.
    if (j.is_object() && j.contains("steps") && j["steps"].is_number_integer() &&
        !metrics_rows.empty() && !metrics_header.empty() && metrics_header[0] == "global_step" &&
        metrics_rows.back()[0] > static_cast<double>(j["steps"].get<int64_t>())) {
      j = KilledRunJson(dir, metrics_header, metrics_rows, metrics_error);
    }
  }
  if (!j.is_object() || !j.contains("steps") || !j["steps"].is_number_integer() ||
      !j.contains("total_energy_wh") || !j["total_energy_wh"].is_number()) {
    BadRunDir(dir, "energy.json lacks steps or total_energy_wh");
  }
  RunData run;
  run.dir = dir;
  // The directory's own name, also for "." or "runs/a/" (the absolute path's last component).
  std::error_code ec;
  const fs::path absolute = fs::absolute(dir, ec);
  fs::path named = (ec ? fs::path(dir) : absolute).lexically_normal();
  if (named.filename().empty()) named = named.parent_path();
  run.name = named.filename().string();
  if (run.name.empty()) run.name = dir;
  run.algo = j.value("algo", "");
  run.env_id = j.value("env_id", "");
  run.seed = j.value("seed", uint64_t{0});
  run.steps = j["steps"].get<int64_t>();
  run.wall_time_s = NumberOr(j, "wall_time_s", 0.0);
  run.steps_per_s = run.wall_time_s > 0 ? static_cast<double>(run.steps) / run.wall_time_s : 0.0;
  run.energy_wh = j["total_energy_wh"].get<double>();
  if (j.contains("carbon") && j["carbon"].is_object()) {
    const auto& c = j["carbon"];
    if (c.contains("kg_co2e") && c["kg_co2e"].is_number()) {
      run.g_co2e = c["kg_co2e"].get<double>() * 1000.0;
    }
    if (c.contains("intensity_g_per_kwh") && c["intensity_g_per_kwh"].is_number() &&
        c.contains("pue") && c["pue"].is_number()) {
      // Where the intensity came from: a time series (its energy-weighted mean), an override
      // (carbon.intensity_g_per_kwh), the world default, or a region's figure.
      const std::string region = c.value("region", "");
      const std::string source = c.value("intensity_source", "");
      const std::string from = source.rfind("time series", 0) == 0      ? "time series"
                               : source.rfind("override", 0) == 0       ? "override"
                               : c.value("intensity_is_default", false) ? "world default"
                                                                        : region;
      run.carbon_basis =
          fmt::format("{:.4g} g/kWh, PUE {:g}", c["intensity_g_per_kwh"].get<double>(),
                      c["pue"].get<double>()) +
          (from.empty() ? "" : ", " + from);
    }
  }
  if (j.contains("eval_mean_return") && j["eval_mean_return"].is_number()) {
    run.eval_mean_return = j["eval_mean_return"].get<double>();
    if (j.contains("eval_std_return") && j["eval_std_return"].is_number()) {
      run.eval_std_return = j["eval_std_return"].get<double>();
    }
  }
  if (j.contains("domains") && j["domains"].is_object()) {
    std::set<std::string> kinds;
    for (const auto& [name, d] : j["domains"].items()) {
      if (d.is_object() && d.contains("provenance") && d["provenance"].is_string()) {
        kinds.insert(d["provenance"].get<std::string>());
      }
    }
    for (const std::string& kind : kinds) {
      run.energy_provenance += (run.energy_provenance.empty() ? "" : "+") + kind;
    }
  }
  if (j.contains("budget") && j["budget"].is_object() &&
      j["budget"].value("stopped_by_budget", false)) {
    run.unfinished = "budget stop";
  } else if (j.contains("eval_note") && j["eval_note"].is_string() &&
             j["eval_note"].get<std::string>().rfind("interrupted", 0) == 0) {
    run.unfinished = "interrupted";
  } else if (j.contains("failure") && j["failure"].is_string()) {
    run.unfinished = "failed";
    run.failed_note = j.value("eval_note", "failed: " + j["failure"].get<std::string>());
  } else if (j.value("killed", false)) {
    run.unfinished = "killed";
  }
  if (training_now) run.unfinished = "running";
  if (j.contains("trained_agent") && j["trained_agent"].is_object()) {
    const auto& agent = j["trained_agent"];
    run.trained_agent = agent.value("checkpoint", "");
    if (agent.contains("energy_wh") && agent["energy_wh"].is_number()) {
      run.trained_agent_wh = agent["energy_wh"].get<double>();
    }
  }
  if (j.contains("distributed") && j["distributed"].is_object()) {
    const auto& d = j["distributed"];
    run.world_size = static_cast<int>(NumberOr(d, "world_size", 1.0));
    run.launcher = d.value("launcher", "");
    run.rank0_allreduce_s = NumberOr(d, "rank0_allreduce_s", 0.0);
  }
  if (j.contains("windows") && j["windows"].is_object()) {
    for (const char* phase : {"rollout", "update", "eval", "checkpoint"}) {
      if (!j["windows"].contains(phase) || !j["windows"][phase].is_object()) continue;
      const auto& w = j["windows"][phase];
      run.phases.push_back({phase, static_cast<int64_t>(NumberOr(w, "count", 0.0)),
                            NumberOr(w, "duration_s", 0.0),
                            NumberOr(w, "total_energy_j", 0.0) / kJoulesPerWh});
    }
  }
  if (j.contains("unattributed") && j["unattributed"].is_object()) {
    run.phases.push_back({"unattributed", 0, 0.0,
                          NumberOr(j["unattributed"], "total_energy_j", 0.0) / kJoulesPerWh});
  }
  if (j.contains("budget") && j["budget"].is_object() && j["budget"].contains("events") &&
      j["budget"]["events"].is_array()) {
    for (const auto& e : j["budget"]["events"]) {
      if (!e.is_object()) continue;
      BudgetMark m;
      m.global_step = static_cast<int64_t>(NumberOr(e, "global_step", 0.0));
      m.time_s = NumberOr(e, "time_s", 0.0);
      m.energy_used_wh = NumberOr(e, "energy_used_j", 0.0) / kJoulesPerWh;
      m.action = e.value("action", "");
      m.taken = e.value("taken", true);
      m.reason = e.value("reason", "");
      run.budget_marks.push_back(std::move(m));
    }
  }
  try {
    if (!metrics_error.empty()) throw std::runtime_error(metrics_error);
    run.metrics_header = std::move(metrics_header);
    run.metrics_rows = std::move(metrics_rows);
    if (fs::exists(dir + "/power.csv")) {
      std::tie(run.power_header, run.power_rows) = ReadMetricsCsv(dir + "/power.csv");
    }
  } catch (const std::exception& e) {  // std::stod on a malformed cell, unreadable file
    BadRunDir(dir, std::string("metrics.csv or power.csv is malformed: ") + e.what());
  }
  // power.csv's time_s restarts at each resumed segment (it is the segment's clock): shift each
  // segment by the end of the ones before it, so the run's power reads against its run time.
  if (!run.power_header.empty() && run.power_header[0] == "time_s") {
    double offset = 0.0, previous = -1.0;
    for (auto& row : run.power_rows) {
      const double t = row[0];
      if (std::isfinite(t) && std::isfinite(previous) && previous >= 0.0 && t < previous) {
        offset += previous;
      }
      previous = t;
      row[0] = t + offset;
    }
  }
  // An empty metrics.csv is a run stopped before its first row (log_interval): no curves.
  if (!run.metrics_header.empty() && run.MetricsColumn("global_step") != 0) {
    BadRunDir(dir, "metrics.csv does not start with a global_step column");
  }
  return run;
}

void DistinguishNames(std::vector<RunData>* runs) {
  std::map<std::string, int> uses;
  for (const RunData& run : *runs) ++uses[run.name];
  for (RunData& run : *runs) {
    if (uses[run.name] > 1) {
      std::string path = fs::path(run.dir).lexically_normal().string();
      if (path.size() > 1 && path.back() == '/') path.pop_back();
      run.name = path;
    }
  }
}

std::string TargetLabel(const std::string& target_metric) {
  // "training return": the default rollout/ep_rew_mean, not the eval return column beside it.
  return target_metric == kTargetMetric ? std::string("training return") : target_metric;
}

void CheckTargetMetric(const std::vector<RunData>& runs, const std::string& target_metric) {
  for (const RunData& run : runs) {
    // A run without rows yet (stopped before its first, log_interval) has no column to check.
    if (run.metrics_header.empty() || run.MetricsColumn(target_metric) >= 0) continue;
    std::string columns;
    for (const std::string& c : run.metrics_header) columns += (columns.empty() ? "" : ", ") + c;
    throw ConfigError(
        "--target-metric", target_metric,
        "a metrics.csv column of every run; " + run.dir + "/metrics.csv has: " + columns);
  }
}

std::vector<ComparisonRow> CompareRuns(const std::vector<RunData>& runs,
                                       std::optional<double> target_return,
                                       const std::string& target_metric) {
  std::vector<ComparisonRow> out;
  for (const RunData& run : runs) {
    ComparisonRow row;
    row.name = run.name;
    row.algo = run.algo;
    row.env_id = run.env_id;
    row.steps = run.steps;
    row.wall_time_s = run.wall_time_s;
    row.steps_per_s = run.steps_per_s;
    row.energy_wh = run.energy_wh;
    row.g_co2e = run.g_co2e;
    row.carbon_basis = run.carbon_basis;
    row.eval_mean_return = run.eval_mean_return;
    row.eval_std_return = run.eval_std_return;
    row.energy_provenance = run.energy_provenance;
    row.unfinished = run.unfinished;
    row.trained_agent = run.trained_agent;
    row.trained_agent_wh = run.trained_agent_wh;
    row.failed_note = run.failed_note;
    row.world_size = run.world_size;
    row.launcher = run.launcher;
    row.rank0_allreduce_s = run.rank0_allreduce_s;
    const int ret = run.MetricsColumn(target_metric);
    const int wh = run.MetricsColumn("energy/total_wh");
    if (target_return && ret >= 0 && wh >= 0) {
      for (const auto& r : run.metrics_rows) {
        if (std::isfinite(r[ret]) && r[ret] >= *target_return) {
          row.wh_to_target = r[wh];
          row.steps_to_target = static_cast<int64_t>(r[0]);
          break;
        }
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string EvalReturnCell(const ComparisonRow& r) {
  if (r.eval_mean_return && r.eval_std_return) {
    return fmt::format("{:.2f} ± {:.2f}", *r.eval_mean_return, *r.eval_std_return);
  }
  if (r.eval_mean_return || r.unfinished.empty()) return Cell(r.eval_mean_return, "{:.2f}");
  return "n/a (" + r.unfinished + ")";
}

std::vector<std::string> TrainedAgentNotes(const std::vector<ComparisonRow>& rows) {
  std::vector<std::string> notes;
  for (const ComparisonRow& r : rows) {
    if (r.trained_agent.empty()) continue;
    std::string s = r.name + ": started from the trained agent " + r.trained_agent + ", ";
    s += r.trained_agent_wh
             ? fmt::format("whose training cost {} Wh before it ({} Wh with this run)",
                           FormatAmount(*r.trained_agent_wh),
                           FormatAmount(*r.trained_agent_wh + r.energy_wh))
             : std::string(
                   "whose training's energy is unknown (its run had not written "
                   "energy.json, and started from an agent itself or had no metrics.csv "
                   "row)");
    notes.push_back(s + "; the table counts this run alone");
  }
  return notes;
}

std::vector<std::string> DataParallelNotes(const std::vector<ComparisonRow>& rows) {
  std::vector<std::string> notes;
  for (const ComparisonRow& r : rows) {
    if (r.world_size <= 1) continue;
    notes.push_back(fmt::format(
        "{}: trained by {} data-parallel ranks{}; its Wh and g CO2e are all ranks', its wall "
        "time rank 0's, {} s of it in all-reduce (waiting for the other ranks included)",
        r.name, r.world_size, r.launcher.empty() ? "" : " (" + r.launcher + ")",
        FormatSeconds(r.rank0_allreduce_s)));
  }
  return notes;
}

std::vector<std::string> FailedRunNotes(const std::vector<ComparisonRow>& rows) {
  std::vector<std::string> notes;
  for (const ComparisonRow& r : rows) {
    if (r.unfinished == "failed" && !r.failed_note.empty()) {
      notes.push_back(r.name + ": " + r.failed_note);
    }
  }
  return notes;
}

std::string ProvenanceCell(const ComparisonRow& r) {
  return r.energy_provenance.empty() ? "n/a" : r.energy_provenance;
}

std::string FormatMarkdown(const std::vector<ComparisonRow>& rows,
                           std::optional<double> target_return, const std::string& target_metric) {
  std::string s =
      "| run | algo | env | steps | wall time (s) | steps/s | Wh | Wh metered as | g CO2e | "
      "g CO2e at | eval return |";
  std::string rule = "|---|---|---|---:|---:|---:|---:|---|---:|---|---:|";
  if (target_return) {
    const std::string label = Escape(TargetLabel(target_metric));
    s += fmt::format(" Wh to {} >= {:g} | steps to {} >= {:g} |", label, *target_return, label,
                     *target_return);
    rule += "---:|---:|";
  }
  s += "\n" + rule + "\n";
  for (const auto& r : rows) {
    s += fmt::format("| {} | {} | {} | {} | {} | {:.0f} | {} | {} | {} | {} | {} |", Escape(r.name),
                     Escape(r.algo), Escape(r.env_id), r.steps, FormatSeconds(r.wall_time_s),
                     r.steps_per_s, FormatAmount(r.energy_wh), Escape(ProvenanceCell(r)),
                     CarbonCell(r), Escape(CarbonBasisCell(r)), EvalReturnCell(r));
    if (target_return) {
      if (r.wh_to_target) {
        s += fmt::format(" {} | {} |", FormatAmount(*r.wh_to_target), *r.steps_to_target);
      } else {
        s += " not reached | not reached |";
      }
    }
    s += "\n";
  }
  std::vector<std::string> notes = TrainedAgentNotes(rows);
  for (std::string& note : DataParallelNotes(rows)) notes.push_back(std::move(note));
  for (std::string& note : FailedRunNotes(rows)) notes.push_back(std::move(note));
  if (!notes.empty()) s += "\n";
  for (const std::string& note : notes) s += "- " + note + "\n";
  return s;
}

}  // namespace greenrl::report
