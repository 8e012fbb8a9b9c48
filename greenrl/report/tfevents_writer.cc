#include "greenrl/report/tfevents_writer.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "greenrl/report/tfevents.pb.h"

namespace greenrl::report {

namespace {

// Byte-at-a-time table for the reflected Castagnoli polynomial.
std::array<uint32_t, 256> MakeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

double SystemUnixTimeS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

void PutLittleEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}

}  // namespace

uint32_t Crc32c(const void* data, size_t n) {
  static const std::array<uint32_t, 256> kTable = MakeCrc32cTable();
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) crc = kTable[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::string TfEventsFileName(double unix_time_s, const std::string& hostname) {
  return "events.out.tfevents." + std::to_string(static_cast<int64_t>(unix_time_s)) + "." +
         hostname;
}

TfEventsWriter::TfEventsWriter(const std::string& dir, std::function<double()> unix_time_s)
    : unix_time_s_(unix_time_s ? std::move(unix_time_s) : SystemUnixTimeS) {
  const double now_s = unix_time_s_();
  // A new file, never an earlier one: a run resumed within the same second as its previous
  // segment started gets the name with ".1" (".2", ...) appended, which sorts after it.
  const std::string base = dir + "/" + TfEventsFileName(now_s, Hostname());
  for (int k = 0; file_ == nullptr; ++k) {
    path_ = k == 0 ? base : base + "." + std::to_string(k);
    file_ = std::fopen(path_.c_str(), "wbx");  // C11 "x": fails with EEXIST if it exists
    if (file_ == nullptr && errno != EEXIST) break;
  }
  if (file_ == nullptr) {
    throw std::runtime_error("cannot create '" + path_ + "': " + std::strerror(errno));
  }
  tfevents::Event event;
  event.set_wall_time(now_s);
  event.set_file_version("brain.Event:2");
  WriteRecord(event.SerializeAsString());
}

TfEventsWriter::~TfEventsWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TfEventsWriter::WriteRow(const std::vector<std::pair<std::string, double>>& row) {
  tfevents::Event event;
  event.set_wall_time(unix_time_s_());
  tfevents::Summary* summary = event.mutable_summary();
  for (const auto& [key, value] : row) {
    if (key == "global_step") {
      event.set_step(static_cast<int64_t>(value));
      continue;
    }
    if (!std::isfinite(value)) continue;
    tfevents::Summary::Value* v = summary->add_value();
    v->set_tag(key);
    v->set_simple_value(static_cast<float>(value));
  }
  WriteRecord(event.SerializeAsString());
}

void TfEventsWriter::WriteRestart(int64_t step) {
  tfevents::Event event;
  event.set_wall_time(unix_time_s_());
  event.set_step(step);
  event.mutable_session_log()->set_status(tfevents::SessionLog::START);
  WriteRecord(event.SerializeAsString());
}

void TfEventsWriter::WriteRecord(const std::string& data) {
  std::string header;
  PutLittleEndian(data.size(), 8, &header);
  PutLittleEndian(MaskCrc32c(Crc32c(header.data(), 8)), 4, &header);
  std::string footer;
  PutLittleEndian(MaskCrc32c(Crc32c(data.data(), data.size())), 4, &footer);
  const std::string record = header + data + footer;
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    throw std::runtime_error("cannot write '" + path_ + "': " + std::strerror(errno));
  }
}

}  // namespace greenrl::report
