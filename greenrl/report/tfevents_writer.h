// tfevents_writer.h: TensorBoard event files beside metrics.csv, so `tensorboard --logdir runs/`
// shows a greenrl run as it shows an SB3 or CleanRL one (../shared/DESIGN.md, "Run directory").
//
// Format (TensorFlow's TFRecord framing, tensorflow/core/lib/io/record_writer.cc): each record is
//   uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data |
//   uint32 masked_crc32c(data)
// and each record's data is a serialized Event (tfevents.proto). The first record is the
// file_version event "brain.Event:2"; every later one holds one metrics row as scalars.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace greenrl::report {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; RFC 3720, appendix B.4) of n bytes.
// Check value: Crc32c("123456789", 9) == 0xE3069283.
uint32_t Crc32c(const void* data, size_t n);

// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8, as in TensorFlow's
// tensorflow/core/lib/hash/crc32c.h (Mask): a CRC of data that holds CRCs stays well-behaved.
uint32_t MaskCrc32c(uint32_t crc);

// "events.out.tfevents.<unix seconds>.<hostname>", TensorFlow's file name convention.
std::string TfEventsFileName(double unix_time_s, const std::string& hostname);

// Writes one event file in a directory. Every record is flushed, so a crashed run keeps every
// row it wrote. Not thread-safe.
class TfEventsWriter {
 public:
  // Creates <dir>/events.out.tfevents.<time>.<host> (with ".1", ".2", ... appended when that
  // file exists: an earlier file is never overwritten) and writes the file_version event.
  // Args: unix_time_s: the wall clock stamped on every event (default: the system clock).
  // Errors: std::runtime_error naming the path when it cannot be created or written.
  explicit TfEventsWriter(const std::string& dir, std::function<double()> unix_time_s = {});
  ~TfEventsWriter();
  TfEventsWriter(const TfEventsWriter&) = delete;
  TfEventsWriter& operator=(const TfEventsWriter&) = delete;

  // Writes one Event for a metrics row: step = the row's "global_step" (0 if absent), one scalar
  // per other key with a finite value (tags are the metrics.csv column names, CleanRL's keys;
  // values are stored as float32 as TensorBoard does). NaN and infinite cells are left out, as
  // metrics.csv leaves them empty.
  // Errors: std::runtime_error naming the path when the record cannot be written.
  void WriteRow(const std::vector<std::pair<std::string, double>>& row);

  // Writes a SessionLog START event at `step`. TensorBoard's EventAccumulator (with
  // purge_orphaned_data, its default) then drops every event it read before, from this run
  // directory's earlier event files, whose step is >= step: the rows of the iterations a resumed
  // run repeats, which metrics.csv has cut (torch.utils.tensorboard's SummaryWriter(purge_step)
  // writes the same event). A resumed run calls it with the checkpoint's global_step + 1.
  // Errors: std::runtime_error naming the path when the record cannot be written.
  void WriteRestart(int64_t step);

  const std::string& path() const { return path_; }

 private:
  void WriteRecord(const std::string& data);

  std::string path_;
  std::FILE* file_ = nullptr;
  std::function<double()> unix_time_s_;
};

}  // namespace greenrl::report
