// vec_env.h: N copies of one environment stepped together into struct-of-arrays buffers.
//
// The trainer's view of environments (../shared/DESIGN.md, "Environments"). A VecEnv owns every
// buffer, allocated once from the EnvSpec; Step() allocates nothing. The caller writes actions into
// discrete_actions() or continuous_actions(), calls Step(), and reads the result buffers, which
// stay valid (same pointers) for the VecEnv's lifetime. StepRandom(key) instead draws uniformly
// random actions into the action buffer itself and steps.
//
// Semantics: Gymnasium 1.0.0 dynamics and TimeLimit per env (applied by the BatchedEnv:
// BatchedEnvOf for every registered env type), with same-step autoreset as in
// Stable-Baselines3's DummyVecEnv: when row i ends (terminated or truncated), final_obs[i] holds
// its terminal observation and obs[i] already holds the first observation of the next episode.
// Algorithms bootstrap truncated rows from final_obs, never from obs.
//
// Seeding: row i resets from its own generator, seeded with DeriveSeed(seed, i) on Reset() and
// continued on autoreset, so results depend on (seed, num_envs, actions) but never on num_threads.
//
// Threads: with num_threads == 1 rows are stepped inline on the caller's thread; with T > 1 the
// caller and T - 1 persistent workers step disjoint contiguous row ranges (see ThreadPool), each
// thread's range cut into slices of about 64 rows or more (kRowsPerSlice, vec_env.cc; a range of
// fewer rows is one slice); a thread that
// has stepped its own rows steps the unstarted slices of a late or slower one (work stealing).
// Rows are independent, so which thread steps a row never changes a result. A VecEnv uses the
// threads it is given; with too few rows per thread the hand-off costs more than it saves, and
// env::EnvThreadsFor (registry.h) picks a count that pays off (the trainer uses it).
//
// Construct through MakeVecEnv (registry.h) unless you hold a BatchedEnv yourself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/env/batched_env.h"
#include "greenrl/env/spaces.h"
#include "greenrl/core/thread_pool.h"

namespace greenrl::env {

// Thread-safety: a VecEnv is driven from one thread at a time; it uses its own workers inside
// Reset(), Step() and StepRandom().
//
// Decorators: wrappers.h derives VecEnvWrapper from VecEnv, so a wrapped VecEnv is used exactly
// like a plain one (VecEnv&, same buffers and accessors). Only Reset(), Step() and num_threads()
// (and the state and thread-count hooks) are virtual; StepRandom() is not, and on a decorator it
// draws on the caller and calls the decorator's Step(). Every buffer accessor is an inline read
// of a pointer fixed at construction, so the hot loop pays nothing for the indirection.
class VecEnv {
 public:
  // Args: envs: N >= 1 copies of one env type (non-null); seed: user seed, row i uses
  //   DeriveSeed(seed, i); num_threads: threads stepping rows, >= 1 (more than N is allowed, the
  //   pool is capped at N threads).
  // Errors: greenrl::ConfigError("num_threads", ...) when num_threads < 1;
  //   greenrl::InternalError (GREENRL_CHECK) when envs is null or has no rows.
  VecEnv(std::unique_ptr<BatchedEnv> envs, uint64_t seed, int num_threads);
  virtual ~VecEnv();

  VecEnv(const VecEnv&) = delete;
  VecEnv& operator=(const VecEnv&) = delete;

  // The env type's static spec (spaces, TimeLimit, reward threshold). A wrapper may expose a
  // different action space (e.g. RescaleActionVecEnv's [-1, 1]).
  const EnvSpec& spec() const { return *spec_; }
  // Number of rows N.
  int num_envs() const { return num_envs_; }
  // Threads used by Reset/Step, the caller's included: min(num_threads, num_envs).
  virtual int num_threads() const;
  // Steps rows on only `threads` of the num_threads() threads from now on (clamped to
  // [1, num_threads()]); results do not change (rows are seeded per env). The energy budget's
  // throttle rung calls it. Decorators forward it to the env they wrap.
  virtual void SetActiveThreads(int threads);
  // The seed given at construction.
  uint64_t seed() const { return seed_; }
  // Steps whose row hit a numerical fault and was reset instead (BatchedEnv::non_finite_resets;
  // the MuJoCo envs count them, classic envs never fault). Decorators forward it.
  virtual int64_t non_finite_resets() const;
  // Resets and steps whose observation or reward was NaN or infinite
  // (BatchedEnv::non_finite_outputs). Decorators forward it.
  virtual int64_t non_finite_outputs() const;

  // Resets every row: row i reseeds its generator with DeriveSeed(seed(), i) and resets. Writes
  // obs; clears reward, terminated, truncated, episode_return and episode_length; final_obs = obs.
  // Calling it again restarts the same episodes.
  virtual void Reset();

  // Action buffer for Discrete action spaces: int64 [N], entries in [0, n). The caller fills it
  // before Step(). Errors: greenrl::InternalError (GREENRL_CHECK) for a Box action space.
  int64_t* discrete_actions();
  // Action buffer for Box action spaces: float32 [N, act_dim], row-major. The caller fills it
  // before Step(). Errors: greenrl::InternalError (GREENRL_CHECK) for a Discrete action space.
  float* continuous_actions();

  // Steps every row with the actions in the buffer, with same-step autoreset (see the top of this
  // file). Allocates nothing.
  // Errors: greenrl::InternalError (GREENRL_CHECK) before the first Reset(); whatever an env's Step
  // throws (CartPole: std::invalid_argument for an action outside {0, 1}), rethrown on this thread
  // with its type and message, after every row range has finished. The buffers are then partly
  // updated and the next Step() fails its check until Reset() is called.
  virtual void Step();

  // Steps every row with a uniformly random action from spec().action_space (gymnasium's
  // action_space.sample() per env, then step), for random-action benchmarks (greenrl_bench_envs,
  // greenrl_bench_env_scaling) and random warm-ups. greenrl's DQN and SAC do not call it: their
  // learning_starts and epsilon draws come from their own checkpointed generators.
  // Row i's action is a function of (key, i) only (env::SampleActionRows, spaces.h), so the
  // result never depends on num_threads(); pass a fresh random key per call (Rng::NextU64()), not
  // a counter or a state: the key seeds SplitMix64 directly, so keys that differ by m times its
  // increment 0x9e3779b97f4a7c15 give the same random outputs shifted by m (whole rows only
  // where one output is one row, see SampleActionRows). The
  // drawn actions are left in the action buffer, where the caller reads what was taken. On a root
  // VecEnv each row's action is drawn by the thread that steps the row, in the same slice, so it
  // never travels between cores (a caller-drawn action buffer moves to the stepping thread's
  // cache every step). A decorator (wrappers.h) draws SampleActionRows(key) from its own action
  // space (RescaleActionVecEnv: [-1, 1]) on the caller into its action buffer and calls its
  // Step(), which maps them onto the inner env as for any caller's actions.
  // Errors: std::invalid_argument (env::CheckSampleable) for an action space it cannot sample (a
  // Box with a non-finite bound or width, low > high, or bounds not dim() long; Discrete(n),
  // n < 1), before any row is touched;
  // otherwise as Step().
  void StepRandom(uint64_t key);

  // Writes the actions StepRandom(key) would take into the action buffer, drawn on the calling
  // thread, without stepping (gymnasium's action_space.sample() for every row; SampleActionRows
  // over all rows of spec().action_space). Allocates nothing.
  // Errors: std::invalid_argument (env::CheckSampleable), as StepRandom.
  void SampleActions(uint64_t key);

  // Resume checkpoints: appends the exact state of every row and of the buffers the caller
  // reads (obs, final_obs, rewards, flags, episode statistics, actions) to *bytes and returns
  // true, or returns false when the env type cannot save its state (BatchedEnv::SaveState);
  // wrappers add their own state. Only between Step() calls.
  virtual bool SaveState(std::string* bytes) const;
  // Restores what SaveState wrote on a VecEnv built the same way (same env, num_envs and
  // wrappers), reading from bytes[*offset]. Errors: std::invalid_argument for bytes that are too
  // short or from an env type that cannot restore.
  virtual void LoadState(const std::string& bytes, size_t* offset);

  // float32 [N, obs_dim]: observation after the last Reset/Step (after autoreset for ended rows).
  const float* obs() const { return views_.obs; }
  // float32 [N]: reward of the last step (0 after Reset).
  const float* reward() const { return views_.reward; }
  // uint8 [N]: 1 where the last step reached a terminal state.
  const uint8_t* terminated() const { return views_.terminated; }
  // uint8 [N]: 1 where the last step ended the episode for a reason outside the MDP: the
  // TimeLimit (steps since reset >= spec().max_episode_steps), the env's own StepResult::truncated
  // (a custom env's), or a MuJoCo step that left a non-finite or unstable state (README
  // "Simulator faults").
  const uint8_t* truncated() const { return views_.truncated; }
  // float32 [N, obs_dim]: observation produced by the last step, before any autoreset. Equals the
  // obs row where the row did not end.
  const float* final_obs() const { return views_.final_obs; }
  // float32 [N]: undiscounted return of the episode that ended in that row on the last step, on
  // the env's raw rewards (wrappers never change it); valid where terminated || truncated, 0
  // elsewhere.
  const float* episode_return() const { return views_.episode_return; }
  // int32 [N]: length in steps of the episode that ended in that row on the last step; valid where
  // terminated || truncated, 0 elsewhere.
  const int32_t* episode_length() const { return views_.episode_length; }

 protected:
  // Where the accessors above point. Set once by the constructor (root) or by a wrapper's
  // constructor; the pointers stay valid for the object's lifetime.
  struct Views {
    int64_t* discrete_actions = nullptr;      // int64 [N]; null for Box action spaces
    float* continuous_actions = nullptr;      // float32 [N, act_dim]; null for Discrete spaces
    const float* obs = nullptr;               // float32 [N, obs_dim]
    const float* reward = nullptr;            // float32 [N]
    const uint8_t* terminated = nullptr;      // uint8 [N]
    const uint8_t* truncated = nullptr;       // uint8 [N]
    const float* final_obs = nullptr;         // float32 [N, obs_dim]
    const float* episode_return = nullptr;    // float32 [N]
    const int32_t* episode_length = nullptr;  // int32 [N], steps
  };

  // For decorators: a VecEnv with no envs and no thread pool; the derived class must fill views_
  // and override Reset() and Step(). Args: spec: lives at least as long as this object.
  VecEnv(const EnvSpec* spec, int num_envs, uint64_t seed);

  Views views_;

 private:
  struct Root;  // the BatchedEnv, its SoA buffers and the thread pool (vec_env.cc)

  const EnvSpec* spec_;
  const int num_envs_;
  const uint64_t seed_;
  std::unique_ptr<Root> root_;  // null in decorators
};

}  // namespace greenrl::env
