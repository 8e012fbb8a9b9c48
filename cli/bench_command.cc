// greenrl bench: trains a preset for several seeds and prints wall time, steps/s, CPU seconds
// and the final evaluation return per seed, then the medians. A benchmark, not a test: it
// prints figures and asserts nothing.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "cli/commands.h"
#include "greenrl/core/errors.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::cli {

namespace {
struct BenchArgs {
  std::string name;
  int seeds = 5;
  std::optional<int64_t> steps;
  std::string config_dir = "configs";
  std::string out;
  std::vector<std::string> sets;
};

// Benchmark name -> preset path relative to the configs dir.
const std::map<std::string, std::string>& Benchmarks() {
  static const std::map<std::string, std::string> b = {{"ppo-cartpole", "ppo/cartpole.yaml"}};
  return b;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

Runner RegisterBench(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Benchmark a preset over several seeds");
  cmd->add_option("name", args->name, "benchmark: ppo-cartpole")->required();
  cmd->add_option("--seeds", args->seeds, "seeds 0..N-1 (default 5)");
  cmd->add_option("--steps", args->steps, "env steps per seed (default: the preset's n_timesteps)");
  cmd->add_option("--configs", args->config_dir, "presets folder (default configs)");
  cmd->add_option("--out", args->out,
                  "keep the runs under this folder (default: a temp folder, removed)");
  cmd->add_option("--set", args->sets, "override a preset key: --set key=value (repeatable)");
  return [args]() {
    namespace fs = std::filesystem;
    const auto it = Benchmarks().find(args->name);
    if (it == Benchmarks().end()) throw ConfigError("name", args->name, "one of: ppo-cartpole");
    if (args->seeds < 1)
      throw ConfigError("--seeds", std::to_string(args->seeds), "an integer >= 1");
    const std::string preset = args->config_dir + "/" + it->second;
    std::vector<std::string> sets = args->sets;
    if (args->steps) sets.push_back("n_timesteps=" + std::to_string(*args->steps));
    // Validate once before the first run.
    const Config probe = train::LoadRunConfig(preset, sets, 0);
    const bool keep = !args->out.empty();
    const std::string base =
        keep ? args->out
             : (fs::temp_directory_path() / ("greenrl-bench-" + std::to_string(::getpid())))
                   .string();
    const double threshold = 475.0;  // CartPole-v1 reward_threshold (Gymnasium registry)
    fmt::print(
        "greenrl bench {}: {} seeds x {} steps, preset {} (threads.torch {}, threads.env {})\n",
        args->name, args->seeds, probe.GetInt("n_timesteps"), preset, probe.GetInt("threads.torch"),
        probe.GetInt("threads.env"));
    fmt::print("{:>5} {:>10} {:>10} {:>10} {:>16} {:>12} {:>13}\n", "seed", "wall_s", "steps/s",
               "cpu_s", "eval_return", "energy_wh", "sampler_cpu%");
    std::vector<double> walls, sps, cpus, returns;
    int solved = 0;
    for (int seed = 0; seed < args->seeds; ++seed) {
      const Config config = train::LoadRunConfig(preset, sets, seed);
      train::TrainOptions options;
      options.out_dir = base + "/seed" + std::to_string(seed);
      options.verbose = false;
      fs::remove_all(options.out_dir);
      const train::TrainResult result = train::Train(config, std::move(options));
      const report::RunReport& r = result.report;
      // Sampler overhead: CPU time of the power-sampling thread over the run's CPU time.
      const double sampler_pct =
          r.cpu_time_s > 0 ? 100.0 * r.sampler.cpu_time_s / r.cpu_time_s : 0.0;
      fmt::print("{:>5} {:>10.2f} {:>10.0f} {:>10.2f} {:>8.1f} ± {:<5.1f} {:>12.5f} {:>13.4f}\n",
                 seed, r.wall_time_s, r.steps_per_s, r.cpu_time_s, r.eval_mean_return,
                 r.eval_std_return, r.total_energy_j() / 3600.0, sampler_pct);
      std::fflush(stdout);
      walls.push_back(r.wall_time_s);
      sps.push_back(r.steps_per_s);
      cpus.push_back(r.cpu_time_s);
      returns.push_back(r.eval_mean_return);
      if (r.eval_mean_return >= threshold) ++solved;
    }
    fmt::print("{:>5} {:>10.2f} {:>10.0f} {:>10.2f} {:>8.1f}\n", "med", Median(walls), Median(sps),
               Median(cpus), Median(returns));
    fmt::print("seeds with mean eval return >= {:g}: {} of {}\n", threshold, solved, args->seeds);
    if (!keep) fs::remove_all(base);
    return 0;
  };
}

}  // namespace greenrl::cli
