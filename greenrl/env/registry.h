// registry.h: the list of environment ids greenrl can build, and MakeVecEnv.
//
// Each entry pairs an env type's static EnvSpec with a factory for its BatchedEnv. Adding a
// built-in env is one line in registry.cc's table; a program of the user's adds its own with
// RegisterEnv. Used by the trainer
// (MakeVecEnv) and by `greenrl envs` (RegisteredEnvs).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "greenrl/env/batched_env.h"
#include "greenrl/env/spaces.h"
#include "greenrl/env/vec_env.h"

namespace greenrl::env {

// One registered env type.
struct EnvRegistration {
  const EnvSpec* spec = nullptr;  // the type's static spec (never null, lives forever)
  // Builds num_envs (>= 1) default-constructed copies of the env type.
  std::unique_ptr<BatchedEnv> (*make_batched)(int num_envs) = nullptr;
  // The fewest rows per env thread for which a second thread paid off in `greenrl_bench_envs`
  // (random actions, n_envs 16-512, 1 and 2 threads; Intel Xeon VM, 2026-12-02; the figures are
  // in the README under "`threads.env` is an upper bound"): a hand-off between threads costs a
  // few microseconds, a CartPole row ~13 ns, a MuJoCo row ~27 us. EnvThreadsFor uses it.
  int min_rows_per_thread = 1;
};

// The registration of a single-env class E (batched_env.h lists what E provides; CartPole is the
// model) stepped through BatchedEnvOf<E>: its own type's spec, and N default-constructed copies.
// Errors: std::invalid_argument, naming the id, when E's rows disagree with its spec (they would
//   be read and written out of place): kObsDim != Spec().obs_dim(), Action int64_t for a Box
//   action space or `const float*` for a Discrete one, kActDim != Spec().act_dim() for a Box.
template <typename E>
EnvRegistration EnvRegistrationOf(int min_rows_per_thread = 1) {
  using Action = typename E::Action;
  static_assert(std::is_same_v<Action, int64_t> || std::is_same_v<Action, const float*>,
                "E::Action is int64_t (Discrete) or const float* (Box, float32 [kActDim])");
  const EnvSpec& spec = E::Spec();
  const std::string id = spec.id;
  if (E::kObsDim != spec.obs_dim()) {
    throw std::invalid_argument(id + ": kObsDim is " + std::to_string(E::kObsDim) +
                                " but the spec's observation space has " +
                                std::to_string(spec.obs_dim()) + " values");
  }
  if (std::is_same_v<Action, int64_t> != spec.discrete_actions()) {
    throw std::invalid_argument(
        id + ": Action is " +
        (std::is_same_v<Action, int64_t> ? "int64_t (Discrete)" : "const float* (Box)") +
        " but the spec's action space is " + (spec.discrete_actions() ? "Discrete" : "a Box"));
  }
  if constexpr (std::is_same_v<Action, const float*>) {
    if (E::kActDim != spec.act_dim()) {
      throw std::invalid_argument(id + ": kActDim is " + std::to_string(E::kActDim) +
                                  " but the spec's action space has " +
                                  std::to_string(spec.act_dim()) + " values");
    }
  }
  return EnvRegistration{&spec,
                         [](int num_envs) -> std::unique_ptr<BatchedEnv> {
                           return std::make_unique<BatchedEnvOf<E>>(num_envs);
                         },
                         min_rows_per_thread};
}

// Adds an env type of the user's own to the registry, after the built-in ones: from then on
// MakeVecEnv, the config's env_id, the trainer, `greenrl envs`, eval and export know its id
// (README "Your own environment"; examples/custom_env.cc registers one and runs the whole CLI
// with it). Register every env first thing in main, before anything else reads the registry
// (the registry is not locked: registering while another thread reads it is a data race).
// Errors: ConfigError("env_id", id, "an id that is not registered yet ...") for an id already
// registered; std::invalid_argument for a null spec or make_batched, an empty id,
// min_rows_per_thread < 1, an observation space with a shape entry below 1 or without one low
// and one high bound per value (a shape of () is one value, as Gymnasium's scalar Box), a bound
// that is NaN or a low above its high (Gymnasium's Box refuses both), max_episode_steps < 1, or an
// action space random actions cannot be drawn from (CheckSampleable's message). Nothing is added
// then.
void RegisterEnv(const EnvRegistration& registration);

// Every registered env type, in a fixed order: CartPole-v1, Acrobot-v1, MountainCar-v0,
// MountainCarContinuous-v0, Pendulum-v1 (Gymnasium 1.0.0 ids, spaces, TimeLimits and reward
// thresholds; Pendulum-v1 has no reward threshold), then HalfCheetah-v4, HalfCheetah-v5,
// Hopper-v4, Hopper-v5, Walker2d-v4, Walker2d-v5, Ant-v4, Ant-v5, Swimmer-v4, Swimmer-v5,
// InvertedPendulum-v4, InvertedPendulum-v5, InvertedDoublePendulum-v4, InvertedDoublePendulum-v5,
// Reacher-v4, Reacher-v5, Humanoid-v4, Humanoid-v5, HumanoidStandup-v4, HumanoidStandup-v5,
// Pusher-v4 and Pusher-v5 (Gymnasium's MuJoCo envs in their v4 and v5 versions, mujoco/; their
// models are loaded when a VecEnv is built), then the ones RegisterEnv added, in the order they
// were added.
const std::vector<EnvRegistration>& RegisteredEnvs();

// Whether the simulators' own warnings (MuJoCo's: an unstable state, a full contact arena;
// mujoco/mujoco_model.h) are printed on stderr; true at start. Train turns them off for a run
// without verbose output (`train --quiet`) and on ranks other than 0, as its other warnings, and
// restores the setting when it returns. Thread-safe.
void SetSimulatorWarningsPrinted(bool printed);
bool SimulatorWarningsPrinted();

// The registered ids joined by ", " (e.g. "CartPole-v1, Acrobot-v1, ..."), for messages.
std::string RegisteredEnvIdList();

// The spec registered under env_id.
// Errors: greenrl::ConfigError("env_id", env_id, "one of: <ids>") for an unknown id.
const EnvSpec& FindEnvSpec(const std::string& env_id);

// How many threads to step num_envs rows of env_id with, given at most max_threads:
// clamp(num_envs / min_rows_per_thread, 1, max_threads). Fewer threads never change results
// (VecEnv rows are seeded per env); they avoid a hand-off that costs more than it saves (e.g. 8
// CartPoles run at 72M steps/s on one thread and 6.6M on two). The trainer applies it to
// `threads.env`; MakeVecEnv does not, so that tests and benchmarks get the threads they ask for.
// Errors: greenrl::ConfigError("env_id", env_id, "one of: <ids>") for an unknown id.
int EnvThreadsFor(const std::string& env_id, int num_envs, int max_threads);

// Builds a VecEnv of num_envs copies of env_id, stepped by num_threads threads (see VecEnv). Call
// Reset() on it before the first Step().
// Args: env_id: a registered id; num_envs: rows N >= 1; seed: row i seeds from
//   DeriveSeed(seed, i); num_threads: >= 1, the caller's thread included.
// Errors: greenrl::ConfigError("env_id", env_id, "one of: <ids>") for an unknown id;
//   greenrl::ConfigError("num_envs", ...) for num_envs < 1;
//   greenrl::ConfigError("num_threads", ...) for num_threads < 1.
std::unique_ptr<VecEnv> MakeVecEnv(const std::string& env_id, int num_envs, uint64_t seed,
                                   int num_threads);

}  // namespace greenrl::env
