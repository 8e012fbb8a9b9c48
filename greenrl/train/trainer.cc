#include "greenrl/train/trainer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>

#include "greenrl/algo/ppo.h"
#include "greenrl/core/atomic_file.h"
#include "greenrl/core/clock.h"
#include "greenrl/core/errors.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/energy/monitor.h"
#include "greenrl/energy/select.h"
#include "greenrl/env/registry.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/run_config.h"

namespace greenrl::train {

namespace fs = std::filesystem;

namespace {
constexpr double kJoulesPerWh = 3600.0;

std::unique_ptr<algo::Algorithm> MakeAlgorithm(const Config& config, const env::EnvSpec& spec) {
  // AlgorithmIds() lists what is handled here.
  return algo::MakePpo(algo::PpoConfigFromConfig(config), spec);
}

void PrepareRunDir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec)) {
      throw ConfigError("--out", dir, "a new or empty directory (it exists and is not empty)");
    }
  }
}

void CreateRunDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "checkpoints", ec);
  if (ec) throw std::runtime_error("cannot create run directory '" + dir + "': " + ec.message());
}
}  // namespace

void ConfigureThreads(int torch_threads) {
  // Debian's LibTorch is built with OpenMP: at::set_num_threads also calls omp_set_num_threads,
  // which OpenBLAS's OpenMP build (libopenblas0-openmp) reads before each call.
  at::set_num_threads(torch_threads);
}

std::string DefaultRunDir(const Config& config) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return fmt::format("runs/{}_{}_s{}_{}", config.GetString("env_id"), config.GetString("algo"),
                     config.GetInt("seed"), stamp);
}

TrainResult Train(const Config& config, TrainOptions options) {
  // --- Everything that can refuse the input, before the run dir exists.
  const std::string env_id = config.GetString("env_id");
  const std::string algo_id = config.GetString("algo");
  const uint64_t seed = static_cast<uint64_t>(config.GetInt("seed"));
  const int n_envs = static_cast<int>(config.GetInt("n_envs"));
  const int64_t total_steps = config.GetInt("n_timesteps");
  const int64_t eval_freq = config.GetInt("eval.freq");
  const int eval_episodes = static_cast<int>(config.GetInt("eval.episodes"));
  const int final_episodes = static_cast<int>(config.GetInt("eval.final_episodes"));
  const std::string run_dir = options.out_dir.empty() ? DefaultRunDir(config) : options.out_dir;
  PrepareRunDir(run_dir);
  const energy::CarbonOptions carbon_options = CarbonOptionsFrom(config);
  energy::ValidateCarbonOptions(carbon_options);

  ConfigureThreads(static_cast<int>(config.GetInt("threads.torch")));
  auto env = env::MakeVecEnv(env_id, n_envs, seed, static_cast<int>(config.GetInt("threads.env")));
  auto algorithm = MakeAlgorithm(config, env->spec());

  std::string meter_reason;
  std::unique_ptr<energy::EnergyMeter> meter;
  if (options.meter_override) {
    meter = std::move(options.meter_override);
    meter_reason = "meter given by the caller (" + meter->name() + ")";
  } else {
    energy::MeterChoice choice = energy::SelectMeter(MeterOptionsFrom(config));
    meter = std::move(choice.meter);
    meter_reason = choice.reason;
  }
  if (options.verbose) fmt::print(stderr, "greenrl: energy meter: {}\n", meter_reason);
  const auto meter_details = meter->Details();
  std::vector<std::unique_ptr<energy::EnergyMeter>> meters;
  meters.push_back(std::move(meter));
  const Clock& clock = SteadyClock::Instance();

  // --- The run directory: resolved config first, metrics flushed row by row.
  CreateRunDir(run_dir);
  WriteFileAtomic(run_dir + "/config.yaml", config.ToYaml());
  report::MetricsCsv metrics_csv(run_dir + "/metrics.csv");

  energy::EnergyMonitor monitor(std::move(meters), clock);
  const double t0 = clock.NowS();
  const double cpu0 = ProcessCpuSeconds();
  env->Reset();

  std::deque<double> recent_returns;  // the last 100 finished training episodes
  std::vector<algo::EpisodeRecord> episodes;
  int64_t steps = 0;
  int64_t next_eval = eval_freq > 0 ? eval_freq : -1;
  double last_progress_s = -1.0;
  algo::Metrics row;

  auto energy_columns = [&](const energy::Measurement& total, double elapsed_s, algo::Metrics* r) {
    r->emplace_back("energy/total_wh", total.total_energy_j() / kJoulesPerWh);
    for (const auto& [domain, e] : total.energy_j)
      r->emplace_back("energy/" + domain + "_wh", e / kJoulesPerWh);
    r->emplace_back("energy/power_w", elapsed_s > 0 ? total.total_energy_j() / elapsed_s : NAN);
    r->emplace_back("carbon/g_co2e",
                    energy::ComputeCarbon(total.total_energy_j(), carbon_options).kg_co2e * 1000.0);
  };

  EvalResult final_eval;
  while (steps < total_steps) {
    episodes.clear();
    monitor.BeginWindow("rollout");
    steps += algorithm->CollectRollout(*env, &episodes);
    monitor.EndWindow("rollout");

    monitor.BeginWindow("update");
    const algo::Metrics update_metrics =
        algorithm->Update(algo::ProgressRemaining(steps, total_steps));
    monitor.EndWindow("update");

    const bool last = steps >= total_steps;
    double eval_mean = NAN, eval_std = NAN;
    if (last || (next_eval > 0 && steps >= next_eval)) {
      monitor.BeginWindow("eval");
      const EvalResult eval =
          EvaluatePolicy(*algorithm, env_id, last ? final_episodes : eval_episodes, seed);
      monitor.EndWindow("eval");
      eval_mean = eval.mean_return;
      eval_std = eval.std_return;
      if (last) final_eval = eval;
      while (next_eval > 0 && steps >= next_eval) next_eval += eval_freq;
    }

    double ep_return = 0, ep_length = 0;
    for (const auto& e : episodes) {
      ep_return += e.episode_return;
      ep_length += static_cast<double>(e.episode_length);
      recent_returns.push_back(e.episode_return);
      if (recent_returns.size() > 100) recent_returns.pop_front();
    }
    double recent_mean = NAN;
    if (!recent_returns.empty()) {
      recent_mean = 0;
      for (double r : recent_returns) recent_mean += r;
      recent_mean /= static_cast<double>(recent_returns.size());
    }
    const double n_ep = static_cast<double>(episodes.size());
    row.clear();
    row.emplace_back("global_step", static_cast<double>(steps));
    row.emplace_back("time_s", 0.0);  // filled below
    row.emplace_back("charts/SPS", 0.0);
    row.emplace_back("charts/episodic_return", n_ep > 0 ? ep_return / n_ep : NAN);
    row.emplace_back("charts/episodic_length", n_ep > 0 ? ep_length / n_ep : NAN);
    row.emplace_back("rollout/ep_rew_mean", recent_mean);
    row.insert(row.end(), update_metrics.begin(), update_metrics.end());
    row.emplace_back("eval/mean_reward", eval_mean);
    row.emplace_back("eval/std_reward", eval_std);
    if (last) break;  // the last row is written after the final checkpoint, below

    const double elapsed_s = clock.NowS() - t0;
    row[1].second = elapsed_s;
    row[2].second = steps / elapsed_s;
    const energy::Measurement total = monitor.Total();
    energy_columns(total, elapsed_s, &row);
    metrics_csv.WriteRow(row);
    if (options.progress && elapsed_s - last_progress_s >= 0.25) {
      last_progress_s = elapsed_s;
      fmt::print(stderr,
                 "\r[greenrl] step {}/{}  {:.0f} steps/s  return {:.1f}  {:.1f} W  {:.4f} Wh   ",
                 steps, total_steps, steps / elapsed_s, recent_mean,
                 total.total_energy_j() / elapsed_s, total.total_energy_j() / kJoulesPerWh);
      std::fflush(stderr);
    }
  }
  if (options.progress) fmt::print(stderr, "\n");

  // --- Final checkpoint, then the figures every report shares (one reading).
  TrainResult result;
  result.checkpoint_path = run_dir + "/checkpoints/final.pt";
  algorithm->SaveCheckpoint(result.checkpoint_path);
  const double wall_time_s = clock.NowS() - t0;
  const double cpu_time_s = ProcessCpuSeconds() - cpu0;
  const energy::Measurement total = monitor.Total();
  row[1].second = wall_time_s;
  row[2].second = steps / wall_time_s;
  energy_columns(total, wall_time_s, &row);
  metrics_csv.WriteRow(row);

  report::RunReport& r = result.report;
  r.algo = algo_id;
  r.env_id = env_id;
  r.run_dir = run_dir;
  r.seed = seed;
  r.steps = steps;
  r.wall_time_s = wall_time_s;
  r.cpu_time_s = cpu_time_s;
  r.steps_per_s = steps / wall_time_s;
  r.eval_episodes = final_episodes;
  r.eval_mean_return = final_eval.mean_return;
  r.eval_std_return = final_eval.std_return;
  r.monitor_duration_s = total.duration_s;
  for (const auto& d : monitor.domains()) {
    const auto it = total.energy_j.find(d.domain);
    r.domains.push_back({d.domain, d.meter, energy::ToString(d.provenance),
                         energy::ToString(d.scope), it == total.energy_j.end() ? 0.0 : it->second});
  }
  for (const auto& [key, totals] : monitor.AllWindowTotals()) {
    r.windows.push_back({key, totals.count, totals.sum.duration_s, totals.sum.energy_j});
  }
  r.meter_reason = meter_reason;
  r.meter_details = meter_details;
  r.carbon = energy::ComputeCarbon(total.total_energy_j(), carbon_options);
  report::WriteEnergyJson(run_dir + "/energy.json", r);
  return result;
}

}  // namespace greenrl::train
