// commands.h: the `greenrl` subcommands. Each Register* adds its subcommand to the CLI11 app and
// returns a callback that runs it and gives the process exit code. The usage lines below list
// every option; `greenrl <command> --help` gives what each takes.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace greenrl::cli {

using Runner = std::function<int()>;

// greenrl train [--config FILE | --env ID [--algo A]] [--set key=value ...] [--seed N]
//   [--out DIR | --resume DIR] [-i|--trained-agent RUN_DIR] [--dry-run] [--quiet]
Runner RegisterTrain(CLI::App& app);
// greenrl eval --run DIR [--episodes N] [--seed N] [--stochastic] [--best | --checkpoint C]
//   [--quiet]
Runner RegisterEval(CLI::App& app);
// greenrl export --run DIR [--out FILE] [--best | --checkpoint C]
Runner RegisterExport(CLI::App& app);
// greenrl meters [--set energy.key=value ...] [--watch N]
Runner RegisterMeters(CLI::App& app);
// greenrl envs
Runner RegisterEnvs(CLI::App& app);
// greenrl keys [--algo ppo|dqn|sac]
Runner RegisterKeys(CLI::App& app);
// greenrl launch --nproc N [--master-port P] [--grace-s S] -- train ...
Runner RegisterLaunch(CLI::App& app);
// greenrl bench ppo-cartpole|ppo-pendulum|dqn-cartpole|sac-pendulum|sac-mountaincarcontinuous
//   [--seeds N] [--steps N]
//   [--configs DIR] [--set key=value ...] [--out DIR]
Runner RegisterBench(CLI::App& app);
// greenrl report RUN_DIR... [--format html|md] [--out FILE] [--target-return R
//   [--target-metric KEY]] [--chartjs PATH]
Runner RegisterReport(CLI::App& app);

}  // namespace greenrl::cli
