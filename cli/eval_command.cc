// greenrl eval: reloads a run's config and final checkpoint (else its newest resume checkpoint)
// and runs deterministic (or, with --stochastic, sampled) episodes; prints their return, and their
// own energy and carbon as the run's energy.* and carbon.* keys measure and price them
// (train/work_energy.h).
#include <fmt/format.h>

#include <filesystem>

#include "cli/commands.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/registry.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"
#include "greenrl/train/work_energy.h"

namespace greenrl::cli {

namespace {
struct EvalArgs {
  std::string run_dir;
  int episodes = 10;
  std::optional<int64_t> seed;
  bool stochastic = false;  // sample actions instead of the policy's mode (rl-zoo's --stochastic)
};
}  // namespace

Runner RegisterEval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate a trained run's final checkpoint (else its newest resume checkpoint)");
  cmd->add_option("--run", args->run_dir, "run directory written by greenrl train")->required();
  cmd->add_option("--episodes", args->episodes, "deterministic episodes (default 10)");
  cmd->add_option("--seed", args->seed, "seed of the evaluation envs (default: the run's seed)")
      ->check(CLI::Range(int64_t{0}, int64_t{4294967295}));  // before CLI11 saturates 2^63
  cmd->add_flag("--stochastic", args->stochastic,
                "sample actions from the policy instead of taking its mode (rl-zoo's "
                "--stochastic; DQN: epsilon-greedy at its last exploration rate, as SB3's "
                "predict)");
  return [args]() {
    namespace fs = std::filesystem;
    if (args->episodes < 1) {
      throw ConfigError("--episodes", std::to_string(args->episodes), "an integer >= 1");
    }
    const std::string config_path = args->run_dir + "/config.yaml";
    // The finished run's final.pt; a run stopped by a signal, the energy budget's stop without
    // final.pt, or a crash has only resume checkpoints: the newest of them (rank 0's).
    std::string checkpoint = args->run_dir + "/checkpoints/final.pt";
    const bool final_checkpoint = fs::exists(checkpoint);
    if (!final_checkpoint) {
      const auto resume_checkpoints = train::ListCheckpoints(args->run_dir);
      checkpoint = resume_checkpoints.empty() ? "" : resume_checkpoints.back().second;
    }
    if (!fs::exists(config_path) || checkpoint.empty()) {
      throw ConfigError("--run", args->run_dir,
                        "a run directory with config.yaml and checkpoints/final.pt or a resume "
                        "checkpoint checkpoints/step_*.pt");
    }
    const Config config = train::LoadRunConfig(config_path, {}, args->seed);
    train::ConfigureThreads(static_cast<int>(config.GetInt("threads.torch")));
    const std::string env_id = config.GetString("env_id");
    auto algorithm = train::MakeAlgorithm(config, env::FindEnvSpec(env_id));
    // A run trained with normalize: true evaluates with its statistics, frozen: normalizer.json
    // beside final.pt, or the ones stored in the resume checkpoint itself.
    std::optional<train::NormalizerSnapshot> normalizer;
    if (final_checkpoint) {
      algorithm->LoadCheckpoint(checkpoint);
      if (config.GetBool("normalize")) {
        normalizer = train::LoadNormalizer(args->run_dir + "/checkpoints/normalizer.json");
      }
    } else {
      const train::TrainerState state = train::LoadResumeCheckpoint(algorithm.get(), checkpoint);
      if (config.GetBool("normalize")) {
        if (state.normalizer.empty()) {
          throw ConfigError("--run", args->run_dir,
                            "a run whose newest resume checkpoint (" + checkpoint +
                                ") holds the normaliser statistics (normalize: true)");
        }
        normalizer = train::NormalizerSnapshot{train::NormalizeOptionsFrom(config), state.normalizer};
      }
      fmt::print(stderr, "greenrl eval: {} has no checkpoints/final.pt; using its newest resume "
                 "checkpoint (step {})\n", args->run_dir, state.steps);
    }
    // The evaluation's own energy and carbon, with the run's energy.* and carbon.* keys.
    train::EvalResult r;
    const train::WorkEnergy cost = train::MeasureWork(config, [&] {
      r = train::EvaluatePolicy(
          *algorithm, env_id, args->episodes, static_cast<uint64_t>(config.GetInt("seed")),
          /*deterministic=*/!args->stochastic, normalizer ? &*normalizer : nullptr);
    });
    int64_t steps = 0;
    for (const int64_t length : r.lengths) steps += length;
    fmt::print("greenrl eval: {} on {} from {}\n", config.GetString("algo"), env_id, checkpoint);
    fmt::print("  return         {} ± {} over {} {} episodes\n",
               report::FixedNoNegativeZero(r.mean_return, 2),
               report::FixedNoNegativeZero(r.std_return, 2), args->episodes,
               args->stochastic ? "stochastic" : "deterministic");
    fmt::print("  steps          {}\n", steps);
    fmt::print("  wall time      {:.2f} s (CPU {:.2f} s)\n", cost.duration_s, cost.cpu_time_s);
    fmt::print("{}{}", report::FormatEnergyLines(cost.domains, cost.meter_reason),
               report::FormatCarbonLines(cost.carbon));
    return 0;
  };
}

}  // namespace greenrl::cli
