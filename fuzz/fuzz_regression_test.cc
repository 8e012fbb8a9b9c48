// Replays every input in fuzz/regressions/<target>/ (inputs that once crashed a fuzzer, kept
// after the fix) and the seed corpus fuzz/corpus/<target>/ through the same entry points as the
// fuzzers: each must load or be refused with a ConfigError, nothing else.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "greenrl/algo/checkpoint.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/env/registry.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(const std::string& target) {
  std::vector<fs::path> files;
  for (const char* kind : {"regressions", "corpus"}) {
    const fs::path dir = fs::path(SourceTreeDir()) / "fuzz" / kind / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().filename() != "README.md") {
        files.push_back(entry.path());
      }
    }
  }
  return files;
}

std::string Bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(FuzzRegressionTest, ConfigInputsLoadOrGiveConfigError) {
  const auto files = Inputs("config");
  EXPECT_FALSE(files.empty());
  std::string written;
  {
    const ScratchFile scratch("config_regression.yaml");
    written = scratch.path();
    for (const auto& f : files) {
      const std::string b = Bytes(f);
      EXPECT_NO_THROW(
          LoadConfigBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size(), scratch.path()))
          << f;
    }
    EXPECT_TRUE(fs::exists(written));
  }
  EXPECT_FALSE(fs::exists(written)) << "the scratch file outlived the test";
}

TEST(FuzzRegressionTest, CheckpointInputsLoadOrGiveConfigError) {
  const auto files = Inputs("checkpoint");
  const ScratchFile scratch("checkpoint_regression.pt");
  for (const auto& f : files) {
    const std::string b = Bytes(f);
    EXPECT_NO_THROW(
        LoadCheckpointBytes(reinterpret_cast<const uint8_t*>(b.data()), b.size(), scratch.path()))
        << f;
  }
}

std::unique_ptr<algo::Algorithm> Make(const std::string& algo, const std::string& env_id) {
  const Config config = train::LoadRunConfig(
      "", {"algo=" + algo, "env_id=" + env_id, "threads.torch=1"}, std::nullopt);
  return train::MakeAlgorithm(config, env::FindEnvSpec(env_id));
}

std::string RefusalOf(algo::Algorithm& agent, const std::string& path) {
  try {
    agent.LoadCheckpoint(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Checkpoints from a future format version, another algorithm or env, or cut short: each a
// ConfigError naming the file and what was expected.
TEST(CheckpointRefusalTest, FutureVersionOtherAlgoOtherEnvTruncated) {
  const std::string dir = ::testing::TempDir();
  auto ppo = Make("ppo", "CartPole-v1");

  const std::string future = dir + "/future.pt";
  algo::CheckpointWriter("ppo", "CartPole-v1", /*format_version=*/2).Save(future);
  EXPECT_NE(RefusalOf(*ppo, future).find("a PPO checkpoint written by greenrl train of format "
                                         "version 1 (this file has version 2)"),
            std::string::npos)
      << RefusalOf(*ppo, future);

  const std::string dqn_path = dir + "/dqn.pt";
  Make("dqn", "CartPole-v1")->SaveCheckpoint(dqn_path);
  EXPECT_NE(RefusalOf(*ppo, dqn_path).find("for algo ppo (it was written for dqn)"),
            std::string::npos)
      << RefusalOf(*ppo, dqn_path);

  const std::string acrobot = dir + "/acrobot.pt";
  Make("ppo", "Acrobot-v1")->SaveCheckpoint(acrobot);
  EXPECT_NE(RefusalOf(*ppo, acrobot).find("for env CartPole-v1 (it was written for Acrobot-v1)"),
            std::string::npos)
      << RefusalOf(*ppo, acrobot);

  const std::string good = dir + "/good.pt";
  ppo->SaveCheckpoint(good);
  EXPECT_NO_THROW(ppo->LoadCheckpoint(good));
  const std::string bytes = Bytes(good);
  const std::string cut = dir + "/cut.pt";
  for (size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t{64}, size_t{0}}) {
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
    EXPECT_NE(RefusalOf(*ppo, cut).find("checkpoint: got '" + cut + "'; a PPO checkpoint"),
              std::string::npos)
        << keep << ": " << RefusalOf(*ppo, cut);
  }
}

}  // namespace
}  // namespace greenrl::fuzz
