// cli_main.h: the whole `greenrl` command line as one function, so a program of the user's can
// register its own env types (env::RegisterEnv) and then offer every greenrl command with them
// (README "Your own environment"; examples/custom_env.cc).
#pragma once

namespace greenrl::cli {

// Runs `greenrl <command> ...` with the process's arguments: train, eval, export, bench,
// meters, envs, keys, launch, report. Call it from main, once, after any RegisterEnv. First, where
// OpenBLAS fell back to its generic kernels, it re-executes the program with OPENBLAS_CORETYPE
// set (core/openblas_core.h), so it must run before any other thread starts.
// Returns: the exit code: 0 success; 1 runtime failure (I/O, internal error); 2 bad input
// (config, CLI arguments, checkpoint), reported before any work starts; 130 / 143 for a
// training run stopped by SIGINT / SIGTERM.
int Main(int argc, char** argv);

}  // namespace greenrl::cli
