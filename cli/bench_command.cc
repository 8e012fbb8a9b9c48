// greenrl bench: trains a preset for several seeds and prints wall time, steps/s, CPU seconds
// and the final evaluation return per seed, then the medians. A benchmark, not a test: it
// prints figures and asserts nothing.
#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/presets.h"
#include "greenrl/core/cpu_info.h"
#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/openblas_core.h"
#include "greenrl/core/schedule.h"
#include "greenrl/energy/units.h"
#include "greenrl/env/registry.h"
#include "greenrl/nn/actor_critic.h"
#include "greenrl/nn/fused_mlp.h"
#include "greenrl/nn/small_gemm.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/signals.h"
#include "greenrl/train/trainer.h"

namespace greenrl::cli {

namespace {
struct BenchArgs {
  std::string name;
  int seeds = 5;
  std::optional<std::string> steps;  // as given: "100000" or "1e5" (internal::ParseYamlInt)
  std::string config_dir;  // --configs; empty: DefaultConfigDir()
  std::string out;
  std::vector<std::string> sets;
};

// A benchmark: its preset (path relative to the configs dir), the mean eval return a seed must
// reach to count as solved, and the algo and env its threshold and GFLOP/s model are for.
struct Benchmark {
  std::string preset;
  double threshold;
  std::string algo, env_id;
};

// Thresholds: CartPole-v1's reward_threshold 475 (Gymnasium registry); Pendulum-v1 has none:
// -200 for SAC (the project's target; rl-zoo's SAC reaches about -150 to -200) and rl-zoo's PPO
// result at 1e5 steps, -172.2 (benchmark.md), for PPO; MountainCarContinuous-v0's
// reward_threshold 90 (Gymnasium registry; rl-zoo's SAC: 94.68 +- 1.13 at 5e4 steps).
const std::map<std::string, Benchmark>& Benchmarks() {
  static const std::map<std::string, Benchmark> b = {
      {"ppo-cartpole", {"ppo/cartpole.yaml", 475.0, "ppo", "CartPole-v1"}},
      {"ppo-pendulum", {"ppo/pendulum.yaml", -172.2, "ppo", "Pendulum-v1"}},
      {"dqn-cartpole", {"dqn/cartpole.yaml", 475.0, "dqn", "CartPole-v1"}},
      {"sac-pendulum", {"sac/pendulum.yaml", -200.0, "sac", "Pendulum-v1"}},
      {"sac-mountaincarcontinuous",
       {"sac/mountaincarcontinuous.yaml", 90.0, "sac", "MountainCarContinuous-v0"}}};
  return b;
}

// "a, b, c" of the benchmarks' names.
std::string BenchmarkNames() {
  std::string names;
  for (const auto& [name, bench] : Benchmarks()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

// The floor: the GEMM rate this machine reaches, in the same run, on the update's dominant
// product (the minibatch's rows through the first hidden-to-hidden layer, [rows, k] x [k, n]),
// on the kernels the run's update path uses: for the fused float32 path the faster of BLAS
// sgemm and greenrl's SmallGemm (nn/small_gemm.h; FusedMlp::RunSmallGemm picks between them),
// for the autograd path LibTorch's mm in the run's dtype (bf16 as autocast runs it). GFLOP/s,
// the best of 15 timings of at least 5 ms each after a warm-up (one short timing on a busy
// machine swung 31-214 GFLOP/s), and what was timed, for the header.
struct GemmFloor {
  double gflops = 0.0;
  std::string what;
};
GemmFloor MeasureGemmFloor(bool autograd, bool bf16, int m, int k, int n) {
  const double flops_per_product = 2.0 * m * n * k;
  auto best_gflops = [&](const auto& product) {
    for (int r = 0; r < 20; ++r) product();  // warm-up: caches, BLAS buffers, clock ramp
    // Products per timing: enough for 5 ms at the rate of one warm product.
    const auto w0 = std::chrono::steady_clock::now();
    product();
    const double one_s = std::max(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count(), 1e-7);
    const int reps = static_cast<int>(std::clamp(0.005 / one_s, 20.0, 1e6));
    double best_s = 1e30;
    for (int t = 0; t < 15; ++t) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) product();
      best_s = std::min(
          best_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return flops_per_product * reps / best_s / 1e9;
  };
  const std::string shape = fmt::format("[{},{}]x[{},{}]", m, k, k, n);
  if (autograd) {
    const auto dtype = bf16 ? torch::kBFloat16 : torch::kFloat32;
    auto a = torch::rand({m, k}).to(dtype);
    auto b = torch::rand({k, n}).to(dtype);
    return {
        best_gflops([&] { torch::mm(a, b); }),
        fmt::format("torch::mm {} {}, the autograd path's kernel", bf16 ? "bf16" : "fp32", shape)};
  }
  std::vector<float> a(static_cast<size_t>(m) * k, 0.5f), b(static_cast<size_t>(k) * n, 0.25f),
      c(static_cast<size_t>(m) * n, 0.0f);
  const double blas = best_gflops([&] {
    nn::blas::Sgemm('N', 'N', n, m, k, 1.0f, b.data(), n, a.data(), k, 0.0f, c.data(), n);
  });
  nn::SmallGemmArgs g;  // C [m, n] = A [m, k] B [k, n], row-major
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = a.data();
  g.a_row_stride = k;
  g.b = b.data();
  g.ldb = n;
  g.c = c.data();
  g.ldc = n;
  const double small = best_gflops([&] { nn::SmallGemm(g); });
  return {std::max(blas, small),
          fmt::format("{}, the faster of sgemm {:.1f} and SmallGemm {:.1f}", shape, blas, small)};
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
  cmd->add_option("benchmark", args->name, "one of: " + BenchmarkNames())->required();
  cmd->add_option("--seeds", args->seeds, "seeds 0..N-1 (default 5)");
  cmd->add_option("--steps", args->steps,
                  "env steps per seed, e.g. 100000 or 1e5 (default: the preset's n_timesteps)");
  cmd->add_option("--configs", args->config_dir,
                  "presets folder (default: ./configs, else an installed greenrl's "
                  "share/greenrl/configs, else the source tree's)");
  cmd->add_option("--out", args->out,
                  "keep the runs under this folder (default: a temp folder, removed)");
  cmd->add_option("--set", args->sets, "override a preset key: --set key=value (repeatable)");
  return [args]() {
    namespace fs = std::filesystem;
    const auto it = Benchmarks().find(args->name);
    if (it == Benchmarks().end()) {
      std::vector<std::string> names;
      for (const auto& [name, bench] : Benchmarks()) names.push_back(name);
      throw ConfigError("benchmark", args->name, OneOfWithHint(args->name, names));
    }
    // One process's figures: under a launcher each rank would time its share of a data-parallel
    // job (rank 1's row all zeros) and rank 0 the whole job's CPU seconds.
    // Read before the launcher's other variables are checked (a missing MASTER_ADDR is moot).
    // A size without its rank (an allocation's shell) is no launch (dist::ReadDistEnv).
    for (const auto& [variable, rank] :
         {std::pair<const char*, const char*>{"WORLD_SIZE", "WORLD_SIZE"},
          {"SLURM_NTASKS", "SLURM_PROCID"},
          {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}}) {
      const char* value = std::getenv(variable);
      if (value != nullptr && std::getenv(rank) != nullptr && std::atoll(value) > 1) {
        throw ConfigError(variable, value,
                          "1 (a launcher's variable): greenrl bench times one process; run it "
                          "without a launcher");
      }
    }
    if (args->seeds < 1)
      throw ConfigError("--seeds", std::to_string(args->seeds), "an integer >= 1");
    const std::string config_dir = args->config_dir.empty() ? DefaultConfigDir() : args->config_dir;
    const std::string preset = config_dir + "/" + it->second.preset;
    if (!fs::is_regular_file(preset)) {
      throw ConfigError(
          "--configs", config_dir,
          "a presets folder holding " + it->second.preset +
              " (default: ./configs, else <prefix>/share/greenrl/configs of an installed "
              "greenrl, else " +
              SourceTreeDir() + "/configs)");
    }
    std::optional<int64_t> steps;
    if (args->steps) {
      steps = internal::ParseYamlInt(*args->steps);
      if (!steps || *steps < 1) {
        throw ConfigError("--steps", *args->steps,
                          "an integer >= 1 (env steps), e.g. 100000 or 1e5");
      }
    }
    // The bench's name fixes the preset's algo and env (its threshold and GFLOP/s model are
    // theirs) and --seeds the seeds: such a --set would be ignored or mislabelled.
    for (const std::string& set : args->sets) {
      for (const char* key : {"seed", "algo", "env_id"}) {
        if (set.rfind(std::string(key) + "=", 0) == 0) {
          throw ConfigError("--set", set,
                            std::string("a key other than ") + key +
                                ": the bench's name fixes algo and env_id, and --seeds N runs "
                                "seeds 0..N-1 (greenrl train trains other ones)");
        }
      }
    }
    // --steps and --set n_timesteps= at once must agree (as train's --seed and --set seed=).
    for (const std::string& set : args->sets) {
      if (steps && set.rfind("n_timesteps=", 0) == 0 &&
          internal::ParseYamlInt(set.substr(12)) != steps) {
        throw ConfigError("--steps", *args->steps,
                          "the same value as --set " + set + ", or only one of the two");
      }
    }
    // A kept --out must be new or empty (the rule of train's --out): the seeds' runs go in it.
    if (!args->out.empty()) {
      train::RequireNewOrEmptyDir(args->out);
      std::error_code made;  // made now, so a path that cannot be one fails before any work
      fs::create_directories(args->out, made);
      if (made) {
        throw ConfigError("--out", args->out,
                          "a directory that can be created (" + made.message() + ")");
      }
    }
    std::vector<std::string> sets = args->sets;
    if (steps) sets.push_back("n_timesteps=" + std::to_string(*steps));
    // Validate once before the first run.
    const Config probe = train::LoadRunConfig(preset, sets, 0);
    // A presets folder of one's own (--configs) must hold this benchmark's algo and env: its
    // threshold and GFLOP/s model are theirs.
    for (const auto& [key, want] :
         {std::pair<const char*, const std::string&>{"algo", it->second.algo},
          {"env_id", it->second.env_id}}) {
      if (probe.GetString(key) != want) {
        throw ConfigError(
            "--configs", config_dir,
            fmt::format("a presets folder whose {} has {} {} for {} (it has {})", it->second.preset,
                        key, want, args->name, probe.GetString(key)));
      }
    }
    const bool keep = !args->out.empty();
    const std::string base =
        keep ? args->out
             : (fs::temp_directory_path() / ("greenrl-bench-" + std::to_string(::getpid())))
                   .string();
    const double threshold = it->second.threshold;
    // The GEMM-floor and GFLOP/s columns model PPO's CartPole minibatch update only, every epoch
    // run (with target_kl > 0 an iteration may stop its epochs early: "-" then).
    const bool ppo = args->name == "ppo-cartpole" && probe.GetFloat("target_kl") <= 0.0;
    // The env threads the trainer will use (threads.env is an upper bound, env::EnvThreadsFor).
    const int env_threads_asked = static_cast<int>(probe.GetInt("threads.env"));
    const int env_threads = env::EnvThreadsFor(
        probe.GetString("env_id"), static_cast<int>(probe.GetInt("n_envs")), env_threads_asked);
    const std::optional<double> stop_threshold = train::RewardThresholdFrom(probe);
    fmt::print(
        "greenrl bench {}: {} seed{}, n_timesteps {} (a run ends with the iteration that reaches "
        "it{}), preset {} (threads.torch {}, threads.env {}{}, threads.update {})\n",
        args->name, args->seeds, args->seeds == 1 ? "" : "s", probe.GetInt("n_timesteps"),
        stop_threshold ? fmt::format(", or earlier at the first periodic eval with a mean reward "
                                     ">= eval.reward_threshold {}",
                                     *stop_threshold)
                       : std::string(),
        preset, probe.GetInt("threads.torch"), env_threads_asked,
        env_threads < env_threads_asked
            ? fmt::format(": {} used for {} envs", env_threads, probe.GetInt("n_envs"))
            : std::string(),
        probe.schema().Find("threads.update") != nullptr ? probe.GetInt("threads.update") : 1);
    // DQN and SAC: runs too short to pass learning_starts make no gradient step (`greenrl train`
    // warns; the bench's runs are quiet), said once here.
    if (probe.schema().Find("learning_starts") != nullptr) {
      const int64_t block = probe.GetInt("train_freq") * probe.GetInt("n_envs");
      const int64_t last = train::RunLastStep(probe, 1);  // one process
      if (probe.GetInt("learning_starts") >= last) {
        fmt::print(
            "note: learning_starts {} is not below the runs' last step {} (whole blocks of "
            "train_freq * n_envs = {} steps): no seed makes a gradient step\n",
            probe.GetInt("learning_starts"), last, block);
      }
    }
    // The runs are quiet: `greenrl train`'s busy-wait warning (threads.torch above 1 with
    // OpenMP's idle threads spinning), said once here, as it changes every cpu_s and energy_wh.
    const std::string spin = SpinningOpenMpWarning(static_cast<int>(probe.GetInt("threads.torch")));
    if (!spin.empty()) fmt::print("note: {}\n", spin);
    if (!ppo) {
      fmt::print(
          "note: update_GFLOP/s is -: its FLOP model covers ppo-cartpole's update with every "
          "epoch run ({})\n",
          args->name == "ppo-cartpole" ? fmt::format("target_kl {} may stop an iteration's epochs "
                                                     "early",
                                                     probe.GetFloat("target_kl"))
                                       : args->name + " is another benchmark");
    }
    fmt::print("cpu: {}\n", DescribeCpu(ThisCpu(), std::thread::hardware_concurrency()));
    fmt::print("blas: {}\n", DescribeBlas());
    std::fflush(stdout);  // the header before the first seed's minutes, also through a pipe
    double flops_per_row = 0.0, floor_gflops = 0.0;
    int64_t rollout = 1;  // n_steps * n_envs
    if (ppo) {
      // Matrix FLOPs of one PPO minibatch update (actor and critic), for the achieved rate.
      nn::ActorCriticSpec spec;
      spec.obs_dim = 4;  // CartPole-v1
      spec.num_actions = 2;
      spec.pi_arch.clear();
      spec.vf_arch.clear();
      for (int64_t h : probe.GetIntList("policy_kwargs.net_arch.pi"))
        spec.pi_arch.push_back(static_cast<int>(h));
      for (int64_t h : probe.GetIntList("policy_kwargs.net_arch.vf"))
        spec.vf_arch.push_back(static_cast<int>(h));
      // An epoch's minibatches are SB3's slices of the rollout: batch_size rows each, the last
      // one the remainder, and one of the whole rollout when batch_size is above it. The FLOPs
      // are linear in the rows, so an epoch costs the rollout's rows' worth.
      rollout = probe.GetInt("n_steps") * probe.GetInt("n_envs");
      const int64_t batch = std::min<int64_t>(probe.GetInt("batch_size"), rollout);
      flops_per_row =
          static_cast<double>(spec.actor_spec().UpdateFlops(1) + spec.critic_spec().UpdateFlops(1));
      const int64_t full = rollout / batch, rest = rollout % batch;
      const std::string precision = probe.GetString("precision");
      // The floor runs on the BLAS threads the training runs get (Train sets the same); left at
      // OpenMP's default (all cores), OpenBLAS splits this small product and reaches about half
      // the one-thread rate (measured on a 2-core Xeon, 2026-12-02: 55 against 113 GFLOP/s).
      train::ConfigureThreads(static_cast<int>(probe.GetInt("threads.torch")));
      // The update path as PPO resolves it: fused for fp32 on the CPU unless asked otherwise.
      const bool autograd = precision != "fp32" || probe.GetString("update_path") == "autograd";
      const int k = spec.pi_arch.empty() ? 4 : spec.pi_arch[0];
      const int n = spec.pi_arch.size() > 1 ? spec.pi_arch[1] : k;
      const GemmFloor floor =
          MeasureGemmFloor(autograd, precision == "bf16", static_cast<int>(batch), k, n);
      floor_gflops = floor.gflops;
      fmt::print(
          "precision {}: one minibatch update ({} rows) = {:.2f} MFLOP of matrix products, {} "
          "per epoch{}; GEMM floor on this machine {:.1f} GFLOP/s ({})\n",
          precision, batch, flops_per_row * static_cast<double>(batch) / 1e6, full,
          rest > 0 ? fmt::format(" and one of {} rows", rest) : std::string(), floor_gflops,
          floor.what);
    }
    // `solved`: whether the seed's unrounded mean eval return reaches the threshold, the count
    // the last line gives (eval_return is printed to 0.1: 474.96 shows as 475.0 and is not).
    fmt::print("{:>5} {:>9} {:>10} {:>10} {:>10} {:>16} {:>6} {:>12} {:>13} {:>14}\n", "seed",
               "steps", "wall_s", "steps/s", "cpu_s", "eval_return", "solved", "energy_wh",
               "meter_cpu%", "update_GFLOP/s");
    std::fflush(stdout);
    std::vector<double> walls, sps, cpus, returns, gflops;
    int solved = 0;
    std::vector<std::string> over_budget;  // "seed S by X Wh" for each seed over its budget
    double budget_wh = 0.0;
    int not_evaluated = 0;     // seeds without a final evaluation (a budget stop): n/a, not 0.0
    std::string meter_reason;  // the first seed's: what energy_wh is (measured or estimated)
    // SIGINT/SIGTERM: the running seed finishes its iteration and writes its reports and resume
    // checkpoint, as `greenrl train` does (signals.h); no later seed starts, the seeds done are
    // summed up, a temp folder is removed, and the bench exits 128 + signal.
    train::StopSignalScope signals;
    for (const std::string& note : train::IgnoredStopSignalNotes(signals, "bench")) {
      fmt::print(stderr, "{}\n", note);
    }
    int stop_signal = 0;
    for (int seed = 0; seed < args->seeds && stop_signal == 0; ++seed) {
      const Config config = train::LoadRunConfig(preset, sets, seed);
      const std::string out_dir = base + "/seed" + std::to_string(seed);
      train::TrainOptions options;
      options.out_dir = out_dir;
      options.verbose = false;
      options.handle_signals = true;
      fs::remove_all(out_dir);
      const train::TrainResult result = train::Train(config, std::move(options));
      if (result.interrupted) {
        stop_signal = result.stop_signal;
        fmt::print("seed {} stopped by signal {} at step {}{}; no later seed runs\n", seed,
                   stop_signal, result.report.steps,
                   keep ? fmt::format(" (its run, resumable: {})", out_dir) : std::string());
        break;
      }
      const report::RunReport& r = result.report;
      // Meter overhead: CPU time of the power-sampling thread over the run's CPU time.
      const double sampler_pct =
          r.cpu_time_s > 0 ? 100.0 * r.sampler.cpu_time_s / r.cpu_time_s : 0.0;
      // Achieved rate of the update window: iterations x epochs x the rollout's rows x FLOPs
      // per row, over its wall time.
      double update_s = 0.0;
      for (const auto& w : r.windows) {
        if (w.key == "update") update_s = w.duration_s;
      }
      double update_gflops = 0.0;
      if (ppo) {
        const double rows = static_cast<double>(r.steps / rollout * rollout) *
                            static_cast<double>(probe.GetInt("n_epochs"));
        update_gflops = update_s > 0 ? rows * flops_per_row / update_s / 1e9 : 0;
      }
      gflops.push_back(update_gflops);
      if (meter_reason.empty()) meter_reason = r.meter_reason;
      // A seed the energy budget stopped has no final evaluation: its return is "n/a", not a
      // return of 0, and it is in neither the median nor the solved count.
      const bool evaluated = r.eval_episodes > 0;
      const std::string eval_return =
          evaluated
              ? fmt::format("{:>8} ± {:<5}", report::FixedNoNegativeZero(r.eval_mean_return, 1),
                            report::FixedNoNegativeZero(r.eval_std_return, 1))
              : fmt::format("{:>16}", r.budget.stopped ? "n/a (budget)" : "n/a");
      // The GFLOP/s column is modelled for ppo-cartpole only; "-" elsewhere (not a 0 rate).
      fmt::print("{:>5} {:>9} {:>10.2f} {:>10.0f} {:>10.2f} {} {:>6} {:>12.5f} {:>13.4f} {:>14}\n",
                 seed, r.steps, r.wall_time_s, r.steps_per_s, r.cpu_time_s, eval_return,
                 !evaluated                        ? "-"
                 : r.eval_mean_return >= threshold ? "yes"
                                                   : "no",
                 r.total_energy_j() / energy::kJoulesPerWh, sampler_pct,
                 ppo ? fmt::format("{:.1f}", update_gflops) : std::string("-"));
      std::fflush(stdout);
      walls.push_back(r.wall_time_s);
      sps.push_back(r.steps_per_s);
      cpus.push_back(r.cpu_time_s);
      if (evaluated) returns.push_back(r.eval_mean_return);
      if (!evaluated) ++not_evaluated;
      if (evaluated && r.eval_mean_return >= threshold) ++solved;
      if (const double over_wh = report::OverBudgetWh(r); over_wh > 0.0) {
        over_budget.push_back(fmt::format("seed {} by {:.4g} Wh", seed, over_wh));
        budget_wh = r.budget.budget_wh;
      }
      // A signal the seed finished despite (in its last iteration), or one that came after it,
      // still stops the bench.
      const int pending =
          result.late_stop_signal != 0 ? result.late_stop_signal : train::StopSignalReceived();
      if (pending != 0) {
        stop_signal = pending;
        fmt::print("seed {}: signal {} arrived {}; no later seed runs\n", seed, stop_signal,
                   result.late_stop_signal != 0
                       ? "after its last iteration had begun, so it finished"
                       : "after it had finished");
      }
    }
    const int done = static_cast<int>(walls.size());
    if (done > 0) {
      fmt::print("{:>5} {:>9} {:>10.2f} {:>10.0f} {:>10.2f} {:>8}\n", "med", "", Median(walls),
                 Median(sps), Median(cpus),
                 returns.empty() ? "n/a" : report::FixedNoNegativeZero(Median(returns), 1));
      if (ppo) {
        fmt::print("update: median {:.1f} GFLOP/s = {:.0f}% of the {:.1f} GFLOP/s GEMM floor\n",
                   Median(gflops), 100.0 * Median(gflops) / floor_gflops, floor_gflops);
      }
    }
    fmt::print(
        "seeds with mean eval return >= {:g}: {} of {}{}{}\n", threshold, solved, done,
        done < args->seeds ? fmt::format(" finished ({} asked)", args->seeds) : std::string(),
        not_evaluated > 0
            ? fmt::format(" ({} without a final evaluation, n/a above, counted as not solved)",
                          not_evaluated)
            : std::string());
    // A seed whose energy went past energy.budget_wh (the train summary's "over it").
    if (!over_budget.empty()) {
      fmt::print("seeds over the energy budget of {:.6g} Wh (energy_wh above): {}\n", budget_wh,
                 fmt::join(over_budget, ", "));
    }
    // What energy_wh is: measured by a counter, or the CPU-time estimator's estimate.
    if (!meter_reason.empty()) fmt::print("energy_wh metered by: {}\n", meter_reason);
    std::fflush(stdout);
    if (!keep) fs::remove_all(base);
    return stop_signal != 0 ? 128 + stop_signal : 0;
  };
}

}  // namespace greenrl::cli
