// checkpoint.h: the checkpoint file every algorithm writes and reads: a LibTorch archive
// (torch::serialize) with a header (format_version, algo, env_id) and named entries, written
// atomically (temp file, fsync, rename). The reader turns every way a file can be wrong (missing,
// not an archive, another algorithm or env, another format version, a missing entry, a shape or
// dtype that does not fit) into one ConfigError naming the file and what was expected.
#pragma once

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <string>
#include <vector>

#include "greenrl/core/rng.h"

namespace greenrl::algo {

// Collects a checkpoint's entries and writes them in one atomic file write.
class CheckpointWriter {
 public:
  // Writes the header: format_version (int64), algo and env_id (strings).
  CheckpointWriter(const std::string& algo, const std::string& env_id, int64_t format_version);

  void WriteFloats(const std::string& key, const float* data, int64_t n);  // float32 [n], copied
  void WriteInts(const std::string& key, const std::vector<int>& values);  // int64 [size]
  void WriteInt(const std::string& key, int64_t value);                    // int64 scalar
  void WriteDouble(const std::string& key, double value);                  // float64 scalar
  void WriteString(const std::string& key, const std::string& value);
  // Raw bytes as a uint8 [n] tensor (env states, replay buffers), copied.
  void WriteBytes(const std::string& key, const void* data, int64_t n);
  // A generator's state (Rng::State) as int64 [6] (bit patterns of the uint64 words).
  void WriteRng(const std::string& key, const Rng& rng);
  // WriteFloats and WriteBytes without the copy, for large arrays (the replay buffer: a copy
  // would double its memory while a checkpoint is written): `data` must stay alive and unchanged
  // until Save returns.
  void BorrowFloats(const std::string& key, const float* data, int64_t n);
  void BorrowBytes(const std::string& key, const void* data, int64_t n);

  // Writes the file at `path` (temp file, fsync, rename).
  // Errors: std::runtime_error naming the path when it cannot be written.
  void Save(const std::string& path) const;

 private:
  mutable torch::serialize::OutputArchive archive_;
};

// Opens a checkpoint and checks its header against what the caller was built for.
class CheckpointReader {
 public:
  // Errors: ConfigError("checkpoint", path, "a <ALGO> checkpoint written by greenrl train ...")
  // for a missing or unreadable file, a file that is not a LibTorch archive, an archive with an
  // entry that fails its CRC-32 check ("the file is damaged: entry ...": LibTorch's own reader
  // does not check them), and a header whose format_version, algo or env_id differs from the
  // arguments (the message names both).
  CheckpointReader(const std::string& path, const std::string& algo, const std::string& env_id,
                   int64_t format_version);

  // Entry readers. Errors: ConfigError naming the path and the entry when it is missing, for Int
  // when it is not one integer value, for Double when it is not one value (any numeric dtype is
  // read as a double), for String when it is not a string (said as "no '<key>' entry").
  int64_t Int(const std::string& key);
  double Double(const std::string& key);
  std::string String(const std::string& key);
  // Copies float32 [n] into out. Errors: ConfigError when the entry holds another number of
  // values or another dtype.
  void ReadFloats(const std::string& key, float* out, int64_t n);
  // What WriteBytes wrote. Errors: ConfigError when missing or not uint8.
  std::string Bytes(const std::string& key);
  // What WriteRng wrote, as a state for Rng::SetState. Errors: ConfigError when missing or not
  // six int64 values.
  Rng::State RngState(const std::string& key);
  // Whether the archive has an entry `key` (optional entries of resume checkpoints).
  bool Has(const std::string& key);
  const std::string& path() const { return path_; }
  // Throws the reader's ConfigError naming the file, with `why`.
  [[noreturn]] void Fail(const std::string& why) const;
  // Checks that an entry equals what this model was built with. Errors: ConfigError "<accepted>
  // for <what> <want> (it was written for <got>)".
  void ExpectString(const std::string& what, const std::string& key, const std::string& want);
  void ExpectInts(const std::string& what, const std::string& key, const std::vector<int>& want);

 private:
  torch::Tensor ReadTensor(const std::string& key);

  std::string path_;
  std::string accepted_;  // "a PPO checkpoint written by greenrl train"
  torch::serialize::InputArchive archive_;
};

}  // namespace greenrl::algo
