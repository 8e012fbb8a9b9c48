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
//
// Data-parallel runs: rank 0 writes <run_dir>/checkpoints/step_<global_step>.pt and every rank
// r > 0 its own <run_dir>/checkpoints/rank<r>/step_<global_step>.pt at the same global step:
// the parameters and Adam state are the same on all ranks, but each rank's envs, generators,
// replay buffer, recent returns and energy so far are its own. A resume needs the same world
// size and restores every rank from its own file of the newest step that all ranks can load.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/core/config.h"
#include "greenrl/energy/budget.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/energy/monitor.h"
#include "greenrl/report/evaluations_npz.h"
#include "greenrl/train/evaluate.h"

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
// The checkpoint_* and guard.* fields of a loaded config (declared by AddCheckpointKeys, whose
// ranges the Config checked). No errors.
CheckpointOptions CheckpointOptionsFrom(const Config& config);

// log_interval's position: where the last metrics row was written and what the next one sums up
// (all ranks' episodes when data-parallel). Zero in checkpoints written before it.
struct LogRowState {
  double global_episodes = 0.0;       // training episodes finished so far, all ranks
  int64_t iteration_at_last_row = 0;  // iteration of the last row
  double episodes_at_last_row = 0.0;  // global_episodes at the last row
  double pending_ep_count = 0.0;      // training episodes finished since the last row
  double pending_ep_return = 0.0;     // their summed returns
  double pending_ep_length = 0.0;     // their summed lengths, steps
};

// What the trainer saves beside the algorithm's state.
struct TrainerState {
  int64_t steps = 0;      // global_step: env steps summed over envs
  int64_t iteration = 0;  // rollout + update iterations done
  int64_t next_eval = -1;              // global_step of the next periodic evaluation; -1: none
  int64_t next_checkpoint = -1;        // global_step of the next periodic checkpoint; -1: none
  int64_t episodes = 0;                // training episodes finished
  // Episode rows in this rank's monitor.csv at the checkpoint, which a resume keeps: fewer than
  // `episodes` once a resume dropped a damaged row or started the file anew. -1 in checkpoints
  // written before it (a resume then keeps `episodes` rows).
  int64_t monitor_rows = -1;
  std::vector<double> recent_returns;  // the last <= 100 episode returns, oldest first
  std::vector<double> recent_lengths;  // their lengths, steps (empty in checkpoints before it)
  LogRowState log_rows;                // log_interval: where the last metrics row was written
  double elapsed_s = 0.0;              // wall time of the run so far, s (all segments)
  double cpu_s = 0.0;                  // process CPU time so far, s (all segments)
  energy::Measurement energy;          // energy so far per domain, J (all segments)
  std::map<std::string, energy::WindowTotals> windows;  // rollout/update/eval so far
  // This process's env steps in the rollout and eval windows so far (all segments): the energy
  // budget's estimate of the final evaluation divides those windows' energy by them. -1 in
  // checkpoints written before them, and in those of runs resumed from one (the resumed run then
  // estimates from its own windows alone).
  int64_t rollout_env_steps = 0;
  int64_t eval_env_steps = 0;
  // The VecEnv's exact state (VecEnv::SaveState), or empty when the env type cannot save it
  // (the resumed run then resets its envs: the reset policy).
  std::string env_state;
  // VecNormalize statistics (NormalizeVecEnv::GetState; empty without normalize), restored
  // also when env_state is empty.
  std::vector<double> normalizer;
  // This rank's env steps reset after a simulator fault (VecEnv::non_finite_resets) and env
  // resets and steps that returned a NaN or infinite observation or reward
  // (VecEnv::non_finite_outputs) so far (all segments); zero in checkpoints before them.
  int64_t env_non_finite_resets = 0;
  int64_t env_non_finite_outputs = 0;
  // The run's values of the keys a resume cannot change (ResumeFixedKeyValues), as YAML text by
  // key, so that a resume whose config.yaml was edited since is refused by name
  // (RefuseChangedFixedKeys); empty in checkpoints before them.
  std::map<std::string, std::string> fixed_keys;
  // Data-parallel: the world size of the run (1: a single process; checkpoints written before
  // this entry existed read as 1) and the rank whose state this is.
  int world_size = 1;
  int rank = 0;
  // Data-parallel: this rank's all-reduce calls, payload bytes and seconds so far (all
  // segments; energy.json's "distributed" figures); zero in checkpoints before this entry.
  int64_t allreduce_calls = 0;
  int64_t allreduce_bytes = 0;
  double allreduce_s = 0.0;
  // The energy budget's ladder and decisions (BudgetController::Snapshot), when the run had a
  // budget or decisions; absent in checkpoints without one (and in those written before it).
  std::optional<energy::BudgetSnapshot> budget;
  // carbon.intensity_csv: the series-priced carbon of the run so far (energy::SeriesCarbon's
  // sums, the job's energy on rank 0), so that a resumed run prices the earlier segments' energy
  // at the times it was used; absent for runs without a series (and in checkpoints before it).
  std::optional<energy::SeriesCarbonState> carbon_series;
};

// The values of the keys a resume cannot change, as Config::ValueText gives them, for those of
// `config`'s schema: n_envs, seed, algo, env_id (the envs and generators the checkpoint holds),
// policy_kwargs.net_arch (.pi, .vf), policy_kwargs.activation_fn, use_sde, buffer_size (the agent
// and replay buffer), normalize and, with normalize: true, normalize_kwargs.norm_obs, .clip_obs,
// .norm_reward (the statistics), energy.watts_per_core (the estimator's earlier segments). The CLI
// refuses an --set of any of them on resume (cli/train_command.cc CheckResumeOverrides).
std::map<std::string, std::string> ResumeFixedKeyValues(const Config& config);

// Refuses a resume whose config gives another value of a key `state`'s checkpoint (at `path`)
// recorded as fixed (TrainerState::fixed_keys): the run's config.yaml edited after the run
// wrote it. Nothing is checked for a checkpoint that recorded none.
// Errors: ConfigError(key, value, "the checkpoint's own V: ...") for the first such key.
void RefuseChangedFixedKeys(const Config& config, const TrainerState& state,
                            const std::string& path);

// An exclusive hold on a run directory for this object's life, so that two processes never
// train into one run directory (a resume started while the run still goes on, a cluster's
// requeue): flock(LOCK_EX | LOCK_NB) on <run_dir>/train.lock, which holds the holder's pid,
// retried for about 100 ms so that a probe's momentary shared lock (FileLockHeld) does not
// refuse it. The kernel drops the lock when the holder ends, however it ends (SIGKILL included),
// so the file left behind never blocks a later resume.
class RunDirLock {
 public:
  // field: the option the refusal names, the one that gave run_dir ("--resume", or "--out" for
  //   a new run, whose default directory stands in for --out).
  // Errors: ConfigError(field, run_dir, ...) naming the holder's pid when another process (or
  //   another RunDirLock of this one) holds it; std::runtime_error naming the file when it
  //   cannot be created or locked otherwise.
  explicit RunDirLock(const std::string& run_dir, const std::string& field = "--out");
  ~RunDirLock();

  // The same refusal without taking the lock or writing anything (a dry run's check).
  // Errors: ConfigError(field, ...) as the constructor's when another process holds it.
  static void RefuseIfHeld(const std::string& run_dir, const std::string& field = "--out");
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;

 private:
  int fd_ = -1;
};

// The step a resume checkpoint's file name gives: "step_<digits>.pt" -> the digits' value
// (CheckpointPath writes 12 of them); -1 for any other name. No errors.
int64_t CheckpointStepOf(const std::string& file_name);

// The folder of `rank`'s resume checkpoints: <run_dir>/checkpoints for rank 0,
// <run_dir>/checkpoints/rank<rank> for rank > 0.
std::string CheckpointDir(const std::string& run_dir, int rank = 0);
// <CheckpointDir(run_dir, rank)>/step_<steps, 12 digits>.pt
std::string CheckpointPath(const std::string& run_dir, int64_t steps, int rank = 0);
// `rank`'s resume checkpoints, (steps, path) by increasing steps; temp files and other names
// are ignored.
std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& run_dir,
                                                             int rank = 0);
// Deletes all but the newest `keep` of `rank`'s checkpoints, and stale temp files of them.
void PruneCheckpoints(const std::string& run_dir, int keep, int rank = 0);
// The trainer's entries of a resume checkpoint, read without loading the model (env_state is
// left empty); nullopt when the file cannot be read as a resume checkpoint (the caller's
// LoadResumeCheckpoint then reports why). No errors.
std::optional<TrainerState> PeekTrainerState(const std::string& path);
// The world size a resume checkpoint was written with (TrainerState::world_size, through
// PeekTrainerState); -1 when the file cannot be read as a resume checkpoint. No errors.
int CheckpointWorldSize(const std::string& path);

// A resume: a checkpoint holds the run's energy, wall time and CPU time when it was written,
// before the checkpoint itself and the reports that follow it were. When <run_dir>/energy.json is
// of the same step (the segment that wrote this checkpoint as it stopped: a signal or the
// budget), its later figures replace those of `state`, per domain and only upward, so the energy
// and time a stopped segment spent after its checkpoint are not lost to the resumed run (and its
// metrics.csv time_s does not go back). A data-parallel rank (state->world_size > 1) takes its
// own figures, energy.json's distributed.ranks[state->rank] (the totals there are the job's). A
// single process also takes energy.json's "checkpoint" window when it counts more windows (the
// stopping checkpoint's closed after that checkpoint saved them). A single process's energy.json
// of a later step that records a failure (its "failure": the segment failed after this
// checkpoint, and wrote its figures up to the failure) gives its time, CPU and energy the same
// way, without its windows, and then metrics.csv's last row as below (a segment resumed after the
// failure and killed further on). Without such an energy.json (a
// segment killed after its checkpoint, by SIGKILL or a crash), a single process takes its
// metrics.csv's last complete row past the checkpoint's step instead: time_s and
// energy/<domain>_wh, only upward, so the energy it logged is not lost either. Whichever the
// source, the energy's span (state->energy.duration_s) grows by as much as the wall time
// (state->elapsed_s) does. Nothing changes otherwise (no or an unreadable file). No errors.
void CarryOverStoppedSegment(const std::string& run_dir, TrainerState* state);

// Writes `algorithm`'s training state and `state` to `path` (<run_dir>/checkpoints/step_*.pt, or
// .../checkpoints/rank<r>/step_*.pt) atomically, creating its folder but not the run directory.
// Errors: std::runtime_error naming the path and the system's reason when it cannot be written
// (the previous checkpoints are untouched), or saying that the run directory is gone.
void SaveResumeCheckpoint(const algo::Algorithm& algorithm, const std::string& path,
                          bool replay_buffer, const TrainerState& state);
// Restores `algorithm` and returns the trainer state.
// Errors: ConfigError("checkpoint", path, ...) for a file that is not a resume checkpoint of
// this algorithm and env, is damaged (an entry failing its CRC-32), or holds a parameter that is
// NaN or infinite (RequireFiniteParameters).
TrainerState LoadResumeCheckpoint(algo::Algorithm* algorithm, const std::string& path);

// Refuses an agent whose parameters (Algorithm::GetParameters) are not all finite after loading
// `path`: such a file loads but acts on NaN (a resume skips it for the older checkpoint).
// Errors: ConfigError("checkpoint", path, "... N of its M are NaN or infinite ...").
void RequireFiniteParameters(const algo::Algorithm& algorithm, const std::string& path);

// eval.save_best: the evaluation whose policy <run_dir>/checkpoints/best.pt holds.
struct BestEval {
  int64_t global_step = -1;  // env steps at that evaluation
  double mean_reward = 0.0;  // its mean episode return
  // Its normaliser statistics, frozen as the evaluation used them (normalize: true).
  std::optional<NormalizerSnapshot> normalizer;
};

// Writes FinalPendingPath(run_dir): `algorithm`'s model (Algorithm::SaveTrainingState without
// the replay buffer, so LoadCheckpoint reads it) and, with a normaliser, its statistics as the
// entry "final.normalizer" (NormalizerJson) in the same atomic write, so eval, export and
// trained_agent never pair the policy with other statistics; then checkpoints/normalizer.json
// (SaveNormalizer), a copy for people and scripts. CommitFinalCheckpoint makes it final.pt once
// the run's reports are written.
// Errors: std::runtime_error naming the path when a file cannot be written.
void SaveFinalCheckpoint(const algo::Algorithm& algorithm, const std::string& run_dir,
                         const std::optional<NormalizerSnapshot>& normalizer);
// <run_dir>/checkpoints/final.pt.pending: the final policy of a run whose reports are not all
// written yet (a run that failed in its final writes keeps it; eval and export read it).
std::string FinalPendingPath(const std::string& run_dir);
// Renames FinalPendingPath(run_dir) to <run_dir>/checkpoints/final.pt (the run is finished), then
// fsyncs the folder. Errors: std::runtime_error naming both paths and the system's reason.
void CommitFinalCheckpoint(const std::string& run_dir);
// The statistics SaveFinalCheckpoint recorded in `path` (a final.pt); nullopt when it has none
// (no normaliser, or a final.pt written by greenrl before 2026-12-06, whose statistics are in
// normalizer.json beside it).
// Errors: ConfigError("checkpoint", path, ...) for a file that is not a LibTorch archive or a
// malformed entry.
std::optional<NormalizerSnapshot> ReadFinalNormalizer(const std::string& path);

// Writes <run_dir>/checkpoints/best.pt: `algorithm`'s model (Algorithm::SaveTrainingState
// without the replay buffer, so LoadCheckpoint reads it) and `best` as the entry "best.eval"
// (JSON: global_step, mean_reward, normalizer), in one atomic write, so the policy, its
// statistics and its figures are never from different evaluations, whatever a crash
// interrupts. Then best.json ({"global_step", "mean_reward"}) and, with a normaliser,
// best_normalizer.json (SaveNormalizer) beside it, each atomically: copies for people and
// scripts; ReadBestCheckpoint reads best.pt.
// Errors: std::runtime_error naming the path when a file cannot be written (an earlier best.pt
// is then untouched or wholly replaced).
void SaveBestCheckpoint(const algo::Algorithm& algorithm, const std::string& run_dir,
                        const BestEval& best);

// What <run_dir>/checkpoints/best.pt records (SaveBestCheckpoint), read without loading the
// model; nullopt when there is no best.pt. A best.pt without the "best.eval" entry (written by
// greenrl before 2026-12-05) is described by best.json and best_normalizer.json beside it, as
// then; nullopt when best.json is missing or does not parse.
// Errors: ConfigError("checkpoint", path, ...) when best.pt is not a LibTorch archive or its
// entry does not parse; ConfigError("normalizer", ...) for a malformed best_normalizer.json.
std::optional<BestEval> ReadBestCheckpoint(const std::string& run_dir);

// Resume: rewrites metrics.csv atomically without the rows whose global_step is past `steps`
// (they belong to iterations the resumed run repeats) and returns its header; an empty file (no
// row was due before the checkpoint: log_interval) is left empty and gives no columns. A row
// without the header's number of cells or a number for global_step (a torn last line of a
// killed run, a damaged row) is dropped and named in *notes (nullptr: not said).
// Errors: std::runtime_error when it cannot be read or its header has no global_step column.
std::vector<std::string> TruncateMetricsCsv(const std::string& path, int64_t steps,
                                            std::vector<std::string>* notes = nullptr);

// Resume: the evaluations of evaluations.npz at `path` up to `steps` (the later ones are
// repeated), the log the resumed run appends to; the file is rewritten without the later ones.
// A missing file (a run of a greenrl before 2026-12-06, or one with no evaluation yet) gives an
// empty log. A file that does not read, or whose rows have another episode count than
// `eval_episodes` (eval.episodes changed by a --set at this resume), is left as it is and the
// log starts empty, said on stderr when `verbose` (train without --quiet): the next evaluation
// replaces the file (metrics.csv keeps every evaluation's mean and std).
// Errors: std::runtime_error when the file cannot be rewritten.
report::EvaluationsLog ResumeEvaluationsLog(const std::string& path, int64_t steps,
                                            int eval_episodes, bool verbose);

}  // namespace greenrl::train
