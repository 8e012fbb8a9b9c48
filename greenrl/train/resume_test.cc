// Resume checkpoints, the numerical guard and write failures, through train::Train: a run
// stopped at step N and resumed ends with the same parameters, bit for bit, as an uninterrupted
// run of the same seed (PPO on CartPole and Pendulum, DQN, SAC), with metrics.csv continuous and
// the energy total carried across (README "Checkpoints, resume and signals").
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <torch/cuda.h>
#include <torch/serialize.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/core/atomic_file.h"
#include "greenrl/core/clock.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/energy/estimator_meter.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/spaces.h"
#include "greenrl/env/testing/one_value_spec.h"
#include "greenrl/report/compare.h"
#include "greenrl/report/evaluations_npz.h"
#include "greenrl/report/run_report.h"
#include "greenrl/report/testing/tfrecord_reader.h"
#include "greenrl/report/tfevents.pb.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/run_compare_testing.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/signals.h"
#include "greenrl/train/trained_agent.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {
namespace {

namespace fs = std::filesystem;

std::string Preset(const std::string& name) { return SourceTreeDir() + "/configs/" + name; }

// Tidy ("/tmp/greenrl_resume_x", TempDir() ends with '/'), as config.yaml and the report give
// a trained agent's paths.
std::string FreshDir(const std::string& name) {
  const std::string dir =
      fs::path(::testing::TempDir() + "/greenrl_resume_" + name).lexically_normal().string();
  fs::remove_all(dir);
  return dir;
}

// A meter whose total is exactly `joules` from its second reading on (the first reading is the
// monitor's start): every segment of a run costs exactly `joules`.
std::unique_ptr<energy::EnergyMeter> FixedMeter(double joules) {
  auto meter =
      std::make_unique<energy::FakeMeter>(std::vector<std::string>{"cpu:process"},
                                          energy::Provenance::kMeasured, energy::Scope::kProcess);
  meter->Script({{0.0}, {joules}});
  return meter;
}

// One quiet segment of a run into `dir`, metered by `meter`.
TrainResult RunTraining(const Config& config, const std::string& dir,
                        std::unique_ptr<energy::EnergyMeter> meter, bool resume = false,
                        int64_t stop_after = 0) {
  TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  options.meter_override = std::move(meter);
  options.resume = resume;
  options.stop_after_steps = stop_after;
  return Train(config, std::move(options));
}

// Rewrites the checkpoint at `path` with each entry passed through `change` (its key, its value).
void RewriteCheckpoint(const std::string& path,
                       const std::function<void(const std::string&, c10::IValue*)>& change) {
  torch::serialize::InputArchive in;
  in.load_from(path);
  torch::serialize::OutputArchive out;
  for (const std::string& key : in.keys()) {
    c10::IValue value;
    in.read(key, value);
    change(key, &value);
    out.write(key, value);
  }
  std::ostringstream bytes;
  out.save_to(bytes);
  WriteFileAtomic(path, bytes.str());
}

// One quiet segment that costs exactly `joules` (FixedMeter).
TrainResult RunTraining(const Config& config, const std::string& dir, double joules,
                        bool resume = false, int64_t stop_after = 0) {
  return RunTraining(config, dir, FixedMeter(joules), resume, stop_after);
}

// The global_step of every scalar event TensorBoard shows for `dir`: event files in name order
// (TensorBoard's directory loader), a SessionLog START event dropping the events read before it
// whose step is >= its step (EventAccumulator's purge of orphaned data, on by default).
std::vector<double> TensorBoardSteps(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("events.out.tfevents.", 0) == 0) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<double> steps;
  for (const std::string& file : files) {
    for (const std::string& record : report::testing::ReadTfRecords(file)) {
      tfevents::Event event;
      EXPECT_TRUE(event.ParseFromString(record));
      if (event.has_session_log() && event.session_log().status() == tfevents::SessionLog::START) {
        while (!steps.empty() && steps.back() >= static_cast<double>(event.step()))
          steps.pop_back();
      } else if (event.has_summary()) {
        steps.push_back(static_cast<double>(event.step()));
      }
    }
  }
  return steps;
}

// metrics.csv's global_step column.
std::vector<double> CsvSteps(const std::string& dir) {
  const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  std::vector<double> steps;
  for (const auto& row : rows) steps.push_back(row[0]);  // global_step is the first column
  return steps;
}

// monitor.csv's episodes, (r, l) per row (t differs between runs), after its two header lines.
std::vector<std::pair<std::string, std::string>> MonitorEpisodes(const std::string& dir) {
  std::ifstream in(dir + "/monitor.csv");
  std::string line;
  std::vector<std::pair<std::string, std::string>> episodes;
  for (int k = 0; std::getline(in, line); ++k) {
    if (k < 2) continue;
    const size_t a = line.find(','), b = line.find(',', a + 1);
    episodes.emplace_back(line.substr(0, a), line.substr(a + 1, b - a - 1));
  }
  return episodes;
}

// evaluations.npz of two run directories: the same evaluations, bit for bit.
void ExpectSameEvaluations(const std::string& dir, const std::string& reference) {
  const report::EvaluationsLog a = report::ReadEvaluationsNpz(dir + "/evaluations.npz");
  const report::EvaluationsLog b = report::ReadEvaluationsNpz(reference + "/evaluations.npz");
  EXPECT_FALSE(b.timesteps.empty());
  EXPECT_EQ(a.timesteps, b.timesteps);
  EXPECT_EQ(a.results, b.results);
  EXPECT_EQ(a.ep_lengths, b.ep_lengths);
}

// Uninterrupted run vs. the same run stopped at `stop_after` and resumed: identical parameters,
// identical metrics rows (training columns), energy 10 J + 20 J.
void ExpectResumeIsExact(const std::string& name, const Config& config, int64_t stop_after) {
  const std::string straight = FreshDir(name + "_straight");
  const std::string split = FreshDir(name + "_split");
  const TrainResult a = RunTraining(config, straight, 30.0);
  EXPECT_FALSE(a.interrupted);

  const TrainResult first = RunTraining(config, split, 10.0, false, stop_after);
  ASSERT_TRUE(first.interrupted);
  EXPECT_GE(first.report.steps, stop_after);
  EXPECT_LT(first.report.steps, a.report.steps);
  EXPECT_TRUE(first.checkpoint_path.empty());
  EXPECT_FALSE(fs::exists(split + "/checkpoints/final.pt"));
  EXPECT_EQ(first.resume_checkpoint, CheckpointPath(split, first.report.steps));
  EXPECT_DOUBLE_EQ(testing::TotalJ(split), 10.0);
  if (config.GetInt("eval.freq") > 0 && config.GetInt("eval.freq") <= first.report.steps) {
    // An evaluation before the stop: best.json beside best.pt names it for the resumed run.
    std::ifstream in(split + "/checkpoints/best.json");
    const auto best = nlohmann::json::parse(in);
    EXPECT_GE(best["global_step"].get<int64_t>(), config.GetInt("eval.freq"));
    EXPECT_EQ(best["global_step"].get<int64_t>(), first.report.best_eval.global_step);
    EXPECT_EQ(best["mean_reward"].get<double>(), first.report.best_eval.mean_reward);
    EXPECT_TRUE(fs::exists(split + "/checkpoints/best.pt"));
  }

  const TrainResult second = RunTraining(config, split, 20.0, /*resume=*/true);
  EXPECT_FALSE(second.interrupted);
  EXPECT_EQ(second.report.steps, a.report.steps);
  EXPECT_DOUBLE_EQ(testing::TotalJ(split), 30.0);  // 10 J before the stop + 20 J after
  EXPECT_DOUBLE_EQ(second.report.total_energy_j(), 30.0);

  testing::ExpectBitIdenticalParameters(config, straight, split);
  // eval.save_best: the best evaluation and its policy are those of the uninterrupted run, an
  // evaluation before the stop included (the resumed run knows the best mean reward so far).
  auto best_eval = [](const std::string& dir) {
    std::ifstream in(dir + "/energy.json");
    return nlohmann::json::parse(in)["best_eval"];
  };
  ASSERT_FALSE(best_eval(straight).is_null());
  EXPECT_EQ(best_eval(split)["global_step"], best_eval(straight)["global_step"]);
  EXPECT_EQ(best_eval(split)["mean_reward"], best_eval(straight)["mean_reward"]);
  testing::ExpectBitIdenticalParameters(config, straight, split, "best.pt");

  // metrics.csv: the same global_step sequence (no duplicated rows past the checkpoint) and the
  // same training figures; TensorBoard shows one event per row, from two event files.
  testing::ExpectSameLearningColumns(straight, split);
  EXPECT_EQ(TensorBoardSteps(split), CsvSteps(split));
  // monitor.csv: the same episodes (none for SAC's 999-step MountainCarContinuous episodes),
  // those past the checkpoint written once.
  EXPECT_EQ(MonitorEpisodes(split), MonitorEpisodes(straight));
  // evaluations.npz: the same evaluations, those before the stop kept and none written twice.
  if (config.GetInt("eval.freq") > 0) ExpectSameEvaluations(split, straight);
}

TEST(ResumeTest, PpoCartPoleResumedRunIsBitIdentical) {
  const Config config =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"n_timesteps=2048", "eval.freq=512", "eval.episodes=2",
                     "eval.final_episodes=2", "checkpoint_freq=512", "checkpoint_keep=2"},
                    3);
  ExpectResumeIsExact("ppo_cartpole", config, 768);  // evaluations at 512 (before), 1024, ...
}

// A segment killed after its checkpoint (SIGKILL: no energy.json of its own) logged its energy
// in metrics.csv rows past the checkpoint: the resume counts it from the last complete row, where
// it used to start again from the checkpoint's figures and lose it. Simulated by a segment
// stopped at 768 whose newest checkpoint (768) and energy.json are removed: the resume loads 512.
TEST(ResumeTest, KilledSegmentsEnergyPastItsCheckpointIsKept) {
  const Config config = LoadRunConfig(Preset("ppo/cartpole.yaml"),
                                      {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1",
                                       "checkpoint_freq=256", "checkpoint_keep=4"},
                                      3);
  const std::string dir = FreshDir("killed_energy");
  auto cpu_s = std::make_shared<double>(0.0);  // 12 W x 0.25 s = 3 J per meter read
  ASSERT_TRUE(RunTraining(config, dir,
                          std::make_unique<energy::EstimatorMeter>(
                              12.0, [cpu_s] { return *cpu_s += 0.25; }),
                          false, /*stop_after=*/768)
                  .interrupted);
  const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  ASSERT_EQ(rows.back()[0], 768.0);
  const size_t wh = std::find(header.begin(), header.end(), "energy/total_wh") - header.begin();
  const size_t time = std::find(header.begin(), header.end(), "time_s") - header.begin();
  ASSERT_LT(wh, header.size());
  const double logged_j = rows.back()[wh] * 3600.0;
  const std::optional<TrainerState> at_512 = PeekTrainerState(CheckpointPath(dir, 512));
  ASSERT_TRUE(at_512.has_value());
  ASSERT_GT(logged_j, at_512->energy.total_energy_j() + 1.0);
  fs::remove(CheckpointPath(dir, 768));
  fs::remove(dir + "/energy.json");

  TrainerState state = *at_512;
  CarryOverStoppedSegment(dir, &state);
  EXPECT_NEAR(state.energy.total_energy_j(), logged_j, 1e-9);
  EXPECT_EQ(state.elapsed_s, rows.back()[time]);
  // The energy's span takes the killed tail's wall time too (emissions.csv divides by it).
  EXPECT_NEAR(state.energy.duration_s - at_512->energy.duration_s,
              rows.back()[time] - at_512->elapsed_s, 1e-9);
  const TrainResult second = RunTraining(config, dir, 20.0, /*resume=*/true);
  EXPECT_FALSE(second.interrupted);
  EXPECT_NEAR(testing::TotalJ(dir), logged_j + 20.0, 1e-9);
}

// Stochastic acting after a resume checkpoint draws from the seed, as after final.pt, not from
// where training left the sampling generator: step 512's resume checkpoint of a 1024-step run
// and the final.pt of a 512-step run (the same parameters: constant schedules) give the same
// stochastic episodes for a seed, and another seed others.
TEST(ResumeTest, StochasticEvaluationDependsOnTheSeedNotTheCheckpoint) {
  auto config = [](int64_t n) {
    return LoadRunConfig(
        Preset("ppo/cartpole.yaml"),
        {"n_timesteps=" + std::to_string(n), "learning_rate=0.001", "clip_range=0.2", "eval.freq=0",
         "eval.final_episodes=1", "checkpoint_freq=512", "checkpoint_keep=4"},
        3);
  };
  const std::string longer = FreshDir("stochastic_eval_1024");
  const std::string shorter = FreshDir("stochastic_eval_512");
  ASSERT_FALSE(RunTraining(config(1024), longer, 1.0).interrupted);
  ASSERT_FALSE(RunTraining(config(512), shorter, 1.0).interrupted);
  auto load = [](const std::string& dir, const std::string& step, int64_t seed) {
    TrainedAgent agent = LoadTrainedAgent(dir, seed, /*best=*/false, step);
    EXPECT_EQ(agent.final_checkpoint, step.empty()) << step;
    return agent;
  };
  auto returns = [](TrainedAgent agent) {
    return EvaluatePolicy(*agent.algorithm, "CartPole-v1", 4, 0, /*deterministic=*/false).returns;
  };
  ASSERT_EQ(load(longer, "512", 5).algorithm->GetParameters(),
            load(shorter, "", 5).algorithm->GetParameters());
  const std::vector<double> final_pt = returns(load(shorter, "", 5));
  EXPECT_EQ(returns(load(longer, "512", 5)), final_pt);
  EXPECT_NE(returns(load(longer, "512", 6)), final_pt);
}

// --checkpoint on a run without resume checkpoints (checkpoint_freq 0) says the run has none and
// what to use instead, for "last" as for a step (it read as if "last" were the mistake).
TEST(ResumeTest, CheckpointFlagOnARunWithoutResumeCheckpointsSaysSo) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=256", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=0"}, 3);
  const std::string dir = FreshDir("no_resume_checkpoints");
  ASSERT_FALSE(RunTraining(config, dir, 1.0).interrupted);
  for (const std::string step : {"last", "256"}) {
    try {
      LoadTrainedAgent(dir, std::nullopt, /*best=*/false, step);
      ADD_FAILURE() << step;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--checkpoint: got '" + step +
                    "'; a run with resume checkpoints (checkpoints/step_*.pt), which " + dir +
                    " has none of (checkpoint_freq, checkpoint_keep); without --checkpoint, its "
                    "final.pt");
    }
  }
}

// A meter that updates less often than any window lasts (period 1e6 s) makes every window short:
// energy.json counts them per key over both segments of a stopped and resumed run (the count
// travels in the checkpoint), and names the meter's update period.
TEST(ResumeTest, ShortWindowsAreCountedAcrossSegments) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1"}, 3);
  const std::string dir = FreshDir("short_windows");
  auto run = [&](bool resume, int64_t stop_after) {
    auto meter = std::make_unique<energy::FakeMeter>(std::vector<std::string>{"cpu:process"});
    meter->SetUpdatePeriodS(1e6);
    return RunTraining(config, dir, std::move(meter), resume, stop_after);
  };
  ASSERT_TRUE(run(false, 512).interrupted);
  ASSERT_FALSE(run(true, 0).interrupted);
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["meter"]["update_period_s"].get<double>(), 1e6);
  EXPECT_EQ(j["windows"]["rollout"]["count"].get<int64_t>(), 4);  // 4 rollouts of 256 steps
  EXPECT_EQ(j["windows"]["rollout"]["short_windows"].get<int64_t>(), 4);
  EXPECT_EQ(j["windows"]["update"]["short_windows"].get<int64_t>(), 4);
  EXPECT_EQ(j["windows"]["eval"]["short_windows"].get<int64_t>(), 1);
}

// carbon.intensity_csv prices each segment's energy at the times it was used: the stopped
// segment's 10 J at 100 g/kWh, the resumed one's 20 J at 1000 (the series' second value starts
// between the two), in energy.json, emissions.csv and every metrics row's carbon/g_co2e.
TEST(ResumeTest, IntensitySeriesPricesEachSegmentAtItsTime) {
  const std::string csv = ::testing::TempDir() + "/greenrl_resume_series.csv";
  std::ofstream(csv) << "timestamp,g_per_kwh\n0,100\n";
  const Config config =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1",
                     "carbon.intensity_csv=" + csv, "carbon.pue=1.5", "carbon.region=FR"},
                    3);
  const std::string dir = FreshDir("series");
  auto last_row_g = [&] {
    const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
    const size_t c = std::find(header.begin(), header.end(), "carbon/g_co2e") - header.begin();
    return rows.back().at(c);
  };
  auto energy_json = [&] {
    std::ifstream in(dir + "/energy.json");
    return nlohmann::json::parse(in);
  };
  const double first_kg = 10.0 / 3.6e6 * 100.0 * 1.5 / 1000.0;
  const TrainResult first = RunTraining(config, dir, 10.0, false, 512);
  ASSERT_TRUE(first.interrupted);
  EXPECT_DOUBLE_EQ(energy_json()["carbon"]["kg_co2e"].get<double>(), first_kg);
  EXPECT_DOUBLE_EQ(last_row_g(), first_kg * 1000.0);

  // From now on the series says 1000 g/kWh; the resumed segment starts after it.
  const double change_s = UnixNowS();
  std::ofstream(csv) << fmt::format("timestamp,g_per_kwh\n0,100\n{:.6f},1000\n", change_s);
  while (UnixNowS() <= change_s + 0.01) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const TrainResult second = RunTraining(config, dir, 20.0, /*resume=*/true);
  EXPECT_FALSE(second.interrupted);
  const double kg = (10.0 * 100.0 + 20.0 * 1000.0) / 3.6e6 * 1.5 / 1000.0;
  const auto j = energy_json();
  EXPECT_DOUBLE_EQ(j["total_energy_j"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(j["carbon"]["kg_co2e"].get<double>(), kg);
  EXPECT_DOUBLE_EQ(j["carbon"]["intensity_g_per_kwh"].get<double>(), 21000.0 / 30.0);
  EXPECT_EQ(j["carbon"]["region"], "FR");  // carbon.region names the country beside a series
  EXPECT_DOUBLE_EQ(last_row_g(), kg * 1000.0);
  // emissions.csv: the same kg; the energy columns are CodeCarbon's, times the PUE.
  std::ifstream in(dir + "/emissions.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_NE(row.find("," + fmt::format("{}", 30.0 * 1.5 / 3.6e6) + ",France,FRA,"),
            std::string::npos)
      << row;
}

TEST(ResumeTest, PpoPendulumWithNormalizeResumedRunIsBitIdentical) {
  // gSDE and VecNormalize: the normaliser's statistics and running returns are in the env state.
  const Config config =
      LoadRunConfig(Preset("ppo/pendulum.yaml"),
                    {"n_timesteps=1536", "n_steps=128", "n_epochs=2", "eval.freq=0",
                     "eval.final_episodes=1", "normalize=true", "checkpoint_freq=0"},
                    5);
  ExpectResumeIsExact("ppo_pendulum", config, 512);
}

// A checkpoint whose env state the resumed run's envs do not read to its end (another
// normalize setting than the one it was written with, which `greenrl train --resume` refuses by
// name) is refused before training, not half read.
TEST(ResumeTest, EnvStateLeftPartlyUnreadIsRefused) {
  const std::vector<std::string> sets = {"n_timesteps=1024", "n_steps=128", "eval.freq=0",
                                         "eval.final_episodes=1", "checkpoint_freq=0"};
  std::vector<std::string> normalized = sets;
  normalized.push_back("normalize=true");
  const std::string dir = FreshDir("unread_env_state");
  ASSERT_TRUE(
      RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), normalized, 5), dir, 10.0, false, 512)
          .interrupted);
  const auto resume_without_normalize = [&] {
    try {
      RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), sets, 5), dir, 20.0, true);
      ADD_FAILURE() << "a normalised run's env state resumed without its normaliser";
    } catch (const ConfigError& e) {
      return e;
    }
    return ConfigError("", "", "");
  };
  // The checkpoint records normalize among the keys a resume cannot change: named first.
  EXPECT_EQ(resume_without_normalize().field(), "normalize");
  // As a checkpoint written before those were recorded: the env state's own check.
  RewriteCheckpoint(CheckpointPath(dir, 512), [](const std::string& key, c10::IValue* value) {
    if (key != "trainer.state") return;
    nlohmann::json j = nlohmann::json::parse(value->toStringRef());
    ASSERT_EQ(j.erase("fixed_keys"), 1u);
    *value = j.dump();
  });
  const ConfigError e = resume_without_normalize();
  EXPECT_EQ(e.field(), "checkpoint");
  EXPECT_NE(std::string(e.what()).find("bytes were left unread"), std::string::npos) << e.what();
}

TEST(ResumeTest, DqnResumedRunIsBitIdenticalWithReplayBuffer) {
  const Config config =
      LoadRunConfig(Preset("dqn/cartpole.yaml"),
                    {"n_timesteps=2048", "learning_starts=256", "buffer_size=1000", "train_freq=64",
                     "gradient_steps=16", "policy_kwargs.net_arch=[32, 32]", "eval.freq=0",
                     "eval.final_episodes=1", "checkpoint_freq=0"},
                    11);
  ExpectResumeIsExact("dqn", config, 1280);  // the buffer has wrapped around by then
}

TEST(ResumeTest, SacResumedRunIsBitIdenticalWithReplayBuffer) {
  const Config config = LoadRunConfig(Preset("sac/pendulum.yaml"),
                                      {"n_timesteps=500", "learning_starts=100", "batch_size=32",
                                       "buffer_size=300", "policy_kwargs.net_arch=[32, 32]",
                                       "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=0"},
                                      13);
  ExpectResumeIsExact("sac", config, 250);
}

// SAC with gSDE (rl-zoo's MountainCarContinuous-v0 preset, noise redrawn within rollouts): the
// exploration matrices are drawn afresh at each rollout's and each gradient step's start, so
// nothing of them needs saving and the resumed run is still the uninterrupted one.
TEST(ResumeTest, SacWithGsdeResumedRunIsBitIdentical) {
  const Config config = LoadRunConfig(Preset("sac/mountaincarcontinuous.yaml"),
                                      {"n_timesteps=640", "batch_size=64", "sde_sample_freq=8",
                                       "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=0"},
                                      17);
  ExpectResumeIsExact("sac_sde", config, 320);
}

// A run that crashed after an evaluation better than its last checkpoint knew: best.pt holds
// that later policy, and a resumed run's best_eval must describe best.pt (best.json), whether
// it stops before re-reaching that evaluation or runs to the end. The crash is made by
// removing a finished run's final.pt and its checkpoints past step 512.
TEST(ResumeTest, BestEvalDescribesBestPtAfterACrash) {
  const Config config =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"n_timesteps=2048", "eval.freq=256", "eval.episodes=2",
                     "eval.final_episodes=2", "checkpoint_freq=512", "checkpoint_keep=10"},
                    0);  // seed 0: its best evaluation is the one at step 1024
  const std::string straight = FreshDir("best_straight");
  const TrainResult a = RunTraining(config, straight, 1.0);
  const report::BestEvalReport best = a.report.best_eval;
  ASSERT_GT(best.global_step, 512) << "the test needs the best evaluation past the checkpoint";

  const std::string crashed = FreshDir("best_crashed");
  fs::copy(straight, crashed, fs::copy_options::recursive);
  fs::remove(crashed + "/checkpoints/final.pt");
  for (const auto& [step, path] : ListCheckpoints(crashed)) {
    if (step > 512) fs::remove(path);
  }
  // Resumed from step 512 and stopped again at 768, before the best evaluation comes round.
  const TrainResult stopped = RunTraining(config, crashed, 1.0, /*resume=*/true, 768);
  ASSERT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.report.best_eval.global_step, best.global_step);
  EXPECT_EQ(stopped.report.best_eval.mean_reward, best.mean_reward);
  // evaluations.npz: the crashed run's rows past its checkpoint (768 to 2048) were cut at the
  // resume and written again up to the stop, as the uninterrupted run wrote them.
  report::EvaluationsLog so_far = report::ReadEvaluationsNpz(straight + "/evaluations.npz");
  ASSERT_EQ(so_far.timesteps, (std::vector<int64_t>{256, 512, 768, 1024, 1280, 1536, 1792, 2048}));
  so_far.KeepUpTo(768);
  const report::EvaluationsLog stopped_log =
      report::ReadEvaluationsNpz(crashed + "/evaluations.npz");
  EXPECT_EQ(stopped_log.timesteps, (std::vector<int64_t>{256, 512, 768}));
  EXPECT_EQ(stopped_log.results, so_far.results);
  TrainedAgent agent = LoadTrainedAgent(crashed, std::nullopt, /*best=*/true);
  EXPECT_EQ(EvaluatePolicy(*agent.algorithm, "CartPole-v1", 2, 0).mean_return, best.mean_reward);
  // Resumed to the end: the uninterrupted run's best, and its policy bit for bit.
  const TrainResult finished = RunTraining(config, crashed, 1.0, /*resume=*/true);
  EXPECT_EQ(finished.report.best_eval.global_step, best.global_step);
  EXPECT_EQ(finished.report.best_eval.mean_reward, best.mean_reward);
  testing::ExpectBitIdenticalParameters(config, straight, crashed, "best.pt");
  ExpectSameEvaluations(crashed, straight);
}

// eval.save_best: best.pt records its own evaluation and normaliser statistics in the same
// atomic write as the policy (SaveBestCheckpoint), so a crash after it and before the copies
// beside it (best.json, best_normalizer.json) cannot pair the policy with another evaluation's
// figures or statistics. The crash is made by putting an earlier evaluation's copies back.
// A best.pt without the record (an earlier build's) is described by the copies, as it was then.
// final.pt records its statistics in the same way (SaveFinalCheckpoint).
TEST(ResumeTest, BestPtRecordsItsEvaluationAndStatistics) {
  const Config config = LoadRunConfig(
      Preset("ppo/pendulum.yaml"),
      {"n_timesteps=4096", "normalize=true", "eval.freq=0", "eval.final_episodes=2"}, 3);
  const std::string dir = FreshDir("best_record");
  const TrainResult run = RunTraining(config, dir, 1.0);
  const std::string ckpt = dir + "/checkpoints";
  const std::optional<BestEval> best = ReadBestCheckpoint(dir);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->global_step, 4096);
  EXPECT_EQ(best->global_step, run.report.best_eval.global_step);
  EXPECT_EQ(best->mean_reward, run.report.best_eval.mean_reward);
  ASSERT_TRUE(best->normalizer.has_value());
  // The copies say the same, the statistics bit for bit.
  const NormalizerSnapshot copy = LoadNormalizer(ckpt + "/best_normalizer.json");
  EXPECT_EQ(copy.state, best->normalizer->state);
  EXPECT_EQ(ReadFile(ckpt + "/best.json"), "{\"global_step\":4096,\"mean_reward\":" +
                                               nlohmann::json(best->mean_reward).dump() + "}\n");
  TrainedAgent agent = LoadTrainedAgent(dir, std::nullopt, /*best=*/true);
  ASSERT_TRUE(agent.normalizer.has_value());
  EXPECT_EQ(agent.normalizer->state, best->normalizer->state);

  // A crash right after best.pt: the copies are still an earlier evaluation's.
  NormalizerSnapshot stale = copy;
  for (double& x : stale.state) x += 1.0;
  SaveNormalizer(ckpt + "/best_normalizer.json", stale);
  WriteFileAtomic(ckpt + "/best.json", R"({"global_step": 0, "mean_reward": -1500.5})");
  const std::optional<BestEval> after_crash = ReadBestCheckpoint(dir);
  ASSERT_TRUE(after_crash.has_value());
  EXPECT_EQ(after_crash->global_step, 4096);
  EXPECT_EQ(after_crash->mean_reward, best->mean_reward);
  EXPECT_EQ(after_crash->normalizer->state, best->normalizer->state);
  EXPECT_EQ(LoadTrainedAgent(dir, std::nullopt, /*best=*/true).normalizer->state,
            best->normalizer->state);

  // final.pt records its statistics too: a failure after it and before normalizer.json (a
  // full disk) leaves a stale copy, which eval, export and trained_agent do not read.
  const std::optional<NormalizerSnapshot> final_stats = ReadFinalNormalizer(ckpt + "/final.pt");
  ASSERT_TRUE(final_stats.has_value());
  EXPECT_EQ(final_stats->state, LoadNormalizer(ckpt + "/normalizer.json").state);
  EXPECT_EQ(final_stats->state, best->normalizer->state);  // the final evaluation is the best
  SaveNormalizer(ckpt + "/normalizer.json", stale);
  EXPECT_EQ(LoadTrainedAgent(dir, std::nullopt, /*best=*/false).normalizer->state,
            final_stats->state);
  // A final.pt of an earlier build (the model only): normalizer.json beside it is read.
  TrainedAgent final_agent = LoadTrainedAgent(dir, std::nullopt, /*best=*/false);
  final_agent.algorithm->SaveCheckpoint(ckpt + "/final.pt");
  EXPECT_FALSE(ReadFinalNormalizer(ckpt + "/final.pt").has_value());
  EXPECT_EQ(LoadTrainedAgent(dir, std::nullopt, /*best=*/false).normalizer->state, stale.state);

  // An earlier build's best.pt (the model only): the copies describe it.
  agent.algorithm->SaveCheckpoint(ckpt + "/best.pt");
  const std::optional<BestEval> legacy = ReadBestCheckpoint(dir);
  ASSERT_TRUE(legacy.has_value());
  EXPECT_EQ(legacy->global_step, 0);
  EXPECT_EQ(legacy->mean_reward, -1500.5);
  EXPECT_EQ(legacy->normalizer->state, stale.state);

  // A damaged best.pt is named; no best.pt, no best evaluation.
  WriteFileAtomic(ckpt + "/best.pt", "not an archive");
  try {
    ReadBestCheckpoint(dir);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint: got '" + ckpt +
                                         "/best.pt'; a best.pt written by greenrl train"),
              std::string::npos)
        << e.what();
  }
  fs::remove(ckpt + "/best.pt");
  EXPECT_FALSE(ReadBestCheckpoint(dir).has_value());
}

// config.yaml and the checkpoint disagreeing on normalize (config.yaml edited or replaced after
// training) is refused by name for final.pt, best.pt and a resume checkpoint alike: the policy
// would act on raw observations without its statistics (eval's return fell from -346 to -1408),
// or the statistics would be missing.
TEST(ResumeTest, NormalizeDisagreeingWithTheCheckpointIsRefused) {
  const auto set_normalize = [](const std::string& dir, bool from, bool to) {
    std::string yaml = ReadFile(dir + "/config.yaml");
    const std::string was = std::string("\nnormalize: ") + (from ? "true" : "false");
    const size_t at = yaml.find(was);
    ASSERT_NE(at, std::string::npos) << yaml;
    yaml.replace(at, was.size(), std::string("\nnormalize: ") + (to ? "true" : "false"));
    WriteFileAtomic(dir + "/config.yaml", yaml);
  };
  const auto expect_refused = [](const std::string& dir, bool best, const std::string& step,
                                 const std::string& text) {
    try {
      LoadTrainedAgent(dir, std::nullopt, best, step);
      ADD_FAILURE() << "loaded " << dir << " " << step;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "normalize");
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  const std::vector<std::string> sets = {"n_timesteps=2048",      "n_steps=256",
                                         "batch_size=64",         "eval.freq=1024",
                                         "eval.final_episodes=2", "checkpoint_freq=1024"};
  std::vector<std::string> with = sets;
  with.push_back("normalize=true");
  const std::string normalized = FreshDir("normalize_edited_off");
  RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), with, 3), normalized, 1.0);
  set_normalize(normalized, true, false);
  const std::string ckpt = normalized + "/checkpoints";
  expect_refused(normalized, false, "",
                 "normalize: got 'false'; true as the checkpoint " + ckpt +
                     "/final.pt was trained (with VecNormalize statistics, which its policy "
                     "needs), where the run's config.yaml says normalize: false (edited or "
                     "replaced after training?): set it back to true");
  expect_refused(normalized, true, "", ckpt + "/best.pt was trained (with VecNormalize");
  expect_refused(normalized, false, "1024", CheckpointPath(normalized, 1024) + " was trained");
  set_normalize(normalized, false, true);  // as trained: loads
  EXPECT_TRUE(LoadTrainedAgent(normalized, std::nullopt, false).normalizer.has_value());

  std::vector<std::string> without = sets;
  without.push_back("normalize=false");
  const std::string raw = FreshDir("normalize_edited_on");
  RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), without, 3), raw, 1.0);
  set_normalize(raw, false, true);
  expect_refused(raw, false, "",
                 "normalize: got 'true'; false as the checkpoint " + raw +
                     "/checkpoints/final.pt was trained (it holds no VecNormalize statistics), "
                     "where the run's config.yaml says normalize: true");
  expect_refused(raw, false, "1024", CheckpointPath(raw, 1024) + " was trained (it holds no");
  set_normalize(raw, true, false);
  EXPECT_FALSE(LoadTrainedAgent(raw, std::nullopt, false).normalizer.has_value());
}

// A damaged best.pt does not stop a resume: the resumed run knows no best evaluation, and its
// first evaluation writes a new best.pt that reads back.
TEST(ResumeTest, DamagedBestPtIsReplacedByTheResumedRun) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1536", "eval.freq=256", "eval.episodes=2", "checkpoint_freq=512"}, 0);
  const std::string dir = FreshDir("best_damaged");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, /*resume=*/false, 768).interrupted);
  WriteFileAtomic(dir + "/checkpoints/best.pt", "not an archive");
  const TrainResult resumed = RunTraining(config, dir, 1.0, /*resume=*/true);
  EXPECT_GT(resumed.report.best_eval.global_step, 512);
  const std::optional<BestEval> best = ReadBestCheckpoint(dir);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->global_step, resumed.report.best_eval.global_step);
  EXPECT_EQ(best->mean_reward, resumed.report.best_eval.mean_reward);
}

// trained_agent (rl-zoo's --trained-agent): a new run starts from another run's agent. Its
// first update starts from the parameters of the run's final.pt (or best.pt) bit for bit, its
// normaliser statistics go on from the run's (the observation count adds up), and energy.json
// adds what training the agent cost, along a chain of runs, from exact fake-meter figures.
// A run of another algo, env or normalize is refused before anything is written.
TEST(ResumeTest, TrainedAgentStartsANewRunFromAnotherRunsAgent) {
  const std::vector<std::string> sets = {"n_timesteps=4096", "normalize=true", "eval.freq=0",
                                         "eval.final_episodes=2"};
  const Config config = LoadRunConfig(Preset("ppo/pendulum.yaml"), sets, 5);
  const std::string parent = FreshDir("agent_parent");
  RunTraining(config, parent, 3600.0);  // 1 Wh
  auto with_agent = [&](const std::string& path) {
    std::vector<std::string> s = sets;
    s.push_back("trained_agent=" + path);
    return LoadRunConfig(Preset("ppo/pendulum.yaml"), s, 6);
  };
  auto obs_count = [](const std::string& dir) {  // NormalizeVecEnv::GetState()[2]
    return LoadNormalizer(dir + "/checkpoints/normalizer.json").state.at(2);
  };
  // A fresh run of the child's config counts its own observations from the same start.
  const std::string fresh = FreshDir("agent_fresh");
  RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), sets, 6), fresh, 1.0);
  const double epsilon = 1e-4;  // RunningMeanStd's initial count (SB3)
  const std::string child = FreshDir("agent_child");
  for (const std::string checkpoint : {"best.pt", "final.pt"}) {
    const std::string path =
        checkpoint == "final.pt" ? parent : parent + "/checkpoints/" + checkpoint;
    fs::remove_all(child);
    std::vector<float> first_update_params;
    TrainOptions options;
    options.out_dir = child;
    options.verbose = false;
    options.meter_override = FixedMeter(1800.0);  // 0.5 Wh
    options.before_update = [&](int64_t iteration, algo::Algorithm& algorithm) {
      if (iteration == 1) first_update_params = algorithm.GetParameters();
    };
    const TrainResult run = Train(with_agent(path), std::move(options));
    EXPECT_EQ(first_update_params, testing::FinalParameters(config, parent, checkpoint));
    EXPECT_EQ(run.report.trained_agent.checkpoint, parent + "/checkpoints/" + checkpoint);
    EXPECT_EQ(run.report.trained_agent.energy_wh, 1.0);
    std::ifstream in(child + "/energy.json");
    const auto j = nlohmann::json::parse(in)["trained_agent"];
    EXPECT_EQ(j["checkpoint"], parent + "/checkpoints/" + checkpoint);
    EXPECT_EQ(j["energy_wh"].get<double>(), 1.0);
    EXPECT_EQ(j["energy_wh_with_this_run"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(obs_count(child), obs_count(parent) + obs_count(fresh) - epsilon);
  }
  // A chain: the grandchild's agent cost the parent's 1 Wh and the child's 0.5 Wh.
  const std::string grandchild = FreshDir("agent_grandchild");
  const TrainResult third = RunTraining(with_agent(child), grandchild, 720.0);
  EXPECT_EQ(third.report.trained_agent.energy_wh, 1.5);

  // Refused before the run directory exists: another algo, another env, normalize off.
  auto expect_refused = [&](const std::vector<std::string>& more, const std::string& message) {
    std::vector<std::string> s = {"trained_agent=" + parent};
    s.insert(s.end(), more.begin(), more.end());
    const std::string dir = FreshDir("agent_refused");
    try {
      RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), s, 5), dir, 1.0);
      ADD_FAILURE() << "expected ConfigError: " << message;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
    EXPECT_FALSE(fs::exists(dir));
  };
  expect_refused({"normalize=true", "env_id=MountainCarContinuous-v0"},
                 "trained_agent: got '" + parent +
                     "'; a run of this run's algo and env_id, ppo on MountainCarContinuous-v0 "
                     "(it is a ppo run on Pendulum-v1)");
  expect_refused({"normalize=false"},
                 "normalize: got 'false'; the trained agent's own true (" + parent +
                     "/config.yaml): its policy was trained on normalised observations");
  expect_refused({"normalize=true", "policy_kwargs.net_arch=[32]"},
                 "trained_agent: got '" + parent +
                     "'; an agent this run's network can load; its checkpoint " + parent +
                     "/checkpoints/final.pt does not load, needing a PPO checkpoint written by "
                     "greenrl train for net_arch.pi [32] (it was written for [64,64])");
  expect_refused({"normalize=true", "normalize_kwargs.clip_obs=5"},
                 "normalize_kwargs.clip_obs: got '5'; the trained agent's own 10 (" + parent +
                     "/config.yaml): its policy saw observations normalised with that value");

  // A resumed run reports the agent's energy as its first segment found it, even when the
  // agent's run has used more since.
  std::vector<std::string> longer = sets;
  longer.insert(longer.end(), {"n_timesteps=8192", "trained_agent=" + parent});
  const Config stopped_config = LoadRunConfig(Preset("ppo/pendulum.yaml"), longer, 6);
  const std::string stopped = FreshDir("agent_stopped");
  ASSERT_TRUE(RunTraining(stopped_config, stopped, 1.0, /*resume=*/false, 4096).interrupted);
  nlohmann::json parent_energy = nlohmann::json::parse(ReadFile(parent + "/energy.json"));
  parent_energy["total_energy_wh"] = 5.0;
  WriteFileAtomic(parent + "/energy.json", parent_energy.dump());
  const TrainResult resumed = RunTraining(stopped_config, stopped, 1.0, /*resume=*/true);
  EXPECT_EQ(resumed.report.steps, 8192);
  EXPECT_EQ(resumed.report.trained_agent.checkpoint, parent + "/checkpoints/final.pt");
  EXPECT_EQ(resumed.report.trained_agent.energy_wh, 1.0);
}

// A run from a trained agent says which of its keys do not act as its config.yaml would
// suggest: init-only keys, which the agent's trained parameters replace, and the reward half of
// the normaliser's settings, which go on from the new config (rl-zoo's VecNormalize.load keeps
// the agent's); the same keys as the agent's run say nothing.
TEST(ResumeTest, TrainedAgentSaysWhichKeysItsAgentMakesMoot) {
  const std::vector<std::string> sets = {"n_timesteps=512", "normalize=true", "eval.freq=0",
                                         "eval.final_episodes=1"};
  const std::string parent = FreshDir("agent_moot_keys");
  RunTraining(LoadRunConfig(Preset("ppo/pendulum.yaml"), sets, 5), parent, 1.0);
  auto notes = [&](const std::vector<std::string>& more) {
    std::vector<std::string> s = sets;
    s.insert(s.end(), more.begin(), more.end());
    std::string text;
    const TrainedAgentFiles files =
        ResolveTrainedAgent(parent, LoadRunConfig(Preset("ppo/pendulum.yaml"), s, 6));
    for (const std::string& note : files.notes) text += note + "\n";
    return text;
  };
  EXPECT_EQ(notes({}), "");
  EXPECT_EQ(
      notes({"policy_kwargs.log_std_init=-1", "policy_kwargs.ortho_init=false", "gamma=0.95"}),
      "policy_kwargs.log_std_init: -1.0 does nothing in a run from a trained agent, whose "
      "trained parameters replace the initial ones (its run had 0.0)\n"
      "policy_kwargs.ortho_init: false does nothing in a run from a trained agent, whose "
      "trained parameters replace the initial ones (its run had true)\n"
      "gamma: 0.95, where the agent's run had 0.9: the agent's normaliser statistics go on "
      "with this run's gamma for the reward scaling's returns (rl-zoo's VecNormalize.load "
      "would keep the agent's)\n");
  // Without reward scaling, clip_reward and gamma do not touch the normaliser.
  EXPECT_EQ(
      notes({"normalize_kwargs.norm_reward=false", "normalize_kwargs.clip_reward=5", "gamma=0.95"}),
      "normalize_kwargs.norm_reward: false, where the agent's run had true: the agent's "
      "normaliser statistics go on with this run's value (rl-zoo's VecNormalize.load "
      "would keep the agent's)\n");
}

// A trained agent from an unfinished run: train says which resume checkpoint it took and, while
// the run still trains, that it does; a run killed before its energy.json has cost what its last
// metrics.csv row says, as `greenrl report` reads it (before, its cost was unknown).
TEST(ResumeTest, TrainedAgentOfAnUnfinishedRunSaysSoAndCountsItsEnergySoFar) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1"}, 3);
  const std::string parent = FreshDir("agent_unfinished");
  ASSERT_TRUE(RunTraining(config, parent, 3600.0, /*resume=*/false, 1024).interrupted);
  fs::remove(parent + "/energy.json");  // as a killed run leaves it
  const auto [header, rows] = report::ReadMetricsCsv(parent + "/metrics.csv");
  const auto wh_column = std::find(header.begin(), header.end(), "energy/total_wh");
  ASSERT_NE(wh_column, header.end());
  ASSERT_FALSE(rows.empty());
  const double last_row_wh = rows.back()[static_cast<size_t>(wh_column - header.begin())];
  ASSERT_GT(last_row_wh, 0.0);

  const Config child =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1",
                     "trained_agent=" + parent + "/./../" + fs::path(parent).filename().string()},
                    4);
  const TrainedAgentFiles files = ResolveTrainedAgent(parent, child);
  EXPECT_EQ(files.energy_wh, last_row_wh);
  const std::string notice =
      parent + " has no checkpoints/final.pt; using its newest resume checkpoint (step 1024)";
  EXPECT_EQ(ResumeCheckpointNotice(files), notice);
  {
    const RunDirLock training(parent);  // as the run's own process would hold it
    EXPECT_EQ(ResumeCheckpointNotice(files), notice + "; it is still training (pid " +
                                                 std::to_string(::getpid()) +
                                                 " holds its train.lock)");
  }
  // A run from it names that resume checkpoint in its config.yaml, so training again from the
  // file loads the same agent after the parent has finished (a resume checkpoint is a
  // trained_agent of its own, as rl-zoo's -i takes rl_model_<N>_steps.zip); no notice then. The
  // path is tidied (the child was given "<parent>/./../<parent's name>").
  const std::string step_file = CheckpointPath(parent, 1024);
  const std::string from_dir = FreshDir("agent_from_unfinished");
  RunTraining(child, from_dir, 1.0);
  EXPECT_EQ(LoadRunConfig(from_dir + "/config.yaml", {}, {}).GetString("trained_agent"), step_file);
  RunTraining(config, parent, 1.0, /*resume=*/true);  // the parent finishes: final.pt
  ASSERT_TRUE(fs::exists(parent + "/checkpoints/final.pt"));
  const TrainedAgentFiles named =
      ResolveTrainedAgent(step_file, LoadRunConfig(from_dir + "/config.yaml", {}, {}));
  EXPECT_EQ(named.checkpoint, step_file);
  EXPECT_FALSE(named.final_checkpoint);
  EXPECT_EQ(ResumeCheckpointNotice(named), "");
}

// trained_agent for the off-policy algorithms restarts their own step count, as rl-zoo's learn
// (reset_num_timesteps=True) does: DQN's epsilon after the first rollout is a fresh run's, and
// no gradient step comes before learning_starts (DQN's n_updates stays the agent's own; SAC's
// parameters are still the agent's after its first Update, which learning_starts makes a no-op).
TEST(ResumeTest, TrainedAgentRestartsOffPolicySchedules) {
  auto run = [](const std::string& preset, const std::vector<std::string>& sets,
                const std::string& name, int64_t iteration) {
    TrainOptions options;
    options.out_dir = FreshDir(name);
    options.verbose = false;
    options.meter_override = FixedMeter(1.0);
    struct Seen {
      double epsilon = -1.0;
      int64_t n_updates = -1;
      std::vector<float> params;
    } seen;
    options.before_update = [&](int64_t it, algo::Algorithm& algorithm) {
      if (it != iteration) return;
      if (const auto* dqn = dynamic_cast<const algo::Dqn*>(&algorithm)) {
        seen.epsilon = dqn->exploration_rate();
        seen.n_updates = dqn->n_updates();
      }
      seen.params = algorithm.GetParameters();
    };
    Train(LoadRunConfig(Preset(preset), sets, 2), std::move(options));
    return seen;
  };
  const std::vector<std::string> dqn = {"n_timesteps=1536", "exploration_fraction=0.5",
                                        "eval.final_episodes=1"};
  const std::string parent = FreshDir("dqn_parent");
  run("dqn/cartpole.yaml", dqn, "dqn_parent", 6);  // train_freq 256: iteration 6 ends at 1536
  auto with_agent = [](std::vector<std::string> sets, const std::string& path) {
    sets.push_back("trained_agent=" + path);
    return sets;
  };
  const auto fresh = run("dqn/cartpole.yaml", dqn, "dqn_fresh", 1);
  const auto child = run("dqn/cartpole.yaml", with_agent(dqn, parent), "dqn_child", 1);
  EXPECT_EQ(child.epsilon, fresh.epsilon);
  // 256 of 1536 steps: 1 - (256 / 1536) / 0.5 * (1 - 0.04); the agent's own count would give 0.04
  EXPECT_DOUBLE_EQ(child.epsilon, 0.68);
  const Config dqn_config = LoadRunConfig(Preset("dqn/cartpole.yaml"), dqn, 2);
  auto agent = MakeAlgorithm(dqn_config, env::FindEnvSpec("CartPole-v1"));
  agent->LoadCheckpoint(parent + "/checkpoints/final.pt");
  EXPECT_GT(dynamic_cast<const algo::Dqn&>(*agent).n_updates(), 0);
  EXPECT_EQ(child.n_updates, dynamic_cast<const algo::Dqn&>(*agent).n_updates());

  const std::vector<std::string> sac = {"n_timesteps=300", "eval.final_episodes=1"};
  const std::string sac_parent = FreshDir("sac_parent");
  run("sac/pendulum.yaml", sac, "sac_parent", 0);
  const auto sac_child = run("sac/pendulum.yaml", with_agent(sac, sac_parent), "sac_child", 2);
  const Config sac_config = LoadRunConfig(Preset("sac/pendulum.yaml"), sac, 2);
  EXPECT_EQ(sac_child.params, testing::FinalParameters(sac_config, sac_parent));
}

TEST(ResumeTest, KeepsTheNewestCheckpointsAndRefusesFinishedRuns) {
  const Config config = LoadRunConfig(Preset("ppo/cartpole.yaml"),
                                      {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1",
                                       "checkpoint_freq=256", "checkpoint_keep=3"},
                                      1);
  const std::string dir = FreshDir("keep");
  RunTraining(config, dir, 1.0);
  const auto kept = ListCheckpoints(dir);
  ASSERT_EQ(kept.size(), 3u);  // checkpoints at 256 ... 1792; the last iteration writes final.pt
  EXPECT_EQ(kept[0].first, 1280);
  EXPECT_EQ(kept[2].first, 1792);
  try {
    RunTraining(config, dir, 1.0, /*resume=*/true);
    ADD_FAILURE() << "a finished run resumed";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
}

// A key a resume cannot change, edited in config.yaml after the run wrote it (README tells users
// that a plain --resume reads config.yaml), is refused by name before anything is written: a
// changed seed trained on from the checkpoint's generators while its evaluations took the new
// seed's starts, and a changed watts_per_core priced the segments at two rates; another n_envs or
// net_arch made the checkpoint look damaged.
TEST(ResumeTest, FixedKeysEditedInConfigYamlAreRefusedByName) {
  const std::string dir = FreshDir("fixed_keys_edited");
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1"}, 0);
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, 512).interrupted);
  const std::string yaml = ReadFile(dir + "/config.yaml");
  const std::string checkpoint = CheckpointPath(dir, 512);
  const std::string before = ReadFile(dir + "/metrics.csv");
  struct Case {
    std::string was, now, key, message;
  };
  for (const Case& c : std::vector<Case>{
           {"\nseed: 0", "\nseed: 7", "seed",
            "seed: got '7'; the checkpoint's own 0: " + checkpoint +
                " was written with seed: 0, which a resume cannot change (README \"Checkpoints, "
                "resume and signals\"); the run's config.yaml says otherwise, edited since: set "
                "it back"},
           {"watts_per_core: 12.0", "watts_per_core: 100", "energy.watts_per_core",
            "energy.watts_per_core: got '100.0'; the checkpoint's own 12.0:"},
           {"\nn_envs: 8", "\nn_envs: 4", "n_envs", "n_envs: got '4'; the checkpoint's own 8:"},
           {"pi: [64, 64]", "pi: [32, 32]", "policy_kwargs.net_arch.pi",
            "policy_kwargs.net_arch.pi: got '[32, 32]'; the checkpoint's own [64, 64]:"}}) {
    std::string edited = yaml;
    const size_t at = edited.find(c.was);
    ASSERT_NE(at, std::string::npos) << c.was << "\n" << yaml;
    edited.replace(at, c.was.size(), c.now);
    WriteFileAtomic(dir + "/config.yaml", edited);
    try {
      RunTraining(LoadRunConfig(dir + "/config.yaml", {}, {}), dir, 1.0, /*resume=*/true);
      ADD_FAILURE() << "resumed with " << c.now;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), c.key);
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
    EXPECT_EQ(ReadFile(dir + "/metrics.csv"), before);  // nothing written
  }
  WriteFileAtomic(dir + "/config.yaml", yaml);  // as written: resumes
  EXPECT_EQ(RunTraining(LoadRunConfig(dir + "/config.yaml", {}, {}), dir, 1.0, true).report.steps,
            2048);
}

// A damaged final.pt (or a checkpoint named by its step) is refused naming why and the run's
// other checkpoints, which load perhaps; the newest resume checkpoint then loads.
TEST(ResumeTest, DamagedFinalPtNamesTheRunsOtherCheckpoints) {
  const std::string dir = FreshDir("damaged_final");
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=512", "eval.final_episodes=1", "checkpoint_freq=512"}, 0);
  RunTraining(config, dir, 1.0);
  const std::string final_pt = dir + "/checkpoints/final.pt";
  ASSERT_TRUE(fs::exists(dir + "/checkpoints/best.pt"));
  WriteFileAtomic(final_pt, ReadFile(final_pt).substr(0, 100));
  try {
    LoadTrainedAgent(dir, std::nullopt);
    ADD_FAILURE() << "a truncated final.pt loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "checkpoint");
    EXPECT_NE(std::string(e.what()).find("; the run's other checkpoints: --checkpoint last (step "
                                         "512), --best"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(LoadTrainedAgent(dir, std::nullopt, false, "last").resume_step, 512);
}

// The command that continues an interrupted run quotes a run directory a shell would split
// ("greenrl train --resume my run" gave "argument was not expected: run").
TEST(ResumeTest, ResumeCommandQuotesTheRunDirectory) {
  const std::string dir = FreshDir("quoted run");
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1"}, 0);
  const TrainResult stopped = RunTraining(config, dir, 1.0, false, 512);
  ASSERT_TRUE(stopped.interrupted);
  EXPECT_NE(stopped.report.eval_note.find("train --resume '" + dir + "' continues it"),
            std::string::npos)
      << stopped.report.eval_note;
}

// eval or export of a run that is training and has written no checkpoint yet says so (the pid in
// train.lock), instead of only "a run directory with ... checkpoints".
TEST(ResumeTest, RunStillTrainingWithoutACheckpointIsSaidSo) {
  const std::string dir = FreshDir("training_no_checkpoint");
  fs::create_directories(dir + "/checkpoints");
  WriteFileAtomic(dir + "/config.yaml", ReadFile(Preset("ppo/cartpole.yaml")));
  const auto what = [&] {
    try {
      LocateTrainedAgent(dir, /*best=*/false, "--run", "");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(what().find("still training"), std::string::npos) << what();
  const RunDirLock training(dir);  // as the run's own process holds it
  EXPECT_NE(what().find("; this run is still training (pid " + std::to_string(::getpid()) +
                        " holds its train.lock) and has written no checkpoint yet: its first "
                        "resume checkpoint comes at checkpoint_freq's step (config.yaml), its "
                        "final.pt at the end"),
            std::string::npos)
      << what();
}

// A run directory another process trains in is refused (the pid in train.lock named) before
// anything is written, and taken once that process has let go, however it ended.
TEST(ResumeTest, RunDirectoryInUseIsRefused) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1"}, 1);
  const std::string dir = FreshDir("in_use");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, 512).interrupted);
  const auto rows = [&] { return CsvSteps(dir); };
  const std::vector<double> before = rows();
  {
    const RunDirLock held(dir);  // as another process's training would hold it
    try {
      RunTraining(config, dir, 1.0, /*resume=*/true);
      ADD_FAILURE() << "resumed into a run directory in use";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "--resume");
      EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid()) + " holds " + dir +
                                           "/train.lock"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(rows(), before);  // nothing written
    EXPECT_THROW(RunDirLock again(dir), ConfigError);
    TrainOptions dry;  // a dry run finds it too, and writes nothing
    dry.out_dir = dir;
    dry.verbose = false;
    dry.resume = true;
    dry.dry_run = true;
    EXPECT_THROW(Train(config, std::move(dry)), ConfigError);
    EXPECT_NO_THROW(RunDirLock::RefuseIfHeld(FreshDir("no_lock_file")));  // nothing to hold
  }
  TrainOptions dry;
  dry.out_dir = dir;
  dry.verbose = false;
  dry.resume = true;
  dry.dry_run = true;
  EXPECT_TRUE(Train(config, std::move(dry)).dry_run);
  EXPECT_FALSE(RunTraining(config, dir, 1.0, /*resume=*/true).interrupted);
}

// A probe's shared lock (FileLockHeld: `greenrl report`, a dry run) lasts microseconds; a run
// that tries to take train.lock in that instant retries (for about 100 ms) instead of refusing.
// Here the probe's lock is held for 10 ms, and the run takes the lock once it is gone.
TEST(ResumeTest, RunDirLockWaitsOutAProbe) {
  const std::string dir = FreshDir("lock_probe");
  fs::create_directories(dir);
  WriteFileAtomic(dir + "/train.lock", "");
  const int probe = ::open((dir + "/train.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(probe, 0);
  ASSERT_EQ(::flock(probe, LOCK_SH | LOCK_NB), 0);
  std::thread release([probe] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::close(probe);
  });
  EXPECT_NO_THROW(RunDirLock lock(dir));
  release.join();
}

// The lock is taken before any checkpoint is read: a run still starting or stopping (here one
// with no checkpoint yet) is refused by its lock, not as a run without a checkpoint, and not
// resumed from an older checkpoint than the one it is writing.
TEST(ResumeTest, ResumeTakesTheLockBeforeReadingCheckpoints) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1"}, 1);
  const std::string dir = FreshDir("in_use_starting");
  fs::create_directories(dir + "/checkpoints");
  const RunDirLock held(dir);
  for (const bool dry_run : {false, true}) {
    TrainOptions options;
    options.out_dir = dir;
    options.verbose = false;
    options.resume = true;
    options.dry_run = dry_run;
    try {
      Train(config, std::move(options));
      ADD_FAILURE() << "resumed a run directory in use";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "--resume") << e.what();
    }
  }
}

// A new run checks that --out is empty before any work and again once it holds the lock: a run
// that wrote there in between (here during the meters' setup) is not written over.
TEST(ResumeTest, NewRunChecksItsDirectoryAgainUnderTheLock) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=512", "eval.freq=0", "eval.final_episodes=1"}, 1);
  const std::string dir = FreshDir("new_run_race");
  TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  // The meter's second reading (the first is its construction, here; the second the monitor's
  // start, after the first check) plays the other run.
  auto readings = std::make_shared<int>(0);
  options.meter_override = std::make_unique<energy::EstimatorMeter>(12.0, [dir, readings] {
    if ((*readings)++ == 1) {
      fs::create_directories(dir + "/checkpoints");
      WriteFileAtomic(dir + "/config.yaml", "algo: dqn\n");
    }
    return 0.25 * *readings;
  });
  try {
    Train(config, std::move(options));
    ADD_FAILURE() << "trained over another run's directory";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "--out") << e.what();
  }
  EXPECT_EQ(ReadFile(dir + "/config.yaml"), "algo: dqn\n");
  EXPECT_FALSE(fs::exists(dir + "/metrics.csv"));
}

// A new run's dry run leaves what the directory holds (a checkpoints/ folder of a run that failed
// at its first write) and refuses a directory whose lock another process holds.
TEST(ResumeTest, NewRunDryRunLeavesTheDirectoryAndSeesItsLock) {
  const Config config = LoadRunConfig(Preset("ppo/cartpole.yaml"), {"n_timesteps=512"}, 1);
  const std::string dir = FreshDir("dry_leftovers");
  fs::create_directories(dir + "/checkpoints");
  WriteFileAtomic(dir + "/train.lock", "");
  auto dry_run = [&] {
    TrainOptions options;
    options.out_dir = dir;
    options.verbose = false;
    options.dry_run = true;
    return Train(config, std::move(options));
  };
  EXPECT_TRUE(dry_run().dry_run);
  EXPECT_TRUE(fs::is_directory(dir + "/checkpoints"));
  const RunDirLock held(dir);
  try {
    dry_run();
    ADD_FAILURE() << "a dry run passed on a run directory in use";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "--out") << e.what();
  }
}

// final.pt is the last name a finished run writes (final.pt.pending, renamed once the reports are
// written): a run whose final writes fail (here energy.json, made a directory where the file
// goes, as a full disk would fail it) has no final.pt, so --resume trains its last iterations
// again from the newest resume checkpoint and writes everything; the finished run's metrics
// equal an uninterrupted run's.
TEST(ResumeTest, FinalPtIsWrittenLastSoAFailedFinalWriteResumes) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=256"}, 1);
  const std::string whole = FreshDir("final_last_whole");
  RunTraining(config, whole, 1.0);
  const std::string dir = FreshDir("final_last");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, 512).interrupted);
  fs::remove(dir + "/energy.json");
  fs::create_directory(dir + "/energy.json");
  try {
    RunTraining(config, dir, 1.0, /*resume=*/true);
    ADD_FAILURE() << "energy.json was written over a directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("energy.json"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  EXPECT_TRUE(fs::exists(FinalPendingPath(dir)));
  EXPECT_EQ(CsvSteps(dir).back(), CsvSteps(whole).back());  // the last row came before it
  fs::remove(dir + "/energy.json");
  EXPECT_FALSE(RunTraining(config, dir, 1.0, /*resume=*/true).interrupted);
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/final.pt"));
  EXPECT_FALSE(fs::exists(FinalPendingPath(dir)));
  EXPECT_TRUE(fs::is_regular_file(dir + "/energy.json"));
  EXPECT_EQ(CsvSteps(dir), CsvSteps(whole));
  EXPECT_EQ(ReadFile(dir + "/checkpoints/final.pt").size(),
            ReadFile(whole + "/checkpoints/final.pt").size());
}

// Rewrites the PPO checkpoint at `path` with its first parameter NaN: a whole archive (every
// entry's CRC-32 right) whose agent would act on NaN.
void WriteWithNanParameter(const std::string& path) {
  RewriteCheckpoint(path, [](const std::string& key, c10::IValue* value) {
    if (key != "params") return;
    torch::Tensor nan = value->toTensor().clone();
    nan[0] = std::nanf("");
    *value = nan;
  });
}

// A checkpoint whose parameters are not finite is refused when named, and passed over for the
// older one by eval's and export's default (the newest resume checkpoint of an interrupted run)
// and by --resume, which the run goes on from.
TEST(ResumeTest, CheckpointWithNanParametersIsRefusedAndSkipped) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=256"}, 1);
  const std::string dir = FreshDir("nan_params");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, 512).interrupted);
  const std::string newest = CheckpointPath(dir, 512);
  ASSERT_TRUE(fs::exists(newest));
  WriteWithNanParameter(newest);
  // Named by its step, it is refused; eval's and export's default (and "last") pass over it to
  // the checkpoint before, as --resume does, saying so.
  try {
    LoadTrainedAgent(dir, std::nullopt, /*best=*/false, "512");
    ADD_FAILURE() << "an agent with a NaN parameter loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of its "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(" are NaN or infinite"), std::string::npos) << e.what();
  }
  // A newer file that does not read at all is passed over first, and said too (with "last" as
  // without --checkpoint: before, "last" passed over it silently).
  const std::string unreadable = CheckpointPath(dir, 768);
  WriteFileAtomic(unreadable, "x");
  for (const std::string step : {"", "last"}) {
    const TrainedAgent agent = LoadTrainedAgent(dir, std::nullopt, /*best=*/false, step);
    EXPECT_EQ(agent.checkpoint, CheckpointPath(dir, 256));
    EXPECT_EQ(agent.resume_step, 256);
    ASSERT_EQ(agent.notes.size(), 2u) << step;
    EXPECT_EQ(agent.notes[0], "skipping " + unreadable + ": not a readable resume checkpoint");
    EXPECT_EQ(agent.notes.back().rfind("skipping " + newest + ": checkpoint: got '" + newest, 0),
              0u)
        << agent.notes.back();
    EXPECT_NE(agent.notes.back().find(" are NaN or infinite"), std::string::npos)
        << agent.notes.back();
    EXPECT_EQ(ResumeCheckpointNotice(dir, agent),
              dir +
                  " has no checkpoints/final.pt; using its newest loadable resume checkpoint "
                  "(step 256)");
  }
  fs::remove(unreadable);
  // With no older checkpoint that loads, the newest one's error; --trained-agent's names the key,
  // before the new run trains.
  const std::string older = CheckpointPath(dir, 256);
  fs::copy_file(older, older + ".good");
  WriteWithNanParameter(older);
  try {
    LoadTrainedAgent(dir, std::nullopt);
    ADD_FAILURE() << "an agent with NaN parameters loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(newest), std::string::npos) << e.what();
  }
  const Config from_agent = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1", "trained_agent=" + dir}, 1);
  try {
    RunTraining(from_agent, FreshDir("nan_params_agent"), 1.0);
    ADD_FAILURE() << "a run started from an agent with a NaN parameter";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "trained_agent") << e.what();
    EXPECT_NE(std::string(e.what()).find("its checkpoint " + newest +
                                         " does not load, needing a checkpoint whose "
                                         "parameters are finite (1 of its "),
              std::string::npos)
        << e.what();
  }
  fs::rename(older + ".good", older);
  // Else --trained-agent passes over it to the one before, as eval does.
  const TrainResult from_older = RunTraining(from_agent, FreshDir("nan_params_agent_older"), 1.0);
  EXPECT_EQ(from_older.report.trained_agent.checkpoint, CheckpointPath(dir, 256));
  const std::string damaged = ReadFile(newest);
  EXPECT_FALSE(RunTraining(config, dir, 1.0, /*resume=*/true).interrupted);
  // The resume set the damaged newer checkpoint aside, as it was, where checkpoint_keep no longer
  // counts it (it deleted the older good ones first while it stayed).
  EXPECT_EQ(ReadFile(newest + ".damaged"), damaged);
  for (const auto& [step, path] : ListCheckpoints(dir)) EXPECT_NE(path, newest + ".damaged");
}

// A final.pt.pending that does not load (the final writes failed, and the file was damaged
// since) gives way to the newest resume checkpoint for eval, export and --trained-agent, as
// --resume goes on from it.
TEST(ResumeTest, DamagedFinalPendingGivesWayToTheNewestResumeCheckpoint) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=256"}, 1);
  const std::string dir = FreshDir("pending_damaged");
  RunTraining(config, dir, 1.0);
  // What failed final writes leave: the policy under its pending name beside resume checkpoints.
  fs::rename(dir + "/checkpoints/final.pt", FinalPendingPath(dir));
  WriteWithNanParameter(FinalPendingPath(dir));
  const std::string newest = ListCheckpoints(dir).back().second;
  const TrainedAgent agent = LoadTrainedAgent(dir, std::nullopt);
  EXPECT_EQ(agent.checkpoint, newest);
  EXPECT_FALSE(agent.final_checkpoint);
  ASSERT_EQ(agent.notes.size(), 1u);  // the skip, in place of "using <pending>"
  EXPECT_EQ(agent.notes[0].rfind("skipping " + FinalPendingPath(dir) + ": checkpoint: got '", 0),
            0u)
      << agent.notes[0];
  EXPECT_NE(agent.notes[0].find(" are NaN or infinite"), std::string::npos) << agent.notes[0];
  const Config from_agent = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=512", "eval.freq=0", "eval.final_episodes=1", "trained_agent=" + dir}, 1);
  EXPECT_EQ(RunTraining(from_agent, FreshDir("pending_damaged_agent"), 1.0)
                .report.trained_agent.checkpoint,
            newest);

  // A normalize: true run's final.pt.pending that does not read at all (cut short): passed over
  // before its statistics are needed, said in one line (LibTorch's backtrace left out).
  const Config normalized =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1",
                     "checkpoint_freq=256", "normalize=true"},
                    1);
  const std::string cut = FreshDir("pending_cut");
  RunTraining(normalized, cut, 1.0);
  fs::rename(cut + "/checkpoints/final.pt", FinalPendingPath(cut));
  fs::remove(cut + "/checkpoints/normalizer.json");
  fs::resize_file(FinalPendingPath(cut), 5000);
  const TrainedAgent from_cut = LoadTrainedAgent(cut, std::nullopt);
  EXPECT_EQ(from_cut.checkpoint, ListCheckpoints(cut).back().second);
  ASSERT_TRUE(from_cut.normalizer.has_value());
  ASSERT_EQ(from_cut.notes.size(), 1u);
  EXPECT_EQ(from_cut.notes[0].rfind("skipping " + FinalPendingPath(cut) + ": checkpoint: got '" +
                                        FinalPendingPath(cut) +
                                        "'; a final.pt written by greenrl train (",
                                    0),
            0u)
      << from_cut.notes[0];
  EXPECT_EQ(from_cut.notes[0].find('\n'), std::string::npos) << from_cut.notes[0];
  // With no resume checkpoint, the pending file's own error.
  for (const auto& [step, path] : ListCheckpoints(cut)) fs::remove(path);
  try {
    LoadTrainedAgent(cut, std::nullopt);
    ADD_FAILURE() << "loaded a final.pt.pending that does not read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "checkpoint") << e.what();
    EXPECT_NE(std::string(e.what()).find(FinalPendingPath(cut)), std::string::npos) << e.what();
  }
}

// A resume whose meters give other energy domains than its checkpoint counted (energy.meter
// changed, RAPL readable on one machine only) is refused before anything is written: energy is
// carried domain by domain, and the earlier segments' would drop out of energy.json.
TEST(ResumeTest, ResumeWithOtherEnergyDomainsIsRefused) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=256"}, 1);
  const std::string dir = FreshDir("other_domains");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, /*stop_after=*/512).interrupted);
  const std::string metrics = ReadFile(dir + "/metrics.csv");
  const std::string power = ReadFile(dir + "/power.csv");
  TrainOptions options;
  options.out_dir = dir;
  options.resume = true;
  options.verbose = false;
  auto rapl =
      std::make_unique<energy::FakeMeter>(std::vector<std::string>{"cpu:package-0"},
                                          energy::Provenance::kMeasured, energy::Scope::kPackage);
  rapl->Script({{0.0}, {1.0}});
  options.meter_override = std::move(rapl);
  // A dry run refuses it too, as the run would.
  for (const bool dry_run : {true, false}) {
    TrainOptions attempt;
    attempt.out_dir = dir;
    attempt.resume = true;
    attempt.verbose = false;
    attempt.dry_run = dry_run;
    attempt.meter_override = dry_run ? std::make_unique<energy::FakeMeter>(
                                           std::vector<std::string>{"cpu:package-0"},
                                           energy::Provenance::kMeasured, energy::Scope::kPackage)
                                     : std::move(options.meter_override);
    try {
      Train(config, std::move(attempt));
      ADD_FAILURE() << "resumed with other energy domains (dry run " << dry_run << ")";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "energy.meter");
      EXPECT_NE(
          std::string(e.what()).find("the meters the run was measured with, domains "
                                     "cpu:process (" +
                                     CheckpointPath(dir, 512) + "); here they are cpu:package-0"),
          std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(ReadFile(dir + "/metrics.csv"), metrics);
  EXPECT_EQ(ReadFile(dir + "/power.csv"), power);
  EXPECT_FALSE(RunTraining(config, dir, 1.0, /*resume=*/true).interrupted);  // the same meters
}

// A resume without the replay buffer says that its updates wait for the refill, and when that
// takes the rest of the run, that it makes no gradient step: DQN
// CartPole (train_freq 256, learning_starts 1000), stopped at 1024 with checkpoint_replay_buffer
// false, resumed to 1536: the buffer refills to 2024, past the run's last step.
TEST(ResumeTest, ResumeWithoutTheBufferSaysWhenItsRefillTakesTheRun) {
  const Config config = LoadRunConfig(Preset("dqn/cartpole.yaml"),
                                      {"n_timesteps=4096", "eval.freq=0", "eval.final_episodes=1",
                                       "checkpoint_replay_buffer=false", "checkpoint_freq=0"},
                                      1);
  const std::string dir = FreshDir("refill_warning");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, /*stop_after=*/1024).interrupted);
  for (const int64_t n : {1536, 2304}) {
    const std::string copy = FreshDir("refill_warning_" + std::to_string(n));
    fs::copy(dir, copy, fs::copy_options::recursive);
    TrainOptions options;
    options.out_dir = copy;
    options.resume = true;
    options.meter_override = FixedMeter(1.0);
    ::testing::internal::CaptureStderr();
    Train(LoadRunConfig(copy + "/config.yaml", {"n_timesteps=" + std::to_string(n)}, std::nullopt),
          std::move(options));  // verbose
    const std::string err = ::testing::internal::GetCapturedStderr();
    const std::string note =
        "greenrl: the replay buffer refills (a checkpoint without it: checkpoint_replay_buffer "
        "false): updates wait for learning_starts 1000 transitions, until step 2024";
    EXPECT_NE(err.find(note + (n == 1536 ? ", which is not below n_timesteps 1536: this run acts "
                                           "with its policy and makes no gradient step\n"
                                         : "\n")),
              std::string::npos)
        << err;
  }
}

// A run with no resume checkpoint (checkpoint_freq above n_timesteps, as the presets' default of
// 100000 is for runs of up to 1e5 steps) whose final writes fail keeps its trained policy, as
// eval and export read final.pt.pending, and --resume says where it is.
TEST(ResumeTest, FailedFinalWritesKeepThePolicyForEval) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=512", "eval.freq=0", "eval.final_episodes=1"}, 1);
  const std::string whole = FreshDir("pending_whole");
  RunTraining(config, whole, 1.0);
  // The failing write is found by counting: the first injected failure that names
  // emissions.csv (the first report written; energy.json, tried after it, fails too).
  std::string dir, failure;
  int emissions_n = -1;
  for (int n = 0; n < 20 && failure.find("emissions.csv") == std::string::npos; ++n) {
    emissions_n = n;
    dir = FreshDir("pending_" + std::to_string(n));
    ::setenv("GREENRL_FAIL_WRITES_AFTER", std::to_string(n).c_str(), 1);
    try {
      RunTraining(config, dir, 1.0);
      failure = "no failure";
    } catch (const std::runtime_error& e) {
      failure = e.what();
    }
    ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
    WriteFileAtomic(::testing::TempDir() + "/greenrl_resume_pending_count", "");  // resets it
  }
  ASSERT_NE(failure.find("emissions.csv"), std::string::npos) << failure;
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  ASSERT_TRUE(fs::exists(FinalPendingPath(dir)));
  // One write later, emissions.csv is written and energy.json fails: the run fails by it (no
  // final.pt), and stderr says that emissions.csv records what it spent.
  {
    const std::string later = FreshDir("pending_energy_json");
    ::setenv("GREENRL_FAIL_WRITES_AFTER", std::to_string(emissions_n + 1).c_str(), 1);
    ::testing::internal::CaptureStderr();
    std::string error;
    try {
      RunTraining(config, later, 1.0);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
    WriteFileAtomic(::testing::TempDir() + "/greenrl_resume_pending_count", "");  // resets it
    EXPECT_NE(error.find("energy.json"), std::string::npos) << error;
    EXPECT_TRUE(fs::exists(later + "/emissions.csv"));
    EXPECT_FALSE(fs::exists(later + "/checkpoints/final.pt"));
    EXPECT_NE(err.find("greenrl: the run failed at step 512; " + later + "/emissions.csv records "),
              std::string::npos)
        << err;
  }
  EXPECT_TRUE(ListCheckpoints(dir).empty());
  const TrainedAgent agent = LoadTrainedAgent(dir, std::nullopt);
  EXPECT_EQ(agent.checkpoint, FinalPendingPath(dir));
  ASSERT_EQ(agent.notes.size(), 1u);
  EXPECT_EQ(agent.notes[0], "using " + FinalPendingPath(dir) +
                                ": the run trained to its end and its final writes did not finish");
  EXPECT_EQ(agent.algorithm->GetParameters(),
            LoadTrainedAgent(whole, std::nullopt).algorithm->GetParameters());
  try {
    RunTraining(config, dir, 1.0, /*resume=*/true);
    ADD_FAILURE() << "resumed without a resume checkpoint";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("greenrl eval and export --run read its policy, "
                                         "checkpoints/final.pt.pending"),
              std::string::npos)
        << e.what();
  }
}

// A run whose last metrics row cannot be appended (a full disk after its final evaluation)
// fails as a failure inside its loop does: energy.json says "failed" with what it spent,
// emissions.csv has its row, and final.pt is not committed.
TEST(ResumeTest, FailureAfterTheLoopIsRecordedAsAFailure) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=512", "eval.freq=0", "eval.final_episodes=1"}, 1);
  int runs = 0;
  // Trains with every append after the first n failing; the error, or "" when it finished.
  auto train_failing_after = [&](int n, std::string* dir) {
    *dir = FreshDir("after_loop_" + std::to_string(runs++));
    std::string error;
    ::setenv("GREENRL_FAIL_APPENDS_AFTER", std::to_string(n).c_str(), 1);
    try {
      RunTraining(config, *dir, 1.0);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    ::unsetenv("GREENRL_FAIL_APPENDS_AFTER");
    const int fd = ::open((*dir + "/count_reset").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    AppendWhole(fd, *dir + "/count_reset", "x");  // an append while it is unset resets the count
    ::close(fd);
    return error;
  };
  // The appends of a whole run: the least n it finishes with (a run fails for each n below).
  std::string dir;
  int lo = 0, hi = 1024;
  ASSERT_EQ(train_failing_after(hi, &dir), "");
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (train_failing_after(mid, &dir).empty()) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  ASSERT_GT(lo, 0);
  const std::string error = train_failing_after(lo - 1, &dir);  // the last append fails
  EXPECT_NE(error.find("metrics.csv"), std::string::npos) << error;
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["failure"].get<std::string>(), error);
  EXPECT_EQ(j["eval_note"].get<std::string>().rfind("failed at step 512: " + error, 0), 0u)
      << j["eval_note"];
  EXPECT_EQ(j["eval_episodes"].get<int64_t>(), 0);
  EXPECT_EQ(j["steps"].get<int64_t>(), 512);
  EXPECT_GT(j["total_energy_j"].get<double>(), 0.0);
  EXPECT_TRUE(fs::exists(dir + "/emissions.csv"));
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  EXPECT_TRUE(fs::exists(FinalPendingPath(dir)));  // the trained policy, for eval and export
}

// A run that fails at its first write (config.yaml) leaves train.lock and an empty checkpoints
// folder; the same --out is taken again.
TEST(ResumeTest, RunDirectoryOfARunThatWroteNothingIsTakenAgain) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=512", "eval.freq=0", "eval.final_episodes=1"}, 1);
  const std::string dir = FreshDir("wrote_nothing");
  ::setenv("GREENRL_FAIL_WRITES_AFTER", "0", 1);
  EXPECT_THROW(RunTraining(config, dir, 1.0), std::runtime_error);
  ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
  EXPECT_TRUE(fs::exists(dir + "/train.lock"));
  EXPECT_TRUE(fs::is_empty(dir + "/checkpoints"));
  EXPECT_FALSE(RunTraining(config, dir, 1.0).interrupted);
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/final.pt"));
  // Anything else there is still refused.
  const std::string other = FreshDir("wrote_nothing_other");
  fs::create_directories(other + "/checkpoints");
  std::ofstream(other + "/notes.txt") << "mine\n";
  EXPECT_THROW(RunTraining(config, other, 1.0), ConfigError);
}

// A run directory removed while the run trains is not made again by the next checkpoint: the
// write fails, saying so, and nothing is created.
TEST(ResumeTest, RunDirectoryRemovedWhileTrainingIsNotMadeAgain) {
  const auto ppo = algo::MakePpo(algo::PpoConfig{}, env::FindEnvSpec("CartPole-v1"));
  const std::string dir = FreshDir("gone");
  TrainerState state;
  for (int rank : {0, 1}) {
    try {
      SaveResumeCheckpoint(*ppo, CheckpointPath(dir, 256, rank), false, state);
      ADD_FAILURE() << "a checkpoint was written into a removed run directory";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "cannot write '" + CheckpointPath(dir, 256, rank) +
                                           "': the run directory '" + dir +
                                           "' is gone (removed while the run trained)");
    }
    EXPECT_FALSE(fs::exists(dir));
  }
  fs::create_directories(dir);  // with the run directory there, the checkpoint folders are made
  SaveResumeCheckpoint(*ppo, CheckpointPath(dir, 256), false, state);
  SaveResumeCheckpoint(*ppo, CheckpointPath(dir, 256, 1), false, state);
  EXPECT_EQ(ListCheckpoints(dir).size(), 1u);
  EXPECT_EQ(ListCheckpoints(dir, 1).size(), 1u);
}

// The guard: NaN gradients in 3 updates in a row (guard.max_consecutive 3) restore the last
// checkpoint and halve the learning rate; with guard.on_repeat stop the run stops with a
// message naming the last good checkpoint, which still loads.
// PPO CartPole, 2048 steps with a checkpoint every 512, trained into FreshDir(name) with NaN
// gradients injected in iterations 4, 5 and 6 (a restore after the third), plus `extra` sets.
TrainResult TrainWithThreeNonFiniteUpdates(const std::string& name,
                                           const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets = {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1",
                                   "checkpoint_freq=512", "learning_rate=0.001"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  TrainOptions options;
  options.out_dir = FreshDir(name);
  options.verbose = false;
  options.meter_override = FixedMeter(1.0);
  options.before_update = [](int64_t iteration, algo::Algorithm& algorithm) {
    if (iteration == 4) algorithm.InjectNonFiniteForTesting(3);  // iterations 4, 5, 6
  };
  return Train(LoadRunConfig(Preset("ppo/cartpole.yaml"), sets, 2), std::move(options));
}

TEST(ResumeTest, GuardRestoresLastCheckpointAndHalvesLearningRate) {
  const TrainResult result = TrainWithThreeNonFiniteUpdates("guard");
  EXPECT_EQ(result.guard_restores, 1);
  const auto [header, rows] = report::ReadMetricsCsv(result.report.run_dir + "/metrics.csv");
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  ASSERT_LT(col("losses/nonfinite_skips"), header.size());
  ASSERT_LT(col("charts/learning_rate"), header.size());
  // 8 envs x 32 steps = 256 per iteration. Iterations 4-6 skip every step (20 epochs x 1
  // minibatch each); after iteration 6 the run goes back to the checkpoint at 1024 (written after
  // iteration 4, whose skipped update left the parameters as they were) and metrics.csv loses
  // the row at 1280 that is then repeated: one row per step, the learning rate halved from 1280.
  ASSERT_EQ(rows.size(), 8u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][col("global_step")], 256.0 * static_cast<double>(i + 1));
  }
  EXPECT_EQ(rows[3][col("charts/learning_rate")], 0.001);
  EXPECT_EQ(rows[4][col("charts/learning_rate")], 0.0005);
  EXPECT_EQ(rows.back()[col("charts/learning_rate")], 0.0005);
  EXPECT_EQ(rows[2][col("losses/nonfinite_skips")], 0);
  EXPECT_EQ(rows[3][col("losses/nonfinite_skips")], 20);
  EXPECT_EQ(rows.back()[col("losses/nonfinite_skips")], 20);
  // TensorBoard drops the event of the cut row too (a restart event at 1025 after it).
  EXPECT_EQ(TensorBoardSteps(result.report.run_dir), CsvSteps(result.report.run_dir));
}

// Each restore halves the learning rate again, also a second one from the same checkpoint (NaN
// again before the next checkpoint), whose file holds the factor of before the first.
TEST(ResumeTest, GuardHalvesTheLearningRateAgainAtASecondRestoreFromTheSameCheckpoint) {
  TrainOptions options;
  options.out_dir = FreshDir("guard_twice");
  options.verbose = false;
  options.meter_override = FixedMeter(1.0);
  int fifth = 0;  // times iteration 5 began
  options.before_update = [&fifth](int64_t iteration, algo::Algorithm& algorithm) {
    // Iterations 4 and 5 skip: back to the checkpoint at 1024 (written after iteration 4);
    // iterations 5 and 6 skip again, before the checkpoint at 1536: back to 1024 again.
    if (iteration == 4) algorithm.InjectNonFiniteForTesting(2);
    if (iteration == 5 && ++fifth == 2) algorithm.InjectNonFiniteForTesting(2);
  };
  const TrainResult result =
      Train(LoadRunConfig(Preset("ppo/cartpole.yaml"),
                          {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1",
                           "checkpoint_freq=512", "learning_rate=0.001", "guard.max_consecutive=2"},
                          2),
            std::move(options));
  EXPECT_EQ(result.guard_restores, 2);
  EXPECT_EQ(fifth, 3);
  const auto [header, rows] = report::ReadMetricsCsv(result.report.run_dir + "/metrics.csv");
  const size_t lr =
      std::find(header.begin(), header.end(), "charts/learning_rate") - header.begin();
  ASSERT_LT(lr, header.size());
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[3][lr], 0.001);
  EXPECT_EQ(rows[4][lr], 0.00025);
  EXPECT_EQ(rows.back()[lr], 0.00025);
}

// The guard's restore under an energy budget: the steps after the checkpoint are done again and
// the budget counts them once (before, its step check stopped the run with an internal error).
TEST(ResumeTest, GuardRestoreUnderAnEnergyBudget) {
  const TrainResult result =
      TrainWithThreeNonFiniteUpdates("guard_budget", {"energy.budget_wh=1000", "eval.episodes=1"});
  EXPECT_EQ(result.guard_restores, 1);
  EXPECT_EQ(result.report.steps, 2048);
  EXPECT_TRUE(fs::exists(result.report.run_dir + "/checkpoints/final.pt"));
  // eval.freq 0: the final evaluation (of eval.episodes' count here) is no periodic one, and
  // evaluations.npz, SB3's EvalCallback log, is not written.
  EXPECT_FALSE(fs::exists(result.report.run_dir + "/evaluations.npz"));
}

TEST(ResumeTest, GuardStopsWithClearMessageAndKeepsCheckpoint) {
  const Config config = LoadRunConfig(Preset("ppo/cartpole.yaml"),
                                      {"n_timesteps=2048", "eval.freq=0", "checkpoint_freq=512",
                                       "guard.on_repeat=stop", "guard.max_consecutive=2"},
                                      2);
  TrainOptions options;
  const std::string dir = FreshDir("guard_stop");
  options.out_dir = dir;
  options.verbose = false;
  options.meter_override = FixedMeter(1.0);
  options.before_update = [](int64_t iteration, algo::Algorithm& algorithm) {
    if (iteration == 3) algorithm.InjectNonFiniteForTesting(2);
  };
  try {
    Train(config, std::move(options));
    ADD_FAILURE() << "no stop";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("non-finite loss or gradient in 2 updates in a row (global_step 1024)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("guard.on_repeat=stop"), std::string::npos) << what;
    EXPECT_NE(what.find(CheckpointPath(dir, 512)), std::string::npos) << what;
  }
  auto algorithm = MakeAlgorithm(config, env::FindEnvSpec("CartPole-v1"));
  const TrainerState state = LoadResumeCheckpoint(algorithm.get(), CheckpointPath(dir, 512));
  EXPECT_EQ(state.steps, 512);
}

// DQN and SAC skip every gradient step of a poisoned update and count it.
TEST(ResumeTest, DqnAndSacCountSkippedNonFiniteSteps) {
  struct Case {
    std::string preset;
    std::vector<std::string> sets;
    double skips;       // gradient steps of one update
    int64_t iteration;  // the poisoned update (after learning_starts)
  };
  const std::vector<Case> cases = {
      {"dqn/cartpole.yaml",
       {"n_timesteps=1024", "learning_starts=256", "buffer_size=1000", "train_freq=64",
        "gradient_steps=16", "policy_kwargs.net_arch=[32, 32]", "eval.freq=0",
        "eval.final_episodes=1", "checkpoint_freq=0"},
       16,
       10},
      {"sac/pendulum.yaml",
       {"n_timesteps=200", "learning_starts=100", "batch_size=32", "gradient_steps=4",
        "train_freq=4", "policy_kwargs.net_arch=[32, 32]", "eval.freq=0", "eval.final_episodes=1",
        "checkpoint_freq=0"},
       4,
       30},
  };
  for (const Case& c : cases) {
    const Config config = LoadRunConfig(Preset(c.preset), c.sets, 1);
    TrainOptions options;
    options.out_dir = FreshDir("skips");
    options.verbose = false;
    options.meter_override = FixedMeter(1.0);
    options.before_update = [&c](int64_t iteration, algo::Algorithm& algorithm) {
      if (iteration == c.iteration) algorithm.InjectNonFiniteForTesting(1);
    };
    const TrainResult result = Train(config, std::move(options));
    // Rows come every log_interval episodes: each row before the poisoned iteration's step
    // counts 0, each row from it on (the last one at least) the update's gradient steps.
    const double poisoned_step = static_cast<double>(c.iteration * config.GetInt("train_freq"));
    const auto [header, rows] = report::ReadMetricsCsv(result.report.run_dir + "/metrics.csv");
    const size_t col = static_cast<size_t>(
        std::find(header.begin(), header.end(), "losses/nonfinite_skips") - header.begin());
    ASSERT_LT(col, header.size()) << c.preset;
    ASSERT_FALSE(rows.empty());
    for (const auto& row : rows) {
      EXPECT_EQ(row[col], row[0] < poisoned_step ? 0.0 : c.skips) << c.preset << " " << row[0];
    }
    EXPECT_GE(rows.back()[0], poisoned_step);
  }
}

// A resume whose n_timesteps is not past the checkpoint has nothing to train: refused before any
// work (it once ran zero iterations, wrote final.pt and crashed), and the run stays resumable.
// A --resume may change eval.freq and checkpoint_freq: the schedules follow the new values
// from the checkpoint's step on. Stopped at 768 with eval.freq 25000 and checkpoint_freq 0, the
// run resumed with eval.freq=512 and checkpoint_freq=512 evaluates at 1024 and 1536 (then the
// final evaluation at 2048) and checkpoints at 1024 and 1536.
TEST(ResumeTest, ResumeFollowsNewEvalAndCheckpointFrequencies) {
  const Config config =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"n_timesteps=2048", "eval.freq=25000", "eval.episodes=1",
                     "eval.final_episodes=1", "checkpoint_freq=0", "checkpoint_keep=8"},
                    3);
  const std::string dir = FreshDir("new_freqs");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, /*stop_after=*/768).interrupted);
  const Config again =
      LoadRunConfig(dir + "/config.yaml", {"eval.freq=512", "checkpoint_freq=512"}, std::nullopt);
  const TrainResult r = RunTraining(again, dir, 1.0, /*resume=*/true);
  EXPECT_EQ(r.report.steps, 2048);
  const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  const size_t eval_col = static_cast<size_t>(
      std::find(header.begin(), header.end(), "eval/mean_reward") - header.begin());
  ASSERT_LT(eval_col, header.size());
  std::vector<double> eval_steps;
  for (const auto& row : rows) {
    if (!std::isnan(row[eval_col])) eval_steps.push_back(row[0]);
  }
  EXPECT_EQ(eval_steps, (std::vector<double>{1024, 1536, 2048}));
  // evaluations.npz: those three, one episode each (the final one at 2048 was due as periodic).
  const report::EvaluationsLog evaluations = report::ReadEvaluationsNpz(dir + "/evaluations.npz");
  EXPECT_EQ(evaluations.timesteps, (std::vector<int64_t>{1024, 1536, 2048}));
  EXPECT_EQ(evaluations.episodes(), 1u);
  std::vector<int64_t> checkpoint_steps;
  for (const auto& [step, path] : ListCheckpoints(dir)) checkpoint_steps.push_back(step);
  EXPECT_EQ(checkpoint_steps, (std::vector<int64_t>{768, 1024, 1536}));
}

// A resume that changes eval.episodes cannot add rows of another width to evaluations.npz: the
// file is started anew from the resumed run's first evaluation; the final evaluation, with fewer
// episodes than the periodic ones, gives no row.
TEST(ResumeTest, EvaluationsNpzStartsAnewWhenEvalEpisodesChange) {
  const Config config = LoadRunConfig(Preset("ppo/cartpole.yaml"),
                                      {"n_timesteps=1024", "eval.freq=256", "eval.episodes=2",
                                       "eval.final_episodes=2", "checkpoint_freq=0"},
                                      3);
  const std::string dir = FreshDir("npz_width");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, /*stop_after=*/512).interrupted);
  EXPECT_EQ(report::ReadEvaluationsNpz(dir + "/evaluations.npz").timesteps,
            (std::vector<int64_t>{256, 512}));
  TrainOptions options;
  options.out_dir = dir;
  options.resume = true;
  options.meter_override = FixedMeter(1.0);
  ::testing::internal::CaptureStderr();
  Train(LoadRunConfig(dir + "/config.yaml", {"eval.episodes=3"}, std::nullopt),
        std::move(options));  // verbose: the warning is said
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("holds evaluations of 2 episodes and eval.episodes is now 3"),
            std::string::npos)
      << err;
  const report::EvaluationsLog log = report::ReadEvaluationsNpz(dir + "/evaluations.npz");
  EXPECT_EQ(log.timesteps, (std::vector<int64_t>{768}));
  EXPECT_EQ(log.episodes(), 3u);
}

// eval and export of an unfinished run take its newest resume checkpoint that reads, as
// train --resume does: a damaged newest one gives way to the one before, said on stderr.
TEST(ResumeTest, TrainedAgentSkipsADamagedNewestResumeCheckpoint) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=1024", "eval.freq=0", "checkpoint_freq=256", "checkpoint_keep=3"}, 3);
  const std::string dir = FreshDir("damaged_newest");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, /*stop_after=*/768).interrupted);
  ASSERT_EQ(ListCheckpoints(dir).back().first, 768);
  const std::string newest = CheckpointPath(dir, 768);
  const std::string bytes = ReadFile(newest);
  WriteFileAtomic(newest, bytes.substr(0, bytes.size() / 2));  // a truncated copy
  const TrainedAgent agent = LoadTrainedAgent(dir, std::nullopt, /*best=*/false);
  EXPECT_EQ(agent.checkpoint, CheckpointPath(dir, 512));
  EXPECT_EQ(agent.resume_step, 512);
  EXPECT_EQ(agent.notes,
            std::vector<std::string>{"skipping " + newest + ": not a readable resume checkpoint"});
  // When none reads, none is said to be skipped: the newest one's own error names it.
  for (const auto& [step, path] : ListCheckpoints(dir)) WriteFileAtomic(path, "x");
  try {
    LoadTrainedAgent(dir, std::nullopt, /*best=*/false);
    ADD_FAILURE() << "no checkpoint reads";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(newest), std::string::npos) << e.what();
  }
}

// eval and export load a run trained elsewhere: the keys of the machine that trained it (its
// energy meter, its carbon-intensity file, its device) fall back when they do not work here,
// each said once (TrainedAgent::notes, which eval and export print), and the agent loads.
// config.yaml keeps the series' absolute path, tidied.
TEST(ResumeTest, TrainedAgentLoadsWhereItsMachineKeysDoNotWork) {
  const std::string sub = ::testing::TempDir() + "/greenrl_agent_sub";
  fs::create_directories(sub);
  const std::string csv = sub + "/./../greenrl_agent_series.csv";
  std::ofstream(csv) << "0,100\n";
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=512", "eval.freq=0", "eval.final_episodes=1", "carbon.intensity_csv=" + csv,
       "energy.powercap_root=" + sub + "/./../greenrl_agent_powercap"},
      3);
  const std::string dir = FreshDir("agent_elsewhere");
  RunTraining(config, dir, 1.0);
  std::string yaml = ReadFile(dir + "/config.yaml");
  const fs::path tidy = fs::path(::testing::TempDir() + "/greenrl_agent_series.csv");
  EXPECT_NE(yaml.find("  intensity_csv: " + tidy.lexically_normal().string() + " "),
            std::string::npos)
      << yaml;
  // The powercap tree's path too (a machine path, read again by eval and --resume).
  const fs::path tidy_root = fs::path(::testing::TempDir() + "/greenrl_agent_powercap");
  EXPECT_NE(yaml.find("  powercap_root: " + tidy_root.lexically_normal().string() + " "),
            std::string::npos)
      << yaml;
  const std::string source = nlohmann::json::parse(std::ifstream(dir + "/energy.json"))
                                 .at("carbon")
                                 .at("intensity_source")
                                 .get<std::string>();
  EXPECT_EQ(source.rfind("time series " + tidy.lexically_normal().string() + " (", 0), 0u)
      << source;
  auto replace_line = [&](const std::string& start, const std::string& line) {
    const size_t at = yaml.find("\n" + start);
    ASSERT_NE(at, std::string::npos) << start;
    yaml.replace(at + 1, yaml.find('\n', at + 1) - at - 1, line);
  };
  replace_line("  meter: ", "  meter: rapl");
  replace_line("  powercap_root: ", "  powercap_root: /nonexistent/powercap");
  replace_line("device: ", "device: cuda");
  WriteFileAtomic(dir + "/config.yaml", yaml);
  fs::remove(csv);
  replace_line("precision: ", "precision: fp16");  // a GPU run's: refused with device cpu
  WriteFileAtomic(dir + "/config.yaml", yaml);
  const TrainedAgent agent = LoadTrainedAgent(dir, std::nullopt, /*best=*/false);
  std::string err;
  for (const std::string& note : agent.notes) err += note + "\n";
  EXPECT_EQ(agent.config.GetString("energy.meter"), "auto");
  EXPECT_EQ(agent.config.GetString("carbon.intensity_csv"), "");
  for (const std::string& note :
       std::vector<std::string>{"energy.meter: got 'rapl'",
                                "; using energy.meter auto here (the trained agent does not "
                                "depend on it)\n",
                                "carbon.intensity_csv (in " + dir + "/config.yaml): got '",
                                "; using carbon.intensity_csv '' here"}) {
    EXPECT_NE(err.find(note), std::string::npos) << note << "\n" << err;
  }
  // Named once: the file is in the error itself.
  EXPECT_EQ(err.find(dir + "/config.yaml: carbon.intensity_csv"), std::string::npos) << err;
  size_t notes = 0;
  for (size_t at = err.find("here (the trained agent"); at != std::string::npos;
       at = err.find("here (the trained agent", at + 1)) {
    ++notes;
  }
  // Each said once: with CUDA the device and precision stay.
  EXPECT_EQ(notes, torch::cuda::is_available() ? 2u : 4u) << err;
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(agent.config.GetString("device"), "cpu");
    EXPECT_EQ(agent.config.GetString("precision"), "fp32");
  }
  const EvalResult eval = EvaluatePolicy(*agent.algorithm, "CartPole-v1", 1, 3);
  EXPECT_EQ(eval.returns.size(), 1u);
}

// A stopped segment's energy.json of the checkpoint's step carries what the segment spent after
// its checkpoint (the checkpoint's write, the reports) into the resumed run's totals, upward
// only; another step's energy.json, or none, leaves the checkpoint's figures.
TEST(ResumeTest, StoppedSegmentsLaterFiguresCarryOver) {
  const std::string dir = FreshDir("carry_over");
  fs::create_directories(dir);
  TrainerState state;
  state.steps = 512;
  state.elapsed_s = 2.5;
  state.cpu_s = 2.25;
  state.energy.duration_s = 2.0;
  state.energy.energy_j = {{"cpu:process", 10.0}, {"gpu:0", 7.0}};
  CarryOverStoppedSegment(dir, &state);  // no energy.json
  EXPECT_EQ(state.energy.energy_j.at("cpu:process"), 10.0);
  EXPECT_EQ(state.energy.duration_s, 2.0);
  WriteFileAtomic(dir + "/energy.json",
                  R"({"steps": 512, "wall_time_s": 3.0, "cpu_time_s": 2.0, "domains":
                      {"cpu:process": {"energy_j": 12.5}, "gpu:0": {"energy_j": 6.0}}})");
  CarryOverStoppedSegment(dir, &state);
  EXPECT_EQ(state.elapsed_s, 3.0);
  EXPECT_EQ(state.energy.duration_s, 2.5);  // + the 0.5 s of wall time carried
  EXPECT_EQ(state.cpu_s, 2.25);
  EXPECT_EQ(state.energy.energy_j.at("cpu:process"), 12.5);
  EXPECT_EQ(state.energy.energy_j.at("gpu:0"), 7.0);
  state.steps = 768;
  WriteFileAtomic(dir + "/energy.json",
                  R"({"steps": 512, "wall_time_s": 30.0, "cpu_time_s": 20.0,
                      "domains": {"cpu:process": {"energy_j": 99.0}}})");
  CarryOverStoppedSegment(dir, &state);
  EXPECT_EQ(state.elapsed_s, 3.0);
  EXPECT_EQ(state.energy.duration_s, 2.5);
  EXPECT_EQ(state.energy.energy_j.at("cpu:process"), 12.5);
}

// A data-parallel rank carries its own later figures, energy.json's distributed.ranks[rank]
// (the top-level totals are the job's: every rank would have taken the sum of all of them).
TEST(ResumeTest, StoppedSegmentsLaterFiguresCarryOverPerRank) {
  const std::string dir = FreshDir("carry_over_ranks");
  fs::create_directories(dir);
  WriteFileAtomic(dir + "/energy.json",
                  R"({"steps": 512, "wall_time_s": 3.0, "cpu_time_s": 5.0, "domains":
                      {"cpu:process": {"energy_j": 25.0}},
                      "distributed": {"world_size": 2, "ranks": [
                        {"rank": 0, "wall_time_s": 3.0, "cpu_time_s": 2.5, "total_energy_j": 12.5,
                         "energy_j": {"cpu:process": 12.5}},
                        {"rank": 1, "wall_time_s": 2.75, "cpu_time_s": 2.5,
                         "total_energy_j": 12.5, "energy_j": {"cpu:process": 12.5}}]}})");
  for (int rank : {0, 1}) {
    TrainerState state;
    state.steps = 512;
    state.world_size = 2;
    state.rank = rank;
    state.elapsed_s = 2.5;
    state.cpu_s = 2.25;
    state.energy.duration_s = 2.0;
    state.energy.energy_j = {{"cpu:process", 10.0}};
    CarryOverStoppedSegment(dir, &state);
    EXPECT_EQ(state.energy.energy_j.at("cpu:process"), 12.5) << rank;
    EXPECT_EQ(state.elapsed_s, rank == 0 ? 3.0 : 2.75);
    EXPECT_EQ(state.energy.duration_s, rank == 0 ? 2.5 : 2.25);
    EXPECT_EQ(state.cpu_s, 2.5);
  }
}

TEST(ResumeTest, NTimestepsNotPastTheCheckpointIsRefused) {
  const std::vector<std::string> sets = {"eval.freq=0", "eval.final_episodes=1",
                                         "checkpoint_freq=512"};
  auto with_steps = [&](int64_t n) {
    std::vector<std::string> s = sets;
    s.push_back("n_timesteps=" + std::to_string(n));
    return LoadRunConfig(Preset("ppo/cartpole.yaml"), s, 4);
  };
  const std::string dir = FreshDir("short_resume");
  RunTraining(with_steps(2048), dir, 1.0, /*resume=*/false, /*stop_after=*/1024);
  ASSERT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  for (int64_t n : {512, 1024}) {
    try {
      RunTraining(with_steps(n), dir, 1.0, /*resume=*/true);
      ADD_FAILURE() << "n_timesteps " << n << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("n_timesteps: got '" + std::to_string(n) + "'"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("newest checkpoint, 1024"), std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  }
  const TrainResult resumed = RunTraining(with_steps(2048), dir, 1.0, /*resume=*/true);
  EXPECT_EQ(resumed.report.steps, 2048);
}

// A stop signal in the last iteration (here before its update; the final evaluation is later in
// the same iteration) finds a run that finishes: final.pt and the reports, not interrupted, and
// TrainResult::late_stop_signal says which signal came, for the CLI's note. One iteration
// earlier the same signal interrupts the run at that iteration's end.
TEST(ResumeTest, StopSignalInTheLastIterationFinishesTheRun) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"), {"n_timesteps=768", "eval.freq=0", "eval.final_episodes=1"}, 5);
  for (const int64_t at : {3, 2}) {  // 256 steps per iteration: iteration 3 is the last
    StopSignalScope signals;
    TrainOptions options;
    options.out_dir = FreshDir("late_signal_" + std::to_string(at));
    options.verbose = false;
    options.handle_signals = true;
    options.meter_override = FixedMeter(1.0);
    options.before_update = [at](int64_t iteration, algo::Algorithm&) {
      if (iteration == at) {
        ASSERT_EQ(std::raise(SIGINT), 0);
      }
    };
    const TrainResult result = Train(config, std::move(options));
    if (at == 3) {
      EXPECT_FALSE(result.interrupted);
      EXPECT_EQ(result.late_stop_signal, SIGINT);
      EXPECT_EQ(result.report.steps, 768);
      EXPECT_TRUE(fs::exists(result.report.run_dir + "/checkpoints/final.pt"));
      EXPECT_EQ(result.report.eval_episodes, 1);
    } else {
      EXPECT_TRUE(result.interrupted);
      EXPECT_EQ(result.stop_signal, SIGINT);
      EXPECT_EQ(result.late_stop_signal, 0);
      EXPECT_EQ(result.report.steps, 512);
      EXPECT_FALSE(fs::exists(result.report.run_dir + "/checkpoints/final.pt"));
    }
  }
}

// A stop signal ignored at the start (a script's `cmd &`) stays ignored, and train and bench say
// so in one line each, naming the signal that still stops them.
TEST(ResumeTest, IgnoredStopSignalsAreNamed) {
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGINT, &ignore, &before), 0);
  {
    StopSignalScope signals;
    EXPECT_TRUE(signals.ignored(SIGINT));
    EXPECT_FALSE(signals.ignored(SIGTERM));
    EXPECT_EQ(IgnoredStopSignalNotes(signals, "bench"),
              std::vector<std::string>{
                  "greenrl: SIGINT is ignored: this process started with it ignored (a script's "
                  "`cmd &` starts it so; `set -m` does not) and leaves it so; SIGTERM stops the "
                  "bench"});
  }
  // SIGTERM: another cause; both: neither stops it, said in each note.
  struct sigaction term_before {};
  ASSERT_EQ(::sigaction(SIGTERM, &ignore, &term_before), 0);
  {
    StopSignalScope signals;
    const std::vector<std::string> notes = IgnoredStopSignalNotes(signals, "run");
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[1],
              "greenrl: SIGTERM is ignored: this process started with it ignored (a `trap '' "
              "TERM` before the command, or the program that started it, ignored it) and leaves "
              "it so; neither SIGINT nor SIGTERM stops the run with a checkpoint (SIGKILL ends "
              "it, losing the steps since its last checkpoint)");
    EXPECT_NE(notes[0].find("; neither SIGINT nor SIGTERM stops the run"), std::string::npos)
        << notes[0];
  }
  ASSERT_EQ(::sigaction(SIGINT, &before, nullptr), 0);
  {
    StopSignalScope signals;
    EXPECT_EQ(IgnoredStopSignalNotes(signals, "run"),
              std::vector<std::string>{
                  "greenrl: SIGTERM is ignored: this process started with it ignored (a `trap '' "
                  "TERM` before the command, or the program that started it, ignored it) and "
                  "leaves it so; SIGINT stops the run"});
  }
  ASSERT_EQ(::sigaction(SIGTERM, &term_before, nullptr), 0);
  StopSignalScope signals;
  EXPECT_TRUE(IgnoredStopSignalNotes(signals, "run").empty());
}

// A write that fails as a full disk does (GREENRL_FAIL_WRITES_AFTER): the error names the file
// and the system's reason, and the checkpoint written before it survives and resumes.
TEST(ResumeTest, FailedCheckpointWriteKeepsTheLastGoodOne) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=512"}, 4);
  const std::string dir = FreshDir("enospc");
  // Writes: config.yaml, the checkpoint at 512, then the one at 1024 fails.
  ::setenv("GREENRL_FAIL_WRITES_AFTER", "2", 1);
  try {
    RunTraining(config, dir, 1.0);
    ADD_FAILURE() << "no failure";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + CheckpointPath(dir, 1024) + ".tmp." +
                                         std::to_string(::getpid()) + "': No space left on device");
  }
  ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
  const auto kept = ListCheckpoints(dir);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].first, 512);
  const TrainResult resumed = RunTraining(config, dir, 1.0, /*resume=*/true);
  EXPECT_EQ(resumed.report.steps, 2048);
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/final.pt"));
}

// A resume keeps the monitor.csv rows its checkpoint counted, not one per episode: after a resume
// that dropped a damaged row, a later resume from a checkpoint with rows past it neither writes
// an episode twice nor loses one.
TEST(ResumeTest, MonitorCsvRowsStayRightAcrossResumesAfterADroppedRow) {
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=512"}, 2);
  const std::string whole = FreshDir("monitor_rows_whole");
  RunTraining(config, whole, 1.0);
  const auto expected = MonitorEpisodes(whole);
  ASSERT_GT(expected.size(), 10u);
  const std::string dir = FreshDir("monitor_rows");
  ASSERT_TRUE(RunTraining(config, dir, 1.0, false, 1024).interrupted);
  std::string text = ReadFile(dir + "/monitor.csv");
  size_t at = 0;  // the start of the 5th episode row (line 7)
  for (int k = 0; k < 6; ++k) at = text.find('\n', at) + 1;
  text.replace(at, text.find('\n', at) - at, "damaged");
  WriteFileAtomic(dir + "/monitor.csv", text);
  // The resume goes to the end, past its checkpoint at 1536; without final.pt (as after a crash
  // in the final writes) the next resume starts from that checkpoint, with rows past it to cut.
  EXPECT_FALSE(RunTraining(config, dir, 1.0, /*resume=*/true).interrupted);
  ASSERT_EQ(ListCheckpoints(dir).back().first, 1536);
  fs::remove(dir + "/checkpoints/final.pt");
  EXPECT_FALSE(RunTraining(config, dir, 1.0, /*resume=*/true).interrupted);
  auto without_the_damaged = expected;
  without_the_damaged.erase(without_the_damaged.begin() + 4);
  EXPECT_EQ(MonitorEpisodes(dir), without_the_damaged);
}

// A resume cuts metrics.csv's rows past the checkpoint; a row that is not whole (a torn last
// line, a damaged middle one) is dropped too, and said, naming its line.
TEST(ResumeTest, MetricsCsvDamagedRowsAreDroppedAndSaid) {
  const std::string dir = FreshDir("metrics_damaged");
  fs::create_directories(dir);
  const std::string path = dir + "/metrics.csv";
  WriteFileAtomic(path,
                  "global_step,time_s,charts/SPS\n256,0.1,2560\n512,0.2\n768,0.3,2560\n"
                  "1x24,0.4,2560\n1280,0.5,2560\n1536,0.6");
  std::vector<std::string> notes;
  EXPECT_EQ(TruncateMetricsCsv(path, 1024, &notes),
            (std::vector<std::string>{"global_step", "time_s", "charts/SPS"}));
  EXPECT_EQ(ReadFile(path), "global_step,time_s,charts/SPS\n256,0.1,2560\n768,0.3,2560\n");
  EXPECT_EQ(notes,
            std::vector<std::string>{path + ": dropped 3 damaged rows (lines 3, 5, 7), not 3 "
                                            "cells with a number for global_step"});
}

// An env whose Step throws at this process's g_fail_at-th step (summed over its rows; -1: never),
// as a custom env's bug or a lost sensor would.
std::atomic<int64_t> g_fail_at{-1};
std::atomic<int64_t> g_steps_taken{0};
std::string g_block_on_fail;  // a path made a folder as the env fails (a report then fails too)
class FailingEnv {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const env::EnvSpec& Spec() {
    static const env::EnvSpec spec = env::testing::OneValueSpec("TestFailing-v0", 1.0f, 20);
    return spec;
  }
  std::array<float, kObsDim> Reset(uint64_t) { return Reset(); }
  std::array<float, kObsDim> Reset() {
    t_ = 0;
    return {0.0f};
  }
  StepResult Step(Action action) {
    if (++g_steps_taken == g_fail_at) {
      if (!g_block_on_fail.empty()) fs::create_directories(g_block_on_fail);
      throw std::runtime_error("TestFailing-v0: the sensor stopped answering");
    }
    ++t_;
    StepResult r;
    r.obs = {static_cast<float>(t_) / 20.0f};
    r.reward = static_cast<double>(action);
    return r;
  }

 private:
  int t_ = 0;
};

// Registers TestFailing-v0 once per process (each ctest case is a process of its own).
void RegisterFailingEnv() {
  static const bool registered = [] {
    env::RegisterEnv(env::EnvRegistrationOf<FailingEnv>());
    return true;
  }();
  (void)registered;
}

// A run that fails (an exception from the env's Step at its 1100th step, in the rollout after
// step 1024; its last checkpoint at step 768) writes energy.json with the failure and what it
// spent, and emissions.csv, then rethrows; the report says "failed", not "killed". A --resume
// from step 768's checkpoint counts the energy the failed segment spent after it (energy.json's,
// of a later step, not the checkpoint's).
TEST(ResumeTest, FailedRunWritesItsEnergyAndTheResumeCountsIt) {
  RegisterFailingEnv();
  const Config config =
      LoadRunConfig(Preset("ppo/cartpole.yaml"),
                    {"env_id=TestFailing-v0", "n_timesteps=2048", "checkpoint_freq=768",
                     "eval.freq=0", "eval.final_episodes=1"},
                    1);
  const std::string dir = FreshDir("failed_run");
  // One joule more at every reading: the failure's energy is above the checkpoint's.
  auto rising =
      std::make_unique<energy::FakeMeter>(std::vector<std::string>{"cpu:process"},
                                          energy::Provenance::kMeasured, energy::Scope::kProcess);
  std::vector<std::vector<double>> readings;
  for (int i = 0; i < 100000; ++i) readings.push_back({static_cast<double>(i)});
  rising->Script(readings);
  g_steps_taken = 0;
  g_fail_at = 1100;
  try {
    RunTraining(config, dir, std::move(rising));
    ADD_FAILURE() << "the env's exception ends the run";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "TestFailing-v0: the sensor stopped answering");
  }
  g_fail_at = -1;
  const std::string checkpoint = CheckpointPath(dir, 768);
  ASSERT_TRUE(fs::exists(checkpoint));
  EXPECT_FALSE(fs::exists(dir + "/checkpoints/final.pt"));
  EXPECT_TRUE(fs::exists(dir + "/emissions.csv"));
  const auto j = nlohmann::json::parse(std::ifstream(dir + "/energy.json"));
  EXPECT_EQ(j.at("failure"), "TestFailing-v0: the sensor stopped answering");
  EXPECT_EQ(j.at("steps"), 1024);
  EXPECT_EQ(j.at("eval_episodes"), 0);
  EXPECT_EQ(j.at("eval_note").get<std::string>(),
            "failed at step 1024: TestFailing-v0: the sensor stopped answering (greenrl train "
            "--resume " +
                dir + " continues it from " + checkpoint + ")");
  const double failed_j = j.at("total_energy_j").get<double>();
  const std::optional<TrainerState> at_checkpoint = PeekTrainerState(checkpoint);
  ASSERT_TRUE(at_checkpoint.has_value());
  EXPECT_LT(at_checkpoint->energy.total_energy_j(), failed_j);
  EXPECT_EQ(report::LoadRun(dir).unfinished, "failed");

  const TrainResult resumed = RunTraining(config, dir, 1.0, /*resume=*/true);
  EXPECT_EQ(resumed.report.steps, 2048);
  EXPECT_EQ(resumed.report.total_energy_j(), failed_j + 1.0);
  EXPECT_EQ(report::LoadRun(dir).unfinished, "");
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/final.pt"));
}

// When a failed run's reports cannot be written either (energy.json cannot be), that is said on
// stderr and the run's own error is the one that reaches the caller.
TEST(ResumeTest, FailedRunWhoseReportsFailSaysBothErrors) {
  RegisterFailingEnv();
  const Config config = LoadRunConfig(
      Preset("ppo/cartpole.yaml"),
      {"env_id=TestFailing-v0", "n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1"}, 1);
  const std::string dir = FreshDir("failed_reports");
  g_steps_taken = 0;
  g_fail_at = 300;
  g_block_on_fail = dir + "/energy.json";
  TrainOptions options;  // not quiet: the second error is said
  options.out_dir = dir;
  options.meter_override = FixedMeter(1.0);
  ::testing::internal::CaptureStderr();
  std::string caught;
  try {
    Train(config, std::move(options));
  } catch (const std::exception& e) {
    caught = e.what();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  g_fail_at = -1;
  g_block_on_fail.clear();
  EXPECT_EQ(caught, "TestFailing-v0: the sensor stopped answering");
  // emissions.csv, written first, records the run; energy.json cannot be written.
  EXPECT_NE(err.find("greenrl: the failed run's energy.json could not be written either: "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(dir + "/energy.json"), std::string::npos) << err;
  EXPECT_NE(err.find("greenrl: the run failed at step 256; " + dir + "/emissions.csv records the "),
            std::string::npos)
      << err;
  EXPECT_TRUE(fs::exists(dir + "/emissions.csv"));
}

}  // namespace
}  // namespace greenrl::train
