// greenrl_bench_soak: a long PPO CartPole run (default 1e7 env steps) through train::Train, as
// `greenrl train` runs it, printing resident memory (VmRSS) and the sizes of metrics.csv and
// power.csv at 1% steps of the run, then the RSS at start and end and how the files grew per
// step in the first and the second half (linear growth: the same bytes per step). A benchmark:
// it prints figures and asserts nothing (README "Checkpoints, resume and signals").
//
// Usage: greenrl_bench_soak [n_timesteps] [run_dir]   (run_dir default: /tmp/greenrl_soak)
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "greenrl/core/allocator.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace {

namespace fs = std::filesystem;

// VmRSS of this process, KiB (/proc/self/status).
long RssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

long long SizeOf(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<long long>(n);
}

struct Sample {
  long long steps;
  long rss_kib;
  long long metrics_bytes, power_bytes;
};

}  // namespace

int main(int argc, char** argv) {
  greenrl::KeepFreedMemory();  // as the greenrl binary
  const long long total = argc > 1 ? std::atoll(argv[1]) : 10000000LL;
  const std::string dir = argc > 2 ? argv[2] : "/tmp/greenrl_soak";
  fs::remove_all(dir);
  const greenrl::Config config = greenrl::train::LoadRunConfig(
      greenrl::SourceTreeDir() + "/configs/ppo/cartpole.yaml",
      {"n_timesteps=" + std::to_string(total), "eval.freq=0", "eval.final_episodes=10",
       "checkpoint_freq=1000000", "energy.meter=estimator"},
      0);
  const int64_t rollout = config.GetInt("n_envs") * config.GetInt("n_steps");
  const int64_t every = std::max<int64_t>(1, total / 100 / rollout);  // iterations per sample
  std::vector<Sample> samples;
  const long rss_start = RssKib();
  greenrl::train::TrainOptions options;
  options.out_dir = dir;
  options.verbose = false;
  options.before_update = [&](int64_t iteration, greenrl::algo::Algorithm&) {
    if (iteration % every == 0) {
      samples.push_back({iteration * rollout, RssKib(), SizeOf(dir + "/metrics.csv"),
                         SizeOf(dir + "/power.csv")});
    }
  };
  const auto result = greenrl::train::Train(config, std::move(options));
  const long rss_end = RssKib();
  fmt::print("{:>12} {:>10} {:>14} {:>12}\n", "global_step", "rss_kib", "metrics_bytes",
             "power_bytes");
  for (size_t i = 0; i < samples.size(); i += std::max<size_t>(1, samples.size() / 20)) {
    const Sample& s = samples[i];
    fmt::print("{:>12} {:>10} {:>14} {:>12}\n", s.steps, s.rss_kib, s.metrics_bytes, s.power_bytes);
  }
  const Sample& last = samples.back();
  const Sample& first = samples.front();
  const Sample& mid = samples[samples.size() / 2];
  auto per_step = [](const Sample& a, const Sample& b, long long Sample::*field) {
    return static_cast<double>(b.*field - a.*field) / static_cast<double>(b.steps - a.steps);
  };
  fmt::print("steps {}  wall {:.0f} s  {:.0f} steps/s\n", result.report.steps,
             result.report.wall_time_s, result.report.steps_per_s);
  fmt::print(
      "RSS start {} KiB (before the run), first sample {} KiB, last sample {} KiB, end {} "
      "KiB\n",
      rss_start, first.rss_kib, last.rss_kib, rss_end);
  fmt::print("metrics.csv bytes/step: first half {:.4f}, second half {:.4f}; final {} bytes\n",
             per_step(first, mid, &Sample::metrics_bytes),
             per_step(mid, last, &Sample::metrics_bytes), SizeOf(dir + "/metrics.csv"));
  fmt::print("power.csv bytes/step: first half {:.4f}, second half {:.4f}; final {} bytes\n",
             per_step(first, mid, &Sample::power_bytes), per_step(mid, last, &Sample::power_bytes),
             SizeOf(dir + "/power.csv"));
  return 0;
}
