// algorithm.h: the interface the trainer drives (../shared/DESIGN.md, "Data flow"): collect a
// rollout from a VecEnv, update, act for evaluation, checkpoint. One implementation per file
// (ppo.cc, sac.cc, ...), each in CleanRL's order. Discrete action spaces act through Act(),
// Box action spaces through ActContinuous(); EnvSpec::discrete_actions() says which applies.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/algo/deterministic_policy.h"
#include "greenrl/core/clock.h"
#include "greenrl/core/collectives.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/vec_env.h"

namespace greenrl::env {
class NormalizeVecEnv;  // wrappers.h
}  // namespace greenrl::env

namespace greenrl::algo {

class CheckpointWriter;  // checkpoint.h
class CheckpointReader;

// One finished training episode, as Gymnasium's RecordEpisodeStatistics reports it.
struct EpisodeRecord {
  double episode_return = 0.0;  // undiscounted sum of rewards
  int64_t episode_length = 0;   // steps
  // The vec step of the iteration's rollout (0-based) whose step ended it: with several
  // data-parallel ranks, which step in lockstep, it orders the ranks' episodes in time
  // (train/episode_window.h).
  int64_t rollout_step = 0;
  // When the step that ended it returned, Unix s: SB3 Monitor's t is this minus t_start
  // (monitor.csv). NaN: not recorded (the trainer then uses the iteration's end).
  double end_unix_s = std::numeric_limits<double>::quiet_NaN();
};

// Appends the episodes `env`'s last step ended (its terminated or truncated rows, in row order)
// with their return and length (the VecEnv's RecordEpisodeStatistics figures), `rollout_step`,
// and that step's wall-clock time, read once (UnixNowS) when any ended. Allocates only as
// `episodes` grows.
inline void AppendFinishedEpisodes(const env::VecEnv& env, int64_t rollout_step,
                                   std::vector<EpisodeRecord>* episodes) {
  double now_unix_s = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < env.num_envs(); ++i) {
    if (env.terminated()[i] || env.truncated()[i]) {
      if (std::isnan(now_unix_s)) now_unix_s = UnixNowS();
      episodes->push_back(
          {env.episode_return()[i], env.episode_length()[i], rollout_step, now_unix_s});
    }
  }
}

// Metrics of one update, keyed by CleanRL's names ("losses/value_loss", "charts/learning_rate").
using Metrics = std::vector<std::pair<std::string, double>>;

// One RL algorithm (PPO, DQN, SAC) behind the trainer's loop: CollectRollout steps a VecEnv
// and stores what the algorithm learns from, Update learns from it, Act / ActContinuous act for
// evaluation. Built by MakePpo / MakeDqn / MakeSac (train::MakeAlgorithm from a config). Not
// thread-safe: one thread drives an instance.
class Algorithm {
 public:
  virtual ~Algorithm() = default;

  // "ppo", ...
  virtual std::string name() const = 0;

  // How this instance's gradient step runs, as the run's summary and energy.json report it:
  // "fused" (greenrl's hand-written forward and backward over BLAS), "autograd" (LibTorch), a
  // mix naming its parts (SAC with an empty net_arch: "fused critics, autograd actor"), and
  // " on cuda" when the update runs on a GPU. The config's `update_path: auto` resolved, which
  // config.yaml keeps as the user wrote it. Empty: not reported (test doubles).
  virtual std::string UpdatePath() const { return {}; }

  // Steps `env` (already Reset) for one rollout and stores what the update needs.
  // Appends the episodes that finished to `episodes`. Returns the env steps taken (summed over
  // envs). The env's action buffer is written, and env state carries over between calls.
  virtual int64_t CollectRollout(env::VecEnv& env, std::vector<EpisodeRecord>* episodes) = 0;

  // One update from the last rollout. progress_remaining goes from 1 to 0 over training as in
  // SB3 (1 - num_timesteps / total_timesteps); schedules read it.
  // Returns: the update's metrics (CleanRL keys), valid until the next Update; the same keys in
  // the same order every call.
  virtual const Metrics& Update(double progress_remaining) = 0;

  // Actions for obs float32 [n, obs_dim] into actions int64 [n] (Discrete spaces);
  // deterministic: the mode of the policy (argmax), else a sample. `obs` is what the agent saw
  // in training: for a run with `normalize: true`, observations already normalised by its
  // VecNormalize statistics (TrainedAgent::normalizer; wrap the env in a NormalizeVecEnv with
  // them, training off, as EvaluatePolicy does), never the env's raw ones, which act wrongly
  // without an error. The exported TorchScript module takes raw observations instead.
  virtual void Act(const float* obs, int n, bool deterministic, int64_t* actions) = 0;

  // Actions for Box action spaces: obs float32 [n, obs_dim] (row-major, as VecEnv::obs();
  // normalised as for Act when the run normalised them) into actions float32 [n, act_dim]
  // (row-major, as VecEnv::continuous_actions()). Every component
  // is already inside the env's Box [low, high] (the algorithm rescales or clips; the caller
  // writes the rows to the env as they are). deterministic: the policy's mode (SAC: tanh of the
  // Gaussian mean, rescaled; PPO: the Gaussian mean, clipped), else a sample from the
  // algorithm's own generator. Chunks of any n >= 1 are accepted; allocates nothing.
  // Not thread-safe (scratch buffers and the sampling generator are shared).
  // Errors: greenrl::InternalError for an algorithm built for a Discrete action space (the
  // default below; an algorithm that acts on Box spaces overrides it). It is a default rather
  // than a pure virtual so Discrete-only algorithms need no stub; MakeX already refused a Box
  // env for them with a ConfigError, so reaching it is a bug.
  virtual void ActContinuous(const float* obs, int n, bool deterministic, float* actions) {
    (void)obs, (void)n, (void)deterministic, (void)actions;
    GREENRL_CHECK(false, name() + " acts on Discrete action spaces only (no ActContinuous)");
  }

  // Re-seeds the generator that non-deterministic Act / ActContinuous draw from (PPO's sampling,
  // DQN's epsilon-greedy exploration, SAC's action noise) as building the algorithm with config
  // `seed` does, whatever state a resume checkpoint restored: `greenrl eval --stochastic --seed N`
  // then gives the same episodes from any checkpoint of the same parameters. The training
  // generators (shuffling, replay sampling, updates) are untouched. No errors.
  virtual void SeedActing(uint64_t seed) = 0;

  // The policy's mode as plain arrays (deterministic_policy.h), for `greenrl export`: on the
  // same observations it gives Act's / ActContinuous's deterministic actions up to float32
  // rounding (export_test). A copy: later updates do not change it.
  // Errors: greenrl::InternalError from this default (an algorithm that cannot export; PPO,
  // DQN and SAC override it).
  virtual DeterministicPolicy ExportDeterministicPolicy() const {
    GREENRL_CHECK(false, name() + " cannot export its policy");
    return {};
  }

  // Writes the model and optimiser state to `path` atomically (temp file, fsync, rename).
  // Errors: std::runtime_error naming the path when it cannot be written.
  virtual void SaveCheckpoint(const std::string& path) const = 0;

  // Restores what SaveCheckpoint wrote.
  // Errors: greenrl::ConfigError("checkpoint", path, ...) for a missing or corrupt file, or one
  // written for another algorithm, env or network shape.
  virtual void LoadCheckpoint(const std::string& path) = 0;

  // trained_agent (rl-zoo's --trained-agent: SB3's load, then learn with its default
  // reset_num_timesteps=True), after LoadCheckpoint: the algorithm's own count of env steps
  // restarts at 0, so what it schedules by it (DQN's epsilon, learning_starts, train_freq and
  // target-update marks; SAC's learning_starts) starts over as in a new run, while the
  // parameters, optimiser state and the gradient-step count (losses/n_updates, as SB3's
  // _n_updates) carry on. This default does nothing: PPO's schedules follow the trainer's
  // progress_remaining.
  virtual void ResetNumTimesteps() {}
  // DQN, SAC: the num_timesteps at or below which Update takes no gradient step,
  // max(learning_starts, OffPolicyResumeState::refill_until); 0 (no wait) for PPO.
  virtual int64_t updates_wait_until() const { return 0; }

  // --- Resume checkpoints (train/checkpointing.h; README "Checkpoints, resume and signals").
  // SaveTrainingState writes SaveCheckpoint's entries plus everything the next rollouts and
  // updates read: every generator (sampling, shuffling, exploration, replay sampling), counters
  // and, for off-policy algorithms, the replay buffer (unless replay_buffer is false: the resumed
  // run then starts from an empty buffer and refills it before its updates go on, learning_starts
  // counted from the resume, acting with its policy; OffPolicyResumeState::refill_until). `extra`
  // adds the caller's entries to the same archive before the one atomic write (temp file, fsync,
  // rename, directory fsync). A file SaveTrainingState wrote also loads with LoadCheckpoint
  // (evaluation). Errors: std::runtime_error naming the path when it cannot be written. The
  // defaults (for test doubles) raise greenrl::InternalError: the algorithm cannot resume.
  virtual void SaveTrainingState(const std::string& path, bool replay_buffer,
                                 const std::function<void(CheckpointWriter&)>& extra) const {
    (void)path, (void)replay_buffer, (void)extra;
    GREENRL_CHECK(false, name() + " has no resume checkpoint");
  }
  // Restores what SaveTrainingState wrote; `extra` reads the caller's entries from the same
  // archive after the algorithm's own were read.
  // Errors: ConfigError("checkpoint", path, ...) as LoadCheckpoint, also for a file without the
  // training state (e.g. a final.pt of an older build). The agent may be partly restored then;
  // the trainer stops the run.
  virtual void LoadTrainingState(const std::string& path,
                                 const std::function<void(CheckpointReader&)>& extra) {
    (void)path, (void)extra;
    GREENRL_CHECK(false, name() + " has no resume checkpoint");
  }

  // --- Numerical guard (train/trainer.cc, guard.*). The state lives here, once, in the
  // protected members below; each algorithm's Update reads and counts it.
  // Optimiser steps skipped since construction because a loss or gradient was not finite
  // (inf or NaN): the step changed nothing (SAC: a skip at the actor's own check, after the
  // critics' finite step, leaves the critics' and entropy coefficient's steps; see sac.cc).
  // Saved in the training state.
  int64_t nonfinite_skips() const { return nonfinite_skips_; }
  // The factor every learning rate is multiplied by (1 until the guard's first restore); saved
  // in the training state, and set again by loading one.
  double learning_rate_scale() const { return lr_scale_; }
  // Sets that factor from now on (the guard halves it at each restore). scale > 0.
  void SetLearningRateScale(double scale) { lr_scale_ = scale; }
  // Tests: the next `updates` calls to Update poison their gradients with NaN before the
  // finiteness check, as an overflowing loss would.
  void InjectNonFiniteForTesting(int updates) { inject_nonfinite_ = updates; }
  // Tests, SAC: the next `updates` calls to Update poison only the actor's gradient, after the
  // critics' finite step (an actor whose loss overflows while the critics' does not).
  void InjectNonFiniteActorForTesting(int updates) { inject_nonfinite_actor_ = updates; }

  // Whether the update can switch to reduced precision on this device (the energy budget's first
  // rung); when not, *why_not says why. Default: not supported.
  virtual bool CanReducePrecision(std::string* why_not) const {
    *why_not = name() + " has no reduced-precision update";
    return false;
  }
  // Switches the update to reduced precision (after CanReducePrecision returned true).
  virtual void ReducePrecision() {}

  // Waits until the work this algorithm queued on its device has finished, so that an energy
  // window closed next counts it (the trainer's EnergyMonitor sync hook, ../shared/STYLE.md
  // point 7). Default: nothing (work on the CPU is done when a call returns).
  virtual void SynchronizeDevice() const {}

  // The trainer is about to leave the algorithm idle for a while (the energy budget's throttle
  // sleeps between iterations): a worker that spins between updates (SAC's with threads.update
  // 2, ThreadPool::Burst) blocks now instead of spinning through the first 2 ms of each sleep;
  // the next update spins again. Default: nothing (no thread of the algorithm spins between
  // calls).
  virtual void ReleaseSpinningThreads() {}
  // Whether a thread of this algorithm spins between updates now (tests). Default: false.
  virtual bool HasSpinningThreads() const { return false; }

  // Data-parallel training (../shared/DESIGN.md, "Scaling out"): from now on every update
  // averages its flat gradient buffer over the ranks of `collectives` once per minibatch, before
  // clipping and the optimiser step, and any other per-minibatch decision that must agree across
  // ranks (PPO's KL early stop) reads rank-averaged figures. The call itself is a collective: it
  // broadcasts rank 0's parameters (and target networks) to every rank. Every rank calls it once,
  // before the first rollout. `collectives` must outlive the algorithm; nullptr: single process.
  // Errors: greenrl::ConfigError when the algorithm's configuration cannot run data-parallel
  // (e.g. PPO on a CUDA device); the default below refuses any non-null `collectives` with
  // InternalError (an algorithm without data-parallel support; a bug to reach from the trainer).
  virtual void SetCollectives(Collectives* collectives) {
    GREENRL_CHECK(collectives == nullptr, name() + " has no data-parallel update");
  }

  // normalize: true (VecNormalize) for an off-policy algorithm (DQN, SAC), as SB3 does it: the
  // replay buffer stores the raw obs, final_obs and rewards of `normalizer`'s inner env
  // (OffPolicyAlgorithm._store_transition), and each sampled batch is normalised with the
  // statistics current when it is drawn (ReplayBuffer._get_samples); acting still reads the
  // normalised obs. Call once, before the first rollout, with the NormalizeVecEnv the rollouts
  // step (it must outlive the algorithm). The default ignores it: PPO's rollout buffer holds the
  // normalised values of its one rollout, as SB3's does.
  virtual void SetReplayNormalizer(const env::NormalizeVecEnv* /*normalizer*/) {}

  // A copy of every trainable parameter in the model's flat layout, float32 [num_params]
  // (for tests, parameter broadcast and checkpoint comparison).
  virtual std::vector<float> GetParameters() const = 0;

 protected:
  // The numerical guard's state (see nonfinite_skips() above). An algorithm without a guard
  // leaves them at these values.
  int64_t nonfinite_skips_ = 0;  // steps skipped for a non-finite loss or gradient
  double lr_scale_ = 1.0;        // the guard's learning-rate factor, applied by Update
  int inject_nonfinite_ = 0;     // tests: updates left whose gradients get a NaN
  int inject_nonfinite_actor_ = 0;  // tests, SAC: updates left whose actor gradient gets a NaN
};

// SB3's progress_remaining after a rollout: 1 - num_timesteps / total_timesteps, clamped to
// [0, 1] (SB3 lets it go slightly negative on the last rollout when total_timesteps is not a
// multiple of the rollout size; a negative learning rate would ascend the loss). 0 when
// total_timesteps <= 0.
double ProgressRemaining(int64_t num_timesteps, int64_t total_timesteps);

}  // namespace greenrl::algo
