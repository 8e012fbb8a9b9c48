// The greenrl executable as a user runs it: exit codes, messages, and that refused input leaves
// no run directory behind.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/cpu_info.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/openblas_core.h"
#include "greenrl/core/test_paths.h"

namespace {

namespace fs = std::filesystem;
namespace test_paths = greenrl::test_paths;
using greenrl::SourceTreeDir;

struct Result {
  int exit_code;
  std::string output;  // stdout and stderr
};

// Runs a shell command line; its output is what it writes to stdout (add 2>&1 for stderr). The
// command starts without the OPENBLAS_CORETYPE that ctest's greenrl_test_exec gives this binary
// (cli_test itself loads no BLAS), so greenrl meets the environment of a user's shell and
// decides its kernels itself; a command line may still set the variable for its own process.
Result RunCommand(const std::string& cmd) {
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv("GREENRL_OPENBLAS_FALLBACK");
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Result RunGreenrl(const std::string& args) {
  return RunCommand(std::string(test_paths::GreenrlBin()) + " " + args + " 2>&1");
}

// The command was refused as bad input (exit code 2) with `text` in its output.
void ExpectRefused(const Result& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
}

// The command succeeded (exit code 0) with `text` in its output (a warning or note).
void ExpectSucceedsSaying(const Result& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
}

std::string Preset() { return SourceTreeDir() + "/configs/ppo/cartpole.yaml"; }

// Tidy ("/tmp/greenrl_cli_x", TempDir() ends with '/'), as config.yaml and the summary give a
// trained agent's paths.
std::string Dir(const std::string& name) {
  const std::string d =
      fs::path(::testing::TempDir() + "/greenrl_cli_" + name).lexically_normal().string();
  fs::remove_all(d);
  return d;
}

// `greenrl envs`: every registered env with its spaces, limits and the envs per env thread that
// pay off (EnvRegistration::min_rows_per_thread).
TEST(CliTest, EnvsListsSpacesLimitsAndEnvsPerThread) {
  const Result r = RunGreenrl("envs");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("CartPole-v1\n  observation: Box([-4.8, -inf, -0.41887903, -inf], "
                          "[4.8, inf, 0.41887903, inf], (4,), float32)\n  action:      "
                          "Discrete(2)\n  time limit:  500 steps\n  reward threshold: 475\n"
                          "  envs per env thread: 256 or more (threads.env)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Pendulum-v1\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reward threshold: none\n  envs per env thread: 64 or more"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Hopper-v4\n"), std::string::npos) << r.output;
  // Equal bounds print as one value, as Gymnasium's Box repr: Walker2d-v4's spaces.
  EXPECT_NE(
      r.output.find("Walker2d-v4\n  observation: Box(-inf, inf, (17,), float32)\n  action:"
                    "      Box(-1.0, 1.0, (6,), float32)\n  time limit:  1000 steps\n  reward "
                    "threshold: none\n  envs per env thread: 1 or more (threads.env)\n"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("MountainCarContinuous-v0\n  observation: Box([-1.2, -0.07], [0.6, "
                          "0.07], (2,), float32)\n  action:      Box(-1.0, 1.0, (1,), float32)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(
      r.output.find("Pendulum-v1\n  observation: Box([-1, -1, -8], [1, 1, 8], (3,), float32)\n"
                    "  action:      Box(-2.0, 2.0, (1,), float32)\n"),
      std::string::npos)
      << r.output;
  EXPECT_LT(r.output.find("Hopper-v4\n"), r.output.find("Walker2d-v4\n"));
  EXPECT_LT(r.output.find("Walker2d-v4\n"), r.output.find("Ant-v4\n"));
  EXPECT_LT(r.output.find("Ant-v4\n"), r.output.find("Swimmer-v4\n"));
  EXPECT_LT(r.output.find("Swimmer-v4\n"), r.output.find("InvertedPendulum-v4\n"));
  EXPECT_LT(r.output.find("InvertedPendulum-v4\n"), r.output.find("InvertedDoublePendulum-v4\n"));
  EXPECT_LT(r.output.find("InvertedDoublePendulum-v4\n"), r.output.find("Reacher-v4\n"));
  EXPECT_LT(r.output.find("Reacher-v4\n"), r.output.find("Humanoid-v4\n"));
  EXPECT_LT(r.output.find("Humanoid-v4\n"), r.output.find("HumanoidStandup-v4\n"));
  EXPECT_LT(r.output.find("HumanoidStandup-v4\n"), r.output.find("Pusher-v4\n"));
  // Each v5 right after its v4, with its own spaces.
  EXPECT_LT(r.output.find("Hopper-v4\n"), r.output.find("Hopper-v5\n"));
  EXPECT_LT(r.output.find("Hopper-v5\n"), r.output.find("Walker2d-v4\n"));
  EXPECT_LT(r.output.find("Pusher-v4\n"), r.output.find("Pusher-v5\n"));
  EXPECT_NE(r.output.find("Ant-v5\n  observation: Box(-inf, inf, (105,), float32)\n"
                          "  action:      Box(-1.0, 1.0, (8,), float32)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Pusher-v4\n  observation: Box(-inf, inf, (23,), float32)\n"
                          "  action:      Box(-2.0, 2.0, (7,), float32)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("InvertedPendulum-v4\n  observation: Box(-inf, inf, (4,), float32)\n"
                          "  action:      Box(-3.0, 3.0, (1,), float32)\n"),
            std::string::npos)
      << r.output;
}

TEST(CliTest, UnknownKeyExits2WithOneMessageAndNoRunDir) {
  const std::string out = Dir("unknown");
  const Result r = RunGreenrl("train --config " + Preset() + " --set n_step=64 --out " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("n_step: got '64'; unknown key; did you mean 'n_steps'?"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(CliTest, WrongTypeAndOutOfRangeExit2) {
  const std::string out = Dir("bad");
  Result r = RunGreenrl("train --config " + Preset() + " --set batch_size=abc --out " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("batch_size: got 'abc'; an integer"), std::string::npos) << r.output;
  r = RunGreenrl("train --config " + Preset() + " --set gae_lambda=2 --out " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("gae_lambda: got '2'; a number in [0, 1]"), std::string::npos)
      << r.output;
  r = RunGreenrl("train --config /nonexistent.yaml --out " + out);
  EXPECT_EQ(r.exit_code, 2);
  r = RunGreenrl("train --config " + Preset() + " --seed -3 --out " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // A flag's value of the wrong type, in the same form (CLI11's "Could not convert" rewritten).
  r = RunGreenrl("train --config " + Preset() + " --seed abc --out " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "greenrl: error: --seed: got 'abc'; an integer in [0, 4294967295] (see `greenrl train "
            "--help`)\n");
  // Out of range, quoted as given (CLI11 alone would saturate it to 2^63 - 1).
  r = RunGreenrl("eval --run " + out + " --seed 99999999999999999999");
  EXPECT_EQ(r.output,
            "greenrl: error: --seed: got '99999999999999999999'; an integer in [0, "
            "4294967295] (see `greenrl eval --help`)\n");
  r = RunGreenrl("report " + out + " --target-return high");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(
      r.output,
      "greenrl: error: --target-return: got 'high'; a number (see `greenrl report --help`)\n");
  // launch without `--` before the command: said how to write it.
  r = RunGreenrl("launch --nproc 2 train --config " + Preset());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("; the command goes after --: greenrl launch --nproc N -- train ..."),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --bogus-flag");
  EXPECT_EQ(r.exit_code, 2);
  // One line, in the form of every other bad input.
  EXPECT_EQ(r.output,
            "greenrl: error: --bogus-flag is no flag of `greenrl train` (see `greenrl train "
            "--help`)\n");
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

// A preset's batch_size above the rollout after --set n_envs trains as SB3 does (one minibatch
// of the rollout per epoch) and says so.
TEST(CliTest, PresetBatchSizeAboveTheRolloutSaysWhatItMeans) {
  const std::string out = Dir("batch");
  const Result r = RunGreenrl("train --config " + Preset() +
                              " --set n_envs=4 --set n_timesteps=512 --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: batch_size 256 is above n_steps * n_envs = 128: each epoch "
                          "is one minibatch of the whole rollout (128 rows), as in SB3"),
            std::string::npos)
      << r.output;
}

// A run that whole rollouts take far past n_timesteps says so (CleanRL's --total-timesteps 4000
// --num-envs 4 with SB3's n_steps 2048: 8192 steps); one a little past it does not.
TEST(CliTest, RolloutsFarPastNTimestepsSaySo) {
  Result r = RunGreenrl("train --env CartPole-v1 --set n_timesteps=4000 --set n_envs=4 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: n_timesteps 4000 is 0.49 rollouts of n_steps * n_envs = 8192 "
                          "steps: the run trains whole rollouts, 8192 steps, as SB3 does (a "
                          "smaller n_steps or n_envs comes closer)"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --config " + Preset() + " --set n_timesteps=5000 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("rollouts of n_steps"), std::string::npos) << r.output;  // 5120
}

// A batch_size that does not divide the rollout warns as SB3 does (a last, shorter minibatch),
// and a reward threshold that no periodic evaluation can reach in time says so.
TEST(CliTest, TruncatedMinibatchAndUnreachableThresholdWarn) {
  const std::string out = Dir("truncated");
  const Result r = RunGreenrl("train --config " + Preset() +
                              " --set batch_size=100 --set n_timesteps=512 "
                              "--set eval.reward_threshold=env --out " +
                              out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: batch_size 100 does not divide n_steps * n_envs = 256: after "
                          "every 2 full minibatches comes one of 56 rows"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("greenrl: eval.reward_threshold is set, but no periodic evaluation "
                          "comes before n_timesteps 512 (eval.freq 25000): it cannot stop this "
                          "run"),
            std::string::npos)
      << r.output;
  // DQN and SAC: a run too short to pass learning_starts never updates.
  const std::string sac = SourceTreeDir() + "/configs/sac/walker2d.yaml";
  const Result short_sac =
      RunGreenrl("train --config " + sac + " --set n_timesteps=5000 --dry-run");
  EXPECT_NE(short_sac.output.find("greenrl: learning_starts 10000 is not below n_timesteps 5000: "
                                  "the run ends before its updates start (warm-up actions only, "
                                  "no gradient step)\n"),
            std::string::npos)
      << short_sac.output;
  const Result long_sac =
      RunGreenrl("train --config " + sac + " --set n_timesteps=20000 --dry-run");
  EXPECT_EQ(long_sac.output.find("is not below n_timesteps"), std::string::npos) << long_sac.output;
  // The run's last step is n_timesteps in whole rollouts (DQN CartPole's 256 steps): 5000 ends at
  // 5120, which passes learning_starts 5000 (an update there), and not 5120.
  const std::string dqn = SourceTreeDir() + "/configs/dqn/cartpole.yaml";
  const Result passes = RunGreenrl("train --config " + dqn +
                                   " --set n_timesteps=5000 --set learning_starts=5000 --dry-run");
  EXPECT_EQ(passes.output.find("is not below"), std::string::npos) << passes.output;
  const Result short_dqn = RunGreenrl(
      "train --config " + dqn + " --set n_timesteps=5000 --set learning_starts=5120 --dry-run");
  EXPECT_NE(short_dqn.output.find("greenrl: learning_starts 5120 is not below the run's last step "
                                  "5120 (n_timesteps 5000 rounded up to whole train_freq blocks of "
                                  "256 steps): the run ends before its updates start"),
            std::string::npos)
      << short_dqn.output;
  // More envs than target_update_interval (10 here): said, as SB3 warns.
  const Result many_envs =
      RunGreenrl("train --config " + dqn + " --set n_envs=16 --set n_timesteps=5000 --dry-run");
  EXPECT_NE(many_envs.output.find("greenrl: n_envs 16 is above target_update_interval 10: the "
                                  "target network is updated at most once per step of the 16 "
                                  "envs, every 16 env steps"),
            std::string::npos)
      << many_envs.output;
  EXPECT_EQ(passes.output.find("above target_update_interval"), std::string::npos);
}

// A preset trained on another env (--env) says the preset was tuned for its own; SB3's class
// name nn.ReLU is an activation_fn, and config.yaml keeps it as given.
TEST(CliTest, PresetOnAnotherEnvWarnsAndSb3ActivationNamesLoad) {
  const std::string out = Dir("other_env");
  const Result r = RunGreenrl("train --config " + Preset() +
                              " --env Acrobot-v1 --set policy_kwargs.activation_fn=nn.ReLU "
                              "--set n_timesteps=256 --out " +
                              out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: training Acrobot-v1 with " + Preset() +
                          ", a preset tuned for CartPole-v1: its hyperparameters may not suit "
                          "Acrobot-v1 (greenrl's preset for Acrobot-v1 is `--config " +
                          SourceTreeDir() + "/configs/ppo/acrobot.yaml`, n_timesteps 1000000)\n"),
            std::string::npos)
      << r.output;
  std::ifstream saved(out + "/config.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("activation_fn: nn.ReLU"), std::string::npos) << yaml;
  // Where greenrl has no preset for the env, the hint points at rl-zoo's sections instead.
  const Result no_preset = RunGreenrl("train --config " + Preset() + " --env Pusher-v4 --dry-run");
  EXPECT_NE(no_preset.output.find("its hyperparameters may not suit Pusher-v4 (rl-zoo's "
                                  "hyperparams/<algo>.yml has a section per env)\n"),
            std::string::npos)
      << no_preset.output;
  // A run refused by its own checks says only why (the warning comes once they have passed).
  const Result refused =
      RunGreenrl("train --config " + Preset() + " --env Acrobot-v1 --out " + out);
  ExpectRefused(refused, "a new or empty directory");
  EXPECT_EQ(refused.output.find("a preset tuned for"), std::string::npos) << refused.output;
  const Result same =
      RunGreenrl("train --config " + Preset() + " --env CartPole-v1 --set n_timesteps=256 --out " +
                 Dir("same_env"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(same.output.find("a preset tuned for"), std::string::npos) << same.output;
  // A preset of another algorithm whose keys the algorithm given also has (SAC's Pendulum preset
  // read by PPO) says so, with the algorithm's own preset for the env.
  const std::string sac_preset = SourceTreeDir() + "/configs/sac/pendulum.yaml";
  const Result other_algo = RunGreenrl("train --config " + sac_preset + " --algo ppo --dry-run");
  EXPECT_EQ(other_algo.exit_code, 0) << other_algo.output;
  EXPECT_NE(other_algo.output.find(
                "greenrl: training ppo with " + sac_preset +
                ", a sac preset (its algo: sac): its values were tuned for sac and may not suit "
                "ppo (greenrl's ppo preset for Pendulum-v1 is `--config " +
                SourceTreeDir() + "/configs/ppo/pendulum.yaml`, n_timesteps 100000)\n"),
            std::string::npos)
      << other_algo.output;
  EXPECT_EQ(same.output.find("preset (its algo:"), std::string::npos) << same.output;
  // The budget's ladder settings without a budget do nothing: said (a value at its default is
  // no mistake).
  const Result ladder = RunGreenrl(
      "train --set energy.budget.skip_at=0.8 --set "
      "energy.budget.stop_margin=1 --dry-run");
  EXPECT_NE(ladder.output.find("greenrl: energy.budget.skip_at has no effect without an energy "
                               "budget (they tune its ladder, which energy.budget_wh > 0 turns "
                               "on)\n"),
            std::string::npos)
      << ladder.output;
  const Result budgeted =
      RunGreenrl("train --set energy.budget.skip_at=0.8 --set energy.budget_wh=1 --dry-run");
  EXPECT_EQ(budgeted.output.find("without an energy budget"), std::string::npos) << budgeted.output;
  // No --config: SB3's defaults, and the tuned preset named where greenrl has one.
  const Result bare = RunGreenrl("train --env Pendulum-v1 --algo sac --dry-run");
  EXPECT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_NE(bare.output.find("greenrl: no --config, so every key takes its default (`greenrl "
                             "keys --algo sac` lists them: SB3's for the algorithm's "
                             "hyperparameters; greenrl's 100000 for n_timesteps, which SB3 "
                             "leaves to the caller); "
                             "`--config " +
                             SourceTreeDir() +
                             "/configs/sac/pendulum.yaml` is greenrl's preset for sac on "
                             "Pendulum-v1, rl-zoo's hyperparameters (n_timesteps 20000)\n"),
            std::string::npos)
      << bare.output;
  // Pusher's reward_threshold 0 is out of reach: said.
  ExpectSucceedsSaying(
      RunGreenrl("train --env Pusher-v4 --algo sac --set eval.reward_threshold=env --dry-run"),
      "greenrl: eval.reward_threshold env is Pusher-v4's reward_threshold 0, which no episode "
      "reaches (every Pusher reward is negative): it cannot stop this run; give a number "
      "instead\n");
  // SAC's default env is Pendulum-v1 (SAC needs Box actions), so --algo sac alone trains it.
  const Result sac_alone = RunGreenrl("train --algo sac --dry-run");
  EXPECT_EQ(sac_alone.exit_code, 0) << sac_alone.output;
  EXPECT_NE(sac_alone.output.find("this trains sac on Pendulum-v1 to 100000 env steps"),
            std::string::npos)
      << sac_alone.output;
  const Result set = RunGreenrl("train --env Ant-v4 --set n_timesteps=100 --dry-run");
  EXPECT_NE(set.output.find("greenrl: no --config, so every key not given by --set takes its "
                            "default (`greenrl keys --algo ppo` lists them: SB3's for the "
                            "algorithm's hyperparameters); `--config " +
                            SourceTreeDir() + "/configs/ppo/ant.yaml` is greenrl's preset"),
            std::string::npos)
      << set.output;
  // A v5 MuJoCo env: rl-zoo's preset is for its v4, and greenrl says how to use it.
  const Result v5 = RunGreenrl("train --env Hopper-v5 --algo sac --dry-run");
  EXPECT_EQ(v5.exit_code, 0) << v5.output;
  EXPECT_NE(v5.output.find("greenrl: no --config, so every key takes its default (`greenrl "
                           "keys --algo sac` lists them: SB3's for the algorithm's "
                           "hyperparameters; greenrl's 100000 for n_timesteps, which SB3 leaves "
                           "to the caller); "
                           "greenrl has no preset for sac on Hopper-v5, but `--config " +
                           SourceTreeDir() +
                           "/configs/sac/hopper.yaml --env Hopper-v5` trains it with greenrl's "
                           "preset for Hopper-v4, rl-zoo's hyperparameters (n_timesteps "
                           "1000000)\n"),
            std::string::npos)
      << v5.output;
  const Result v5_preset = RunGreenrl("train --config " + SourceTreeDir() +
                                      "/configs/sac/hopper.yaml --env Hopper-v5 --dry-run");
  EXPECT_EQ(v5_preset.exit_code, 0) << v5_preset.output;
  EXPECT_EQ(v5_preset.output.find("no --config"), std::string::npos) << v5_preset.output;
  EXPECT_NE(v5_preset.output.find("a preset tuned for Hopper-v4: its hyperparameters may not suit "
                                  "Hopper-v5 (greenrl has no preset for Hopper-v5)\n"),
            std::string::npos)
      << v5_preset.output;
  // A preset's "# Note: " line in its leading comments is repeated where the preset is named.
  const Result hopper = RunGreenrl("train --env Hopper-v4 --algo ppo --dry-run");
  EXPECT_NE(
      hopper.output.find(
          "/configs/ppo/hopper.yaml` is greenrl's preset for ppo on "
          "Hopper-v4, rl-zoo's hyperparameters (n_timesteps 1000000; its note: it tends to settle "
          "on standing (returns near 1000), in SB3 too (rl-zoo issue "
          "#376))\n"),
      std::string::npos)
      << hopper.output;
  // ./configs is the presets folder in the current directory: a "# Note: " line after the
  // leading comment block is no note.
  const std::string cwd = Dir("note_cwd");
  fs::create_directories(cwd + "/configs/ppo");
  std::ofstream(cwd + "/configs/ppo/acrobot.yaml")
      << "# A preset.\n# Note: said\nalgo: ppo\nenv_id: Acrobot-v1\n# Note: not said\n";
  std::ofstream(cwd + "/configs/ppo/pendulum.yaml")
      << "# A preset.\nalgo: ppo\nenv_id: Pendulum-v1\nn_timesteps: 2000\n# Note: not said\n";
  for (const auto& [env, hint] :
       {std::pair<std::string, std::string>{"Acrobot-v1",
                                            "configs/ppo/acrobot.yaml` is greenrl's "
                                            "preset for ppo on Acrobot-v1, rl-zoo's "
                                            "hyperparameters (its note: said)\n"},
        {"Pendulum-v1",
         "configs/ppo/pendulum.yaml` is greenrl's preset for ppo on Pendulum-v1, rl-zoo's "
         "hyperparameters (n_timesteps 2000)\n"}}) {
    const Result local = RunCommand("cd " + cwd + " && " + std::string(test_paths::GreenrlBin()) +
                                    " train --env " + env + " --algo ppo --dry-run 2>&1");
    EXPECT_NE(local.output.find(hint), std::string::npos) << local.output;
  }
  const Result none = RunGreenrl("train --env Pusher-v4 --algo ppo --dry-run");
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_EQ(none.output.find("no --config"), std::string::npos) << none.output;
}

// A DQN bench too short to pass learning_starts (1000 here) says so once: its runs are quiet.
TEST(CliTest, BenchSaysWhenNoSeedPassesLearningStarts) {
  const Result r = RunGreenrl("bench dqn-cartpole --seeds 1 --steps 300");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\nnote: learning_starts 1000 is not below the runs' last step 512 "
                          "(whole blocks of train_freq * n_envs = 256 steps): no seed makes a "
                          "gradient step\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\n    0       512 "), std::string::npos) << r.output;
  // The GFLOP/s column's "-" is said once, with why.
  EXPECT_NE(r.output.find("\nnote: update_GFLOP/s is -: its FLOP model covers ppo-cartpole's "
                          "update with every epoch run (dqn-cartpole is another benchmark)\n"),
            std::string::npos)
      << r.output;
}

// greenrl bench finds its presets from any directory (./configs, else the source tree's), and a
// --configs folder without the preset is refused by that name.
TEST(CliTest, BenchRunsFromAnyDirectoryAndNamesConfigs) {
  const std::string cwd = Dir("bench_cwd");
  fs::create_directories(cwd);
  const std::string bin = test_paths::GreenrlBin();
  const std::string out = RunCommand("cd " + cwd + " && " + bin +
                                     " bench ppo-cartpole --seeds 1 --steps 6e2 2>&1; echo "
                                     "\"rc=$?\"")
                              .output;
  EXPECT_NE(out.find("rc=0"), std::string::npos) << out;
  EXPECT_NE(out.find("/configs/ppo/cartpole.yaml"), std::string::npos) << out;
  // --steps reads rl-zoo's 6e2 as 600. The row gives the steps run: whole rollouts of 8 envs x
  // 32 steps, 768 for n_timesteps 600.
  EXPECT_NE(out.find("n_timesteps 600 (a run ends with the iteration that reaches it)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\n    0       768 "), std::string::npos) << out;
  // `solved` says per seed whether its unrounded return counts (768 steps do not solve it).
  EXPECT_NE(out.find("eval_return solved"), std::string::npos) << out;
  const size_t row = out.find("\n    0       768 ");
  if (row != std::string::npos) {
    const std::string line = out.substr(row + 1, out.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find("     no "), std::string::npos) << line;
  }
  EXPECT_NE(out.find("seeds with mean eval return >= 475: 0 of 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nenergy_wh metered by: "), std::string::npos) << out;
  // A seed the energy budget stopped (after its first iteration) has no final evaluation: n/a,
  // not a return of 0.0, and no median of returns.
  const Result budget =
      RunGreenrl("bench ppo-cartpole --seeds 1 --steps 2048 --set energy.budget_wh=1e-9");
  EXPECT_EQ(budget.exit_code, 0) << budget.output;
  EXPECT_NE(budget.output.find("\n    0       256 "), std::string::npos) << budget.output;
  EXPECT_NE(budget.output.find("     n/a (budget)      - "), std::string::npos) << budget.output;
  EXPECT_EQ(budget.output.find("0.0 ± 0.0"), std::string::npos) << budget.output;
  EXPECT_NE(budget.output.find("seeds with mean eval return >= 475: 0 of 1 (1 without a final "
                               "evaluation, n/a above, counted as not solved)\n"),
            std::string::npos)
      << budget.output;
  EXPECT_NE(budget.output.find("  med "), std::string::npos) << budget.output;
  // Its energy (the first iteration's) is over the budget: said under the table, as the train
  // summary's "over it"; a run without a budget says nothing of it.
  EXPECT_NE(budget.output.find("\nseeds over the energy budget of 1e-09 Wh (energy_wh above): "
                               "seed 0 by "),
            std::string::npos)
      << budget.output;
  EXPECT_EQ(out.find("seeds over the energy budget"), std::string::npos) << out;
  // The update's FLOPs (actor and critic [64, 64], 52352 per row): batch_size 256 is the whole
  // rollout of 8 x 32; with batch_size 100 an epoch is 2 minibatches of 100 and one of 56 (SB3's
  // slices), not 3 of 100.
  EXPECT_NE(out.find("one minibatch update (256 rows) = 13.40 MFLOP of matrix products, 1 per "
                     "epoch; GEMM floor"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\ncpu: "), std::string::npos) << out;
  const Result sliced = RunGreenrl("bench ppo-cartpole --seeds 1 --steps 256 --set batch_size=100");
  EXPECT_NE(sliced.output.find("one minibatch update (100 rows) = 5.24 MFLOP of matrix products, "
                               "2 per epoch and one of 56 rows; GEMM floor"),
            std::string::npos)
      << sliced.output;
  // The floor times the update's own product on its own path's kernels: the minibatch's rows
  // through the first hidden layer; LibTorch's mm for the autograd path.
  EXPECT_NE(sliced.output.find(" GFLOP/s ([100,64]x[64,64], the faster of sgemm "),
            std::string::npos)
      << sliced.output;
  const Result autograd = RunGreenrl(
      "bench ppo-cartpole --seeds 1 --steps 256 --set update_path=autograd --set "
      "policy_kwargs.net_arch=[32,16]");
  EXPECT_NE(autograd.output.find(" GFLOP/s (torch::mm fp32 [256,32]x[32,16], the autograd path's "
                                 "kernel)\n"),
            std::string::npos)
      << autograd.output;
  // OpenMP threads that busy-wait are said once, as train's stderr says it (bench runs are
  // quiet), since they change every cpu_s and energy_wh.
  const std::string spin =
      RunCommand(std::string("OMP_WAIT_POLICY=ACTIVE ") + test_paths::GreenrlBin() +
                 " bench ppo-cartpole --seeds 1 --steps 256 --set threads.torch=2 2>&1")
          .output;
  EXPECT_NE(spin.find("\nnote: threads.torch 2: OpenMP's idle threads busy-wait "
                      "(OMP_WAIT_POLICY is ACTIVE)"),
            std::string::npos)
      << spin;
  EXPECT_EQ(out.find("busy-wait"), std::string::npos) << out;
  // The header names the BLAS kernels; where OpenBLAS fell back to its generic ones
  // (RestartWithOpenBlasCoreTypeIfNeeded), the restarted run's, and what OpenBLAS chose.
  EXPECT_NE(out.find("\nblas: "), std::string::npos) << out;
  const greenrl::CpuInfo& cpu = greenrl::ThisCpu();
  const size_t generic = out.find(", set by greenrl: OpenBLAS chose its generic ");
  if (generic != std::string::npos) {
    EXPECT_TRUE(cpu.Has("avx2") && cpu.Has("fma")) << out;
    bool named = false;  // the kernels the restarted process reports are the ones it asked for
    for (const std::string core : {"Cooperlake", "SkylakeX", "Haswell"}) {
      named = named || out.find("blas: OpenBLAS, " + core + " kernels (OPENBLAS_CORETYPE=" + core +
                                ", ") != std::string::npos;
    }
    EXPECT_TRUE(named) << out;
  }
  const Result r = RunGreenrl("bench ppo-cartpole --seeds 1 --configs " + cwd);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.output.find("--configs: got '" + cwd + "'; a presets folder holding ppo/cartpole.yaml"),
      std::string::npos)
      << r.output;
  const Result steps = RunGreenrl("bench ppo-cartpole --steps 0");
  EXPECT_EQ(steps.exit_code, 2);
  EXPECT_NE(steps.output.find("--steps: got '0'; an integer >= 1 (env steps), e.g. 100000 or 1e5"),
            std::string::npos)
      << steps.output;
  for (const char* bad : {"1.5", "abc", "-2"}) {
    const Result r = RunGreenrl(std::string("bench ppo-cartpole --steps ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.output.find(std::string("--steps: got '") + bad + "'"), std::string::npos)
        << r.output;
  }
  // --steps and --set n_timesteps= that disagree (--steps won, silently).
  const Result both = RunGreenrl("bench ppo-cartpole --steps 2000 --set n_timesteps=3000");
  ExpectRefused(both,
                "greenrl: error: --steps: got '2000'; the same value as --set "
                "n_timesteps=3000, or only one of the two");
  // A --set the bench would ignore or mislabel, and a kept --out holding files, are refused
  // (the out folder's files are left as they were).
  const Result seed = RunGreenrl("bench ppo-cartpole --set seed=5");
  EXPECT_EQ(seed.exit_code, 2);
  EXPECT_NE(seed.output.find("--set: got 'seed=5'; a key other than seed"), std::string::npos)
      << seed.output;
  const Result env = RunGreenrl("bench ppo-cartpole --set env_id=Pendulum-v1");
  EXPECT_EQ(env.exit_code, 2);
  fs::create_directories(cwd + "/kept/seed0");
  std::ofstream(cwd + "/kept/seed0/mine.txt") << "keep\n";
  const Result kept = RunGreenrl("bench ppo-cartpole --seeds 1 --steps 512 --out " + cwd + "/kept");
  EXPECT_EQ(kept.exit_code, 2);
  EXPECT_NE(kept.output.find("a new or empty directory (it exists and is not empty)"),
            std::string::npos)
      << kept.output;
  EXPECT_TRUE(fs::exists(cwd + "/kept/seed0/mine.txt"));
  // An --out that cannot be made (a file on its path) is refused before the header and the
  // floor's timing, as train's --out is.
  std::ofstream(cwd + "/a_file") << "x\n";
  const Result unmade =
      RunGreenrl("bench ppo-cartpole --seeds 1 --steps 512 --out " + cwd + "/a_file/sub");
  EXPECT_EQ(unmade.exit_code, 2) << unmade.output;
  EXPECT_EQ(unmade.output.rfind("greenrl: error: --out: got '" + cwd +
                                    "/a_file/sub'; a directory "
                                    "that can be created (",
                                0),
            0u)
      << unmade.output;
  // A presets folder whose file for this bench trains another env or algo: refused, since the
  // threshold and GFLOP/s model are the bench's.
  fs::create_directories(cwd + "/other/ppo");
  fs::copy_file(SourceTreeDir() + "/configs/ppo/pendulum.yaml", cwd + "/other/ppo/cartpole.yaml");
  ExpectRefused(RunGreenrl("bench ppo-cartpole --seeds 1 --configs " + cwd + "/other"),
                "--configs: got '" + cwd +
                    "/other'; a presets folder whose ppo/cartpole.yaml "
                    "has env_id CartPole-v1 for ppo-cartpole (it has Pendulum-v1)");
}

// SIGINT during a bench stops it as it stops `greenrl train`: the running seed writes its
// reports and resume checkpoint, no later seed starts, the summary counts the seeds finished,
// and the bench exits 130; the header (threads.update too) comes before any seed ends.
TEST(CliTest, BenchStopsOnSignalWithTheRunningSeedsReports) {
  const std::string out = Dir("bench_signal");
  const Result r =
      RunCommand("timeout --preserve-status -s INT 8 " + std::string(test_paths::GreenrlBin()) +
                 " bench dqn-cartpole --seeds 2 --steps 100000000 --set "
                 "threads.update=2 --out " +
                 out + " 2>&1");
  EXPECT_EQ(r.exit_code, 130) << r.output;
  EXPECT_NE(r.output.find("(threads.torch 1, threads.env 1, threads.update 2)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("seed 0 stopped by signal 2 at step "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("seeds with mean eval return >= 475: 0 of 0 finished (2 asked)\n"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(fs::exists(out + "/seed0/energy.json"));
  EXPECT_FALSE(fs::exists(out + "/seed1"));
  EXPECT_EQ(RunGreenrl("train --resume " + out + "/seed0 --dry-run").exit_code, 0);
}

// A signal that finds a seed in its last iteration lets that seed finish (as `greenrl train`
// does) and still stops the bench: no later seed starts, exit 130. Every seed here is one
// iteration, so the signal (after LibTorch has loaded) always comes in a last iteration.
TEST(CliTest, BenchStopsAfterASeedThatASignalFoundFinishing) {
  const Result r =
      RunCommand("timeout --preserve-status -s INT 6 " + std::string(test_paths::GreenrlBin()) +
                 " bench ppo-cartpole --seeds 200 --steps 256 --set "
                 "eval.final_episodes=2000 2>&1");
  EXPECT_EQ(r.exit_code, 130) << r.output;
  const size_t note = r.output.find(
      ": signal 2 arrived after its last iteration had begun, so "
      "it finished; no later seed runs\n");
  ASSERT_NE(note, std::string::npos) << r.output;
  const int seed = std::atoi(r.output.c_str() + r.output.rfind("\nseed ", note) + 6);
  // The seeds up to this one finished; the summary counts them.
  EXPECT_NE(r.output.find(" of " + std::to_string(seed + 1) + " finished (200 asked)\n"),
            std::string::npos)
      << r.output;
}

// A user's own OPENBLAS_CORETYPE is left alone: no restart, and the bench header names it.
TEST(CliTest, UsersOpenBlasCoreTypeIsKept) {
  const Result r =
      RunGreenrl("bench ppo-cartpole --seeds 1 --steps 256 --set eval.final_episodes=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const bool openblas = r.output.find("\nblas: OpenBLAS, ") != std::string::npos;
  const Result haswell =
      RunCommand("OPENBLAS_CORETYPE=Haswell " + std::string(test_paths::GreenrlBin()) +
                 " bench ppo-cartpole --seeds 1 --steps 256 --set eval.final_episodes=1 2>&1");
  const std::string& out = haswell.output;
  EXPECT_EQ(haswell.exit_code, 0) << out;
  // On a CPU wider than Haswell (AVX-512) the line also names the kernels OpenBLAS would choose.
  const std::string expected =
      openblas ? greenrl::DescribeBlasFor("Haswell", "Haswell", nullptr, greenrl::ThisCpu())
               : "not OpenBLAS";
  EXPECT_NE(out.find("\nblas: " + expected + "\n"), std::string::npos) << out;
  EXPECT_EQ(expected.rfind("OpenBLAS, Haswell kernels (OPENBLAS_CORETYPE=Haswell", 0) == 0,
            openblas);
}

// The launcher (build/bin/greenrl) and greenrl_cli started directly (which then restarts itself
// where OpenBLAS fell back) end up on the same BLAS kernels, described the same way.
TEST(CliTest, LauncherAndDirectStartUseTheSameKernels) {
  const std::string args = " bench ppo-cartpole --seeds 1 --steps 256 --set eval.final_episodes=1";
  const Result launched = RunCommand(std::string(test_paths::GreenrlBin()) + args + " 2>&1");
  const Result direct = RunCommand(std::string(test_paths::GreenrlCliBin()) + args + " 2>&1");
  ASSERT_EQ(launched.exit_code, 0) << launched.output;
  ASSERT_EQ(direct.exit_code, 0) << direct.output;
  auto blas_line = [](const std::string& out) {
    const size_t at = out.find("\nblas: ");
    return at == std::string::npos ? std::string("(none)")
                                   : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(blas_line(launched.output), "(none)") << launched.output;
  EXPECT_EQ(blas_line(launched.output), blas_line(direct.output));
}

// The launcher sets OMP_WAIT_POLICY=PASSIVE where it is unset, so that the OpenMP worker of
// threads.torch 2 sleeps when idle; greenrl_cli started directly (OPENBLAS_CORETYPE set, so it
// does not restart) and a user's own ACTIVE keep their policy, and a run says its idle threads
// busy-wait.
TEST(CliTest, LauncherMakesOpenMpIdleThreadsSleep) {
  const std::string args =
      " train --env CartPole-v1 --algo dqn --set threads.torch=2 --dry-run "
      "--out " +
      Dir("omp_wait") + " 2>&1";
  const std::string spin = "greenrl: threads.torch 2: OpenMP's idle threads busy-wait";
  Result r = RunCommand("env -u OMP_WAIT_POLICY " + std::string(test_paths::GreenrlBin()) + args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(spin), std::string::npos) << r.output;
  r = RunCommand("env -u OMP_WAIT_POLICY OPENBLAS_CORETYPE=Haswell " +
                 std::string(test_paths::GreenrlCliBin()) + args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(spin + " (OMP_WAIT_POLICY unset)"), std::string::npos) << r.output;
  r = RunCommand("env OMP_WAIT_POLICY=active " + std::string(test_paths::GreenrlBin()) + args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(spin + " (OMP_WAIT_POLICY is active)"), std::string::npos) << r.output;
  r = RunCommand("env OMP_WAIT_POLICY=passive " + std::string(test_paths::GreenrlCliBin()) + args);
  EXPECT_EQ(r.output.find(spin), std::string::npos) << r.output;
}

// An env of the user's own: examples/custom_env.cc registers Corridor-v0 and runs greenrl's CLI.
// envs lists it after the built-in ones; PPO learns its best return (0.2: nine steps right to the
// goal, each of the first eight costing 0.1, the ninth paying 1), which eval reproduces from
// final.pt; export writes its policy.
TEST(CliTest, CustomEnvExampleTrainsEvaluatesAndExports) {
  const std::string bin = test_paths::CustomEnvBin();
  Result r = RunCommand(bin + " envs 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Hopper-v4\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Corridor-v0\n  observation: Box(0.0, 1.0, (2,), float32)\n"
                          "  action:      Discrete(2)\n  time limit:  100 steps\n"
                          "  reward threshold: 0.2\n"),
            std::string::npos)
      << r.output;
  EXPECT_LT(r.output.find("Hopper-v4\n"), r.output.find("Corridor-v0\n"));
  const std::string out = Dir("corridor");
  r = RunCommand(bin +
                 " train --env Corridor-v0 --algo ppo --set n_timesteps=20000 --quiet --out " +
                 out + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl train: ppo on Corridor-v0, seed 0"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("eval return    0.20 ± 0.00 (10 deterministic episodes)"),
            std::string::npos)
      << r.output;
  r = RunCommand(bin + " eval --run " + out + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("return         0.20 ± 0.00 over 10 deterministic episodes\n"
                          "  steps          90 (mean episode length 9.0)\n"),
            std::string::npos)
      << r.output;
  r = RunCommand(bin + " export --run " + out + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/policy.torchscript.pt"));
  // The run names the program that knows Corridor-v0: config.yaml's first line, the error of
  // greenrl itself (which does not), and the commands the program suggests.
  std::stringstream yaml_text;
  yaml_text << std::ifstream(out + "/config.yaml").rdbuf();
  const std::string yaml = yaml_text.str();
  EXPECT_EQ(yaml.rfind("# trained by greenrl_example_custom_env, a program that registers envs "
                       "of its own: run its train, eval and export\n",
                       0),
            0u)
      << yaml;
  r = RunGreenrl("eval --run " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("got 'Corridor-v0'; one of: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; this run was trained by greenrl_example_custom_env, which registers "
                          "envs of its own: use that program\n"),
            std::string::npos)
      << r.output;
  // Its data-parallel ranks keep the name (launch starts them under it).
  const std::string dp = Dir("corridor_dp");
  r = RunCommand(bin + " launch --nproc 2 -- train --env Corridor-v0 --algo ppo --set " +
                 "n_timesteps=2048 --set eval.final_episodes=1 --quiet --out " + dp + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::stringstream dp_yaml;
  dp_yaml << std::ifstream(dp + "/config.yaml").rdbuf();
  EXPECT_EQ(dp_yaml.str().rfind("# trained by greenrl_example_custom_env, a program that ", 0), 0u)
      << dp_yaml.str();
  EXPECT_NE(dp_yaml.str().find("\n# trained by 2 data-parallel ranks: greenrl_example_custom_env "
                               "launch --nproc 2 -- train"),
            std::string::npos)
      << dp_yaml.str();
  r = RunCommand(bin + " train --resume " + out + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("start a new run from it: greenrl_example_custom_env train --config " +
                          out + "/config.yaml --trained-agent " + out),
            std::string::npos)
      << r.output;
  r = RunCommand(bin + " train --env Corridor-v1 --algo ppo --quiet --out " + Dir("corridor_bad") +
                 " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("Pusher-v5, Corridor-v0"), std::string::npos) << r.output;
}

// README's `--config configs/...` from a folder without configs/: the error names the preset
// where it exists (for this build-tree binary, the source tree's) and nothing is trained.
TEST(CliTest, ConfigPathOutsideACheckoutNamesThePreset) {
  const std::string cwd = Dir("config_elsewhere");
  fs::create_directories(cwd);
  const Result r = RunCommand("cd " + cwd + " && " + std::string(test_paths::GreenrlBin()) +
                              " train --config configs/ppo/cartpole.yaml 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string preset = SourceTreeDir() + "/configs/ppo/cartpole.yaml";
  EXPECT_NE(r.output.find("greenrl: error: --config: got 'configs/ppo/cartpole.yaml'; an existing, "
                          "readable YAML file (no such file here; this preset is at " +
                          preset + ": greenrl train --config " + preset + ")"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(cwd + "/runs")) << "no run directory for refused input";
  // A path of no preset keeps the plain message.
  const Result other = RunCommand("cd " + cwd + " && " + std::string(test_paths::GreenrlBin()) +
                                  " train --config configs/ppo/nothing.yaml 2>&1");
  EXPECT_EQ(other.exit_code, 2) << other.output;
  EXPECT_NE(other.output.find("an existing, readable YAML file (no such file)"), std::string::npos)
      << other.output;
}

// A flag that takes one value given twice is bad input, named (it was an uncaught exception,
// exit code 134, for --config and --algo, which the flag hints read).
TEST(CliTest, OneValueFlagGivenTwiceIsNamed) {
  for (const std::string& flags :
       {"--config " + Preset() + " --config " + Preset(), std::string("--algo ppo --algo sac")}) {
    const std::string flag = flags.substr(0, flags.find(' '));
    ExpectRefused(
        RunGreenrl("train " + flags + " --dry-run"),
        "greenrl: error: " + flag + ": given 2 times; once (see `greenrl train --help`)\n");
  }
}

// A misspelt flag: named, with the command's flag it is closest to; exit code 2.
TEST(CliTest, MisspeltFlagSuggestsTheCommandsOwn) {
  Result r = RunGreenrl("eval --run " + Dir("nothing") + " --bset");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("greenrl: error: --bset is no flag of `greenrl eval`: did you mean "
                          "'--best'? (see `greenrl eval --help`)"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --config " + Preset() + " --sed 3");  // not "... expected: 3 --sed"
  EXPECT_NE(r.output.find("greenrl: error: --sed is no flag of `greenrl train`: did you mean one "
                          "of '--set', '--seed'? (see `greenrl train --help`)\n"),
            std::string::npos)
      << r.output;
  // Every unknown flag, in the order given, with a guess where one is close (CLI11's list was
  // reversed and mixed the values in: "not expected: 4 --nenvs 5000 --stepz").
  r = RunGreenrl("train --config " + Preset() + " --stepz 5000 --nenvs 4 --sed 3 --dry-run");
  EXPECT_NE(r.output.find("greenrl: error: --stepz is no flag of `greenrl train`; --nenvs is no "
                          "flag of `greenrl train`; --sed is no flag of `greenrl train`: did you "
                          "mean one of '--set', '--seed'? (see `greenrl train --help`)\n"),
            std::string::npos)
      << r.output;
  // Beside CleanRL's (or rl-zoo's) flags, a negative value is no flag.
  r = RunGreenrl("train --config " + Preset() + " --total-timesteps 5 --bogus -5 --dry-run");
  EXPECT_NE(r.output.find("--bogus is no flag of `greenrl train`"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("-5 is no flag"), std::string::npos) << r.output;
  // The misspelling left --run unset: CLI11's "required" error, and the flag it was meant to be.
  r = RunGreenrl("eval --bset");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("greenrl: error: --run is required; --bset is no flag of `greenrl "
                          "eval`: did you mean '--best'? (see `greenrl eval --help`)"),
            std::string::npos)
      << r.output;
  // The run directory without --run (`greenrl report` takes it so), or a checkpoint in it.
  r = RunGreenrl("eval " + Dir("no_flag_run"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("greenrl: error: --run is required: the run directory goes after it, "
                          "`greenrl eval --run " +
                          Dir("no_flag_run") + "` (see `greenrl eval --help`)\n"),
            std::string::npos)
      << r.output;
  const std::string ckpt_run = Dir("ckpt_run");  // Dir() empties it: once
  fs::create_directories(ckpt_run + "/checkpoints");
  std::ofstream(ckpt_run + "/checkpoints/best.pt") << "x";
  r = RunGreenrl("export --run " + ckpt_run + "/checkpoints/best.pt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("; a run directory, not a checkpoint in it: --run " + ckpt_run +
                          " --best (without --best or --checkpoint: final.pt, or an unfinished "
                          "run's newest resume checkpoint)\n"),
            std::string::npos)
      << r.output;
  std::ofstream(ckpt_run + "/checkpoints/step_000000002048.pt") << "x";
  r = RunGreenrl("eval --run " + ckpt_run + "/checkpoints/step_000000002048.pt");
  EXPECT_NE(r.output.find("--run " + ckpt_run + " --checkpoint 2048 (without"), std::string::npos)
      << r.output;
  // A preset's near name, and a key of rl-zoo's under a --set.
  r = RunGreenrl("train --config " + SourceTreeDir() + "/configs/ppo/ant.yml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("an existing, readable YAML file (no such file; did you mean '" +
                          SourceTreeDir() + "/configs/ppo/ant.yaml'?)\n"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --config " + Preset() + " --set env_kwargs.use_contact_forces=true");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("env_kwargs.use_contact_forces: got 'true'; unknown key (rl-zoo's "
                          "arguments to the env's constructor, such as terminate_when_unhealthy "
                          "or reset_noise_scale; greenrl's envs take none: each registered id "
                          "runs with its Gymnasium defaults, e.g. Ant-v4 with "
                          "use_contact_forces=False, as README's \"MuJoCo locomotion\" describes "
                          "per env; a value equal to the default is refused too)"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --config " + Preset() + " --qiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("did you mean '--quiet'?"), std::string::npos) << r.output;
  r = RunGreenrl("train --config " + Preset() + " --frobnicate");  // nothing close: as before
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.find("did you mean"), std::string::npos) << r.output;
  // rl-zoo's flags (zoo_flags_test has the table): greenrl's spelling, with the values given.
  ExpectRefused(RunGreenrl("train --config " + Preset() + " -n 5000 -params gamma:0.9 --out " +
                           Dir("zoo_flags")),
                "greenrl: error: rl-zoo's flags, which `greenrl train` spells otherwise: -n 5000 "
                "-> --set n_timesteps=5000; -params gamma:0.9 -> --set gamma=0.9 (see `greenrl "
                "train --help`)\n");
  EXPECT_FALSE(fs::exists(Dir("zoo_flags")));
  // policy_kwargs stays one whole value, and the --set it suggests reads it for the algorithm of
  // the --config file (a preset's algo key, an rl-zoo file's name): SAC's one net_arch key.
  const std::string sac_pendulum = SourceTreeDir() + "/configs/sac/pendulum.yaml";
  ExpectRefused(RunGreenrl("train --config " + sac_pendulum +
                           " -params 'policy_kwargs:dict(net_arch=[64, 64])'"),
                "-> --set 'policy_kwargs=dict(net_arch=[64, 64])' (see");
  ExpectSucceedsSaying(RunGreenrl("train --config " + sac_pendulum +
                                  " --set 'policy_kwargs=dict(net_arch=[64, 64])' --dry-run"),
                       "\n  net_arch: [64, 64]");
  // rl-zoo's --seed -1 (random), refused by --seed's own range, with the other flags' spellings.
  ExpectRefused(RunGreenrl("train --config " + Preset() + " --eval-freq -1 --seed -1"),
                "--seed: got '-1'; an integer in [0, 4294967295] (rl-zoo's --seed -1 draws a "
                "random seed; here give any N, or leave --seed out for the preset's seed, default "
                "0); rl-zoo's flag, which `greenrl train` spells otherwise: --eval-freq -1 -> "
                "--set eval.freq=0");
  // A misspelt greenrl flag beside them is named in the same line.
  ExpectRefused(RunGreenrl("train --config " + Preset() + " -n 5000 --dry-rn"),
                "-n 5000 -> --set n_timesteps=5000; --dry-rn is no flag of `greenrl train`: did "
                "you mean '--dry-run'? (see `greenrl train --help`)\n");
  ExpectRefused(RunGreenrl("eval --load-best"),
                "greenrl: error: --run is required; rl-zoo's flag, which `greenrl eval` spells "
                "otherwise: --load-best -> --best (see `greenrl eval --help`)\n");
  // rl-zoo's --seed -1: eval's own default is the run's seed, train's the preset's.
  ExpectRefused(RunGreenrl("eval --run x --seed -1"), "leave --seed out for the run's own seed)");
  ExpectRefused(RunGreenrl("train --config " + Preset() + " --seed -1"),
                "leave --seed out for the preset's seed, default 0)");
}

// `greenrl --version`: the project's version, exit code 0.
TEST(CliTest, VersionFlagPrintsTheVersion) {
  const Result r = RunGreenrl("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, std::string("greenrl ") + GREENRL_VERSION + "\n");
}

// No command: the usage and a line saying none was given; an unknown one is named. Exit code 2.
TEST(CliTest, MissingOrUnknownCommandIsNamed) {
  const Result bare = RunCommand(std::string(test_paths::GreenrlBin()) + " 2>&1");
  EXPECT_EQ(bare.exit_code, 2) << bare.output;
  EXPECT_NE(bare.output.find("Usage: "), std::string::npos) << bare.output;
  EXPECT_NE(
      bare.output.find("greenrl: error: command: none given; one of train, eval, export, bench, "
                       "meters, envs, keys, launch, report\n"),
      std::string::npos)
      << bare.output;
  const Result unknown = RunGreenrl("frobnicate");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("greenrl: error: command: got 'frobnicate'; expected one of train"),
            std::string::npos)
      << unknown.output;
  EXPECT_NE(RunGreenrl("trian").output.find("greenrl: error: command: got 'trian'; did you mean "
                                            "'train'? expected one of train"),
            std::string::npos);
  EXPECT_NE(RunGreenrl("enjoy").output.find("got 'enjoy'; did you mean 'eval'? expected"),
            std::string::npos);  // rl-zoo's enjoy.py
}

// Without /proc (a mount namespace where it is unmounted; skipped where unshare is not allowed)
// the launcher finds greenrl_cli from argv[0]'s directory, or from PATH for a bare name.
TEST(CliTest, LauncherFindsItsProgramWithoutProc) {
  if (RunCommand("unshare -m --propagation private sh -c 'umount -l /proc' 2>/dev/null")
          .exit_code != 0) {
    GTEST_SKIP() << "cannot unmount /proc in a new mount namespace here (needs root)";
  }
  const std::string bin = test_paths::GreenrlBin();
  const std::string dir = bin.substr(0, bin.rfind('/'));
  const Result r = RunCommand(
      "unshare -m --propagation private sh -c 'umount -l /proc && test ! -e /proc/self && " + bin +
      " envs && PATH=" + dir + " greenrl envs' 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  size_t found = 0;
  for (size_t at = 0; (at = r.output.find("greenrl envs: the registered", at)) != std::string::npos;
       ++at) {
    ++found;
  }
  EXPECT_EQ(found, 2u) << r.output;
}

// A launcher without greenrl_cli beside it says which file it looked for, with exit code 1.
TEST(CliTest, LauncherWithoutItsProgramNamesIt) {
  const std::string dir = Dir("lone_launcher");
  fs::create_directories(dir);
  fs::copy_file(test_paths::GreenrlBin(), dir + "/greenrl", fs::copy_options::overwrite_existing);
  const Result r = RunCommand(dir + "/greenrl envs 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string expected = fs::canonical(dir).string() + "/greenrl_cli (No such file";
  EXPECT_NE(r.output.find("greenrl: error: cannot start " + expected), std::string::npos)
      << r.output;
}

// --out naming a file is refused as a file, before anything is written.
TEST(CliTest, OutThatIsAFileIsNamedAsAFile) {
  const std::string file = Dir("out_file");
  fs::create_directories(fs::path(file).parent_path());
  std::ofstream(file) << "x";
  const Result r = RunGreenrl("train --config " + Preset() + " --quiet --out " + file);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--out: got '" + file + "'; a new or empty directory (it is a file)"),
            std::string::npos)
      << r.output;
}

TEST(CliTest, TrainPrintsSummaryAndEvalReloadsCheckpoint) {
  const std::string out = Dir("run");
  Result r =
      RunGreenrl("train --config " + Preset() + " --set n_timesteps=512 --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* part : {"steps          512", "steps/s", "update path    fused\n", "eval return",
                           "10 deterministic episodes", "best eval      ", "Wh in all",
                           "cpu:process", "estimated", "g CO2e", "world"}) {
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  }
  for (const char* file : {"config.yaml", "metrics.csv", "energy.json", "checkpoints/final.pt"}) {
    EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
  }
  r = RunGreenrl("eval --run " + out + " --episodes 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("over 3 deterministic episodes"), std::string::npos) << r.output;
  // rl-zoo's --deterministic is the default, accepted; with --stochastic it is refused.
  const Result det = RunGreenrl("eval --run " + out + " --episodes 1 --deterministic --quiet");
  EXPECT_EQ(det.exit_code, 0) << det.output;
  EXPECT_NE(det.output.find("over 1 deterministic episode"), std::string::npos) << det.output;
  const Result both = RunGreenrl("eval --run " + out + " --deterministic --stochastic");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--stochastic excludes --deterministic"), std::string::npos)
      << both.output;
  // A run directory given with a trailing slash names its files without a doubled one.
  const std::string slashed = RunGreenrl("eval --run " + out + "/ --episodes 1").output;
  EXPECT_NE(slashed.find(" from " + out + "/checkpoints/final.pt\n"), std::string::npos) << slashed;
  // The evaluation's own cost, as the run measures and prices it; the meters' why once, on
  // stderr, and the summary's meter line naming them only (as a training run's).
  for (const char* part :
       {"steps          ", "wall time      ", "Wh in all", "cpu:process", "estimated",
        "meter          ", "g CO2e", "world",
        "greenrl: energy meter: ", " (why: the 'greenrl: energy meter' line on stderr)\n"}) {
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  }
  // --quiet (as train's): no meter line on stderr, the summary's meter line gives its text.
  const size_t why_at = r.output.find("greenrl: energy meter: ");
  ASSERT_NE(why_at, std::string::npos) << r.output;
  const size_t why_from = why_at + std::string("greenrl: energy meter: ").size();
  const std::string why = r.output.substr(why_from, r.output.find('\n', why_from) - why_from);
  r = RunGreenrl("eval --run " + out + " --episodes 3 --quiet");  // stderr included
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("greenrl: energy meter: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("(why: the 'greenrl: energy meter' line"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  meter          " + why + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("over 3 deterministic episodes"), std::string::npos) << r.output;
  // --stochastic samples actions (rl-zoo's flag); the same seed gives the same return again.
  auto return_line = [](const std::string& output) {
    const size_t at = output.find("  return         ");
    return at == std::string::npos ? std::string() : output.substr(at, output.find('\n', at) - at);
  };
  r = RunGreenrl("eval --run " + out + " --episodes 3 --stochastic");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("over 3 stochastic episodes"), std::string::npos) << r.output;
  const std::string stochastic = return_line(r.output);
  r = RunGreenrl("eval --run " + out + " --episodes 3 --stochastic");
  EXPECT_EQ(return_line(r.output), stochastic);
  EXPECT_FALSE(stochastic.empty());
  r = RunGreenrl("eval --run " + out + " --episodes 0");
  EXPECT_EQ(r.exit_code, 2);
  ExpectRefused(RunGreenrl("eval --run " + out + " --episodes 10001"),
                "greenrl: error: --episodes: got '10001'; an integer in [1, 10000] (eval.episodes' "
                "range)\n");
  r = RunGreenrl("eval --run " + Dir("missing"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--run"), std::string::npos) << r.output;
  // The run's checkpoints folder given for the run: the run is named.
  ExpectRefused(RunGreenrl("eval --run " + out + "/checkpoints"),
                "; this is a run's checkpoints folder: --run " + out + "\n");
  // greenrl export: the deterministic policy as a TorchScript module, beside the run by default
  // (policy_export_test loads it and compares its actions).
  r = RunGreenrl("export --run " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/policy.torchscript.pt"));
  for (const char* part :
       {"greenrl export: ppo on CartPole-v1 from ", "checkpoints/final.pt", "policy.torchscript.pt",
        "float32 [N, 4] raw observations -> int64 [N] "
        "actions (argmax)",
        "torch.jit.load("}) {
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  }
  r = RunGreenrl("export --run " + out + " --out " + out + "/cartpole.pt");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/cartpole.pt"));
  r = RunGreenrl("export --run " + out + " --out " + out + "/cartpole.pt");  // replaces its own
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // An --out that is another file (the run's final.pt, its config.yaml) is refused and left as
  // it was: eval still loads the run.
  const std::string final_pt = greenrl::ReadFile(out + "/checkpoints/final.pt");
  for (const std::string& other : {out + "/checkpoints/final.pt", out + "/config.yaml"}) {
    ExpectRefused(RunGreenrl("export --run " + out + " --out " + other),
                  "greenrl: error: --out: got '" + other +
                      "'; a new file, or a module greenrl "
                      "export wrote (replaced); this file is something else (a checkpoint, config "
                      "or report of a run?) and is left as it is: give another path\n");
  }
  EXPECT_EQ(greenrl::ReadFile(out + "/checkpoints/final.pt"), final_pt);
  // A .onnx name is refused before any work: the file would hold TorchScript.
  ExpectRefused(RunGreenrl("export --run " + out + " --out " + out + "/policy.onnx"),
                "greenrl: error: --out: got '" + out +
                    "/policy.onnx'; a TorchScript file, e.g. policy.torchscript.pt (greenrl "
                    "export writes TorchScript, not ONNX; for ONNX, load it in Python with "
                    "torch.jit.load and give it to torch.onnx.export with dynamo=False)\n");
  EXPECT_FALSE(fs::exists(out + "/policy.onnx"));
  EXPECT_EQ(RunGreenrl("eval --run " + out + " --episodes 1").exit_code, 0);
  // A flag's CLI11 error points at the command's own help.
  EXPECT_EQ(RunGreenrl("report " + out + " --target-metric eval/mean_reward").output,
            "greenrl: error: --target-metric requires --target-return (see `greenrl report "
            "--help`)\n");
  // An --out whose folder is missing is refused before any work (it failed after loading the
  // agent, exit 1); report's too.
  ExpectRefused(RunGreenrl("export --run " + out + " --out " + out + "/no/such/p.pt"),
                "greenrl: error: --out: got '" + out +
                    "/no/such/p.pt'; a file in an existing folder (" + out +
                    "/no/such does not exist: create it first)\n");
  ExpectRefused(RunGreenrl("report " + out + " --out " + out + "/no/such/r.html"),
                "greenrl: error: --out: got '" + out +
                    "/no/such/r.html'; a file in an existing "
                    "folder (" +
                    out + "/no/such does not exist: create it first)\n");
  // An --out that is a directory: refused before any work, with a file path to give.
  ExpectRefused(RunGreenrl("export --run " + out + " --out " + out),
                "greenrl: error: --out: got '" + out + "'; a file path (it is a directory: e.g. " +
                    "--out " + out + "/policy.torchscript.pt)\n");
  ExpectRefused(RunGreenrl("report " + out + " --out " + out),
                "greenrl: error: --out: got '" + out + "'; a file path (it is a directory: e.g. " +
                    "--out " + out + "/report.html)\n");
  r = RunGreenrl("export --run " + Dir("missing"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--run"), std::string::npos) << r.output;
  // eval.save_best: this run's only evaluation (the final one) is its best; --best loads it.
  EXPECT_TRUE(fs::exists(out + "/checkpoints/best.pt"));
  r = RunGreenrl("eval --run " + out + " --episodes 3 --best");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from " + out + "/checkpoints/best.pt\n"), std::string::npos) << r.output;
  r = RunGreenrl("export --run " + out + " --best");  // beside the final one, not over it
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  wrote          " + out + "/policy_best.torchscript.pt\n"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(fs::exists(out + "/policy.torchscript.pt"));
  // --trained-agent (and rl-zoo's -i) start a new run from this one's agent; it names the file
  // and the agent's energy in the summary. With --resume, or not this run's env, it is refused.
  const std::string more = Dir("train_more");
  r = RunGreenrl("train --config " + Preset() + " --set n_timesteps=512 --quiet --trained-agent " +
                 out + " --out " + more);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  trained agent  " + out + "/checkpoints/final.pt (its training used "),
            std::string::npos)
      << r.output;
  std::stringstream config_yaml;
  config_yaml << std::ifstream(more + "/config.yaml").rdbuf();
  EXPECT_NE(config_yaml.str().find("trained_agent: " + out + "  #"), std::string::npos);
  r = RunGreenrl("train --config " + Preset() + " --set n_timesteps=512 -i " + out +
                 "/checkpoints/best.pt --quiet --out " + Dir("train_more_best"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  trained agent  " + out + "/checkpoints/best.pt ("), std::string::npos)
      << r.output;
  ExpectRefused(RunGreenrl("train --resume " + more + " --trained-agent " + out),
                "--resume excludes --trained-agent");
  ExpectRefused(RunGreenrl("train --config " + Preset() + " --env Acrobot-v1 --quiet " +
                           "--trained-agent " + out + " --out " + Dir("acrobot")),
                "--trained-agent (trained_agent): got '" + out +
                    "'; a run of this run's algo and env_id, ppo on Acrobot-v1 (it is a ppo run "
                    "on CartPole-v1)");
}

// A thread pool above the machine's cores is said (the run goes on): the threads take turns.
// threads.torch takes at most 256, so on a machine of 256 cores or more (or an unknown count)
// nothing is above them and nothing is said.
TEST(CliTest, ThreadPoolsAboveTheCoresAreSaid) {
  const unsigned cores = std::thread::hardware_concurrency();
  const Result r =
      RunGreenrl("train --config " + Preset() + " --set threads.torch=256 --set threads.env=" +
                 std::to_string(cores) + " --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const bool above = cores > 0 && cores < 256;
  EXPECT_EQ(r.output.find("threads.torch 256 is above this machine's " + std::to_string(cores) +
                          " core" + (cores == 1 ? "" : "s") +
                          ": the threads take turns on them, which costs time and energy "
                          "(README \"Threads\"); " +
                          std::to_string(cores) + " or fewer\n") != std::string::npos,
            above)
      << r.output;
  EXPECT_EQ(r.output.find("threads.env " + std::to_string(cores) + " is above"), std::string::npos)
      << r.output;
}

// greenrl keys: every key of an algorithm with its SB3 default and meaning, as a preset that
// trains as it stands; an unknown key's error points to it instead of listing every key.
TEST(CliTest, KeysListsEveryKeyWithItsDefaultAsAPreset) {
  for (const auto& [algo, lines] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"ppo", {"algo: ppo  # ", "n_steps: 2048  # ", "learning_rate: 0.0003  # "}},
           {"dqn", {"algo: dqn  # ", "buffer_size: 1000000  # ", "learning_rate: 0.0001  # "}},
           {"sac", {"algo: sac  # ", "env_id: Pendulum-v1  # ", "tau: 0.005  # "}}}) {
    Result r = RunGreenrl("keys --algo " + algo);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind("# greenrl keys --algo " + algo + ": every key", 0), 0u) << r.output;
    for (const std::string& line : lines) {
      EXPECT_NE(r.output.find("\n" + line), std::string::npos) << line << "\n" << r.output;
    }
    // SB3's keys fixed at their default, as comments after the keys.
    EXPECT_NE(r.output.find("\n# SB3's keys that greenrl has at SB3's default only: a preset may "
                            "write them at that value (no effect), another value is refused\n"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("# n_steps: 1  # greenrl's DQN has SB3's default, one-step TD "
                            "targets") != std::string::npos,
              algo == "dqn")
        << r.output;
    EXPECT_EQ(
        r.output.find("\n# policy_kwargs.n_critics: 2  # greenrl's SAC has") != std::string::npos,
        algo == "sac")
        << r.output;
    const std::string dir = Dir("keys_" + algo);
    fs::create_directories(dir);
    std::ofstream(dir + "/preset.yaml") << r.output;
    r = RunGreenrl("train --config " + dir +
                   "/preset.yaml --set n_timesteps=200 --set "
                   "eval.final_episodes=1 --quiet --out " +
                   dir + "/run");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  ExpectRefused(RunGreenrl("keys --algo sca"),
                "greenrl: error: --algo: got 'sca'; one of: ppo, dqn, sac\n");
  // A bad value from train's --env or --algo names the flag beside the key; the same value
  // from --set names the key alone.
  ExpectRefused(RunGreenrl("train --env Foo-v1"),
                "greenrl: error: --env (env_id): got 'Foo-v1'; one of: CartPole-v1, Acrobot-v1, ");
  ExpectRefused(RunGreenrl("train --set env_id=Foo-v1"),
                "greenrl: error: env_id: got 'Foo-v1'; one of: CartPole-v1, Acrobot-v1, ");
  // An id not registered may be an env of the user's own (the example's Corridor-v0), which only
  // their program registers.
  ExpectRefused(RunGreenrl("train --env Corridor-v0"),
                ", Pusher-v5; an env of your own is trained, evaluated and exported by your "
                "program that registers it (README \"Your own environment\")\n");
  ExpectRefused(RunGreenrl("train --env Cartpole-v1"), "did you mean 'CartPole-v1'? one of: ");
  ExpectRefused(RunGreenrl("train --trained-agent /nonexistent --dry-run"),
                "greenrl: error: --trained-agent (trained_agent): got '/nonexistent'; a run "
                "directory written by greenrl train");
  // An empty value is no absence: refused with what the flag takes.
  ExpectRefused(RunGreenrl("train --out ''"),
                "greenrl: error: --out: got ''; a directory path (leave --out out for a new "
                "runs/<env_id>_<algo>_s<seed>_<UTC time>)\n");
  ExpectRefused(RunGreenrl("train --resume ''"),
                "greenrl: error: --resume: got ''; a run directory written by `greenrl train`\n");
  ExpectRefused(RunGreenrl("train -i '' --dry-run"),
                "greenrl: error: --trained-agent: got ''; a run directory, or its "
                "checkpoints/best.pt, final.pt or step_<12 digits>.pt\n");
  // --seed and --set seed= must agree, as --env and --set env_id= do.
  ExpectRefused(RunGreenrl("train --seed 3 --set seed=5 --dry-run"),
                "greenrl: error: --seed: got '3'; the same value as --set seed=5, or only one "
                "of the two\n");
  EXPECT_EQ(RunGreenrl("train --seed 3 --set seed=3 --dry-run --quiet").exit_code, 0);
  ExpectRefused(RunGreenrl("train --env CartPole-v1 --algo a2c"),
                "greenrl: error: --algo (algo): got 'a2c'; one of: ppo, dqn, sac (a2c is one of "
                "rl-baselines3-zoo's other algorithms, which greenrl does not implement)\n");
  ExpectRefused(RunGreenrl("train --config " + Preset() + " --set lerning_rate=1"),
                "greenrl: error: lerning_rate: got '1'; unknown key; did you mean "
                "'learning_rate'? every key with its default: `greenrl keys --algo ppo`\n");
}

// energy.meter: rapl where RAPL cannot be read: train refuses before writing anything, and
// meters says a run would not start (both exit 2), rather than an estimate in RAPL's place.
TEST(CliTest, RequestedRaplThatCannotBeReadIsRefused) {
  const std::string out = Dir("rapl_refused");
  const std::string set = " --set energy.meter=rapl --set energy.powercap_root=" + out + "_none";
  const Result train = RunGreenrl("train --config " + Preset() + " --out " + out + set);
  ExpectRefused(train,
                "greenrl: error: energy.meter: got 'rapl'; auto or estimator on this "
                "machine, where RAPL is unavailable (" +
                    out + "_none does not exist");
  EXPECT_FALSE(fs::exists(out));
  const Result meters = RunGreenrl("meters" + set);
  ExpectRefused(meters, "greenrl: error: energy.meter: got 'rapl'");
  EXPECT_NE(meters.output.find("(a run would not start)"), std::string::npos) << meters.output;
}

// greenrl meters reads a powercap tree wherever energy.powercap_root points (containers mount
// the host's sysfs elsewhere) and says which source a run would use.
TEST(CliTest, MetersReadsPowercapTreeFromSetting) {
  const std::string root = Dir("powercap");
  const std::string zone = root + "/intel-rapl:0";
  fs::create_directories(zone);
  std::ofstream(zone + "/name") << "package-0\n";
  std::ofstream(zone + "/energy_uj") << "123456789\n";
  std::ofstream(zone + "/max_energy_range_uj") << "262143328850\n";
  const Result r = RunGreenrl("meters --set energy.powercap_root=" + root + " --watch 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rapl                 USED               cpu:package-0"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("a run would use: using RAPL (measured) under " + root),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("t=   1s  cpu:package-0 0.000 J (0.00 W, measured)"), std::string::npos)
      << r.output;
  EXPECT_EQ(RunGreenrl("meters --set energy.powercap_rot=x").exit_code, 2);
  // A run's key that meters does not read is refused, not silently ignored.
  const Result other = RunGreenrl("meters --set n_envs=3");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.output.find("--set: got 'n_envs=3'; a key that meters reads: energy.meter, "
                              "energy.powercap_root, energy.watts_per_core, energy.hwmon_root, "
                              "energy.gpu, energy.nvml_library"),
            std::string::npos)
      << other.output;
}

// Without --quiet, each periodic evaluation's result (as SB3's EvalCallback prints it) and each
// energy-budget decision are said on stderr as they come: here the first rung, passed over on the
// CPU, at the first forecast (no warm-up, a tiny threshold).
TEST(CliTest, PeriodicEvaluationsAndBudgetDecisionsAreSaid) {
  const Result r = RunGreenrl(
      "train --config " + Preset() +
      " --set n_timesteps=1024 --set eval.freq=512 --set eval.episodes=2 "
      "--set eval.final_episodes=2 --set energy.budget_wh=1 --set energy.budget.warmup_steps=0 "
      "--set energy.budget.reduced_precision_at=1e-9 --set energy.budget.skip_at=100 "
      "--set energy.budget.throttle_at=100 --out " +
      Dir("said_as_they_come"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\ngreenrl: eval at step 512: mean reward "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" over 2 episodes, length "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" (new best: checkpoints/best.pt)\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("greenrl: eval at step 1024"), std::string::npos)  // the summary's
      << r.output;
  EXPECT_NE(r.output.find("\ngreenrl: energy budget: reduce_precision (passed over): step 256: "),
            std::string::npos)
      << r.output;
  // An intensity in kg/kWh written as g/kWh is warned of (0 is a figure, and stays quiet).
  const Result kg =
      RunGreenrl("train --config " + Preset() + " --set carbon.intensity_g_per_kwh=0.4 --dry-run");
  EXPECT_EQ(kg.exit_code, 0) << kg.output;
  EXPECT_NE(kg.output.find("greenrl: carbon.intensity_g_per_kwh 0.4 is far below every national "
                           "average in greenrl's table (the lowest, "),
            std::string::npos)
      << kg.output;
  EXPECT_NE(kg.output.find("0.4 kg/kWh would be --set carbon.intensity_g_per_kwh=400\n"),
            std::string::npos)
      << kg.output;
  EXPECT_EQ(
      RunGreenrl("train --config " + Preset() + " --set carbon.intensity_g_per_kwh=0 --dry-run")
          .output.find("far below every national"),
      std::string::npos);
  // A warning too: VecNormalize's keys given without normalize: true do nothing.
  const Result inert = RunGreenrl("train --config " + Preset() +
                                  " --set normalize_kwargs.norm_reward=false --dry-run");
  EXPECT_NE(inert.output.find("greenrl: normalize_kwargs.norm_reward has no effect with "
                              "normalize: false (they configure VecNormalize, which normalize: "
                              "true turns on)\n"),
            std::string::npos)
      << inert.output;
  // Not for their defaults, which a dry run's YAML (a preset to reuse) lists.
  const std::string listed = Dir("listed_defaults") + ".yaml";
  const Result dry = RunCommand(std::string(test_paths::GreenrlBin()) + " train --config " +
                                Preset() + " --dry-run 2>/dev/null");  // the YAML, on stdout
  ASSERT_EQ(dry.exit_code, 0) << dry.output;
  greenrl::WriteFileAtomic(listed, dry.output.substr(dry.output.find("algo:")));
  const Result again = RunGreenrl("train --config " + listed + " --dry-run");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("normalize_kwargs:"), std::string::npos) << again.output;
  EXPECT_EQ(again.output.find("no effect with normalize"), std::string::npos) << again.output;
}

// A budget far below what the preset needs (about 0.013 Wh here) ends the run on budget; the
// checkpoint it leaves evaluates.
TEST(CliTest, BudgetEndsRunAndCheckpointEvaluates) {
  const std::string out = Dir("budget");
  Result r = RunGreenrl("train --config " + Preset() +
                        " --set energy.budget_wh=0.002 --set energy.budget.warmup_steps=256 "
                        "--quiet --out " +
                        out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the budget ended the run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("eval return    skipped"), std::string::npos) << r.output;
  r = RunGreenrl("eval --run " + out + " --episodes 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/emissions.csv"));
  EXPECT_TRUE(fs::exists(out + "/power.csv"));
  // The same budget cannot continue it (exit 2, before any work); a larger one trains to the end.
  r = RunGreenrl("train --resume " + out + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("energy.budget_wh: got '0.002'; a budget above the 0.002 Wh that "
                          "stopped this run at step "),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --resume " + out + " --set energy.budget_wh=1 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("steps          100096"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("finished within it"), std::string::npos) << r.output;
}

// An rl-zoo hyperparameter file trains as it is: --env picks the section, the file's name the
// algorithm; config.yaml holds the section's values; without --env the sections are listed.
TEST(CliTest, RlZooHyperparamFileTrainsTheSectionOfEnv) {
  const std::string zoo = SourceTreeDir() + "/greenrl/train/testdata/rl_zoo/ppo.yml";
  const std::string out = Dir("zoo");
  Result r = RunGreenrl("train --config " + zoo +
                        " --env CartPole-v1 --set n_timesteps=512 --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ppo on CartPole-v1"), std::string::npos) << r.output;
  std::ifstream in(out + "/config.yaml");
  const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(saved.find("\nn_steps: 32  #"), std::string::npos) << saved;
  EXPECT_NE(saved.find("\nlearning_rate: lin_0.001  #"), std::string::npos) << saved;
  r = RunGreenrl("train --config " + zoo + " --quiet --out " + Dir("zoo_no_env"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // The sections greenrl can train are listed, then the env ids it has not (rl-zoo's "atari"
  // section, no env id, left out).
  EXPECT_NE(r.output.find("greenrl: error: --env: got ''; the env id of one of the sections of "
                          "the rl-zoo file " +
                          zoo +
                          ": Pendulum-v1, CartPole-v1, MountainCar-v0, "
                          "MountainCarContinuous-v0, Acrobot-v1, Ant-v4, Swimmer-v4, "
                          "HalfCheetah-v4, Hopper-v4, Humanoid-v4, Walker2d-v4; greenrl has no "
                          "CarRacing-v2 (--env ID, or --set env_id=ID)\n"),
            std::string::npos)
      << r.output;
  // A version the file has no section for: the file's other version of it is named.
  r = RunGreenrl("train --config " + zoo + " --env Hopper-v5 --quiet --out " + Dir("zoo_v5"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("Walker2d-v4; greenrl has no CarRacing-v2 (the file's Hopper-v4 is "
                          "another version of Hopper-v5: a section is taken by its exact id; copy "
                          "it under Hopper-v5, "
                          "or see configs/ for greenrl's presets, which --env can point at "
                          "another version)\n"),
            std::string::npos)
      << r.output;
  // An id greenrl does not have: no advice to copy the section under it.
  r = RunGreenrl("train --config " + zoo + " --env Hopper-v3 --quiet --out " + Dir("zoo_v3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("(the file's Hopper-v4 is another version of Hopper-v3: a section is "
                          "taken by its exact id)\n"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(Dir("zoo_no_env")));
  // --env and --set env_id= must agree (either alone picks the section).
  r = RunGreenrl("train --config " + zoo +
                 " --env CartPole-v1 --set env_id=Pendulum-v1 --quiet --out " + Dir("zoo_both"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--env: got 'CartPole-v1'; the same value as --set env_id=Pendulum-v1, "
                          "or only one of the two"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(Dir("zoo_both")));
}

// A run trained with normalize: true evaluates after reload with its saved statistics: greenrl
// eval reports exactly the return of the training run's final evaluation (same seed, same
// episodes).
TEST(CliTest, EvalOfNormalizedRunMatchesTrainingsFinalEval) {
  const std::string out = Dir("normalized");
  Result r = RunGreenrl("train --config " + Preset() +
                        " --set normalize=true --set n_timesteps=4096 --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto at = r.output.find("eval return    ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string trained = r.output.substr(at + 15, r.output.find(" (", at) - at - 15);
  r = RunGreenrl("eval --run " + out + " --episodes 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("return         " + trained + " over 10"), std::string::npos)
      << trained << "\n"
      << r.output;
}

// A run without final.pt (stopped by a signal, by the budget, or killed) evaluates from its
// newest resume checkpoint, normaliser statistics included: the same return as the run's own
// periodic evaluation at that step (metrics.csv: 45.3 at 1024 steps, seed 0).
TEST(CliTest, EvalWithoutFinalPtUsesTheNewestResumeCheckpoint) {
  const std::string out = Dir("no_final");
  Result r = RunGreenrl("train --config " + Preset() +
                        " --set normalize=true --set n_timesteps=2048 --set checkpoint_freq=1024"
                        " --set eval.freq=1024 --set eval.episodes=10 --quiet --out " +
                        out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream metrics(out + "/metrics.csv");
  std::string header, line, at_1024;
  std::getline(metrics, header);
  while (std::getline(metrics, line)) {
    if (line.rfind("1024,", 0) == 0) at_1024 = line;
  }
  ASSERT_NE(at_1024.find(",45.3,"), std::string::npos) << header << "\n" << at_1024;
  // --checkpoint (rl-zoo's --load-checkpoint) picks that resume checkpoint while final.pt is
  // there; a step the run has no checkpoint of is refused, naming the ones it has.
  r = RunGreenrl("eval --run " + out + " --episodes 10 --checkpoint 1024");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from " + out + "/checkpoints/step_000000001024.pt\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("return         45.30 ± "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("has no checkpoints/final.pt"), std::string::npos) << r.output;
  ExpectRefused(RunGreenrl("eval --run " + out + " --checkpoint 1000"),
                "greenrl: error: --checkpoint: got '1000'; last, or the step of one of the run's "
                "resume checkpoints: 1024 (checkpoints/step_*.pt; checkpoint_keep keeps the "
                "newest)\n");
  ExpectRefused(RunGreenrl("eval --run " + out + " --checkpoint ''"),
                "greenrl: error: --checkpoint: got ''; a step of one of the run's resume "
                "checkpoints, or last\n");
  ExpectRefused(RunGreenrl("export --run " + out + " --out ''"),
                "greenrl: error: --out: got ''; a file path\n");
  ExpectRefused(RunGreenrl("eval --run " + out + " --load-checkpoint 1000"),
                "--load-checkpoint 1000 -> --checkpoint 1000");
  r = RunGreenrl("export --run " + out + " --checkpoint last");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out + "/policy_step_1024.torchscript.pt")) << r.output;
  fs::remove(out + "/checkpoints/final.pt");
  fs::remove(out + "/checkpoints/normalizer.json");
  r = RunGreenrl("eval --run " + out + " --episodes 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("using its newest resume checkpoint (step 1024)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\n  observations   normalised by the run's VecNormalize statistics "
                          "(frozen)\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("return         45.30 ± "), std::string::npos) << r.output;
  // --quiet, as train's: nothing on stderr; stdout names the checkpoint.
  r = RunGreenrl("eval --run " + out + " --episodes 10 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("using its newest resume checkpoint"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checkpoints/step_000000001024.pt\n"), std::string::npos) << r.output;
  // A resume with another gamma or clip_reward says that the saved normaliser's reward scaling
  // goes on with it (as a run from a trained agent says).
  r = RunGreenrl("train --resume " + out + " --set gamma=0.9 --set n_timesteps=4096 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: note: gamma 0.9 replaces the run's own 0.98: the saved "
                          "normaliser's reward scaling goes on with it from the checkpoint (its "
                          "running returns were discounted with the old one; rl-zoo's "
                          "VecNormalize.load would keep the saved one's)"),
            std::string::npos)
      << r.output;
  // export takes the same checkpoint and its statistics, into a file named by its step (no final
  // policy's name for an unfinished run's).
  r = RunGreenrl("export --run " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  wrote          " + out + "/policy_step_1024.torchscript.pt\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("using its newest resume checkpoint (step 1024)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(the run's VecNormalize statistics inside, frozen)"), std::string::npos)
      << r.output;
  r = RunGreenrl("export --run " + out + " --quiet");  // as eval's: nothing on stderr
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("using its newest resume checkpoint"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("checkpoints/step_000000001024.pt\n"), std::string::npos) << r.output;
  fs::remove_all(out + "/checkpoints");
  r = RunGreenrl("eval --run " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("checkpoints/final.pt or a resume checkpoint"), std::string::npos)
      << r.output;
}

// The DQN CartPole preset through the CLI, shortened to 2,048 steps (1,024 random, then 5
// updates of 128 gradient steps): it trains, writes its run dir, and its checkpoint evaluates
// with the training run's final-evaluation return (same seed, same episodes).
TEST(CliTest, DqnPresetTrainsAndEvalReloadsCheckpoint) {
  const std::string out = Dir("dqn");
  const std::string preset = SourceTreeDir() + "/configs/dqn/cartpole.yaml";
  Result r =
      RunGreenrl("train --config " + preset + " --set n_timesteps=2048 --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dqn on CartPole-v1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("steps          2048"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("update path    fused\n"), std::string::npos) << r.output;
  const auto at = r.output.find("eval return    ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string trained = r.output.substr(at + 15, r.output.find(" (", at) - at - 15);
  std::ifstream metrics(out + "/metrics.csv");
  std::string header;
  std::getline(metrics, header);
  for (const char* key : {"losses/td_loss", "losses/q_values", "charts/epsilon",
                          "charts/learning_rate", "losses/n_updates", "losses/target_updates"}) {
    EXPECT_NE(header.find(key), std::string::npos) << key << "\n" << header;
  }
  r = RunGreenrl("eval --run " + out + " --episodes 10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("return         " + trained + " over 10"), std::string::npos)
      << trained << "\n"
      << r.output;
}

// Bad config files through the CLI: each is exit code 2 with a message naming the problem, and no
// run directory is created.
// --resume names itself when its directory is missing or is not a run directory.
TEST(CliTest, ResumeOfMissingOrForeignDirectoryNamesResume) {
  const std::string dir = Dir("resume_missing");
  Result r = RunGreenrl("train --resume " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("greenrl: error: --resume: got '" + dir +
                          "'; a run directory written by `greenrl train` (no such directory)"),
            std::string::npos)
      << r.output;
  fs::create_directories(dir);
  r = RunGreenrl("train --resume " + dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--resume: got '" + dir +
                          "'; a run directory written by `greenrl "
                          "train` (it has no config.yaml)"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(fs::is_empty(dir));  // nothing written into it
  // A checkpoint's path where the run directory goes: the run directory is named.
  const std::string run = Dir("resume_checkpoint");
  fs::create_directories(run + "/checkpoints");
  std::ofstream(run + "/checkpoints/step_000000000256.pt") << "x";
  ExpectRefused(RunGreenrl("train --resume " + run + "/checkpoints/step_000000000256.pt"),
                "greenrl: error: --resume: got '" + run +
                    "/checkpoints/step_000000000256.pt'; a run directory, not a checkpoint in "
                    "it: --resume " +
                    run + " (a resume continues from the run's newest checkpoint)\n");
}

// --set at a resume is saved in config.yaml (a later plain --resume continues with it), and
// n_envs, seed, algo and env_id, which the checkpoint fixes, and changed init-only keys
// (log_std_init, ortho_init) are refused by name; a key given twice is judged on its last value,
// the one the run would use.
TEST(CliTest, ResumeSavesItsOverridesAndRefusesAnotherNEnvsSeedAlgoOrEnv) {
  const std::string out = Dir("resume_set");
  Result r = RunGreenrl("train --config " + Preset() +
                        " --set n_timesteps=512 --set checkpoint_freq=256 --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::remove(out + "/checkpoints/final.pt");  // as if stopped after the checkpoint at 256
  r = RunGreenrl("train --resume " + out + " --set n_envs=16 --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("n_envs: got '16'; the run's own 8: a resume continues the saved envs"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --resume " + out + " --set n_envs=4 --quiet");  // not batch_size's error
  EXPECT_NE(r.output.find("n_envs: got '4'; the run's own 8"), std::string::npos) << r.output;
  // seed, algo and env_id are fixed by the checkpoint too (a refused resume writes nothing).
  r = RunGreenrl("train --resume " + out + " --set seed=5 --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("seed: got '5'; the run's own 0: a resume continues the saved "
                          "generators, so seed cannot change"),
            std::string::npos)
      << r.output;
  // After a hand edit of config.yaml (seed: 7), the run's own seed is the one its checkpoint
  // recorded: --set seed=0 is taken (mending config.yaml), another seed refused naming 0.
  const std::string yaml = greenrl::ReadFile(out + "/config.yaml");
  std::string edited = yaml;
  ASSERT_NE(edited.find("\nseed: 0"), std::string::npos) << yaml;
  edited.replace(edited.find("\nseed: 0"), 8, "\nseed: 7");
  greenrl::WriteFileAtomic(out + "/config.yaml", edited);
  ExpectRefused(RunGreenrl("train --resume " + out + " --set seed=7 --dry-run"),
                "seed: got '7'; the run's own 0: a resume continues the saved generators");
  r = RunGreenrl("train --resume " + out + " --set seed=0 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  greenrl::WriteFileAtomic(out + "/config.yaml", yaml);
  r = RunGreenrl("train --resume " + out + " --set algo=dqn --quiet");  // not n_steps' error
  EXPECT_NE(r.output.find("algo: got 'dqn'; the run's own 'ppo'"), std::string::npos) << r.output;
  r = RunGreenrl("train --resume " + out + " --set env_id=Acrobot-v1 --quiet");
  EXPECT_NE(r.output.find("env_id: got 'Acrobot-v1'; the run's own 'CartPole-v1'"),
            std::string::npos)
      << r.output;
  // Init-only keys: the checkpoint's trained parameters replace what they set.
  r = RunGreenrl("train --resume " + out + " --set policy_kwargs.log_std_init=-2 --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("policy_kwargs.log_std_init: got '-2'; the run's own 0: "
                          "policy_kwargs.log_std_init only sets the agent's initial parameters"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --resume " + out + " --set policy_kwargs.ortho_init=false --quiet");
  EXPECT_NE(r.output.find("policy_kwargs.ortho_init: got 'false'; the run's own true"),
            std::string::npos)
      << r.output;
  // The network, the normaliser the policy was trained with: named, whatever the override's
  // form (PPO's net_arch shorthand sets pi and vf; a normalize_kwargs map sets each key).
  r = RunGreenrl("train --resume " + out + " --set policy_kwargs.net_arch=[32,32] --quiet");
  ExpectRefused(r,
                "policy_kwargs.net_arch.pi: got '[32,32]'; the run's own [64, 64]: "
                "policy_kwargs.net_arch.pi shapes the network whose trained parameters a "
                "resume continues, so it cannot change");
  r = RunGreenrl("train --resume " + out + " --set policy_kwargs.activation_fn=relu --quiet");
  ExpectRefused(r, "policy_kwargs.activation_fn: got 'relu'; the run's own 'tanh'");
  r = RunGreenrl("train --resume " + out + " --set normalize=true --quiet");
  ExpectRefused(r,
                "normalize: got 'true'; the run's own false: normalize describes the "
                "observations the agent was trained on");
  // The estimator's watts per core: the earlier segments were estimated at the run's own.
  r = RunGreenrl("train --resume " + out + " --set energy.watts_per_core=24 --quiet");
  ExpectRefused(r,
                "energy.watts_per_core: got '24'; the run's own 12: the CPU-time estimator "
                "estimated the run's earlier segments at it");
  // Another region or PUE re-prices the whole run: said with the warnings, once the resume's
  // checks have passed (a dry run here, which writes nothing); the same region by another name
  // (world for the default, as FRA for FR) is no change; a refused resume says only why.
  r = RunGreenrl("train --resume " + out + " --set carbon.region=FR --set carbon.pue=1.2 " +
                 "--dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: note: carbon.region FR replaces the run's own world: the "
                          "carbon figures price the whole run's energy, its earlier segments' "
                          "too, at the new value"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("greenrl: note: carbon.pue 1.2 replaces the run's own 1: "),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --resume " + out + " --set carbon.region=world --dry-run");
  EXPECT_EQ(r.output.find("note: carbon.region"), std::string::npos) << r.output;
  // Another n_timesteps moves the schedules that follow the run's progress: said.
  r = RunGreenrl("train --resume " + out + " --set n_timesteps=1024 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: note: n_timesteps 1024 replaces the run's own 512: "
                          "learning_rate lin_0.001, clip_range lin_0.2 follow the run's progress, "
                          "step / n_timesteps, so from the checkpoint's step on they run over the "
                          "new n_timesteps, as SB3's learn(reset_num_timesteps=False) recomputes "
                          "its progress (greenrl's n_timesteps is the run's total; SB3's "
                          "total_timesteps there counts the steps still to take)"),
            std::string::npos)
      << r.output;
  // A schedule the same command replaces by a constant is not named.
  r = RunGreenrl("train --resume " + out +
                 " --set n_timesteps=1024 --set learning_rate=1e-4 --dry-run");
  EXPECT_NE(r.output.find("greenrl: note: n_timesteps 1024 replaces the run's own 512: "
                          "clip_range lin_0.2 follows the run's progress"),
            std::string::npos)
      << r.output;
  r = RunGreenrl("train --resume " + out + " --set carbon.region=FR --set n_timesteps=256");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output.find("note: carbon.region"), std::string::npos) << r.output;
  size_t event_files = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    event_files += entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  }
  EXPECT_EQ(event_files, 1u) << "a refused resume wrote an event file";
  std::ifstream before(out + "/config.yaml");
  const std::string unchanged((std::istreambuf_iterator<char>(before)),
                              std::istreambuf_iterator<char>());
  EXPECT_NE(unchanged.find("n_timesteps: 512 "), std::string::npos);  // refused: file untouched
  r = RunGreenrl(
      "train --resume " + out +
      " --set n_timesteps=1024 --set n_envs=8 --set policy_kwargs.ortho_init=false"
      " --set policy_kwargs.ortho_init=true --set seed=5 --set seed=0 --quiet");  // last wins
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream after(out + "/config.yaml");
  const std::string saved((std::istreambuf_iterator<char>(after)),
                          std::istreambuf_iterator<char>());
  EXPECT_NE(saved.find("n_timesteps: 1024 "), std::string::npos) << saved;
}

// A normalize: true run's normaliser settings and a SAC run's replay capacity and auto ent_coef
// initial value are fixed at a resume; the reward's clip range and a fixed ent_coef may change.
TEST(CliTest, ResumeRefusesNormalizerBufferAndEntCoefInitChanges) {
  const std::string out = Dir("resume_fixed_sac");
  Result r = RunGreenrl(
      "train --algo sac --env Pendulum-v1 --set n_timesteps=300 "
      "--set learning_starts=100 --set normalize=true --set checkpoint_freq=200 "
      "--set eval.final_episodes=1 --quiet --out " +
      out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::remove(out + "/checkpoints/final.pt");  // as if stopped after the checkpoint at 200
  const std::pair<std::string, std::string> refused[] = {
      {"normalize=false", "normalize: got 'false'; the run's own true"},
      {"'normalize_kwargs={norm_obs: false}'",
       "normalize_kwargs.norm_obs: got '{norm_obs: false}'; the run's own true"},
      {"normalize_kwargs.clip_obs=5", "normalize_kwargs.clip_obs: got '5'; the run's own 10"},
      {"normalize_kwargs.norm_reward=false",
       "normalize_kwargs.norm_reward: got 'false'; the run's own true: a resume continues the "
       "saved normaliser"},
      {"buffer_size=1000",
       "buffer_size: got '1000'; the run's own 1000000: a resume continues the saved replay "
       "buffer"},
      {"ent_coef=auto_0.5",
       "ent_coef: got 'auto_0.5'; the run's own 'auto': an auto ent_coef's initial value only "
       "starts the learned coefficient"}};
  for (const auto& [set, expected] : refused) {
    ExpectRefused(RunGreenrl("train --resume " + out + " --set " + set + " --quiet"), expected);
  }
  // learning_starts may change; raised past n_timesteps, the warning names this segment's steps
  // only (the checkpoint at 200 was trained from step 100).
  ExpectSucceedsSaying(
      RunGreenrl("train --resume " + out + " --set learning_starts=1000 --dry-run"),
      "greenrl: learning_starts 1000 is not below n_timesteps 300: from the checkpoint's step 200 "
      "on, this run takes uniform random actions and makes no gradient step (any updates made "
      "before it are kept)\n");
  r = RunGreenrl("train --resume " + out +
                 " --set normalize_kwargs.clip_reward=5 --set ent_coef=0.1 --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // From this SAC run (no gSDE) as a trained agent, log_std_init does nothing in any run, as in
  // SB3: no note says the agent's parameters are why.
  r = RunGreenrl("train -i " + out +
                 " --algo sac --env Pendulum-v1 --set normalize=true --set "
                 "policy_kwargs.log_std_init=-1 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("log_std_init: -1.0 does nothing"), std::string::npos) << r.output;
}

// Every file under `dir` with its size and last write time.
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    files.push_back(entry.path().string() + " " + std::to_string(entry.file_size()) + " " +
                    std::to_string(entry.last_write_time().time_since_epoch().count()));
  }
  std::sort(files.begin(), files.end());
  return files;
}

// `train --dry-run`: a run's checks (the run directory, trained_agent's checkpoint in the agent,
// a resume's checkpoint), the resolved config on stdout as a preset, and nothing written.
TEST(CliTest, DryRunMakesARunsChecksAndWritesNothing) {
  const std::string parent = Dir("dry_parent"), out = Dir("dry_new");
  Result r = RunGreenrl("train --config " + Preset() +
                        " --set n_timesteps=512 --set checkpoint_freq=256 --quiet --out " + parent);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  fs::remove(parent + "/checkpoints/final.pt");  // unfinished: a resume continues it
  const std::vector<std::string> before = Listing(parent);
  const std::string bin = std::string(test_paths::GreenrlBin()) + " train ";
  r = RunCommand(bin + "--config " + Preset() + " --out " + out + " --dry-run 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\nn_steps: 32  # "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ntrained_agent: \"\"  # "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
  const std::string printed = ::testing::TempDir() + "/greenrl_cli_dry.yaml";
  std::ofstream(printed) << r.output;
  const Result again =
      RunCommand(bin + "--config " + printed + " --out " + out + " --dry-run 2>/dev/null");
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.output, r.output);  // what it prints is a preset of the same run
  r = RunGreenrl("train --config " + Preset() + " --out " + out + " --dry-run --quiet");
  EXPECT_NE(r.output.find("greenrl: dry run: every check a run makes before writing passed, and "
                          "nothing was written; without --dry-run this trains ppo on "
                          "CartPole-v1 to 100096 env steps (n_timesteps 100000 rounded up to "
                          "whole rollouts) in " +
                          out + "\n"),
            std::string::npos)
      << r.output;
  // DQN and SAC train whole train_freq blocks (SAC MountainCarContinuous: 32 steps of one env).
  r = RunGreenrl("train --config " + SourceTreeDir() +
                 "/configs/sac/mountaincarcontinuous.yaml --set n_timesteps=10 --dry-run");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("greenrl: n_timesteps 10 is 0.31 blocks of train_freq * n_envs = 32 "
                          "steps: the run trains whole blocks, 32 steps, as SB3 does\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("this trains sac on MountainCarContinuous-v0 to 32 env steps "
                          "(n_timesteps 10 rounded up to whole train_freq blocks) in "),
            std::string::npos)
      << r.output;
  // A new --out is created and removed again; one that cannot be created fails as the run would.
  r = RunGreenrl("train --config " + Preset() + " --out " + out + "/a/b --dry-run --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(out));
  const std::string file = ::testing::TempDir() + "/greenrl_cli_dry_file";
  std::ofstream(file) << "x";
  r = RunGreenrl("train --config " + Preset() + " --out " + file + "/run --dry-run --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("greenrl: failed: cannot create run directory '" + file + "/run': "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("dry run: every check"), std::string::npos) << r.output;
  // Refused as the run would be, before anything is written.
  ExpectRefused(RunGreenrl("train --config " + Preset() + " --out " + parent + " --dry-run"),
                "--out: got '" + parent + "'; a new or empty directory");
  ExpectRefused(RunGreenrl("train --config " + Preset() + " -i " + parent +
                           " --set policy_kwargs.net_arch=[32,32] --dry-run --out " + out),
                "does not load, needing");
  // From a trained agent, the last line names the checkpoint it loaded (here the unfinished
  // parent's newest resume checkpoint).
  r = RunGreenrl("train --config " + Preset() + " -i " + parent + " --out " + out +
                 " --dry-run --quiet");
  EXPECT_NE(r.output.find(" whole rollouts) in " + out + ", from the trained agent " + parent +
                          "/checkpoints/step_000000000256.pt\n"),
            std::string::npos)
      << r.output;
  const Result other_net = RunGreenrl("train --resume " + parent +
                                      " --set n_timesteps=1024 --set "
                                      "policy_kwargs.net_arch=[32,32] --dry-run");
  ExpectRefused(other_net, "policy_kwargs.net_arch.pi: got '[32,32]'; the run's own [64, 64]");
  EXPECT_EQ(other_net.output.find("energy meter"), std::string::npos)  // only why
      << other_net.output;
  r = RunCommand(bin + "--resume " + parent + " --set n_timesteps=1024 --dry-run 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\nn_timesteps: 1024  # "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("this continues ppo on CartPole-v1 to 1024 env steps in " + parent),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(Listing(parent), before);
}

TEST(CliTest, BadConfigFilesExit2AndWriteNothing) {
  const std::string dir = Dir("bad_configs");
  fs::create_directories(dir);
  const std::string out = dir + "/run";
  const std::pair<std::string, std::string> cases[] = {
      {"n_steps: [1, 2\n", "valid YAML"},
      {"env_id: CartPole-v1\nn_steps: abc\n", "n_steps (in " + dir + "/config.yaml): got 'abc'"},
      {"env_id: CartPole-v1\nlearning_rate: .nan\n", "config.yaml): got '.nan'"},
      {"env_id: CartPole-v1\nn_envs: -4\n", "n_envs (in "},
      {"env_id: CartPole-v1\nn_steps: 99999999999999999999999\n", "config.yaml): got"},
      {"env_id: NoSuchEnv-v0\n", "NoSuchEnv-v0"},
      {"env_id: CartPole-v1\nalgo: a2c\n", "a2c"},
  };
  for (const auto& [yaml, expected] : cases) {
    const std::string path = dir + "/config.yaml";
    std::ofstream(path) << yaml;
    const Result r = RunGreenrl("train --config " + path + " --quiet --out " + out);
    EXPECT_EQ(r.exit_code, 2) << yaml << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << yaml << r.output;
    EXPECT_NE(r.output.find("greenrl: error: "), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out)) << yaml;
  }
}

// `greenrl report` on a real run (Markdown and HTML), its refusals, and `greenrl eval` refusing
// a truncated or foreign checkpoint with exit code 2.
TEST(CliTest, ReportComparesRunsAndBadCheckpointsExit2) {
  const std::string out = Dir("report_run");
  Result r =
      RunGreenrl("train --config " + Preset() + " --set n_timesteps=512 --quiet --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  bool has_events = false;
  for (const auto& e : fs::directory_iterator(out)) {
    has_events |= e.path().filename().string().rfind("events.out.tfevents.", 0) == 0;
  }
  EXPECT_TRUE(has_events);

  r = RunGreenrl("report " + out + " --format md --target-return 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("| run | algo | env | steps |", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("| greenrl_cli_report_run | ppo | CartPole-v1 | 512 |"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" | estimated | "), std::string::npos) << r.output;  // Wh metered as
  // To a file, it says where, as the HTML page does.
  const std::string md_file = Dir("report_md") + ".md";
  r = RunGreenrl("report " + out + " --format md --out " + md_file);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "greenrl report: 1 run(s) -> " + md_file + "\n");
  EXPECT_EQ(greenrl::ReadFile(md_file).rfind("| run | algo | env | steps |", 0), 0u);
  const std::string two = Dir("report_two") + ".html";
  const std::string copy = Dir("report_copy");
  fs::copy(out, copy, fs::copy_options::recursive);
  r = RunGreenrl("report " + out + " " + copy + " --out " + two);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(two));
  // A report replaces a report it wrote; a run's own file given to --out is refused, untouched.
  r = RunGreenrl("report " + out + " " + copy + " --out " + two);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string energy_before = greenrl::ReadFile(out + "/energy.json");
  ExpectRefused(RunGreenrl("report " + out + " --format md --out " + out + "/energy.json"),
                "greenrl: error: --out: got '" + out +
                    "/energy.json'; a new file, or a report greenrl report wrote (replaced); this "
                    "file is something else (a run's metrics.csv or energy.json?) and is left as "
                    "it is: give another path\n");
  EXPECT_EQ(greenrl::ReadFile(out + "/energy.json"), energy_before);
  // One run given twice, by any path, would be counted twice: refused, nothing written.
  const std::string again = out + "/../" + fs::path(out).filename().string();
  fs::remove(two);
  r = RunGreenrl("report " + out + " " + again + " --out " + two);
  ExpectRefused(r,
                "RUN_DIR: got '" + again + "'; each run once (" + out + " is the same directory)");
  EXPECT_FALSE(fs::exists(two));
  r = RunGreenrl("report " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream page(out + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("Chart.js v"), std::string::npos);  // inlined from libjs-chart.js
  EXPECT_NE(html.find("chart-power"), std::string::npos);

  const std::string missing = Dir("report_missing");
  const std::string html_out = Dir("report_out") + ".html";
  r = RunGreenrl("report " + out + " " + missing + " --out " + html_out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("RUN_DIR: got '" + missing + "'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(html_out));
  r = RunGreenrl("report " + out + " --format pdf");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // --target-metric: the final evaluation (last row) reaches 1; a missing column and a metric
  // without a target are refused.
  r = RunGreenrl("report " + out +
                 " --format md --target-return 1 --target-metric eval/mean_reward");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| Wh to eval/mean_reward >= 1 | steps to eval/mean_reward >= 1 |"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(" | 512 |\n"), std::string::npos) << r.output;  // reached at step 512
  r = RunGreenrl("report " + out + " --format md --target-return 1 --target-metric nope");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--target-metric: got 'nope'"), std::string::npos) << r.output;
  r = RunGreenrl("report " + out + " --format md --target-metric eval/mean_reward");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--target-metric requires --target-return"), std::string::npos)
      << r.output;
  r = RunGreenrl("report " + out + " --chartjs /nonexistent.js --out " + html_out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("libjs-chart.js"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(html_out));

  // A truncated checkpoint and one that is not a checkpoint at all.
  const std::string ckpt = out + "/checkpoints/final.pt";
  const auto size = fs::file_size(ckpt);
  for (const uintmax_t keep : {size / 2, uintmax_t{0}}) {
    fs::resize_file(ckpt, keep);
    r = RunGreenrl("eval --run " + out);
    EXPECT_EQ(r.exit_code, 2) << keep << r.output;
    EXPECT_NE(r.output.find("checkpoint: got '" + ckpt + "'; a PPO checkpoint"), std::string::npos)
        << r.output;
  }
  std::ofstream(ckpt) << "not a checkpoint";
  r = RunGreenrl("eval --run " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
