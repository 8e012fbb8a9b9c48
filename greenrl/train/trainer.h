// trainer.h: the composition root of `greenrl train` (../shared/DESIGN.md): VecEnv +
// Algorithm + EnergyMonitor, the training loop with its `rollout`, `update` and `eval` energy
// windows, metrics.csv, the final checkpoint, energy.json and the summary.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/core/clock.h"
#include "greenrl/core/config.h"
#include "greenrl/dist/process_group.h"
#include "greenrl/energy/meter.h"
#include "greenrl/report/emissions.h"
#include "greenrl/report/run_report.h"

namespace greenrl::train {

// How Train runs, beyond the config: where it writes, what it says, and test hooks.
struct TrainOptions {
  // Run directory; empty: runs/<env_id>_<algo>_s<seed>_<UTC time>. It must not exist or be
  // empty.
  std::string out_dir;
  // Progress line on stderr (the CLI sets it only when stderr is a terminal and not --quiet).
  bool progress = false;
  // Log lines (meter choice, warnings) on stderr.
  bool verbose = true;
  // The caller's warnings (the CLI's: a preset tuned for another env), printed as "greenrl: W"
  // on stderr with the run's own, once every check has passed (verbose, rank 0 only).
  std::vector<std::string> warnings;
  // Tests: a meter to use instead of energy.meter's choice (e.g. a FakeMeter).
  std::unique_ptr<energy::EnergyMeter> meter_override;
  // Tests: the clock of the loop, windows, sampler and budget (default: SteadyClock).
  const Clock* clock = nullptr;
  // Data-parallel group to train in (tests run ranks as threads). nullptr: the group the launcher's
  // variables describe (dist::ReadDistEnv: torchrun, SLURM, Open MPI, `greenrl launch`), or a
  // single process when there are none.
  dist::ProcessGroup* process_group = nullptr;

  // --- Resume, stop signals and the numerical guard (checkpointing.h, signals.h).
  // Continue the run in out_dir (which must hold config.yaml and a resume checkpoint) from its
  // newest loadable checkpoint: metrics.csv loses the rows past that checkpoint's step and is
  // appended to, power.csv is appended to, energy and time totals carry on.
  bool resume = false;
  // Stop on SIGINT/SIGTERM after the current iteration (the CLI sets it; signals.h).
  bool handle_signals = false;
  // Tests: stop as a signal would once global_step >= this (0: never).
  int64_t stop_after_steps = 0;
  // Tests: called before each Update with the iteration number (1-based), e.g. to inject NaN.
  std::function<void(int64_t iteration, algo::Algorithm& algorithm)> before_update;
  // `greenrl train --dry-run`: make every check a run makes before its first write (the config's
  // values, --out or --resume's run directory, trained_agent's checkpoint loaded into the agent
  // it would train, the carbon inputs, the meters chosen) and print the same warnings, then
  // return without writing anything, training or connecting to other ranks
  // (TrainResult::dry_run). Errors: the same as a run's before its run directory exists.
  bool dry_run = false;
};

// Output of a finished run.
struct TrainResult {
  report::RunReport report;
  // <run_dir>/checkpoints/final.pt of a finished run; the resume checkpoint of a run the energy
  // budget stopped (unfinished: --resume with a larger budget continues it); empty when
  // interrupted. Rank 0's; empty on other ranks.
  std::string checkpoint_path;
  int rank = 0;  // data-parallel rank; only rank 0 writes the run dir and report
  // Stopped early by a stop signal (or stop_after_steps): the signal (0 for stop_after_steps).
  // The CLI exits 128 + signal.
  bool interrupted = false;
  int stop_signal = 0;
  // A stop signal that arrived once the last iteration had begun (during its update, the final
  // evaluation or the final writes), when handle_signals is set: the run still finished, with
  // final.pt and its reports, and is not interrupted; the CLI says so and exits 0. 0 otherwise.
  int late_stop_signal = 0;
  // The resume checkpoint an interrupted or budget-stopped run wrote last (this rank's).
  std::string resume_checkpoint;
  // Times the numerical guard restored the last checkpoint (guard.on_repeat: restore).
  int guard_restores = 0;
  // TrainOptions::dry_run: the checks passed and nothing was written; config_yaml is the
  // config.yaml the run would write (every key, resolved, with its doc; its first line is the
  // resolved-config comment, where a program of one's own writes "# trained by <program>" to
  // the run's file) and run_dir the run directory it would write to (report is empty).
  bool dry_run = false;
  std::string config_yaml, run_dir;
  // dry_run: the step the run would end at, n_timesteps rounded up to whole rollouts (PPO:
  // n_steps x n_envs x ranks; DQN, SAC: train_freq x n_envs x ranks), as SB3's learn loop
  // overshoots it (an eval.reward_threshold stop may end it sooner). 0 otherwise.
  int64_t last_step = 0;
};

// Data-parallel (world size > 1, ../shared/DESIGN.md "Scaling out", DD-PPO): every rank steps its
// own n_envs envs (rank r > 0 seeds envs and algorithm with seed + 1000003 r mod 2^32), the
// algorithm broadcasts rank 0's parameters and averages gradients per minibatch, normaliser
// statistics are merged after every rollout (Chan et al.), metrics are reduced (steps summed,
// returns averaged over every finished episode, losses averaged over ranks), and n_timesteps
// counts the steps of all ranks. Rank 0 alone writes the run directory, evaluates and writes
// final.pt; every rank writes its own resume checkpoint of the same step (rank r > 0 under
// checkpoints/rank<r>/, checkpointing.h), and a resume needs the same world size (ConfigError
// "--resume" naming both otherwise). A stop signal seen by any rank stops all of them after the
// same iteration. energy.json holds energy summed over ranks plus every rank's own figures
// ("distributed"). A failed or timed-out collective throws std::runtime_error naming it.
// Trains as `config` says (a config from LoadRunConfig), writes the run directory
// (config.yaml, metrics.csv, power.csv, energy.json, emissions.csv, checkpoints/final.pt) and
// returns the report. With energy.budget_wh > 0 the BudgetController steps down its ladder as the
// run nears the budget and may stop it early: a resume checkpoint is written instead of
// final.pt (a resume under a larger budget continues the run), the final evaluation is skipped
// (it would spend past the budget), and energy.json says why.
// Every check that can fail on user input runs before the run directory is created.
// Called from a program of one's own rather than through cli::Main (cli_main.h, which a custom
// env's program should prefer): Train sets the process's LibTorch and OpenMP threads to
// threads.torch (ConfigureThreads) and leaves them so; it names the program in config.yaml and
// in its resume hints by ProgramName() (install_paths.h: call SetProgramName first, or the
// hints name `greenrl`, which does not know a custom env); it leaves SIGINT and SIGTERM alone
// unless options.handle_signals (then they stop the run with a resume checkpoint); and what
// cli::Main does first is not done (OpenBLAS's core type, openblas_core.h; KeepFreedMemory,
// allocator.h; OMP_WAIT_POLICY=PASSIVE, which the `greenrl` launcher sets).
// Errors: ConfigError for bad input (also an existing non-empty out_dir: "--out");
// std::runtime_error for I/O failures (the files already written stay intact).
TrainResult Train(const Config& config, TrainOptions options);

// The step a run of `config` ends at with `world_size` ranks: n_timesteps rounded up to whole
// rollouts (PPO: n_steps x n_envs x ranks; DQN, SAC: train_freq x n_envs x ranks), as SB3's learn
// loop overshoots it (an eval.reward_threshold stop may end it sooner). The dry run's
// TrainResult::last_step, and `greenrl bench`'s. No errors (a config from LoadRunConfig).
int64_t RunLastStep(const Config& config, int world_size);

// The algorithm `config` names (a config from LoadRunConfig), built for `spec` (training, and
// `greenrl eval` reloading a checkpoint). Errors: ConfigError from the algorithm's MakeX, e.g.
// ("env_id", id, ...) for an action space it does not support.
std::unique_ptr<algo::Algorithm> MakeAlgorithm(const Config& config, const env::EnvSpec& spec);

// Sets LibTorch intra-op threads and OpenMP's thread count (which OpenBLAS's OpenMP build
// follows) to `torch_threads`, so no pool oversubscribes the cores or spins idle workers.
void ConfigureThreads(int torch_threads);

// Checks that `dir` can take a run's files: it does not exist, or is an empty directory, or holds
// only what a run that failed before writing any file leaves (train.lock and an empty
// checkpoints folder), so that the same --out can be given again.
// Errors: ConfigError("--out", dir, "a new or empty directory (it is a file)" / "(it exists and
//   is not empty)").
void RequireNewOrEmptyDir(const std::string& dir);

// The default run directory name for a config: runs/<env_id>_<algo>_s<seed>_<YYYYmmdd-HHMMSS> (UTC
// time now); Train claims it, or its _2, _3, ... when a run of the same second has it
// (ClaimNewRunDir).
std::string DefaultRunDir(const Config& config);

// Makes the first of `base`, <base>_2, <base>_3, ... that does not exist yet (its parent folders
// too) and returns it: mkdir's atomic claim, so that two processes never get the same one (a run
// without --out: a single process, or a data-parallel job's rank 0).
// Errors: std::runtime_error naming the directory when it cannot be made (other than existing).
std::string ClaimNewRunDir(const std::string& base);

// `base` when no file or directory has that path, else the first of <base>_2, <base>_3, ... that
// none has (a default run directory another run of the same second holds: rl-baselines3-zoo
// numbers its log folders likewise, <env>_1, <env>_2, ...).
std::string NextFreeRunDir(const std::string& base);

// Checks that every rank of a data-parallel job resolved the same config: configs[r] is rank r's
// config.yaml text (Config::ToYaml). Errors: ConfigError("config", "rank <r>: <its first line
// that differs, without its comment>", "the same resolved config on every rank (rank 0: <its
// line>); ...").
void RequireSameConfigOnEveryRank(const std::vector<std::string>& configs);

// emissions.csv's one CodeCarbon-compatible row for a finished (or stopped) run's report, ended at
// end_unix_s (Unix s): the additive domains summed into CodeCarbon's cpu, gpu and ram columns (J
// in the row, times the PUE for the energy columns as CodeCarbon's), gpu_count the number of
// "gpu:<index>" domains, the country from carbon.region. No errors.
report::EmissionsRow MakeEmissionsRow(const report::RunReport& r, double end_unix_s);

}  // namespace greenrl::train
