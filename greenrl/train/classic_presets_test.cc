// classic_presets_test.cc: the classic-control presets that copy rl-baselines3-zoo sections
// beside issue #6's (configs/ppo/{acrobot,mountaincar,mountaincarcontinuous}.yaml,
// configs/dqn/{acrobot,mountaincar}.yaml) each train end to end for a few thousand steps.
// trainer_test's RlZooHyperparamFilesGiveThePresetsConfigs checks their values against rl-zoo's
// own sections (testdata/rl_zoo/).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "greenrl/core/install_paths.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {
namespace {

namespace fs = std::filesystem;

// losses/n_updates (gradient steps so far) on the last row of run_dir/metrics.csv that has it;
// -1 when no row does.
double LastUpdates(const std::string& run_dir) {
  const auto [header, rows] = report::ReadMetricsCsv(run_dir + "/metrics.csv");
  double last = -1.0;
  for (size_t k = 0; k < header.size(); ++k) {
    if (header[k] != "losses/n_updates") continue;
    for (const std::vector<double>& row : rows) {
      if (k < row.size() && !std::isnan(row[k])) last = row[k];
    }
  }
  return last;
}

// A few thousand steps of each preset: the run reaches its steps, updates (DQN's learning
// starts within them, PPO runs several rollouts), evaluates, and writes its checkpoint.
TEST(ClassicPresetTest, EveryPresetTrainsBriefly) {
  struct Case {
    const char* rel;
    std::vector<std::string> sets;
  };
  const Case cases[] = {
      {"ppo/acrobot.yaml", {"n_timesteps=8192"}},
      {"ppo/mountaincar.yaml", {"n_timesteps=2048"}},
      {"ppo/mountaincarcontinuous.yaml", {"n_timesteps=2000"}},
      {"dqn/acrobot.yaml", {"n_timesteps=2000"}},
      {"dqn/mountaincar.yaml", {"n_timesteps=2000"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> sets = c.sets;
    sets.push_back("eval.freq=0");
    sets.push_back("eval.final_episodes=2");
    const Config config = LoadRunConfig(SourceTreeDir() + "/configs/" + c.rel, sets, 1);
    TrainOptions options;
    const std::string options_dir =
        ::testing::TempDir() + "/greenrl_classic_preset_" + std::to_string(&c - cases);
    options.out_dir = options_dir;
    fs::remove_all(options_dir);
    options.verbose = false;
    const TrainResult result = Train(config, std::move(options));
    const report::RunReport& r = result.report;
    EXPECT_GE(r.steps, config.GetInt("n_timesteps")) << c.rel;
    EXPECT_EQ(r.eval_episodes, 2) << c.rel;
    EXPECT_TRUE(std::isfinite(r.eval_mean_return)) << c.rel;
    EXPECT_TRUE(fs::exists(result.checkpoint_path)) << c.rel;
    EXPECT_GT(LastUpdates(options_dir), 0) << c.rel << ": no gradient step";
  }
}

}  // namespace
}  // namespace greenrl::train
