// cli_main.h: the whole `greenrl` command line as one function, so a program of the user's can
// register its own env types (env::RegisterEnv) and then offer every greenrl command with them
// (README "Your own environment"; examples/custom_env.cc).
#pragma once

#include <functional>

namespace greenrl::cli {

// Runs `greenrl <command> ...` with the process's arguments: train, eval, export, bench,
// meters, envs, keys, launch, report: greenrl_cli's main. A program with envs of its own calls
// the overload below instead (it names the program in config.yaml and in resume hints, and turns
// a registration error into an exit 2). Call it from main, once. First, where OpenBLAS fell back
// to its generic kernels, it re-executes the program with OPENBLAS_CORETYPE set
// (core/openblas_core.h): anything main does before it then runs twice, so it must come first,
// before any other thread starts. It does not set OMP_WAIT_POLICY (the `greenrl` launcher does):
// set OMP_WAIT_POLICY=PASSIVE for runs with threads.torch above 1.
// Returns: the exit code: 0 success; 1 runtime failure (I/O, internal error); 2 bad input
// (config, CLI arguments, checkpoint), reported before any work starts; 130 / 143 for a
// training run stopped by SIGINT / SIGTERM.
int Main(int argc, char** argv);

// The same for a program of the user's own: first register_envs (its env::RegisterEnv calls), in
// Main's error handling, so that a duplicate id or a bad spec is a "greenrl: error: ..." line
// and exit 2, not an uncaught exception; and the program's name (argv[0]'s file name) is the one
// the commands greenrl suggests name (`my_rl train --resume DIR`) and config.yaml records, since
// only this program knows its envs (greenrl/core/install_paths.h, ProgramName).
// Returns: as Main above.
int Main(int argc, char** argv, const std::function<void()>& register_envs);

}  // namespace greenrl::cli
