// fuzz_input.h: shared by the fuzz targets and the regression test that replays their findings.
// Each target takes raw bytes and must either succeed or throw greenrl::ConfigError (bad input,
// exit code 2 in the CLI); any other exception, crash or sanitizer report is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace greenrl::fuzz {

// The config loader (train::LoadRunConfig, i.e. Config::Load with the run schema and every
// cross-module check). Input: the YAML file's bytes, then optionally a NUL byte followed by
// NUL-separated `--set key=value` overrides.
// Args: scratch_path: a file the YAML is written to (LoadRunConfig reads a path).
void LoadConfigBytes(const uint8_t* data, size_t size, const std::string& scratch_path);

// The checkpoint reader: the bytes as a PPO CartPole-v1 checkpoint file loaded by the algorithm
// (CheckpointReader, then every entry the PPO reads).
void LoadCheckpointBytes(const uint8_t* data, size_t size, const std::string& scratch_path);

// A per-process scratch file $TMPDIR/greenrl_fuzz_<stem>_<pid> (TMPDIR unset or empty: /tmp),
// removed when this object is destroyed (at the end of a test; at exit for a fuzzer's static
// one), so neither `make test` nor a fuzzing session leaves files behind. Not copyable.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& stem);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace greenrl::fuzz
