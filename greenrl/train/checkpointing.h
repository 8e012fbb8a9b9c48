// checkpointing.h: resume checkpoints of `greenrl train` (README "Checkpoints, resume and
// signals"): the config keys, where the files live, what the trainer saves beside the
// algorithm's state, and the metrics.csv cut on resume.
//
// A resume checkpoint is one LibTorch archive, <run_dir>/checkpoints/step_<global_step>.pt,
// written by Algorithm::SaveTrainingState (model, optimiser, loss scaler, generators, replay
// buffer) with the trainer's entries added (TrainerState below: counters, the env and normaliser
// state, energy so far), in one atomic write (temp file, fsync, rename, directory fsync). The
// newest file that loads is the one a resume uses; older ones beyond checkpoint_keep are deleted
// only after a newer one is in place.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/core/config.h"
#include "greenrl/energy/monitor.h"

namespace greenrl::train {

// Declares checkpoint_freq, checkpoint_keep, checkpoint_replay_buffer, guard.max_consecutive
// and guard.on_repeat in `schema` (run_config.cc's BuildSchema calls it).
void AddCheckpointKeys(ConfigSchema* schema);

struct CheckpointOptions {
  int64_t freq = 0;                         // env steps between checkpoints; 0: none periodic
  int keep = 2;                             // resume checkpoints kept (newest first)
  bool replay_buffer = true;                // off-policy: save the replay buffer in each checkpoint
  int guard_max_consecutive = 3;            // updates in a row with non-finite skips that act
  std::string guard_on_repeat = "restore";  // "restore" (last checkpoint, lr / 2) or "stop"
};
CheckpointOptions CheckpointOptionsFrom(const Config& config);

// What the trainer saves beside the algorithm's state.
struct TrainerState {
  int64_t steps = 0;      // global_step: env steps summed over envs
  int64_t iteration = 0;  // rollout + update iterations done
  int64_t next_eval = -1;
  int64_t next_checkpoint = -1;
  int64_t episodes = 0;                // training episodes finished
  std::vector<double> recent_returns;  // the last <= 100 episode returns, oldest first
  double elapsed_s = 0.0;              // wall time of the run so far, s (all segments)
  double cpu_s = 0.0;                  // process CPU time so far, s (all segments)
  energy::Measurement energy;          // energy so far per domain, J (all segments)
  std::map<std::string, energy::WindowTotals> windows;  // rollout/update/eval so far
  // The VecEnv's exact state (VecEnv::SaveState), or empty when the env type cannot save it
  // (the resumed run then resets its envs: the reset policy).
  std::string env_state;
  // VecNormalize statistics (NormalizeVecEnv::GetState; empty without normalize), restored
  // also when env_state is empty.
  std::vector<double> normalizer;
};

// <run_dir>/checkpoints/step_<steps, 12 digits>.pt
std::string CheckpointPath(const std::string& run_dir, int64_t steps);
// The resume checkpoints in <run_dir>/checkpoints, (steps, path) by increasing steps; temp
// files and other names are ignored.
std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& run_dir);
// Deletes all but the newest `keep` checkpoints, and stale temp files of checkpoints.
void PruneCheckpoints(const std::string& run_dir, int keep);

// Writes `algorithm`'s training state and `state` to `path` atomically.
// Errors: std::runtime_error naming the path and the system's reason when it cannot be written
// (the previous checkpoints are untouched).
void SaveResumeCheckpoint(const algo::Algorithm& algorithm, const std::string& path,
                          bool replay_buffer, const TrainerState& state);
// Restores `algorithm` and returns the trainer state.
// Errors: ConfigError("checkpoint", path, ...) for a file that is not a resume checkpoint of
// this algorithm and env.
TrainerState LoadResumeCheckpoint(algo::Algorithm* algorithm, const std::string& path);

// Resume: rewrites metrics.csv atomically without the rows whose global_step is past `steps`
// (they belong to iterations the resumed run repeats) and returns its header.
// Errors: std::runtime_error when it cannot be read or has no global_step column.
std::vector<std::string> TruncateMetricsCsv(const std::string& path, int64_t steps);

}  // namespace greenrl::train
