#include "fuzz/fuzz_input.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/env/registry.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::fuzz {

namespace {
void WriteBytes(const std::string& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}
}  // namespace

ScratchFile::ScratchFile(const std::string& stem) {
  const char* tmp = std::getenv("TMPDIR");
  path_ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/greenrl_fuzz_" + stem +
          "_" + std::to_string(::getpid());
}

ScratchFile::~ScratchFile() { std::remove(path_.c_str()); }

void LoadConfigBytes(const uint8_t* data, size_t size, const std::string& scratch_path) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const size_t nul = bytes.find('\0');
  const std::string yaml = bytes.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string::npos) {
    size_t at = nul + 1;
    while (at <= bytes.size()) {
      const size_t next = bytes.find('\0', at);
      overrides.push_back(bytes.substr(at, next == std::string::npos ? next : next - at));
      if (next == std::string::npos) break;
      at = next + 1;
    }
  }
  WriteBytes(scratch_path, yaml.data(), yaml.size());
  // Only ConfigError may leave: anything else propagates to the fuzzer as a finding.
  try {
    const Config config = train::LoadRunConfig(scratch_path, overrides, std::nullopt);
    (void)config.ToYaml();
  } catch (const ConfigError&) {
  }
}

void LoadCheckpointBytes(const uint8_t* data, size_t size, const std::string& scratch_path) {
  static const std::unique_ptr<algo::Algorithm> ppo = [] {
    const Config config =
        train::LoadRunConfig("", {"env_id=CartPole-v1", "algo=ppo", "n_envs=2", "n_steps=8",
                                  "batch_size=8", "threads.torch=1"},
                             std::nullopt);
    train::ConfigureThreads(1);
    return train::MakeAlgorithm(config, env::FindEnvSpec("CartPole-v1"));
  }();
  WriteBytes(scratch_path, reinterpret_cast<const char*>(data), size);
  try {
    ppo->LoadCheckpoint(scratch_path);
  } catch (const ConfigError&) {
  }
}

}  // namespace greenrl::fuzz
