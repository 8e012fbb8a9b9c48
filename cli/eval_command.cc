// greenrl eval: reloads a run's config and final checkpoint (else its newest resume checkpoint)
// and runs deterministic (or, with --stochastic, sampled) episodes; prints their return, and their
// own energy and carbon as the run's energy.* and carbon.* keys measure and price them
// (train/work_energy.h).
#include <fmt/format.h>

#include "cli/commands.h"
#include "greenrl/core/errors.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/evaluate.h"
#include "greenrl/train/trained_agent.h"
#include "greenrl/train/work_energy.h"

namespace greenrl::cli {

namespace {
struct EvalArgs {
  std::string run_dir;
  int64_t episodes = 10;
  std::optional<int64_t> seed;
  bool stochastic = false;  // sample actions instead of the policy's mode (rl-zoo's --stochastic)
  bool best = false;        // checkpoints/best.pt (rl-zoo's --load-best)
  std::string checkpoint;   // a resume checkpoint's step, or last (rl-zoo's --load-checkpoint)
  bool quiet = false;       // no energy-meter line on stderr (train's --quiet)
};
}  // namespace

Runner RegisterEval(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Evaluate a trained run's final checkpoint (else its newest resume checkpoint)");
  cmd->add_option("--run", args->run_dir, "run directory written by greenrl train")->required();
  cmd->add_option("--episodes", args->episodes,
                  "episodes to run (default 10), deterministic unless --stochastic");
  cmd->add_option("--seed", args->seed, "seed of the evaluation envs (default: the run's seed)")
      ->check(CLI::Range(int64_t{0}, int64_t{4294967295}));  // before CLI11 saturates 2^63
  CLI::Option* stochastic = cmd->add_flag(
      "--stochastic", args->stochastic,
      "sample actions from the policy instead of taking its mode (rl-zoo's --stochastic; DQN: "
      "epsilon-greedy at its last exploration rate, as SB3's predict)");
  // rl-zoo's enjoy.py takes --deterministic too; it is greenrl's default, so it changes nothing.
  cmd->add_flag("--deterministic", "take the policy's mode: the default (rl-zoo's --deterministic)")
      ->excludes(stochastic);
  cmd->add_flag("--best", args->best,
                "the policy of the run's best evaluation, checkpoints/best.pt (eval.save_best; "
                "rl-zoo's --load-best)");
  CLI::Option* checkpoint_option = cmd->add_option(
      "--checkpoint", args->checkpoint,
      "a resume checkpoint instead: its step (checkpoints/step_<STEP, 12 digits>.pt, rl-zoo's "
      "--load-checkpoint) or last (the newest, rl-zoo's --load-last-checkpoint)");
  cmd->add_flag("--quiet", args->quiet,
                "nothing on stderr: no energy-meter line (the summary's meter line then gives its "
                "whole text) and no notes on the checkpoint loaded (as train --quiet)");
  return [args, checkpoint_option]() {
    // A flag given an empty value is refused, not read as absent.
    if (checkpoint_option->count() > 0 && args->checkpoint.empty()) {
      throw ConfigError("--checkpoint", "",
                        "a step of one of the run's resume checkpoints, or last");
    }
    // Every episode runs in its own env at once (evaluate.h): the bound of eval.episodes keeps
    // the memory of a MuJoCo evaluation in reach (a Hopper env is about 375 KB).
    if (args->episodes < 1 || args->episodes > 10000) {
      throw ConfigError("--episodes", std::to_string(args->episodes),
                        "an integer in [1, 10000] (eval.episodes' range)");
    }
    const train::TrainedAgent agent =
        train::LoadTrainedAgent(args->run_dir, args->seed, args->best, args->checkpoint);
    const Config& config = agent.config;
    const std::string env_id = config.GetString("env_id");
    // --quiet, as train's: no notes on stderr (stdout's first line names the checkpoint).
    for (const std::string& note : agent.notes) {
      if (!args->quiet) fmt::print(stderr, "greenrl: {}\n", note);
    }
    if (!args->quiet && !agent.final_checkpoint && args->checkpoint.empty()) {
      fmt::print(stderr, "greenrl eval: {}\n", train::ResumeCheckpointNotice(args->run_dir, agent));
    }
    // The evaluation's own energy and carbon, with the run's energy.* and carbon.* keys.
    train::EvalResult r;
    const train::WorkEnergy cost = train::MeasureWork(config, [&] {
      r = train::EvaluatePolicy(*agent.algorithm, env_id, static_cast<int>(args->episodes),
                                static_cast<uint64_t>(config.GetInt("seed")),
                                /*deterministic=*/!args->stochastic,
                                agent.normalizer ? &*agent.normalizer : nullptr);
    });
    int64_t steps = 0;
    for (const int64_t length : r.lengths) steps += length;
    fmt::print("greenrl eval: {} on {} from {}\n", config.GetString("algo"), env_id,
               agent.checkpoint);
    fmt::print("  return         {} ± {} over {} {} episode{}\n",
               report::FixedNoNegativeZero(r.mean_return, 2),
               report::FixedNoNegativeZero(r.std_return, 2), args->episodes,
               args->stochastic ? "stochastic" : "deterministic", args->episodes == 1 ? "" : "s");
    // The mean episode length (SB3's EvalCallback logs it, eval/mean_ep_length): for Hopper or
    // Walker2d it tells standing from falling where the return alone may not.
    fmt::print("  steps          {} (mean episode length {:.1f})\n", steps,
               r.lengths.empty()
                   ? 0.0
                   : static_cast<double>(steps) / static_cast<double>(r.lengths.size()));
    // A normalize: true run's policy acts on normalised observations: said, as export says it.
    if (agent.normalizer && agent.normalizer->options.norm_obs) {
      fmt::print("  observations   normalised by the run's VecNormalize statistics (frozen)\n");
    }
    fmt::print("{}", report::FormatNonFiniteOutputsLine(r.non_finite_outputs));
    // Two decimals, or two significant digits below 0.01 s (a short evaluation is milliseconds;
    // "0.00 s" beside a nonzero energy read as a contradiction).
    auto seconds = [](double s) {
      return s >= 0.01 || s == 0.0 ? fmt::format("{:.2f}", s) : fmt::format("{:.2g}", s);
    };
    fmt::print("  wall time      {} s (CPU {} s)\n", seconds(cost.duration_s),
               seconds(cost.cpu_time_s));
    // As a training run's: the meters' why and how-to-fix once on stderr, the summary names them;
    // with --quiet, no stderr line and the summary gives the whole text.
    if (!args->quiet) fmt::print(stderr, "greenrl: energy meter: {}\n", cost.meter_reason);
    fmt::print(
        "{}{}",
        report::FormatEnergyLines(
            cost.domains,
            args->quiet ? cost.meter_reason
                        : cost.meter_brief + " (why: the 'greenrl: energy meter' line on stderr)"),
        report::FormatCarbonLines(cost.carbon));
    return 0;
  };
}

}  // namespace greenrl::cli
