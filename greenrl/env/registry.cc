#include "greenrl/env/registry.h"

#include <algorithm>

#include "greenrl/core/errors.h"
#include "greenrl/env/classic/acrobot.h"
#include "greenrl/env/classic/cartpole.h"
#include "greenrl/env/classic/cartpole_batched.h"
#include "greenrl/env/classic/mountain_car.h"
#include "greenrl/env/classic/mountain_car_continuous.h"
#include "greenrl/env/classic/pendulum.h"
#include "greenrl/env/mujoco/half_cheetah.h"
#include "greenrl/env/mujoco/hopper.h"

namespace greenrl::env {
namespace {

template <typename E>
std::unique_ptr<BatchedEnv> MakeBatched(int num_envs) {
  return std::make_unique<BatchedEnvOf<E>>(num_envs);
}

template <typename E>
EnvRegistration Register(int min_rows_per_thread) {
  return EnvRegistration{&E::Spec(), &MakeBatched<E>, min_rows_per_thread};
}

}  // namespace

const std::vector<EnvRegistration>& RegisteredEnvs() {
  static const std::vector<EnvRegistration> registry = {
      // CartPole: the struct-of-arrays batch (same results as BatchedEnvOf<CartPole>, faster).
      // min_rows_per_thread (registry.h): the measurements behind each value are in the
      // README's table under "`threads.env` is an upper bound".
      EnvRegistration{&CartPole::Spec(), &CartPoleBatched::Make, 256},
      Register<Acrobot>(8),
      Register<MountainCar>(256),
      Register<MountainCarContinuous>(64),
      Register<Pendulum>(64),
      // MuJoCo locomotion: one model per VecEnv, built by the task's own factory; a row is tens
      // of microseconds, so every thread with a row pays off.
      EnvRegistration{&mujoco::HalfCheetah::Spec(), &mujoco::HalfCheetah::MakeBatched, 1},
      EnvRegistration{&mujoco::Hopper::Spec(), &mujoco::Hopper::MakeBatched, 1},
  };
  return registry;
}

std::string RegisteredEnvIdList() {
  std::string ids;
  for (const EnvRegistration& entry : RegisteredEnvs()) {
    if (!ids.empty()) ids += ", ";
    ids += entry.spec->id;
  }
  return ids;
}

namespace {

const EnvRegistration& FindRegistration(const std::string& env_id) {
  for (const EnvRegistration& entry : RegisteredEnvs()) {
    if (entry.spec->id == env_id) return entry;
  }
  throw ConfigError("env_id", env_id, "one of: " + RegisteredEnvIdList());
}

}  // namespace

const EnvSpec& FindEnvSpec(const std::string& env_id) { return *FindRegistration(env_id).spec; }

int EnvThreadsFor(const std::string& env_id, int num_envs, int max_threads) {
  const int min_rows = FindRegistration(env_id).min_rows_per_thread;  // >= 1 (RegistryTest)
  return std::clamp(num_envs / min_rows, 1, std::max(1, max_threads));
}

std::unique_ptr<VecEnv> MakeVecEnv(const std::string& env_id, int num_envs, uint64_t seed,
                                   int num_threads) {
  const EnvRegistration& entry = FindRegistration(env_id);
  if (num_envs < 1) throw ConfigError("num_envs", std::to_string(num_envs), "an integer >= 1");
  if (num_threads < 1) {
    throw ConfigError("num_threads", std::to_string(num_threads), "an integer >= 1");
  }
  return std::make_unique<VecEnv>(entry.make_batched(num_envs), seed, num_threads);
}

}  // namespace greenrl::env
