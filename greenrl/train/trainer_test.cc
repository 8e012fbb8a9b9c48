// The trainer end to end on a short CartPole run with a scripted energy meter: the run dir's
// files agree with each other and with the returned summary.
#include "greenrl/train/trainer.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/test_paths.h"
#include "greenrl/energy/estimator_meter.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/testing/one_value_spec.h"
#include "greenrl/report/run_report.h"
#include "greenrl/report/testing/tfrecord_reader.h"
#include "greenrl/report/tfevents.pb.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trained_agent.h"

namespace greenrl::train {
namespace {

namespace fs = std::filesystem;

std::string Preset() { return SourceTreeDir() + "/configs/ppo/cartpole.yaml"; }

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/greenrl_" + name;
  fs::remove_all(dir);
  return dir;
}

// Each meter read advances the scripted CPU clock by 0.25 s: 12 W x 0.25 s = 3 J per read.
std::unique_ptr<energy::EnergyMeter> ScriptedMeter() {
  auto cpu_s = std::make_shared<double>(0.0);
  return std::make_unique<energy::EstimatorMeter>(12.0, [cpu_s] { return *cpu_s += 0.25; });
}

// metrics.csv of run `dir`: the rows as maps from column to value.
std::vector<std::map<std::string, double>> MetricRows(const std::string& dir) {
  const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  std::vector<std::map<std::string, double>> out;
  for (const auto& values : rows) {
    std::map<std::string, double> row;
    for (size_t c = 0; c < header.size(); ++c) row[header[c]] = values[c];
    out.push_back(std::move(row));
  }
  return out;
}

TEST(TrainerTest, RunDirFilesAgreeWithSummary) {
  Config config = LoadRunConfig(Preset(), {"n_timesteps=2048", "eval.freq=1024"}, 7);
  TrainOptions options;
  options.out_dir = FreshDir("run");
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  const TrainResult result = Train(config, std::move(options));
  const report::RunReport& r = result.report;
  const std::string dir = r.run_dir;

  EXPECT_EQ(r.steps, 2048);  // 8 rollouts of 8 envs x 32 steps
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.eval_episodes, 10);
  EXPECT_TRUE(fs::exists(dir + "/config.yaml"));
  EXPECT_TRUE(fs::exists(result.checkpoint_path));

  // energy.json: windows + unattributed == totals, per domain and in all; every reading added
  // exactly 3 J, so every figure is a multiple of 3 J.
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  const double total_j = j["total_energy_j"].get<double>();
  EXPECT_DOUBLE_EQ(total_j, r.total_energy_j());
  EXPECT_DOUBLE_EQ(std::fmod(total_j, 3.0), 0.0);
  EXPECT_GT(total_j, 0.0);
  double window_sum = 0.0;
  for (const auto& [key, w] : j["windows"].items()) window_sum += w["total_energy_j"].get<double>();
  EXPECT_EQ(j["windows"]["rollout"]["count"], 8);
  EXPECT_EQ(j["windows"]["update"]["count"], 8);
  EXPECT_EQ(j["windows"]["eval"]["count"], 2);  // at 1024 steps and the final one
  // The CPU-time estimate follows every reading: no window is shorter than its update period.
  EXPECT_EQ(j["meter"]["update_period_s"].get<double>(), 0.0);
  EXPECT_EQ(j["windows"]["rollout"]["short_windows"].get<int64_t>(), 0);
  EXPECT_NEAR(window_sum + j["unattributed"]["total_energy_j"].get<double>(), total_j, 1e-9);
  EXPECT_GE(j["unattributed"]["total_energy_j"].get<double>(), 0.0);
  // The process's CPU time before its meters started: reported, in no total.
  EXPECT_GT(j["cpu_before_meters_s"].get<double>(), 0.0);
  EXPECT_EQ(j["cpu_before_meters_s"].get<double>(), r.cpu_before_meters_s);
  EXPECT_EQ(j["domains"]["cpu:process"]["provenance"], "estimated");
  EXPECT_EQ(j["domains"]["cpu:process"]["scope"], "process");
  EXPECT_NEAR(j["carbon"]["kg_co2e"].get<double>(), total_j / 3.6e6 * 481.0 / 1000.0, 1e-15);
  EXPECT_TRUE(j["carbon"]["intensity_is_default"].get<bool>());

  // metrics.csv: one row per iteration; the last row is the summary's figures.
  auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  ASSERT_EQ(rows.size(), 8u);
  auto col = [&](const std::string& name) {
    for (size_t c = 0; c < header.size(); ++c) {
      if (header[c] == name) return c;
    }
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  const auto& last = rows.back();
  EXPECT_EQ(last[col("global_step")], 2048);
  EXPECT_DOUBLE_EQ(last[col("energy/total_wh")], total_j / 3600.0);
  EXPECT_DOUBLE_EQ(last[col("eval/mean_reward")], r.eval_mean_return);
  EXPECT_DOUBLE_EQ(last[col("eval/std_reward")], r.eval_std_return);
  // CartPole pays 1 per step: SB3's eval/mean_ep_length is the mean return; empty without an
  // evaluation.
  EXPECT_DOUBLE_EQ(last[col("eval/mean_ep_length")], r.eval_mean_return);
  EXPECT_TRUE(std::isnan(rows.front()[col("eval/mean_ep_length")]));
  EXPECT_DOUBLE_EQ(last[col("carbon/g_co2e")], r.carbon.kg_co2e * 1000.0);
  EXPECT_DOUBLE_EQ(last[col("time_s")], r.wall_time_s);
  // energy/power_w is the energy over the span the meters measured it in (energy.json's
  // duration_s, which starts before the loop's time_s: the setup's energy is in the total).
  EXPECT_NEAR(last[col("energy/power_w")], total_j / j["duration_s"].get<double>(),
              1e-9 * last[col("energy/power_w")]);
  // CartPole pays 1 per step, so SB3's rollout/ep_len_mean equals rollout/ep_rew_mean.
  for (const auto& row : rows) {
    EXPECT_DOUBLE_EQ(row[col("rollout/ep_len_mean")], row[col("rollout/ep_rew_mean")]);
  }
  EXPECT_GT(last[col("rollout/ep_len_mean")], 8.0);
  for (const char* key : {"charts/SPS", "charts/episodic_return", "charts/learning_rate",
                          "losses/value_loss", "losses/policy_loss", "losses/entropy",
                          "losses/approx_kl", "losses/clipfrac", "losses/explained_variance"}) {
    col(key);
  }
  EXPECT_FALSE(std::isnan(rows[3][col("eval/mean_reward")]));  // periodic eval at 1024 steps
  EXPECT_TRUE(std::isnan(rows[2][col("eval/mean_reward")]));

  // monitor.csv, SB3's Monitor format: its header, then one row per finished training episode;
  // CartPole pays 1 per step (r == l); the last 100 rows' mean return is the last metrics row's
  // rollout/ep_rew_mean, and no episode is longer than the steps run. Each row's t is when the
  // step that ended the episode returned (SB3's Monitor), not its iteration's end: the rows have
  // more distinct times than the run has iterations (8), and none past the run's wall time.
  std::ifstream monitor(dir + "/monitor.csv");
  std::string line;
  ASSERT_TRUE(std::getline(monitor, line));
  EXPECT_EQ(line.rfind("#{\"t_start\": ", 0), 0u) << line;
  EXPECT_NE(line.find(", \"env_id\": \"CartPole-v1\"}"), std::string::npos) << line;
  ASSERT_TRUE(std::getline(monitor, line));
  EXPECT_EQ(line, "r,l,t");
  std::vector<double> returns;
  std::set<double> times;
  double last_t = 0.0;
  while (std::getline(monitor, line)) {
    double r = 0, t = 0;
    long long l = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lld,%lf", &r, &l, &t), 3) << line;
    EXPECT_EQ(r, static_cast<double>(l)) << line;
    EXPECT_LE(l, 500);
    EXPECT_GE(t, last_t) << line;
    last_t = t;
    times.insert(t);
    returns.push_back(r);
  }
  ASSERT_GT(returns.size(), 20u);
  EXPECT_GT(times.size(), 8u);
  EXPECT_LE(last_t, r.wall_time_s + 1.0);  // t_start is taken before the loop's clock starts
  const size_t window = std::min<size_t>(100, returns.size());
  double sum = 0.0;
  for (size_t k = returns.size() - window; k < returns.size(); ++k) sum += returns[k];
  EXPECT_DOUBLE_EQ(sum / static_cast<double>(window), last[col("rollout/ep_rew_mean")]);

  // The TensorBoard event file beside it: the file_version event, then one event per metrics.csv
  // row with step = global_step and the same tags and values (float32), CRCs checked.
  std::vector<std::string> event_files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) == 0) event_files.push_back(entry.path().string());
  }
  ASSERT_EQ(event_files.size(), 1u);
  const auto records = report::testing::ReadTfRecords(event_files[0]);
  ASSERT_EQ(records.size(), rows.size() + 1);
  tfevents::Event version;
  ASSERT_TRUE(version.ParseFromString(records[0]));
  EXPECT_EQ(version.file_version(), "brain.Event:2");
  for (size_t i = 0; i < rows.size(); ++i) {
    tfevents::Event event;
    ASSERT_TRUE(event.ParseFromString(records[i + 1]));
    EXPECT_EQ(event.step(), static_cast<int64_t>(rows[i][col("global_step")]));
    size_t finite_cells = 0;
    for (size_t c = 1; c < header.size(); ++c) finite_cells += std::isfinite(rows[i][c]) ? 1 : 0;
    ASSERT_EQ(static_cast<size_t>(event.summary().value_size()), finite_cells);
    for (const auto& v : event.summary().value()) {
      EXPECT_EQ(v.simple_value(), static_cast<float>(rows[i][col(v.tag())])) << v.tag();
    }
  }

  // The saved config reloads to the same values.
  Config again = LoadRunConfig(dir + "/config.yaml", {}, std::nullopt);
  EXPECT_EQ(again.ToYaml(), config.ToYaml());
}

// emissions.csv names the grid region's country as CodeCarbon does (English name, ISO alpha-3),
// and the world average leaves both empty.
TEST(TrainerTest, EmissionsCsvNamesTheRegionsCountry) {
  for (const auto& [region, expected] :
       {std::pair<std::string, std::string>{"FR", ",France,FRA,"}, {"world", ",,,"}}) {
    SCOPED_TRACE(region);
    Config config = LoadRunConfig(
        Preset(), {"n_timesteps=256", "eval.final_episodes=1", "carbon.region=" + region}, 0);
    TrainOptions options;
    options.out_dir = FreshDir("emissions_" + region);
    options.verbose = false;
    options.meter_override = ScriptedMeter();
    const TrainResult result = Train(config, std::move(options));
    std::ifstream in(result.report.run_dir + "/emissions.csv");
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    ASSERT_NE(header.find(",country_name,country_iso_code,region,"), std::string::npos) << header;
    // energy_consumed is a number without commas, then the two country cells and region (empty).
    EXPECT_NE(row.find(expected), std::string::npos) << row;
  }
}

TEST(TrainerTest, RefusesNonEmptyOutDirBeforeWriting) {
  Config config = LoadRunConfig(Preset(), {"n_timesteps=256"}, std::nullopt);
  const std::string dir = FreshDir("busy");
  fs::create_directories(dir);
  std::ofstream(dir + "/keep.txt") << "mine";
  TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  EXPECT_THROW(Train(config, std::move(options)), ConfigError);
  EXPECT_FALSE(fs::exists(dir + "/metrics.csv"));
}

// The current directory for one test's life (default run directories are made under runs/).
struct InDir {
  explicit InDir(const std::string& dir) : before(fs::current_path()) {
    fs::create_directories(dir);
    fs::current_path(dir);
  }
  ~InDir() { fs::current_path(before); }
  const fs::path before;
};

TEST(TrainerTest, NextFreeRunDirNumbersFromTwo) {
  const std::string dir = FreshDir("next_free");
  InDir in(dir);
  EXPECT_EQ(NextFreeRunDir("runs/a"), "runs/a");
  fs::create_directories("runs/a");
  EXPECT_EQ(NextFreeRunDir("runs/a"), "runs/a_2");
  std::ofstream("runs/a_2") << "a file takes the name too";
  EXPECT_EQ(NextFreeRunDir("runs/a"), "runs/a_3");
  // ClaimNewRunDir makes the one it returns (and runs/ where missing), so a second claim of the
  // same base gets the next.
  EXPECT_EQ(ClaimNewRunDir("claims/b"), "claims/b");
  EXPECT_EQ(ClaimNewRunDir("claims/b"), "claims/b_2");
  EXPECT_TRUE(fs::is_directory("claims/b_2"));
  EXPECT_EQ(ClaimNewRunDir("runs/a"), "runs/a_3");
}

// Two runs of one config started in the same second both find the default name free at their
// start; the one that comes second to make it takes the next free name instead of being refused
// (here the other run takes the name and its lock while this one chooses its meters).
TEST(TrainerTest, DefaultRunDirTakenMeanwhileGivesWayToTheNextFreeName) {
  const Config config = LoadRunConfig(
      Preset(), {"n_timesteps=256", "eval.freq=0", "eval.final_episodes=1"}, std::nullopt);
  InDir in(FreshDir("default_taken"));
  // Start just after a second begins, so that the run and the other name the same second.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  std::this_thread::sleep_for(std::chrono::seconds(1) -
                              (now - std::chrono::duration_cast<std::chrono::seconds>(now)) +
                              std::chrono::milliseconds(20));
  // An earlier run of this second holds the default name, so this one chooses <name>_2 at its
  // start; another run takes that meanwhile, and this one moves on to <name>_3 (not <name>_2_2).
  const std::string earlier = DefaultRunDir(config);
  fs::create_directories(earlier + "/checkpoints");
  std::string taken;
  std::optional<RunDirLock> other;
  auto armed = std::make_shared<bool>(false);
  auto cpu_s = std::make_shared<double>(0.0);
  TrainOptions options;
  options.verbose = false;
  options.meter_override = std::make_unique<energy::EstimatorMeter>(12.0, [&, armed, cpu_s] {
    if (*armed) {  // the run's first reading: after it chose its name, before it made it
      *armed = false;
      taken = NextFreeRunDir(earlier);
      fs::create_directories(taken);
      other.emplace(taken);
    }
    return *cpu_s += 0.25;
  });
  *armed = true;
  const TrainResult result = Train(config, std::move(options));
  ASSERT_EQ(taken, earlier + "_2");
  EXPECT_EQ(result.report.run_dir, earlier + "_3");
  EXPECT_TRUE(fs::exists(earlier + "_3/checkpoints/final.pt"));
  EXPECT_FALSE(fs::exists(taken + "/config.yaml"));  // nothing written into the other's
}

// DQN given a Box env and SAC given a Discrete one are refused by LoadRunConfig
// (CheckAlgorithmFitsEnv), naming the registered envs that fit and the algorithms that fit the
// env given, before anything is written.
TEST(RunConfigTest, WrongActionSpaceForTheAlgorithmNamesTheEnvsThatFit) {
  const std::string configs = SourceTreeDir() + "/configs/";
  struct Case {
    std::string preset, env, expected;
  };
  for (const Case& c :
       {Case{"dqn/cartpole.yaml", "Pendulum-v1",
             "env_id: got 'Pendulum-v1'; an env with a Discrete action space for DQN: "
             "CartPole-v1, Acrobot-v1, MountainCar-v0 (Pendulum-v1 has a Box action space, "
             "which --algo ppo or --algo sac trains)"},
        Case{"sac/pendulum.yaml", "CartPole-v1",
             "env_id: got 'CartPole-v1'; an env with a Box action space for SAC (continuous "
             "actions): MountainCarContinuous-v0, Pendulum-v1, HalfCheetah-v4, HalfCheetah-v5, "
             "Hopper-v4, Hopper-v5, Walker2d-v4, Walker2d-v5, Ant-v4, Ant-v5, Swimmer-v4, "
             "Swimmer-v5, InvertedPendulum-v4, InvertedPendulum-v5, InvertedDoublePendulum-v4, "
             "InvertedDoublePendulum-v5, Reacher-v4, Reacher-v5, Humanoid-v4, Humanoid-v5, "
             "HumanoidStandup-v4, HumanoidStandup-v5, Pusher-v4, Pusher-v5 (CartPole-v1 has a "
             "Discrete action space, which --algo ppo or --algo dqn trains)"}}) {
    try {
      LoadRunConfig(configs + c.preset, {"env_id=" + c.env}, std::nullopt);
      ADD_FAILURE() << "no error for " << c.preset << " on " << c.env;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), c.expected);
    }
  }
}

// PPO takes SB3's net_arch=[...] list (SB3 >= 1.8: the same sizes for actor and critic) from
// --set and from a preset file, as it does from an rl-zoo policy_kwargs string.
TEST(RunConfigTest, PpoNetArchListSetsActorAndCritic) {
  const Config from_set = LoadRunConfig(Preset(), {"policy_kwargs.net_arch=[32, 16]"}, {});
  EXPECT_EQ(from_set.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(from_set.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{32, 16}));
  const std::string yaml = FreshDir("net_arch_list") + "/preset.yaml";
  fs::create_directories(fs::path(yaml).parent_path());
  std::ofstream(yaml) << "algo: ppo\nenv_id: CartPole-v1\npolicy_kwargs:\n  net_arch: [8]\n";
  const Config from_file = LoadRunConfig(yaml, {}, {});
  EXPECT_EQ(from_file.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{8}));
  EXPECT_EQ(from_file.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{8}));
}

// rl-zoo's Python values given to --set (as rl-zoo's -params would take them) are read as in an
// rl-zoo file; a value greenrl cannot read is refused naming the key.
TEST(RunConfigTest, RlZooPythonValuesInSetAreReadAsInAZooFile) {
  const Config c = LoadRunConfig(
      Preset(),
      {"policy_kwargs=dict(net_arch=dict(pi=[32, 32], vf=[16]), activation_fn=nn.ReLU)",
       "normalize={'norm_obs': True, 'norm_reward': False}"},
      {});
  EXPECT_EQ(c.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(c.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{16}));
  EXPECT_EQ(c.GetString("policy_kwargs.activation_fn"), "relu");
  EXPECT_TRUE(c.GetBool("normalize"));
  EXPECT_TRUE(c.GetBool("normalize_kwargs.norm_obs"));
  EXPECT_FALSE(c.GetBool("normalize_kwargs.norm_reward"));
  // normalize in rl-zoo's dict(...) form too, as its files and -params write it.
  const Config d =
      LoadRunConfig(Preset(), {"normalize=dict(norm_obs=False, norm_reward=True)"}, {});
  EXPECT_TRUE(d.GetBool("normalize"));
  EXPECT_FALSE(d.GetBool("normalize_kwargs.norm_obs"));
  EXPECT_TRUE(d.GetBool("normalize_kwargs.norm_reward"));
  // A preset's dict(...) string for a section is refused with the map form to write instead.
  const std::string yaml = FreshDir("dict_preset") + "/preset.yaml";
  fs::create_directories(fs::path(yaml).parent_path());
  std::ofstream(yaml) << "algo: ppo\nenv_id: CartPole-v1\npolicy_kwargs: \"dict(net_arch=[32])\"\n";
  try {
    LoadRunConfig(yaml, {}, {});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "Python's dict(...) is read as a whole policy_kwargs or normalize value in an "
                  "rl-zoo file or --set only; in a preset give YAML's map, e.g. 'policy_kwargs: "
                  "{net_arch: ...}'"),
              std::string::npos)
        << e.what();
  }
  try {
    LoadRunConfig(Preset(), {"policy_kwargs=dict(net_arch=[32,"}, {});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "policy_kwargs");
  }
}

TEST(RunConfigTest, LrNamesLearningRate) {
  try {
    LoadRunConfig(Preset(), {"lr=0.001"}, std::nullopt);
    ADD_FAILURE() << "no error for lr";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("lr: got '0.001'; unknown key (SB3, rl-zoo and greenrl "
                                          "call it learning_rate); every key with its "
                                          "default: `greenrl keys --algo ppo`",
                                          0),
              0u)
        << e.what();
  }
}

// eval.reward_threshold: off, env (Gymnasium's registry value) or a number; refused, naming the
// key, for anything else, for env on an env without a threshold and without periodic evals.
TEST(RunConfigTest, RewardThresholdResolvesOrNamesWhatIsAccepted) {
  EXPECT_FALSE(RewardThresholdFrom(LoadRunConfig(Preset(), {}, std::nullopt)));
  EXPECT_EQ(RewardThresholdFrom(LoadRunConfig(Preset(), {"eval.reward_threshold=env"}, 1)), 475.0);
  EXPECT_EQ(RewardThresholdFrom(LoadRunConfig(Preset(), {"eval.reward_threshold=-150.5"}, 1)),
            -150.5);
  const std::string pendulum = SourceTreeDir() + "/configs/ppo/pendulum.yaml";
  EXPECT_EQ(RewardThresholdFrom(LoadRunConfig(pendulum, {"eval.reward_threshold=-200"}, 1)),
            -200.0);
  auto error = [](const std::string& preset, const std::vector<std::string>& sets) {
    try {
      LoadRunConfig(preset, sets, 1);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(Preset(), {"eval.reward_threshold=solved"}),
            "eval.reward_threshold: got 'solved'; off, env (the env's Gymnasium reward_threshold) "
            "or a finite number");
  EXPECT_EQ(error(Preset(), {"eval.reward_threshold=.inf"}).rfind("eval.reward_threshold: got", 0),
            0u);
  const std::string no_threshold = error(pendulum, {"eval.reward_threshold=env"});
  EXPECT_EQ(no_threshold.rfind("eval.reward_threshold: got 'env'; off or a number: Pendulum-v1 "
                               "has no reward_threshold in Gymnasium's registry (env works for "
                               "CartPole-v1 (475), Acrobot-v1 (-100), ",
                               0),
            0u)
      << no_threshold;
  EXPECT_EQ(error(Preset(), {"eval.reward_threshold=400", "eval.freq=0"}),
            "eval.reward_threshold: got '400'; off while eval.freq is 0: only periodic "
            "evaluations can stop a run (set eval.freq too, e.g. eval.freq=10000)");
}

TEST(RunConfigTest, PresetHasRlZooValues) {
  Config c = LoadRunConfig(Preset(), {}, std::nullopt);
  EXPECT_EQ(c.GetString("algo"), "ppo");
  EXPECT_EQ(c.GetString("env_id"), "CartPole-v1");
  EXPECT_EQ(c.GetInt("n_envs"), 8);
  EXPECT_EQ(c.GetInt("n_steps"), 32);
  EXPECT_EQ(c.GetInt("batch_size"), 256);
  EXPECT_EQ(c.GetFloat("gae_lambda"), 0.8);
  EXPECT_EQ(c.GetFloat("gamma"), 0.98);
  EXPECT_EQ(c.GetInt("n_epochs"), 20);
  EXPECT_EQ(c.GetFloat("ent_coef"), 0.0);
  EXPECT_EQ(c.GetSchedule("learning_rate").ToString(), "lin_0.001");
  EXPECT_EQ(c.GetSchedule("clip_range").ToString(), "lin_0.2");
  EXPECT_EQ(c.GetInt("n_timesteps"), 100000);
}

// carbon.region left at its default (empty) is the world average as a default (the summary
// suggests a region); "world" given explicitly, in any case, is the same figure as a choice.
// Both survive a resume, which reads every key back from the run's config.yaml.
TEST(RunConfigTest, ExplicitWorldRegionIsNotTheDefault) {
  const auto carbon = [](const std::vector<std::string>& sets) {
    return energy::ComputeCarbon(3.6e6, CarbonOptionsFrom(LoadRunConfig(Preset(), sets, {})));
  };
  const energy::CarbonResult by_default = carbon({});
  EXPECT_TRUE(by_default.intensity_is_default);
  EXPECT_EQ(by_default.region, "world");
  for (const char* set : {"carbon.region=world", "carbon.region=World"}) {
    const energy::CarbonResult chosen = carbon({set});
    EXPECT_FALSE(chosen.intensity_is_default) << set;
    EXPECT_EQ(chosen.region, "world") << set;
    EXPECT_EQ(chosen.intensity_g_per_kwh, 481.0) << set;
    EXPECT_EQ(chosen.kg_co2e, by_default.kg_co2e) << set;
  }
  // A resumed run loads config.yaml, where every key is written: the default stays a default.
  const std::string yaml = ::testing::TempDir() + "/carbon_region_config.yaml";
  { std::ofstream(yaml) << LoadRunConfig(Preset(), {}, {}).ToYaml(); }
  EXPECT_TRUE(energy::ComputeCarbon(3.6e6, CarbonOptionsFrom(LoadRunConfig(yaml, {}, {})))
                  .intensity_is_default);
  { std::ofstream(yaml) << LoadRunConfig(Preset(), {"carbon.region=world"}, {}).ToYaml(); }
  EXPECT_FALSE(energy::ComputeCarbon(3.6e6, CarbonOptionsFrom(LoadRunConfig(yaml, {}, {})))
                   .intensity_is_default);
}

// rl-zoo's own hyperparameter files (excerpts in testdata/rl_zoo/) give, section by section,
// the same resolved config as greenrl's presets of those rl-zoo entries.
TEST(RunConfigTest, RlZooHyperparamFilesGiveThePresetsConfigs) {
  const std::string zoo = SourceTreeDir() + "/greenrl/train/testdata/rl_zoo/";
  const std::string configs = SourceTreeDir() + "/configs/";
  const struct {
    std::string file, env, preset;
  } cases[] = {{"ppo.yml", "CartPole-v1", "ppo/cartpole.yaml"},
               {"ppo.yml", "Pendulum-v1", "ppo/pendulum.yaml"},
               {"ppo.yml", "HalfCheetah-v4", "ppo/halfcheetah.yaml"},
               {"ppo.yml", "Ant-v4", "ppo/ant.yaml"},
               {"ppo.yml", "Hopper-v4", "ppo/hopper.yaml"},
               {"ppo.yml", "Humanoid-v4", "ppo/humanoid.yaml"},
               {"ppo.yml", "Swimmer-v4", "ppo/swimmer.yaml"},
               {"ppo.yml", "Walker2d-v4", "ppo/walker2d.yaml"},
               {"ppo.yml", "MountainCar-v0", "ppo/mountaincar.yaml"},
               {"ppo.yml", "MountainCarContinuous-v0", "ppo/mountaincarcontinuous.yaml"},
               {"ppo.yml", "Acrobot-v1", "ppo/acrobot.yaml"},
               {"dqn.yml", "CartPole-v1", "dqn/cartpole.yaml"},
               {"dqn.yml", "MountainCar-v0", "dqn/mountaincar.yaml"},
               {"dqn.yml", "Acrobot-v1", "dqn/acrobot.yaml"},
               {"sac.yml", "Pendulum-v1", "sac/pendulum.yaml"},
               {"sac.yml", "MountainCarContinuous-v0", "sac/mountaincarcontinuous.yaml"},
               {"sac.yml", "HalfCheetah-v4", "sac/halfcheetah.yaml"},
               {"sac.yml", "Ant-v4", "sac/ant.yaml"},
               {"sac.yml", "Hopper-v4", "sac/hopper.yaml"},
               {"sac.yml", "Humanoid-v4", "sac/humanoid.yaml"},
               {"sac.yml", "Swimmer-v4", "sac/swimmer.yaml"},
               {"sac.yml", "Walker2d-v4", "sac/walker2d.yaml"}};
  for (const auto& c : cases) {
    const Config from_zoo = LoadRunConfig(zoo + c.file, {"env_id=" + c.env}, std::nullopt);
    const Config preset = LoadRunConfig(configs + c.preset, {}, std::nullopt);
    EXPECT_EQ(from_zoo.ToYaml(), preset.ToYaml()) << c.file << " " << c.env;
  }
  // --set after the section wins; the section's keys count as set (config.yaml keeps them).
  const Config longer =
      LoadRunConfig(zoo + "ppo.yml", {"env_id=CartPole-v1", "n_timesteps=2e5"}, std::nullopt);
  EXPECT_EQ(longer.GetInt("n_timesteps"), 200000);
  EXPECT_EQ(longer.GetInt("n_steps"), 32);
  // What greenrl does not have is named: rl-zoo's wrapper keys, SB3's other gSDE options.
  auto message = [&](const std::string& file, const std::string& env,
                     const std::string& set = "seed=0") {
    try {
      LoadRunConfig(zoo + file, {"env_id=" + env, set}, std::nullopt);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("ppo.yml", "CartPole-v1", "frame_stack=4")
                .find("frame_stack: got '4'; unknown key (rl-zoo's, for Python wrappers"),
            std::string::npos)
      << message("ppo.yml", "CartPole-v1", "frame_stack=4");
  EXPECT_NE(message("sac.yml", "MountainCarContinuous-v0", "policy_kwargs.sde_net_arch=[32]")
                .find("policy_kwargs.sde_net_arch: got '[32]'; unknown key (SB3's gSDE option, "
                      "which greenrl does not have"),
            std::string::npos)
      << message("sac.yml", "MountainCarContinuous-v0", "policy_kwargs.sde_net_arch=[32]");
  EXPECT_EQ(message("sac.yml", "MountainCarContinuous-v0", "policy_kwargs.sde_net_arch=[32]")
                .find("did you mean"),
            std::string::npos);
  EXPECT_NE(message("ppo.yml", "CarRacing-v2").find("env_id: got 'CarRacing-v2'; one of: "),
            std::string::npos);
}

// A whole policy_kwargs or normalize value given to --set as rl-zoo writes it replaces the whole
// section, as rl-zoo's --hyperparams does (hyperparams.update): the keys it leaves out return to
// their defaults. A dotted key changes that key alone. In an rl-zoo file, --set normalize of any
// form replaces the section's normalize dict, kwargs included.
TEST(RunConfigTest, WholeZooValuesReplaceTheirSection) {
  const std::string mcc = SourceTreeDir() + "/configs/ppo/mountaincarcontinuous.yaml";
  const Config whole = LoadRunConfig(mcc, {"policy_kwargs=dict(net_arch=[32, 32])"}, 0);
  EXPECT_EQ(whole.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(whole.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(whole.GetFloat("policy_kwargs.log_std_init"), 0.0);  // the preset's -3.29: dropped
  EXPECT_TRUE(whole.GetBool("policy_kwargs.ortho_init"));        // the preset's false: dropped
  const Config empty = LoadRunConfig(mcc, {"policy_kwargs=dict()"}, 0);
  EXPECT_EQ(empty.GetFloat("policy_kwargs.log_std_init"), 0.0);
  EXPECT_EQ(empty.GetIntList("policy_kwargs.net_arch.pi"), (std::vector<int64_t>{64, 64}));
  const Config dotted = LoadRunConfig(mcc, {"policy_kwargs.net_arch=[32, 32]"}, 0);
  EXPECT_EQ(dotted.GetFloat("policy_kwargs.log_std_init"), -3.29);
  EXPECT_FALSE(dotted.GetBool("policy_kwargs.ortho_init"));
  // The later --set wins: a whole value after a dotted key resets it; a dotted key after a
  // whole value changes that key alone.
  const Config dotted_then_whole = LoadRunConfig(
      mcc, {"policy_kwargs.net_arch=[32, 32]", "policy_kwargs=dict(activation_fn=nn.ReLU)"}, 0);
  EXPECT_EQ(dotted_then_whole.GetIntList("policy_kwargs.net_arch.pi"),
            (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(dotted_then_whole.GetString("policy_kwargs.activation_fn"), "relu");
  const Config whole_then_dotted = LoadRunConfig(
      mcc, {"policy_kwargs=dict(activation_fn=nn.ReLU)", "policy_kwargs.net_arch=[32, 32]"}, 0);
  EXPECT_EQ(whole_then_dotted.GetIntList("policy_kwargs.net_arch.pi"),
            (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(whole_then_dotted.GetString("policy_kwargs.activation_fn"), "relu");
  EXPECT_EQ(whole_then_dotted.GetFloat("policy_kwargs.log_std_init"), 0.0);
  // normalize's kwargs: a dict value replaces them; a dotted or plain --set in a preset does not.
  const std::string dir = ::testing::TempDir() + "/greenrl_zoo_replace";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/preset.yaml") << "algo: ppo\nenv_id: Pendulum-v1\nnormalize: true\n"
                                         "normalize_kwargs: {norm_obs: false, clip_obs: 5}\n";
  const Config norm_dict =
      LoadRunConfig(dir + "/preset.yaml", {"normalize={'norm_reward': False}"}, 0);
  EXPECT_TRUE(norm_dict.GetBool("normalize_kwargs.norm_obs"));
  EXPECT_FALSE(norm_dict.GetBool("normalize_kwargs.norm_reward"));
  EXPECT_EQ(norm_dict.GetFloat("normalize_kwargs.clip_obs"), 10.0);
  const Config norm_plain = LoadRunConfig(dir + "/preset.yaml", {"normalize=true"}, 0);
  EXPECT_FALSE(norm_plain.GetBool("normalize_kwargs.norm_obs"));
  // In an rl-zoo file, normalize is one value: --set normalize=true gives its default kwargs.
  std::ofstream(dir + "/ppo.yml")
      << "Pendulum-v1:\n  normalize: \"{'norm_obs': False, 'norm_reward': True}\"\n"
         "  n_timesteps: !!float 1e4\n";
  const Config zoo = LoadRunConfig(dir + "/ppo.yml", {"env_id=Pendulum-v1"}, 0);
  EXPECT_FALSE(zoo.GetBool("normalize_kwargs.norm_obs"));
  const Config zoo_set =
      LoadRunConfig(dir + "/ppo.yml", {"env_id=Pendulum-v1", "normalize=true"}, 0);
  EXPECT_TRUE(zoo_set.GetBool("normalize"));
  EXPECT_TRUE(zoo_set.GetBool("normalize_kwargs.norm_obs"));
  EXPECT_TRUE(zoo_set.GetBool("normalize_kwargs.norm_reward"));
}

// grad_scaler.backoff_factor is in (0, 1), as GradScaler requires: 1 is refused when the config
// is read, before any work, with the same range the scaler states.
TEST(RunConfigTest, GradScalerBackoffFactorOfOneIsRefusedWhenRead) {
  const std::string preset = SourceTreeDir() + "/configs/ppo/cartpole.yaml";
  for (const std::string value : {"1", "1.5", "0"}) {
    try {
      LoadRunConfig(preset, {"grad_scaler.backoff_factor=" + value}, 0);
      ADD_FAILURE() << value << " was taken";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "grad_scaler.backoff_factor: got '" + value + "'; a number in (0, 1)");
    }
  }
  EXPECT_EQ(LoadRunConfig(preset, {"grad_scaler.backoff_factor=0.999"}, 0)
                .GetFloat("grad_scaler.backoff_factor"),
            0.999);
}

// SB3 options greenrl has at their defaults only are read when written out at them (rl-zoo and
// SB3 files do: policy_kwargs full_std=True, use_expln=False; optimize_memory_usage: False;
// replay_buffer_kwargs: "dict(handle_timeout_termination=True)", which rl-zoo's sac.yml has
// commented out), with no effect and left out of config.yaml; another value is refused saying
// why. A Python hyperparameter file is refused by name.
TEST(RunConfigTest, Sb3DefaultsWrittenOutAreReadOthersRefused) {
  const std::string configs = SourceTreeDir() + "/configs/";
  const Config ppo =
      LoadRunConfig(configs + "ppo/pendulum.yaml",
                    {"policy_kwargs=dict(full_std=True, use_expln=False, log_std_init=-1)"}, 0);
  EXPECT_EQ(ppo.GetFloat("policy_kwargs.log_std_init"), -1.0);
  EXPECT_EQ(ppo.ToYaml().find("full_std"), std::string::npos);
  const Config dqn =
      LoadRunConfig(configs + "dqn/cartpole.yaml", {"optimize_memory_usage=False"}, 0);
  EXPECT_EQ(dqn.ToYaml().find("optimize_memory_usage"), std::string::npos);
  for (const std::string set : {"replay_buffer_kwargs=dict(handle_timeout_termination=True)",
                                "replay_buffer_kwargs={'handle_timeout_termination': True}",
                                "replay_buffer_kwargs.handle_timeout_termination=true"}) {
    const Config sac = LoadRunConfig(configs + "sac/pendulum.yaml", {set}, 0);
    EXPECT_EQ(sac.ToYaml().find("replay_buffer_kwargs"), std::string::npos) << set;
  }
  auto message = [&](const std::string& preset, const std::string& set) {
    try {
      LoadRunConfig(configs + preset, {set}, 0);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("sac/pendulum.yaml", "policy_kwargs.full_std=false"),
            "policy_kwargs.full_std: got 'false'; true only: greenrl's gSDE has SB3's default, "
            "one std per (feature, action) pair");
  EXPECT_EQ(message("ppo/pendulum.yaml", "policy_kwargs.use_expln=True"),
            "policy_kwargs.use_expln: got 'True'; false only: greenrl's gSDE has SB3's default, "
            "std = exp(log_std)");
  EXPECT_EQ(message("sac/pendulum.yaml", "optimize_memory_usage=true"),
            "optimize_memory_usage: got 'true'; false only: greenrl's replay buffer has SB3's "
            "default, next_obs kept per transition");
  EXPECT_NE(message("dqn/cartpole.yaml", "policy_kwargs.full_std=true").find("unknown key"),
            std::string::npos);  // DQN has no gSDE
  // SAC's and PPO's policy_kwargs at SB3's defaults (rl-zoo sections write them out).
  const Config sac = LoadRunConfig(
      configs + "sac/pendulum.yaml",
      {"policy_kwargs=dict(net_arch=[64, 64], n_critics=2, share_features_extractor=False)"}, 0);
  EXPECT_EQ(sac.GetIntList("policy_kwargs.net_arch"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(sac.ToYaml().find("n_critics"), std::string::npos);
  EXPECT_EQ(message("ppo/pendulum.yaml",
                    "policy_kwargs=dict(share_features_extractor=True, squash_output=False)"),
            "no error");
  EXPECT_EQ(message("sac/pendulum.yaml", "policy_kwargs.n_critics=3"),
            "policy_kwargs.n_critics: got '3'; 2 only: greenrl's SAC has SB3's default, two "
            "critics (clipped double Q)");
  EXPECT_NE(message("sac/pendulum.yaml", "policy_kwargs.n_critics=two").find("an integer"),
            std::string::npos);
  // SB3 2.7's off-policy n_steps: its default, 1, only (not "a key of ppo").
  EXPECT_EQ(message("dqn/cartpole.yaml", "n_steps=1"), "no error");
  EXPECT_EQ(message("dqn/cartpole.yaml", "n_steps=3"),
            "n_steps: got '3'; 1 only: greenrl's DQN has SB3's default, one-step TD targets; the "
            "n-step returns of SB3 >= 2.7's n_steps above 1 are not implemented");
  EXPECT_NE(message("sac/pendulum.yaml", "n_steps=3").find("1 only: greenrl's SAC has"),
            std::string::npos);
  // A typo of a key fixed at its default gets a guess, as a declared key's does.
  EXPECT_EQ(message("dqn/cartpole.yaml", "n_step=1"),
            "n_step: got '1'; unknown key; did you mean 'n_steps'? every key with its default: "
            "`greenrl keys --algo dqn`");
  EXPECT_NE(message("sac/pendulum.yaml", "policy_kwargs.n_critic=2")
                .find("did you mean 'policy_kwargs.n_critics'?"),
            std::string::npos);
  // Another algo on a preset: the preset's own keys are unknown to it, and the error says why.
  const std::string other_algo = message("sac/hopper.yaml", "algo=ppo");
  EXPECT_NE(other_algo.find("unknown key"), std::string::npos) << other_algo;
  EXPECT_NE(other_algo.find("; " + configs +
                            "sac/hopper.yaml is a sac preset (its algo: sac), "
                            "and algo ppo (--algo or --set algo=) replaces its algo while its "
                            "sac keys stay: give --config " +
                            configs + "ppo/hopper.yaml, the same env's ppo preset"),
            std::string::npos)
      << other_algo;
  EXPECT_EQ(message("ppo/pendulum.yaml", "policy_kwargs.squash_output=true"),
            "policy_kwargs.squash_output: got 'true'; false only: greenrl's PPO has SB3's "
            "default: Gaussian actions clipped to the Box, not tanh-squashed");
  EXPECT_EQ(
      message("dqn/cartpole.yaml", "replay_buffer_kwargs=dict(handle_timeout_termination=False)"),
      "replay_buffer_kwargs.handle_timeout_termination: got 'false'; true only: greenrl's "
      "replay buffer has SB3's default, terminated and truncated kept apart: the TD target "
      "bootstraps through truncation");
  EXPECT_EQ(message("sac/pendulum.yaml", "replay_buffer_kwargs=dict(n_sampled_goal=4)")
                .rfind("replay_buffer_kwargs.n_sampled_goal: got '4'; unknown key", 0),
            0u);
  EXPECT_NE(message("ppo/cartpole.yaml", "replay_buffer_kwargs.handle_timeout_termination=true")
                .find("unknown key"),
            std::string::npos);  // PPO has no replay buffer
  try {
    LoadRunConfig(configs + "ppo.py", {}, 0);
    ADD_FAILURE() << "read a .py file";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "--config");
    EXPECT_NE(std::string(e.what()).find("rl-zoo's Python hyperparameter files are code"),
              std::string::npos)
        << e.what();
  }
}

// A whole --set policy_kwargs=dict(...) on an rl-zoo file takes the layout of the file's own
// algorithm (sac.yml: SAC's net_arch), without --algo; it took PPO's (net_arch.pi and .vf) and
// was refused as "a key of ppo".
TEST(RunConfigTest, WholePolicyKwargsOnAZooFileTakeTheFilesAlgorithm) {
  const std::string zoo = SourceTreeDir() + "/greenrl/train/testdata/rl_zoo/";
  const Config sac = LoadRunConfig(
      zoo + "sac.yml", {"env_id=Pendulum-v1", "policy_kwargs=dict(net_arch=[64, 64])"}, 0);
  EXPECT_EQ(sac.GetString("algo"), "sac");
  EXPECT_EQ(sac.GetIntList("policy_kwargs.net_arch"), (std::vector<int64_t>{64, 64}));
  const Config dqn = LoadRunConfig(zoo + "dqn.yml",
                                   {"env_id=CartPole-v1", "policy_kwargs=dict(net_arch=[32])"}, 0);
  EXPECT_EQ(dqn.GetIntList("policy_kwargs.net_arch"), (std::vector<int64_t>{32}));
  // --algo (--set algo=) still picks the layout.
  const Config ppo = LoadRunConfig(
      zoo + "sac.yml", {"algo=ppo", "env_id=Pendulum-v1", "policy_kwargs=dict(net_arch=[8])"}, 0);
  EXPECT_EQ(ppo.GetIntList("policy_kwargs.net_arch.vf"), (std::vector<int64_t>{8}));
}

// A mistake inside an rl-zoo section is named with the file and section (not taken for a --set
// one); SB3 constructor arguments greenrl has no key for say what it does instead; SB3's
// clip_range_vf is a PPO key (0: off, SB3's None; lin_ schedules too).
TEST(RunConfigTest, ZooSectionErrorsNameTheFileAndSb3ArgumentsAreExplained) {
  const std::string zoo = ::testing::TempDir() + "/greenrl_zoo_bad/ppo.yml";
  std::filesystem::create_directories(::testing::TempDir() + "/greenrl_zoo_bad");
  std::ofstream(zoo) << "CartPole-v1:\n  n_envs: 8\n  n_step: 32\n  policy: 'MlpPolicy'\n";
  auto message = [](const std::string& path, const std::vector<std::string>& sets) {
    try {
      LoadRunConfig(path, sets, std::nullopt);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A bad section value that --set replaces is dropped unparsed, as a preset file's.
  const std::string zoo_value = ::testing::TempDir() + "/greenrl_zoo_bad/a2c_like/ppo.yml";
  std::filesystem::create_directories(::testing::TempDir() + "/greenrl_zoo_bad/a2c_like");
  std::ofstream(zoo_value) << "CartPole-v1:\n  n_envs: 8\n  n_steps: -32\n  policy: 'MlpPolicy'\n";
  EXPECT_EQ(message(zoo_value, {"env_id=CartPole-v1"})
                .rfind("n_steps (in " + zoo_value + ", section CartPole-v1): got '-32'; ", 0),
            0u)
      << message(zoo_value, {"env_id=CartPole-v1"});
  EXPECT_EQ(LoadRunConfig(zoo_value, {"env_id=CartPole-v1", "n_steps=32"}, std::nullopt)
                .GetInt("n_steps"),
            32);
  // A section's unknown key stays an error of the section, even where --set names it too.
  EXPECT_EQ(message(zoo, {"env_id=CartPole-v1", "n_step=64"})
                .rfind("n_step (in " + zoo + ", section CartPole-v1): got '32'; unknown key", 0),
            0u)
      << message(zoo, {"env_id=CartPole-v1", "n_step=64"});
  EXPECT_EQ(message(zoo, {"env_id=CartPole-v1"})
                .rfind("n_step (in " + zoo +
                           ", section CartPole-v1): got '32'; unknown key; did you "
                           "mean 'n_steps'?",
                       0),
            0u)
      << message(zoo, {"env_id=CartPole-v1"});
  const std::string preset = SourceTreeDir() + "/configs/ppo/cartpole.yaml";
  EXPECT_EQ(message(preset, {"verbose=1"})
                .rfind("verbose: got '1'; unknown key (SB3's; greenrl prints its log lines unless "
                       "--quiet is given)",
                       0),
            0u);
  // Several unknown keys are named in one error (a CleanRL user's --set names at once).
  EXPECT_EQ(message(preset, {"update_epochs=4", "n_steps=64", "clip_coef=0.1", "num_steps=128",
                             "clip_coef=0.2", "nstep=8"})
                .rfind("update_epochs: got '4'; unknown key (CleanRL's; SB3 and greenrl call it "
                       "n_epochs); ",
                       0),
            0u)
      << message(preset, {"update_epochs=4", "clip_coef=0.1"});
  EXPECT_NE(message(preset, {"update_epochs=4", "n_steps=64", "clip_coef=0.1", "num_steps=128",
                             "clip_coef=0.2", "nstep=8"})
                .find("; also unknown: clip_coef (CleanRL's; SB3 and greenrl call it clip_range); "
                      "num_steps (CleanRL's; SB3 and greenrl call it n_steps); nstep (did you "
                      "mean 'n_steps'?)"),
            std::string::npos)
      << message(preset, {"update_epochs=4", "clip_coef=0.1", "num_steps=128", "nstep=8"});
  EXPECT_EQ(message(preset, {"stats_window_size=10"})
                .rfind("stats_window_size: got '10'; unknown key (SB3's; greenrl's "
                       "rollout/ep_rew_mean window is SB3's default, 100 episodes)",
                       0),
            0u);
  EXPECT_EQ(
      algo::PpoConfigFromConfig(LoadRunConfig(preset, {}, std::nullopt)).clip_range_vf.Value(1.0),
      0.0);
  const algo::PpoConfig clipped =
      algo::PpoConfigFromConfig(LoadRunConfig(preset, {"clip_range_vf=lin_0.4"}, std::nullopt));
  EXPECT_DOUBLE_EQ(clipped.clip_range_vf.Value(0.5), 0.2);
  EXPECT_EQ(message(preset, {"clip_range_vf=-1"}),
            "clip_range_vf: got '-1'; a number, or lin_<number> or linear_<number> "
            "(linear to 0), e.g. lin_0.001, with (initial) value in [0, 1000000]; 0 is off (SB3's "
            "None)");
  EXPECT_EQ(message(preset, {"target_kl=None"}),
            "target_kl: got 'None'; a number in [0, 10]; 0 is off (SB3's None)");
}

// DQN's gradient_steps -1 is SB3's: as many gradient steps as the rollout's env steps; 0 is
// SB3's none (a run that only collects); -2 is refused.
TEST(RunConfigTest, DqnGradientStepsMinusOneIsTrainFreqTimesNEnvs) {
  const std::string dqn = SourceTreeDir() + "/configs/dqn/cartpole.yaml";
  const Config config =
      LoadRunConfig(dqn, {"gradient_steps=-1", "train_freq=8", "n_envs=2"}, std::nullopt);
  EXPECT_EQ(algo::DqnConfigFromConfig(config).gradient_steps, 16);
  EXPECT_THROW(LoadRunConfig(dqn, {"gradient_steps=-2"}, std::nullopt), ConfigError);
  const Config none = LoadRunConfig(dqn, {"gradient_steps=0", "learning_starts=0"}, std::nullopt);
  EXPECT_EQ(algo::DqnConfigFromConfig(none).gradient_steps, 0);
  auto env = env::MakeVecEnv("CartPole-v1", 1, 3, 1);
  env->Reset();
  auto agent = MakeAlgorithm(none, env->spec());
  const std::vector<float> before = agent->GetParameters();
  std::vector<algo::EpisodeRecord> episodes;
  for (int i = 0; i < 3; ++i) {
    agent->CollectRollout(*env, &episodes);
    agent->Update(1.0);
  }
  EXPECT_EQ(agent->GetParameters(), before);
}

// A preset with no key (empty, or comments only) is refused, naming --config.
TEST(RunConfigTest, EmptyPresetFileIsRefused) {
  const std::string path = ::testing::TempDir() + "/greenrl_empty_preset.yaml";
  std::ofstream(path) << "# only a comment\n";
  try {
    LoadRunConfig(path, {}, std::nullopt);
    ADD_FAILURE() << "an empty preset loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "--config");
    EXPECT_NE(std::string(e.what()).find("(the file holds none; leave --config out"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(LoadRunConfig("", {}, std::nullopt).GetString("env_id"), "CartPole-v1");
  // SAC needs Box actions: its default env is Pendulum-v1, so --algo sac alone trains.
  EXPECT_EQ(LoadRunConfig("", {"algo=sac"}, std::nullopt).GetString("env_id"), "Pendulum-v1");
  EXPECT_EQ(LoadRunConfig("", {"algo=dqn"}, std::nullopt).GetString("env_id"), "CartPole-v1");
}

TEST(RunConfigTest, BadInputNamesKeyValueAndAccepted) {
  auto message = [](const std::vector<std::string>& sets) {
    try {
      LoadRunConfig(Preset(), sets, std::nullopt);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"n_step=64"}).find("did you mean 'n_steps'"), std::string::npos);
  // A key of another algorithm says so.
  EXPECT_NE(message({"buffer_size=100"})
                .find("buffer_size: got '100'; unknown key for algo ppo (a key of dqn, sac); "
                      "every key with its default: `greenrl keys --algo ppo`"),
            std::string::npos)
      << message({"buffer_size=100"});
  // The PPO preset's own keys under --set algo=dqn: the first one met is named as PPO's.
  EXPECT_NE(message({"algo=dqn"}).find("; unknown key for algo dqn (a key of ppo); "),
            std::string::npos)
      << message({"algo=dqn"});
  EXPECT_NE(message({"batch_size=abc"}).find("batch_size: got 'abc'"), std::string::npos);
  EXPECT_NE(message({"gamma=1.5"}).find("gamma: got '1.5'"), std::string::npos);
  EXPECT_EQ(message({"batch_size=1024"}), "no error");     // SB3's one minibatch per epoch
  EXPECT_EQ(message({"sde_sample_freq=-3"}), "no error");  // <= 0: once per rollout, as SB3
  EXPECT_NE(message({"algo=a2c"})
                .find("algo: got 'a2c'; one of: ppo, dqn, sac (a2c is one of "
                      "rl-baselines3-zoo's other algorithms, which greenrl "
                      "does not implement)"),
            std::string::npos)
      << message({"algo=a2c"});
  EXPECT_EQ(message({"algo=sca"}).find("rl-baselines3-zoo"), std::string::npos);  // a typo
  EXPECT_NE(message({"env_id=Pong-v5"}).find("env_id: got 'Pong-v5'"), std::string::npos);
  EXPECT_NE(message({"carbon.region=XX"}).find("carbon.region"), std::string::npos);
  // A budget given with a unit: the unit it takes is said.
  EXPECT_EQ(message({"energy.budget_wh=5J"}),
            "energy.budget_wh: got '5J'; a number in [0, 1000000000]; watt-hours, written without "
            "a unit (e.g. 0.5 for 1800 J)");
  EXPECT_NE(
      message({"carbon.intensity_g_per_kwh=lots"}).find("carbon.intensity_g_per_kwh: got 'lots'"),
      std::string::npos);
  EXPECT_NE(message({"energy.meter=nvml"}).find("energy.meter: got 'nvml'"), std::string::npos);
  EXPECT_EQ(message({"energy.sample_period_s=1e-9"}),
            "energy.sample_period_s: got '1e-9'; a number in [0.01, 3600]");
  // The series' own error, named by the key that gave the path.
  EXPECT_EQ(message({"carbon.intensity_csv=" + ::testing::TempDir()}),
            "carbon.intensity_csv: got '" + ::testing::TempDir() +
                "'; a readable carbon-intensity series (cannot read the file (it is a "
                "directory))");
  // A fixed intensity beside a series would contradict it.
  const std::string csv = ::testing::TempDir() + "/greenrl_run_config_series.csv";
  std::ofstream(csv) << "0,100\n";
  EXPECT_EQ(message({"carbon.intensity_csv=" + csv, "carbon.intensity_g_per_kwh=56"}),
            "carbon.intensity_g_per_kwh: got '56'; auto while carbon.intensity_csv is set (the "
            "series prices the energy; set one of the two)");
  EXPECT_EQ(message({"carbon.intensity_csv=" + csv, "carbon.region=FR"}), "no error");
  // A path from a config file names the file; a relative one says where it was looked for.
  const std::string yaml = ::testing::TempDir() + "/greenrl_relative_series.yaml";
  std::ofstream(yaml) << "algo: ppo\nenv_id: CartPole-v1\ncarbon:\n  intensity_csv: no/grid.csv\n";
  try {
    LoadRunConfig(yaml, {}, 0);
    ADD_FAILURE() << "a missing series was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("carbon.intensity_csv (in " + yaml + "): got 'no/grid.csv'; ", 0), 0u)
        << what;
    EXPECT_NE(what.find("; a relative path is read from the working directory, " +
                        fs::current_path().string()),
              std::string::npos)
        << what;
  }
  try {  // given by --set: no file to name
    LoadRunConfig(yaml, {"carbon.intensity_csv=no/other.csv"}, 0);
    ADD_FAILURE() << "a missing series was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("carbon.intensity_csv: got 'no/other.csv'; ", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace greenrl::train

namespace greenrl::train {
namespace {

// A budget of half of what a run needs: every meter read adds exactly 3 J (the sampler never
// ticks: its period is an hour), so the full run's energy is the same every time. The budgeted
// run walks the ladder, stops within one iteration's energy of its budget, keeps a checkpoint
// that loads, and says so in energy.json.
TEST(TrainerTest, BudgetOfHalfTheRunStopsOnBudgetWithLoadableCheckpoint) {
  const std::vector<std::string> sets = {"n_timesteps=10240", "eval.freq=0",
                                         "energy.sample_period_s=3600",
                                         "energy.budget.warmup_steps=512"};
  TrainOptions full_options;
  full_options.out_dir = FreshDir("budget_full");
  full_options.verbose = false;
  full_options.meter_override = ScriptedMeter();
  const TrainResult full = Train(LoadRunConfig(Preset(), sets, 0), std::move(full_options));
  const double full_j = full.report.total_energy_j();
  ASSERT_GT(full_j, 0.0);

  std::vector<std::string> budget_sets = sets;
  budget_sets.push_back("energy.budget_wh=" + std::to_string(full_j / 2.0 / 3600.0));
  TrainOptions options;
  options.out_dir = FreshDir("budget_half");
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  const Config config = LoadRunConfig(Preset(), budget_sets, 0);
  const TrainResult r = Train(config, std::move(options));
  const double budget_j = config.GetFloat("energy.budget_wh") * 3600.0;

  EXPECT_TRUE(r.report.budget.stopped);
  EXPECT_LT(r.report.steps, 10240);
  EXPECT_EQ(r.report.eval_episodes, 0);  // the final evaluation would spend past the budget
  // Never past the budget by more than one iteration's energy (the full run's mean per
  // iteration: 40 iterations).
  EXPECT_LE(r.report.total_energy_j(), budget_j + full_j / 40.0);

  std::ifstream in(r.report.run_dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_TRUE(j["budget"]["stopped_by_budget"].get<bool>());
  std::vector<std::string> actions;
  for (const auto& e : j["budget"]["events"]) {
    actions.push_back(e["action"].get<std::string>() + (e["taken"].get<bool>() ? "" : "(passed)"));
    EXPECT_GT(e["global_step"].get<int64_t>(), 0);
    EXPECT_FALSE(e["reason"].get<std::string>().empty());
  }
  // The first rung is passed over on the CPU whatever its bf16 support (Ppo::CanReducePrecision).
  const std::vector<std::string> ladder = {"reduce_precision(passed)", "skip_non_critical",
                                           "throttle", "stop"};
  EXPECT_EQ(actions, ladder);
  // Each decision's iteration has its row in metrics.csv, thinned to every 10th iteration or not.
  std::vector<double> row_steps;
  for (const auto& row : MetricRows(r.report.run_dir)) row_steps.push_back(row.at("global_step"));
  for (const auto& e : j["budget"]["events"]) {
    const auto step = static_cast<double>(e["global_step"].get<int64_t>());
    EXPECT_NE(std::find(row_steps.begin(), row_steps.end(), step), row_steps.end())
        << e["action"] << " at step " << step;
  }
  // The stop kept the final evaluation's estimate in hand (from the rollouts' energy per step, as
  // no evaluation ran before it).
  const std::string stop_reason = j["budget"]["events"].back()["reason"].get<std::string>();
  EXPECT_NE(stop_reason.find(" + final evaluation ~"), std::string::npos) << stop_reason;

  // The checkpoint loads into a fresh PPO and acts.
  Config reload = LoadRunConfig(r.report.run_dir + "/config.yaml", {}, std::nullopt);
  auto ppo = algo::MakePpo(algo::PpoConfigFromConfig(reload), env::FindEnvSpec("CartPole-v1"));
  ppo->LoadCheckpoint(r.checkpoint_path);
  const EvalResult eval = EvaluatePolicy(*ppo, "CartPole-v1", 2, 0);
  EXPECT_EQ(eval.returns.size(), 2u);
}

// The budget runs below: 10240 steps of 256 per iteration, every meter read 3 J.
const std::vector<std::string> kBudgetSets = {"n_timesteps=10240", "eval.freq=0",
                                              "energy.sample_period_s=3600",
                                              "energy.budget.warmup_steps=512"};

TrainResult TrainScripted(const Config& config, const std::string& dir, bool resume = false,
                          int64_t stop_after = 0) {
  TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  options.resume = resume;
  options.stop_after_steps = stop_after;
  return Train(config, std::move(options));
}

// energy.json's budget events as "action" or "action(passed)", with their steps.
std::vector<std::pair<std::string, int64_t>> BudgetEvents(const std::string& dir) {
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& e : j["budget"]["events"]) {
    out.emplace_back(e["action"].get<std::string>() + (e["taken"].get<bool>() ? "" : "(passed)"),
                     e["global_step"].get<int64_t>());
  }
  return out;
}

// The energy of an unbudgeted run of kBudgetSets, J.
double FullRunJ() {
  return TrainScripted(LoadRunConfig(Preset(), kBudgetSets, 0), FreshDir("budget_full_run"))
      .report.total_energy_j();
}

// Each resume checkpoint is measured in the "checkpoint" window, and with one due after every
// iteration the budget's stop keeps the last one's energy in hand for the next.
TEST(TrainerTest, CheckpointsAreMeasuredAndTheBudgetKeepsRoomForTheNext) {
  std::vector<std::string> sets = kBudgetSets;
  sets.push_back("checkpoint_freq=256");
  std::vector<std::string> no_budget = sets;
  sets.push_back("energy.budget_wh=" + std::to_string(FullRunJ() / 2.0 / 3600.0));
  const std::string dir = FreshDir("budget_checkpoints");
  const TrainResult r = TrainScripted(LoadRunConfig(Preset(), sets, 0), dir);
  ASSERT_TRUE(r.report.budget.stopped);
  std::ifstream in(r.report.run_dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  // One after each iteration (256 steps), the stop's own included; each reads the meter three
  // times (as it opens, for the state it saves, as it closes): 6 J.
  const auto& w = j["windows"]["checkpoint"];
  EXPECT_EQ(w["count"].get<int64_t>(), r.report.steps / 256);
  EXPECT_DOUBLE_EQ(w["total_energy_j"].get<double>(), 6.0 * (r.report.steps / 256));
  const std::string stop_reason = j["budget"]["events"].back()["reason"].get<std::string>();
  EXPECT_NE(stop_reason.find(" + checkpoint ~6 J + final evaluation ~"), std::string::npos)
      << stop_reason;
  EXPECT_EQ(j["budget"]["events"].back()["checkpoint_j"].get<double>(), 6.0);

  // Resumed without a budget to the end: the stopping checkpoint's window (closed after that
  // checkpoint saved the windows) carries over from energy.json with the totals, so the 39
  // checkpoints of the whole run (one after each iteration but the last, 40) are all counted,
  // and the windows and what lies outside them still sum to the total.
  no_budget.push_back("energy.budget_wh=0");
  TrainScripted(LoadRunConfig(Preset(), no_budget, 0), dir, /*resume=*/true);
  std::ifstream in2(dir + "/energy.json");
  const auto j2 = nlohmann::json::parse(in2);
  EXPECT_EQ(j2["windows"]["checkpoint"]["count"].get<int64_t>(), 39);
  EXPECT_DOUBLE_EQ(j2["windows"]["checkpoint"]["total_energy_j"].get<double>(), 6.0 * 39);
  double sum_j = j2["unattributed"]["total_energy_j"].get<double>();
  for (const auto& [key, w] : j2["windows"].items()) sum_j += w["total_energy_j"].get<double>();
  EXPECT_NEAR(sum_j, j2["total_energy_j"].get<double>(), 1e-9);
}

// A budgeted run with no periodic checkpoint due (checkpoint_freq 100000) writes one after its
// first iteration, so the resume checkpoint its stop writes has an estimate (6 J: three meter
// reads), and the stop keeps that in hand where it is more than the final evaluation's estimate
// (one episode: 500 steps at the rollouts' 3 J / 256 steps, 5.86 J).
TEST(TrainerTest, BudgetStopKeepsItsOwnCheckpointInHand) {
  std::vector<std::string> sets = kBudgetSets;
  sets.push_back("eval.final_episodes=1");
  sets.push_back("energy.budget_wh=" + std::to_string(FullRunJ() / 2.0 / 3600.0));
  const std::string dir = FreshDir("budget_stop_checkpoint");
  const TrainResult r = TrainScripted(LoadRunConfig(Preset(), sets, 0), dir);
  ASSERT_TRUE(r.report.budget.stopped);
  EXPECT_TRUE(fs::exists(CheckpointPath(dir, 256)));             // the first iteration's
  EXPECT_TRUE(fs::exists(CheckpointPath(dir, r.report.steps)));  // the stop's
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["windows"]["checkpoint"]["count"].get<int64_t>(), 2);
  const auto& stop = j["budget"]["events"].back();
  EXPECT_EQ(stop["action"], "stop");
  EXPECT_DOUBLE_EQ(stop["reserve_j"].get<double>(), 6.0);
  EXPECT_NE(stop["reason"].get<std::string>().find(" + stop checkpoint ~6 J = "), std::string::npos)
      << stop["reason"];
  EXPECT_EQ(stop["checkpoint_j"].get<double>(), 0.0);  // no periodic one due
}

// SAC's update windows are its updates with gradient steps: none before learning_starts (100;
// 300 steps of one env, one update call each), so 200 windows, not 300.
TEST(TrainerTest, UpdateWindowsCountOnlyUpdatesWithGradientSteps) {
  const Config config = LoadRunConfig(SourceTreeDir() + "/configs/sac/pendulum.yaml",
                                      {"n_timesteps=300", "learning_starts=100", "eval.freq=0",
                                       "eval.final_episodes=1", "energy.sample_period_s=3600"},
                                      0);
  const std::string dir = FreshDir("sac_update_windows");
  const TrainResult r = TrainScripted(config, dir);
  EXPECT_EQ(r.report.steps, 300);
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["windows"]["update"]["count"].get<int64_t>(), 200);
  EXPECT_EQ(j["windows"]["rollout"]["count"].get<int64_t>(), 300);
}

// The budget's throttle sleeps between iterations without SAC's second update thread spinning
// through the sleeps: the trainer releases it before each one, and it spins again from the next
// update on. (Every rung at 1.5% of a 50 Wh budget, 180 kJ: the run's forecast, about 300
// iterations of 5 meter reads, 4.5 kJ, is 2.5% of it once the warm-up ends at step 150, after the
// first update at 100; the 1.5 kJ used by then is 0.8%.)
TEST(TrainerTest, ThrottleSleepsReleaseSpinningUpdateThreads) {
  const Config config =
      LoadRunConfig(SourceTreeDir() + "/configs/sac/pendulum.yaml",
                    {"n_timesteps=300", "learning_starts=100", "eval.freq=0",
                     "eval.final_episodes=1", "threads.update=2", "energy.sample_period_s=3600",
                     "energy.budget_wh=50", "energy.budget.warmup_steps=150",
                     "energy.budget.reduced_precision_at=0.015", "energy.budget.skip_at=0.015",
                     "energy.budget.throttle_at=0.015", "energy.budget.throttle_duty_cycle=0.9"},
                    0);
  int spinning = 0, released = 0;  // before updates, from the first spinning one on
  TrainOptions options;
  options.out_dir = FreshDir("throttle_release");
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  options.before_update = [&](int64_t, algo::Algorithm& algorithm) {
    if (algorithm.HasSpinningThreads()) {
      ++spinning;
    } else if (spinning > 0) {
      ++released;
    }
  };
  const TrainResult r = Train(config, std::move(options));
  EXPECT_EQ(r.report.budget.final_state, "throttle");
  EXPECT_GT(spinning, 0);
  EXPECT_GT(released, 100);  // after each throttled iteration's sleep
}

// Under the budget's skip rung periodic evaluations stop, unless eval.reward_threshold reads
// them: with a threshold (never reached) every evaluation due before the budget stop runs, one
// per 512 steps; without one, those after the skip rung are skipped. (Neither run gets a final
// evaluation: the budget stops both.)
TEST(TrainerTest, RewardThresholdKeepsPeriodicEvaluationsUnderTheSkipRung) {
  const std::vector<std::string> sets = {"n_timesteps=10240", "eval.freq=512", "eval.episodes=1",
                                         "energy.sample_period_s=3600",
                                         "energy.budget.warmup_steps=512"};
  const double full_j = [&] {
    TrainOptions options;
    options.out_dir = FreshDir("threshold_budget_full");
    options.verbose = false;
    options.meter_override = ScriptedMeter();
    return Train(LoadRunConfig(Preset(), sets, 0), std::move(options)).report.total_energy_j();
  }();
  auto evals_and_steps = [&](const std::string& name, const std::string& threshold) {
    std::vector<std::string> budget_sets = sets;
    budget_sets.push_back("energy.budget_wh=" + std::to_string(full_j / 2.0 / 3600.0));
    budget_sets.push_back("eval.reward_threshold=" + threshold);
    TrainOptions options;
    options.out_dir = FreshDir(name);
    options.verbose = false;
    options.meter_override = ScriptedMeter();
    const TrainResult r = Train(LoadRunConfig(Preset(), budget_sets, 0), std::move(options));
    EXPECT_TRUE(r.report.budget.stopped) << name;
    int64_t evals = 0;
    for (const auto& row : MetricRows(r.report.run_dir)) {
      evals += std::isnan(row.at("eval/mean_reward")) ? 0 : 1;
    }
    return std::make_pair(evals, r.report.steps);
  };
  const auto [with_evals, with_steps] = evals_and_steps("threshold_budget_on", "1e9");
  EXPECT_EQ(with_evals, with_steps / 512);
  const auto [without_evals, without_steps] = evals_and_steps("threshold_budget_off", "off");
  EXPECT_LT(without_evals, without_steps / 512);
}

// A budget stop leaves a resume checkpoint and no final.pt (the run is unfinished). --resume
// under the same budget (or a smaller one) is refused before any work, naming energy.budget_wh
// and the stop's step; under a larger budget the run goes on from the stop's step to its end:
// metrics.csv continues, energy.json keeps the first segment's decisions and no stop of its
// own, the final evaluation runs and final.pt is written. The finished run then refuses
// --resume, whatever the budget (the budget stop's checkpoint is still its newest).
TEST(TrainerTest, BudgetStopResumesUnderALargerBudget) {
  const double full_j = FullRunJ();
  std::vector<std::string> sets = kBudgetSets;
  sets.push_back("energy.budget_wh=" + std::to_string(full_j / 2.0 / 3600.0));
  const std::string dir = FreshDir("budget_resumed");
  const TrainResult stopped = TrainScripted(LoadRunConfig(Preset(), sets, 0), dir);
  ASSERT_TRUE(stopped.report.budget.stopped);
  const int64_t stop_step = stopped.report.steps;
  EXPECT_TRUE(fs::exists(CheckpointPath(dir, stop_step)));
  EXPECT_EQ(stopped.checkpoint_path, CheckpointPath(dir, stop_step));
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  EXPECT_NE(stopped.report.eval_note.find("--resume " + dir + " --set energy.budget_wh="),
            std::string::npos)
      << stopped.report.eval_note;
  const double used_j = stopped.report.total_energy_j();

  for (const double wh : {full_j / 2.0 / 3600.0, full_j / 4.0 / 3600.0}) {
    const Config again =
        LoadRunConfig(dir + "/config.yaml", {"energy.budget_wh=" + std::to_string(wh)}, {});
    try {
      TrainScripted(again, dir, /*resume=*/true);
      ADD_FAILURE() << "a resume under " << wh << " Wh ran";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "energy.budget_wh");
      EXPECT_NE(std::string(e.what()).find("stopped this run at step " + std::to_string(stop_step)),
                std::string::npos)
          << e.what();
    }
  }
  // A larger budget without room for the next iteration the stop estimated: refused too.
  {
    const auto j = nlohmann::json::parse(std::ifstream(dir + "/energy.json"));
    const auto& stop = j["budget"]["events"].back();
    const double next_j = stop["next_iteration_energy_j"].get<double>();
    ASSERT_GT(next_j, 0.0);
    ASSERT_GT(stop["reserve_j"].get<double>(), 0.0);
    // Above the budget that stopped it (the final evaluation's reserve stopped it early), below
    // what one more iteration and the final evaluation need.
    const double budget_j = stop["budget_j"].get<double>();
    const double need_j = used_j + next_j + stop["reserve_j"].get<double>();
    ASSERT_GT(need_j, budget_j + 1.0);
    const double wh = (budget_j + need_j) / 2.0 / 3600.0;
    try {
      TrainScripted(
          LoadRunConfig(dir + "/config.yaml", {"energy.budget_wh=" + std::to_string(wh)}, {}), dir,
          /*resume=*/true);
      ADD_FAILURE() << "a resume without room for one iteration ran";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "energy.budget_wh");
      const std::string what = e.what();
      EXPECT_NE(what.find("a smaller budget stops it again after one iteration"), std::string::npos)
          << what;
      // The least budget is quoted rounded up: the value quoted is accepted.
      const size_t at = what.find("at least ");
      ASSERT_NE(at, std::string::npos) << what;
      const double quoted_wh = std::stod(what.substr(at + 9));
      EXPECT_GE(quoted_wh * 3600.0, need_j) << what;
      EXPECT_LT(quoted_wh * 3600.0, need_j * (1.0 + 1e-5)) << what;
    }
  }
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));  // the refusals changed nothing

  const Config larger = LoadRunConfig(
      dir + "/config.yaml", {"energy.budget_wh=" + std::to_string(3.0 * full_j / 3600.0)}, {});
  const TrainResult resumed = TrainScripted(larger, dir, /*resume=*/true);
  EXPECT_FALSE(resumed.report.budget.stopped);
  EXPECT_EQ(resumed.report.steps, 10240);
  EXPECT_EQ(resumed.report.eval_episodes, 10);
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/final.pt"));
  EXPECT_GT(resumed.report.total_energy_j(), used_j);
  EXPECT_EQ(resumed.report.budget.stop_reason, "");
  // The first segment's ladder, then nothing: 3x the run's energy is never 0.6 of the budget.
  const auto events = BudgetEvents(dir);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].first, "reduce_precision(passed)");
  EXPECT_EQ(events[3], std::make_pair(std::string("stop"), stop_step));
  // metrics.csv: one row per iteration, 256 steps apart, from 256 to 10240 (the stop's row kept).
  const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  ASSERT_EQ(header[0], "global_step");
  ASSERT_FALSE(rows.empty());
  std::vector<double> steps;
  for (const auto& row : rows) steps.push_back(row[0]);
  // Under the budget's skip rung the first segment logged every 10th iteration only.
  for (size_t k = 1; k < steps.size(); ++k) EXPECT_GT(steps[k], steps[k - 1]);
  EXPECT_EQ(steps.back(), 10240.0);
  EXPECT_NE(std::find(steps.begin(), steps.end(), static_cast<double>(stop_step)), steps.end());
  EXPECT_NE(std::find(steps.begin(), steps.end(), static_cast<double>(stop_step + 256)),
            steps.end());

  // Finished: no further --resume, with or without a budget or more steps.
  for (const std::vector<std::string>& again :
       {std::vector<std::string>{}, {"energy.budget_wh=0"}, {"n_timesteps=20480"}}) {
    try {
      TrainScripted(LoadRunConfig(dir + "/config.yaml", again, {}), dir, /*resume=*/true);
      ADD_FAILURE() << "a finished run resumed";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "--resume");
      EXPECT_NE(std::string(e.what()).find(
                    "(this one finished; it has checkpoints/final.pt); to train its agent "
                    "further, start a new run from it: greenrl train --config " +
                    dir + "/config.yaml --trained-agent " + dir + " --set n_timesteps=N"),
                std::string::npos)
          << e.what();
    }
  }
}

// An interrupted run resumed under a budget it has already used up would stop after one more
// iteration: refused before any work, with the energy used and the checkpoint's step.
TEST(TrainerTest, ResumeUnderABudgetAlreadyUsedIsRefused) {
  const std::string dir = FreshDir("budget_used");
  const TrainResult first =
      TrainScripted(LoadRunConfig(Preset(), kBudgetSets, 0), dir, false, /*stop_after=*/2560);
  ASSERT_TRUE(first.interrupted);
  const double used_wh = first.report.total_energy_j() / 3600.0;
  try {
    TrainScripted(LoadRunConfig(dir + "/config.yaml",
                                {"energy.budget_wh=" + std::to_string(used_wh / 2.0)}, {}),
                  dir, /*resume=*/true);
    ADD_FAILURE() << "resumed under half the energy already used";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "energy.budget_wh");
    EXPECT_NE(std::string(e.what()).find("used up to its checkpoint at step 2560"),
              std::string::npos)
        << e.what();
  }
  // A budget well above it: the run goes on to its end.
  const TrainResult second =
      TrainScripted(LoadRunConfig(dir + "/config.yaml",
                                  {"energy.budget_wh=" + std::to_string(100.0 * used_wh)}, {}),
                    dir, /*resume=*/true);
  EXPECT_EQ(second.report.steps, 10240);
}

// A run interrupted under a budget resumes on the ladder it was on: no rung is taken twice, the
// first iteration after the resume is not taken for the whole run so far (which used to stop a
// run resumed past half its budget after one iteration), and it stops on its budget within an
// iteration or two of where the uninterrupted run stopped.
TEST(TrainerTest, BudgetedRunResumedGoesOnDownItsLadder) {
  const double full_j = FullRunJ();
  std::vector<std::string> sets = kBudgetSets;
  sets.push_back("energy.budget_wh=" + std::to_string(full_j / 2.0 / 3600.0));
  const Config config = LoadRunConfig(Preset(), sets, 0);
  const TrainResult whole = TrainScripted(config, FreshDir("budget_whole"));
  ASSERT_TRUE(whole.report.budget.stopped);
  const std::vector<std::string> ladder = {"reduce_precision(passed)", "skip_non_critical",
                                           "throttle", "stop"};
  std::vector<std::string> whole_actions;
  for (const auto& [action, step] : BudgetEvents(whole.report.run_dir)) {
    whole_actions.push_back(action);
  }
  ASSERT_EQ(whole_actions, ladder);

  // Interrupted at about 3/4 of the way to the stop, past the skip rung, then resumed.
  const int64_t stop_after = whole.report.steps * 3 / 4 / 256 * 256;
  const std::string dir = FreshDir("budget_split");
  const TrainResult first = TrainScripted(config, dir, false, stop_after);
  ASSERT_TRUE(first.interrupted);
  ASSERT_FALSE(first.report.budget.stopped);
  const TrainResult second =
      TrainScripted(LoadRunConfig(dir + "/config.yaml", {}, {}), dir, /*resume=*/true);
  EXPECT_TRUE(second.report.budget.stopped);
  EXPECT_GE(second.report.steps, whole.report.steps - 512);
  EXPECT_LE(second.report.steps, whole.report.steps + 512);
  EXPECT_GT(second.report.steps, stop_after + 256);
  std::vector<std::string> actions;
  for (const auto& [action, step] : BudgetEvents(dir)) actions.push_back(action);
  EXPECT_EQ(actions, ladder);
}

// A resumed run estimates its final evaluation from every evaluation so far: the checkpoint
// carries the eval window and its env steps. Stopped by its budget before an evaluation of its
// own, the resume keeps the first segment's evaluation energy per env step x 10 episodes x 500
// steps in hand. Before, it knew only its own windows and estimated from its rollouts.
TEST(TrainerTest, ResumedRunEstimatesItsFinalEvaluationFromEarlierSegments) {
  const std::vector<std::string> sets = {"n_timesteps=10240", "eval.freq=2048",
                                         "energy.sample_period_s=3600",
                                         "energy.budget.warmup_steps=512"};
  const std::string dir = FreshDir("budget_reserve_carried");
  const TrainResult first = TrainScripted(LoadRunConfig(Preset(), sets, 0), dir, false, 3072);
  ASSERT_TRUE(first.interrupted);
  const std::optional<TrainerState> state = PeekTrainerState(CheckpointPath(dir, 3072));
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->rollout_env_steps, 3072);
  ASSERT_GT(state->eval_env_steps, 0);
  const double eval_j = state->windows.at("eval").sum.total_energy_j();
  ASSERT_GT(eval_j, 0.0);

  // A budget 1 J above what the run used: it stops before its next evaluation (step 4096).
  const double budget_wh = (first.report.total_energy_j() + 1.0) / 3600.0;
  const Config config =
      LoadRunConfig(dir + "/config.yaml", {"energy.budget_wh=" + std::to_string(budget_wh)}, {});
  const TrainResult second = TrainScripted(config, dir, /*resume=*/true);
  ASSERT_TRUE(second.report.budget.stopped);
  EXPECT_LT(second.report.steps, 4096);
  const auto j = nlohmann::json::parse(std::ifstream(dir + "/energy.json"));
  const auto& stop = j["budget"]["events"].back();
  ASSERT_EQ(stop["action"], "stop");
  const double expected_j = eval_j / static_cast<double>(state->eval_env_steps) *
                            config.GetInt("eval.final_episodes") * 500.0;
  EXPECT_NEAR(stop["reserve_j"].get<double>(), expected_j, 1e-9 * expected_j);
}

}  // namespace
}  // namespace greenrl::train

namespace greenrl::train {
namespace {

std::vector<std::string> ReadLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Zeus-style profiling through the fake libnvidia-ml: a GPU with limits 100-150 W gets the plan
// 150, 125, 100 W, one iteration each, then the chosen limit, and its original 150 W back at the
// end; in dry-run mode nothing is set at all.
class PowerLimitTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PowerLimitTest, ProfilesPlanChoosesAndRestoresOrOnlyPlans) {
  const std::string mode = GetParam();
  const std::string dir = FreshDir("power_limit_" + mode);
  fs::create_directories(dir);
  const std::string script = dir + "/nvml.script", set_log = dir + "/set.log";
  std::ofstream(script) << "device GPU-test 00000000:3B:00.0 Fake GPU\n"
                           "energy_mj 0 1000 2000 3000 4000 5000\n"
                           "power_limits 0 100000 150000 150000 150000\n";
  setenv("GREENRL_FAKE_NVML_SCRIPT", script.c_str(), 1);
  setenv("GREENRL_FAKE_NVML_SET_LOG", set_log.c_str(), 1);
  const Config config =
      LoadRunConfig(Preset(),
                    {"n_timesteps=2048", "eval.freq=0", "energy.power_limit=" + mode,
                     "energy.power_limit_iterations=1",
                     std::string("energy.nvml_library=") + test_paths::FakeNvmlLibrary()},
                    0);
  TrainOptions options;
  options.out_dir = dir + "/run";
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  const TrainResult r = Train(config, std::move(options));
  unsetenv("GREENRL_FAKE_NVML_SCRIPT");
  unsetenv("GREENRL_FAKE_NVML_SET_LOG");

  const std::vector<std::string> sets = ReadLines(set_log);
  const std::vector<std::string>& log = r.report.power_limit_log;
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("power-limit plan 150, 125, 100 W"), std::string::npos) << log[0];
  if (mode == "dry-run") {
    EXPECT_TRUE(sets.empty());
    EXPECT_NE(log[1].find("dry-run: would profile 3 limits x 1 iterations"), std::string::npos)
        << log[1];
    return;
  }
  ASSERT_EQ(sets.size(), 5u);
  EXPECT_EQ(sets[0], "GPU-test 150000");
  EXPECT_EQ(sets[1], "GPU-test 125000");
  EXPECT_EQ(sets[2], "GPU-test 100000");
  EXPECT_TRUE(sets[3] == "GPU-test 150000" || sets[3] == "GPU-test 125000" ||
              sets[3] == "GPU-test 100000")
      << sets[3];
  EXPECT_EQ(sets[4], "GPU-test 150000");  // the original limit, restored
  std::ifstream in(r.report.run_dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["power_limit"]["mode"], "auto");
  EXPECT_GE(j["power_limit"]["log"].size(), 8u);  // plan, 3 sets, 3 profiles, choice, set, restore
}

INSTANTIATE_TEST_SUITE_P(Modes, PowerLimitTest, ::testing::Values("auto", "dry-run"));

}  // namespace
}  // namespace greenrl::train

namespace greenrl::train {
namespace {

// emissions.csv's row: two GPUs are gpu_count 2 with their energy summed; the energy columns are
// the metered energy times the PUE, the power columns the draw (J / wall time).
TEST(TrainerTest, EmissionsRowCountsEveryGpuDomain) {
  report::RunReport r;
  r.wall_time_s = 10.0;
  r.domains = {{"cpu:package-0", "rapl", "measured", "machine", 100.0, "no"},
               {"gpu:0", "nvml", "measured", "machine", 300.0, "no"},
               {"gpu:1", "nvml", "measured", "machine", 200.0, "no"}};
  r.carbon.pue = 1.5;
  const report::EmissionsRow row = MakeEmissionsRow(r, 1795971600.0);
  EXPECT_EQ(row.gpu_count, 2);
  EXPECT_EQ(row.gpu_energy_j, 750.0);
  EXPECT_EQ(row.gpu_power_w, 50.0);
  EXPECT_EQ(row.cpu_energy_j, 150.0);
  EXPECT_EQ(row.duration_s, 10.0);  // no meter span given: the wall time
  EXPECT_EQ(row.tracking_mode, "machine");
  EXPECT_EQ(row.os.rfind("Linux-", 0), 0u) << row.os;  // uname: Linux-<release>-<machine>
  // The power and rate columns divide by the span the energy was metered over (energy.json's
  // duration_s), which is also CodeCarbon's duration.
  r.monitor_duration_s = 12.5;
  const report::EmissionsRow spanned = MakeEmissionsRow(r, 1795971600.0);
  EXPECT_EQ(spanned.duration_s, 12.5);
  EXPECT_EQ(spanned.gpu_power_w, 40.0);
  EXPECT_EQ(spanned.cpu_power_w, 8.0);
  r.monitor_duration_s = 0.0;
  // CodeCarbon's ram_total_size: /proc/meminfo's MemTotal (kB) in units of 1024^3 bytes.
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  double mem_total_kb = 0;
  while (meminfo >> name && name != "MemTotal:") meminfo.ignore(1 << 20, '\n');
  meminfo >> mem_total_kb;
  ASSERT_GT(mem_total_kb, 0.0);
  ASSERT_TRUE(row.ram_total_size_gb.has_value());
  EXPECT_DOUBLE_EQ(*row.ram_total_size_gb, mem_total_kb / (1024.0 * 1024.0));
  r.domains.pop_back();
  r.domains.pop_back();
  EXPECT_EQ(MakeEmissionsRow(r, 1795971600.0).gpu_count, 0);
}

// normalize: true trains on VecNormalize'd observations; the checkpoint keeps the statistics, and
// an evaluation after reload sees exactly the normalisation of the final evaluation in training
// (the same returns, episode by episode), with the statistics frozen.
TEST(TrainerTest, NormalizerStatisticsTravelWithTheCheckpoint) {
  const Config config = LoadRunConfig(
      Preset(), {"n_timesteps=2048", "eval.freq=0", "normalize=true", "eval.final_episodes=4"}, 5);
  TrainOptions options;
  options.out_dir = FreshDir("normalize");
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  const TrainResult r = Train(config, std::move(options));
  const std::string norm_path = r.report.run_dir + "/checkpoints/normalizer.json";
  ASSERT_TRUE(fs::exists(norm_path));
  const NormalizerSnapshot snapshot = LoadNormalizer(norm_path);
  EXPECT_EQ(snapshot.options.gamma, 0.98);  // the preset's gamma, as rl-zoo passes it
  // [version, obs_dim, count, mean x4, var x4, ...]: the running count grew during training.
  ASSERT_GT(snapshot.state.size(), 3u);
  EXPECT_GT(snapshot.state[2], 2048.0);

  Config reload = LoadRunConfig(r.report.run_dir + "/config.yaml", {}, std::nullopt);
  auto ppo = algo::MakePpo(algo::PpoConfigFromConfig(reload), env::FindEnvSpec("CartPole-v1"));
  ppo->LoadCheckpoint(r.checkpoint_path);
  const EvalResult a = EvaluatePolicy(*ppo, "CartPole-v1", 4, 5, true, &snapshot);
  const EvalResult b = EvaluatePolicy(*ppo, "CartPole-v1", 4, 5, true, &snapshot);
  EXPECT_EQ(a.returns, b.returns);  // frozen: evaluating does not move the statistics
  EXPECT_DOUBLE_EQ(a.mean_return, r.report.eval_mean_return);
  // Without the statistics the same agent sees other inputs.
  const EvalResult raw = EvaluatePolicy(*ppo, "CartPole-v1", 4, 5, true, nullptr);
  EXPECT_EQ(raw.returns.size(), 4u);
  EXPECT_THROW(LoadNormalizer(r.report.run_dir + "/config.yaml"), ConfigError);
}

}  // namespace
}  // namespace greenrl::train

namespace greenrl::train {
namespace {

TrainResult TrainQuiet(const Config& config, const std::string& dir) {
  TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  return Train(config, std::move(options));
}

// The preset for 4096 steps with an evaluation of 2 episodes every 512 steps and a final one of
// 3, seed 7, plus `set`, trained quietly into FreshDir(name).
TrainResult TrainEvaluatingEvery512(const std::string& name, const std::string& set) {
  return TrainQuiet(LoadRunConfig(Preset(),
                                  {"n_timesteps=4096", "eval.freq=512", "eval.episodes=2",
                                   "eval.final_episodes=3", set},
                                  7),
                    FreshDir(name));
}

// eval.save_best (SB3's EvalCallback with best_model_save_path): checkpoints/best.pt holds the
// policy of the first evaluation with the highest mean reward, periodic or final; evaluating it
// again as that evaluation did gives the same mean; energy.json and the summary name it. With
// eval.save_best false there is no best.pt, and `--best` says so.
TEST(TrainerTest, BestEvaluationsPolicyIsKeptInBestPt) {
  auto train = [](const std::string& name, bool save_best) {
    return TrainEvaluatingEvery512(name,
                                   save_best ? "eval.save_best=true" : "eval.save_best=false");
  };
  const TrainResult result = train("best_eval", true);
  const report::RunReport& r = result.report;
  const std::vector<std::map<std::string, double>> rows = MetricRows(r.run_dir);
  ASSERT_EQ(rows.size(), 16u);  // 256 steps per iteration; evaluations on rows 1, 3, ..., 15
  int64_t best_step = -1;
  double best_mean = 0.0;
  int best_episodes = 0;
  for (size_t i = 1; i < rows.size(); i += 2) {
    const double mean = rows[i].at("eval/mean_reward");
    if (best_step < 0 || mean > best_mean) {
      best_step = static_cast<int64_t>(rows[i].at("global_step"));
      best_mean = mean;
      best_episodes = i + 1 == rows.size() ? 3 : 2;  // the final evaluation has 3 episodes
    }
  }
  EXPECT_EQ(r.best_eval.global_step, best_step);
  EXPECT_EQ(r.best_eval.mean_reward, best_mean);
  EXPECT_EQ(r.best_eval.checkpoint, r.run_dir + "/checkpoints/best.pt");
  std::ifstream in(r.run_dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["best_eval"]["global_step"], best_step);
  EXPECT_EQ(j["best_eval"]["mean_reward"].get<double>(), best_mean);
  EXPECT_NE(
      report::FormatSummary(r).find(fmt::format("  best eval      {:.2f} at step {} ({})\n",
                                                best_mean, best_step, r.best_eval.checkpoint)),
      std::string::npos)
      << report::FormatSummary(r);
  TrainedAgent best = LoadTrainedAgent(r.run_dir, std::nullopt, /*best=*/true);
  EXPECT_EQ(best.checkpoint, r.run_dir + "/checkpoints/best.pt");
  EXPECT_EQ(EvaluatePolicy(*best.algorithm, "CartPole-v1", best_episodes, 7).mean_return,
            best_mean);

  const TrainResult without = train("best_eval_off", false);
  EXPECT_FALSE(fs::exists(without.report.run_dir + "/checkpoints/best.pt"));
  EXPECT_EQ(without.report.best_eval.global_step, -1);
  std::ifstream without_in(without.report.run_dir + "/energy.json");
  EXPECT_TRUE(nlohmann::json::parse(without_in)["best_eval"].is_null());
  try {
    LoadTrainedAgent(without.report.run_dir, std::nullopt, /*best=*/true);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--best: got '" + without.report.run_dir +
                                         "'; a run directory with config.yaml and "
                                         "checkpoints/best.pt"),
              std::string::npos)
        << e.what();
  }
}

// eval.reward_threshold (SB3's StopTrainingOnRewardThreshold). A reference run whose threshold
// no evaluation reaches (1e9) trains all 4096 steps with a periodic evaluation every 512; its
// first evaluation k >= 1 above every earlier one gives the threshold of a second run (the same
// seed, so the same evaluations): that run stops exactly at evaluation k, (k + 1) x 512 steps,
// as a finished run (final evaluation of 3 episodes, final.pt), with energy.json's early_stop
// and the summary's "stopped early" line. The threshold equals evaluation k's mean, so `>=`
// (not `>`) is what stops it, and the earlier, lower evaluations do not.
TEST(TrainerTest, RewardThresholdStopsAtTheFirstEvaluationThatReachesIt) {
  auto train = [](const std::string& name, const std::string& threshold) {
    return TrainEvaluatingEvery512(name, "eval.reward_threshold=" + threshold);
  };
  const TrainResult reference = train("reward_threshold_never", "1e9");
  EXPECT_EQ(reference.report.steps, 4096);
  EXPECT_FALSE(reference.report.early_stop.stopped);
  std::ifstream reference_in(reference.report.run_dir + "/energy.json");
  EXPECT_TRUE(nlohmann::json::parse(reference_in)["early_stop"].is_null());
  EXPECT_EQ(report::FormatSummary(reference.report).find("stopped early"), std::string::npos);
  const std::vector<std::map<std::string, double>> rows = MetricRows(reference.report.run_dir);
  ASSERT_EQ(rows.size(), 16u);  // 8 envs x 32 steps = 256 per iteration; rows 1, 3, ..., 13:
  std::vector<double> evals;    // the periodic evaluations at 512, 1024, ..., 3584
  for (size_t i = 1; i + 1 < rows.size(); i += 2) evals.push_back(rows[i].at("eval/mean_reward"));
  ASSERT_EQ(evals.size(), 7u);
  size_t k = 1;
  while (k < evals.size() && evals[k] <= *std::max_element(evals.begin(), evals.begin() + k)) ++k;
  ASSERT_LT(k, evals.size()) << "no evaluation above the earlier ones: " << evals[0];

  const TrainResult result = train("reward_threshold", fmt::format("{:.17g}", evals[k]));
  const report::RunReport& r = result.report;
  const int64_t stop_step = static_cast<int64_t>(k + 1) * 512;
  EXPECT_EQ(r.steps, stop_step);
  EXPECT_EQ(result.checkpoint_path, r.run_dir + "/checkpoints/final.pt");
  EXPECT_TRUE(fs::exists(result.checkpoint_path));
  EXPECT_TRUE(result.resume_checkpoint.empty());
  EXPECT_EQ(r.eval_episodes, 3);
  ASSERT_TRUE(r.early_stop.stopped);
  EXPECT_EQ(r.early_stop.global_step, stop_step);
  EXPECT_EQ(r.early_stop.n_timesteps, 4096);
  EXPECT_EQ(r.early_stop.reward_threshold, evals[k]);
  EXPECT_EQ(r.early_stop.eval_mean_reward, evals[k]);
  std::ifstream in(r.run_dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["early_stop"]["reason"], "reward_threshold");
  EXPECT_EQ(j["early_stop"]["global_step"], stop_step);
  EXPECT_EQ(j["early_stop"]["n_timesteps"], 4096);
  EXPECT_EQ(j["early_stop"]["eval_mean_reward"].get<double>(), evals[k]);
  // the periodic ones up to k, and the final one
  EXPECT_EQ(j["windows"]["eval"]["count"], static_cast<int>(k) + 2);
  const std::vector<std::map<std::string, double>> stopped = MetricRows(r.run_dir);
  ASSERT_EQ(stopped.size(), 2 * (k + 1));
  EXPECT_EQ(stopped.back().at("global_step"), stop_step);
  EXPECT_EQ(stopped.back().at("eval/mean_reward"), r.eval_mean_return);  // the final one's
  try {  // finished: a resume is refused, saying what ended it
    TrainOptions again;
    again.out_dir = r.run_dir;
    again.verbose = false;
    again.resume = true;
    Train(LoadRunConfig(r.run_dir + "/config.yaml", {}, std::nullopt), std::move(again));
    ADD_FAILURE() << "a finished run resumed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "(this one finished: eval.reward_threshold {} ended it at step {} of 4096; it "
                  "has checkpoints/final.pt)",
                  evals[k], stop_step)),
              std::string::npos)
        << e.what();
  }
  const std::string summary = report::FormatSummary(r);
  EXPECT_NE(summary.find(fmt::format("  stopped early  at step {} of 4096: a periodic eval's mean "
                                     "reward {} >= eval.reward_threshold {}\n",
                                     stop_step, evals[k], evals[k])),
            std::string::npos)
      << summary;
}

// PPO's log_interval counts iterations (SB3's on-policy rule, iteration % log_interval == 0): 8
// iterations of 256 steps with log_interval 3 and an evaluation at 1024 give rows at 768
// (iteration 3), 1024 (the evaluation's), 1536 (iteration 6) and 2048 (the last). Logging does
// not change training: the losses of those rows are those of a log_interval 1 run.
TEST(TrainerTest, LogIntervalCountsIterationsForPpo) {
  const std::vector<std::string> sets = {"n_timesteps=2048", "eval.freq=1024", "eval.episodes=1",
                                         "eval.final_episodes=1"};
  std::vector<std::string> sparse_sets = sets;
  sparse_sets.push_back("log_interval=3");
  const auto every = MetricRows(
      TrainQuiet(LoadRunConfig(Preset(), sets, 0), FreshDir("log_every")).report.run_dir);
  const auto sparse = MetricRows(
      TrainQuiet(LoadRunConfig(Preset(), sparse_sets, 0), FreshDir("log_sparse")).report.run_dir);
  ASSERT_EQ(every.size(), 8u);
  std::vector<double> steps;
  for (const auto& row : sparse) steps.push_back(row.at("global_step"));
  EXPECT_EQ(steps, (std::vector<double>{768, 1024, 1536, 2048}));
  for (const auto& row : sparse) {
    const auto& same = every[static_cast<size_t>(row.at("global_step") / 256) - 1];
    EXPECT_EQ(row.at("losses/policy_loss"), same.at("losses/policy_loss"));
    EXPECT_EQ(row.at("losses/approx_kl"), same.at("losses/approx_kl"));
    EXPECT_EQ(row.at("rollout/ep_rew_mean"), same.at("rollout/ep_rew_mean"));
  }
  EXPECT_FALSE(std::isnan(sparse[1].at("eval/mean_reward")));
}

// DQN and SAC count finished episodes (SB3's off-policy rule, default 4). SAC on Pendulum
// (every episode 200 steps, one env; no update before learning_starts, so the run is random
// actions and quick): log_interval 1 writes a row per episode, log_interval 4 a row every 800
// steps whose charts/episodic_return is the mean of those 4 episodes.
TEST(TrainerTest, LogIntervalCountsEpisodesForSac) {
  const std::string sac = SourceTreeDir() + "/configs/sac/pendulum.yaml";
  const std::vector<std::string> sets = {"n_timesteps=1600", "learning_starts=1600", "eval.freq=0",
                                         "eval.final_episodes=1"};
  std::vector<std::string> every_sets = sets;
  every_sets.push_back("log_interval=1");
  const auto every = MetricRows(
      TrainQuiet(LoadRunConfig(sac, every_sets, 0), FreshDir("sac_every")).report.run_dir);
  const auto sparse =
      MetricRows(TrainQuiet(LoadRunConfig(sac, sets, 0), FreshDir("sac_sparse")).report.run_dir);
  ASSERT_EQ(every.size(), 8u);
  for (size_t k = 0; k < every.size(); ++k) {
    EXPECT_EQ(every[k].at("global_step"), 200.0 * static_cast<double>(k + 1));
    EXPECT_EQ(every[k].at("charts/episodic_length"), 200.0);
  }
  ASSERT_EQ(sparse.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(sparse[r].at("global_step"), 800.0 * static_cast<double>(r + 1));
    EXPECT_EQ(sparse[r].at("charts/episodic_length"), 200.0);
    double sum = 0.0;
    for (size_t k = 4 * r; k < 4 * r + 4; ++k) sum += every[k].at("charts/episodic_return");
    EXPECT_DOUBLE_EQ(sparse[r].at("charts/episodic_return"), sum / 4.0);
  }
}

}  // namespace
}  // namespace greenrl::train

namespace greenrl::train {
namespace {

// batch_size above n_steps * n_envs is SB3's one minibatch of the whole rollout per epoch
// (rl-zoo's tuned MountainCarContinuous-v0 has 256 over 8 rows): the same training, bit for
// bit, as batch_size equal to the rollout (the shuffle draws the same permutation).
TEST(TrainerTest, BatchSizeAboveTheRolloutIsOneMinibatchOfIt) {
  const std::vector<std::string> sets = {"n_envs=4", "n_timesteps=1024", "eval.freq=0",
                                         "eval.final_episodes=1"};
  std::vector<std::string> above = sets, equal = sets;
  above.push_back("batch_size=1000");
  equal.push_back("batch_size=128");
  TrainOptions a, b;
  a.out_dir = FreshDir("batch_above"), b.out_dir = FreshDir("batch_equal");
  a.verbose = b.verbose = false;
  const TrainResult ra = Train(LoadRunConfig(Preset(), above, 0), std::move(a));
  const TrainResult rb = Train(LoadRunConfig(Preset(), equal, 0), std::move(b));
  const auto [ha, rows_a] = report::ReadMetricsCsv(ra.report.run_dir + "/metrics.csv");
  const auto [hb, rows_b] = report::ReadMetricsCsv(rb.report.run_dir + "/metrics.csv");
  ASSERT_EQ(ha, hb);
  ASSERT_EQ(rows_a.size(), 8u);
  ASSERT_EQ(rows_b.size(), 8u);
  for (size_t c = 0; c < ha.size(); ++c) {
    if (ha[c].rfind("losses/", 0) != 0) continue;
    for (size_t r = 0; r < rows_a.size(); ++r) {
      EXPECT_EQ(rows_a[r][c], rows_b[r][c]) << ha[c] << " row " << r;
    }
  }
}

}  // namespace
}  // namespace greenrl::train

namespace greenrl::train {
namespace {

// An env whose reward is NaN at the third step of every episode (episodes of 5 steps).
class NanRewardEnv {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const env::EnvSpec& Spec() {
    static const env::EnvSpec spec = env::testing::OneValueSpec("TestNanReward-v0", 1.0f, 5);
    return spec;
  }
  std::array<float, kObsDim> Reset(uint64_t) { return Reset(); }
  std::array<float, kObsDim> Reset() {
    t_ = 0;
    return {0.0f};
  }
  StepResult Step(Action) {
    ++t_;
    StepResult r;
    r.obs = {static_cast<float>(t_) / 5.0f};
    r.reward = t_ == 3 ? std::nan("") : 1.0;
    return r;
  }

 private:
  int t_ = 0;
};

// Registers TestNanReward-v0 once per process (a registration is process-wide; tests may run
// alone or in any order).
void RegisterNanRewardEnv() {
  static const bool registered = [] {
    env::RegisterEnv(env::EnvRegistrationOf<NanRewardEnv>());
    return true;
  }();
  (void)registered;
}

// An evaluation counts the eval envs' NaN or infinite outputs (the training env's count does not
// cover them, and `greenrl eval` prints them): 3 episodes, one NaN reward each.
TEST(TrainerTest, EvaluationCountsTheEnvsNonFiniteOutputs) {
  RegisterNanRewardEnv();
  const Config config = LoadRunConfig(Preset(), {"env_id=TestNanReward-v0"}, 0);
  auto ppo = algo::MakePpo(algo::PpoConfigFromConfig(config), env::FindEnvSpec("TestNanReward-v0"));
  const EvalResult eval = EvaluatePolicy(*ppo, "TestNanReward-v0", 3, 0);
  EXPECT_EQ(eval.non_finite_outputs, 3);
  EXPECT_TRUE(std::isnan(eval.mean_return));
  EXPECT_EQ(EvaluatePolicy(*ppo, "CartPole-v1", 2, 0).non_finite_outputs, 0);
}

// A training env's NaN or infinite outputs are said once, after the rollout that met them (before
// the update reads it), and counted over the run across a resume; the evaluation envs' are said
// too; the numerical guard's stop names them. PPO's rollouts of 8 envs x 32 steps: each env's
// episodes of 5 steps have a NaN reward at their third, so steps 3, 8, ..., 28 of the first
// rollout (6 per env, 48) and 33, ..., 63 of the second (7 per env, 56).
TEST(TrainerTest, EnvsNonFiniteOutputsAreSaidCountedOverTheRunAndNamedByTheGuard) {
  RegisterNanRewardEnv();
  const std::vector<std::string> sets = {
      "env_id=TestNanReward-v0", "n_timesteps=512",     "eval.freq=0",
      "eval.final_episodes=4",   "checkpoint_freq=256", "guard.max_consecutive=100"};
  const std::string dir = FreshDir("nan_env_outputs");
  const auto train = [&](const Config& config, bool resume, int64_t stop_after) {
    TrainOptions options;
    options.out_dir = dir;
    options.meter_override = ScriptedMeter();
    options.resume = resume;
    options.stop_after_steps = stop_after;
    ::testing::internal::CaptureStderr();
    TrainResult result = Train(config, std::move(options));
    return std::make_pair(std::move(result), ::testing::internal::GetCapturedStderr());
  };
  const std::string said =
      "greenrl: warning: TestNanReward-v0 returned a NaN or infinite "
      "observation or reward (";
  const auto [first, first_err] = train(LoadRunConfig(Preset(), sets, 0), false, 256);
  ASSERT_TRUE(first.interrupted);
  EXPECT_NE(first_err.find(said + "48 env resets and steps so far, by step 256)"),
            std::string::npos)
      << first_err;
  const auto [second, second_err] = train(LoadRunConfig(dir + "/config.yaml", {}, {}), true, 0);
  EXPECT_NE(second_err.find(said + "104 env resets and steps so far, by step 512)"),
            std::string::npos)
      << second_err;
  EXPECT_EQ(second_err.find(said, second_err.find(said) + 1), std::string::npos) << second_err;
  EXPECT_NE(second_err.find("greenrl: warning: TestNanReward-v0's evaluation envs returned a NaN "
                            "or infinite observation or reward (4 env resets and steps in the "
                            "evaluation at step 512)"),
            std::string::npos)
      << second_err;
  EXPECT_EQ(second.report.env_non_finite_outputs, 104);
  const auto j = nlohmann::json::parse(std::ifstream(dir + "/energy.json"));
  EXPECT_EQ(j.at("env_non_finite_outputs").get<int64_t>(), 104);

  TrainOptions options;
  options.out_dir = FreshDir("nan_env_outputs_guard");
  options.verbose = false;
  options.meter_override = ScriptedMeter();
  try {
    Train(LoadRunConfig(Preset(),
                        {"env_id=TestNanReward-v0", "n_timesteps=2048", "eval.freq=0",
                         "guard.on_repeat=stop", "guard.max_consecutive=2"},
                        0),
          std::move(options));
    ADD_FAILURE() << "no stop";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "non-finite loss or gradient in 2 updates in a row (global_step 512), after "
                  "TestNanReward-v0 returned a NaN or infinite observation or reward in 104 env "
                  "resets and steps (check its Reset and Step); stopping (guard.on_repeat=stop"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace greenrl::train
