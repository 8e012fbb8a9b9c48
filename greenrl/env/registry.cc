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
      // min_rows_per_thread (see registry.h), from steps/s at 1 and 2 threads, 2026-12-02:
      // CartPole 256 rows: 79.6M / 66.2M at 256 envs, 79.9M / 83.8M at 512.
      EnvRegistration{&CartPole::Spec(), &CartPoleBatched::Make, 256},
      // Acrobot 8: 2.86M / 2.58M at 8 envs, 2.91M / 3.33M at 16.
      Register<Acrobot>(8),
      // MountainCar 256: 57.4M / 48.9M at 256 envs, 55.9M / 56.0M at 512, 53.6M / 61.1M at 1024.
      Register<MountainCar>(256),
      // MountainCarContinuous 64: 27.3M / 12.9M at 64 envs, 27.1M / 26.9M at 128, 27.3M / 35.3M
      // at 256.
      Register<MountainCarContinuous>(64),
      // Pendulum 64: 10.2M / 7.6M at 64 envs, 10.1M / 14.7M at 128.
      Register<Pendulum>(64),
      // MuJoCo locomotion: one model per VecEnv, built by the task's own factory. A row is tens
      // of microseconds, so every thread with a row pays off (HalfCheetah 36.0k / 60.6k steps/s
      // at 8 envs).
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
  const int min_rows = std::max(1, FindRegistration(env_id).min_rows_per_thread);
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
