// greenrl train: loads and validates the config, trains, prints the summary.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "greenrl/core/errors.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/signals.h"
#include "greenrl/train/trainer.h"

namespace greenrl::cli {

namespace {
struct TrainArgs {
  std::string config_path;
  std::vector<std::string> sets;
  std::optional<int64_t> seed;
  std::string out;
  bool quiet = false;
  std::string resume;
};
// A resume continues the saved envs, so n_envs cannot change; checked before the overrides are
// validated (a smaller n_envs would first fail batch_size's bound, a larger one the env state's
// size, neither naming n_envs).
// Errors: ConfigError("n_envs", value, ...) for an --set n_envs=V other than the run's own.
void RefuseNEnvsChange(const std::string& run_dir, const std::vector<std::string>& sets) {
  const Config saved = train::LoadRunConfig(run_dir + "/config.yaml", {}, std::nullopt);
  const int64_t n_envs = saved.GetInt("n_envs");
  for (const std::string& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos || set.substr(0, eq) != "n_envs") continue;
    const std::string value = set.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && *end == '\0' && v == static_cast<double>(n_envs)) continue;
    throw ConfigError("n_envs", value,
                      "the run's own " + std::to_string(n_envs) +
                          ": a resume continues the saved envs, so n_envs cannot change");
  }
}

}  // namespace

Runner RegisterTrain(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train an agent from a YAML preset");
  cmd->add_option("--config", args->config_path,
                  "YAML preset (rl-zoo style), e.g. configs/ppo/cartpole.yaml");
  cmd->add_option("--set", args->sets, "override a key: --set key=value (repeatable)");
  cmd->add_option("--seed", args->seed, "seed (overrides the preset's)");
  cmd->add_option("--out", args->out, "run directory (default runs/<env>_<algo>_s<seed>_<time>)");
  cmd->add_flag("--quiet", args->quiet, "no progress line or log lines");
  CLI::Option* resume = cmd->add_option(
      "--resume", args->resume,
      "continue the run in RUN_DIR from its newest checkpoint (its config.yaml; --set may "
      "override keys such as n_timesteps)");
  resume->excludes("--config")->excludes("--seed")->excludes("--out");
  return [args]() {
    const bool resuming = !args->resume.empty();
    if (resuming && !std::filesystem::is_regular_file(args->resume + "/config.yaml")) {
      // Named as the user typed it, before LoadRunConfig would blame --config.
      throw ConfigError("--resume", args->resume,
                        std::filesystem::is_directory(args->resume)
                            ? "a run directory written by `greenrl train` (it has no config.yaml)"
                            : "a run directory written by `greenrl train` (no such directory)");
    }
    if (resuming) RefuseNEnvsChange(args->resume, args->sets);
    const Config config = train::LoadRunConfig(
        resuming ? args->resume + "/config.yaml" : args->config_path, args->sets, args->seed);
    train::TrainOptions options;
    options.out_dir = resuming ? args->resume : args->out;
    options.resume = resuming;
    options.handle_signals = true;
    options.verbose = !args->quiet;
    options.progress = !args->quiet && ::isatty(STDERR_FILENO);
    // SIGINT/SIGTERM: finish the iteration, checkpoint, report, exit 128 + signal (signals.h).
    train::StopSignalScope signals;
    const train::TrainResult result = train::Train(config, std::move(options));
    if (result.rank == 0) fmt::print("{}", report::FormatSummary(result.report));
    std::fflush(stdout);
    if (result.interrupted) {
      fmt::print(stderr, "greenrl: stopped by signal {} at step {}; checkpoint {}\n",
                 result.stop_signal, result.report.steps, result.resume_checkpoint);
      return 128 + result.stop_signal;
    }
    return 0;
  };
}

}  // namespace greenrl::cli
