#include "greenrl/env/registry.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"
#include "greenrl/env/classic/acrobot.h"
#include "greenrl/env/classic/cartpole.h"
#include "greenrl/env/classic/cartpole_batched.h"
#include "greenrl/env/classic/mountain_car.h"
#include "greenrl/env/classic/mountain_car_continuous.h"
#include "greenrl/env/classic/pendulum.h"
#include "greenrl/env/mujoco/ant.h"
#include "greenrl/env/mujoco/half_cheetah.h"
#include "greenrl/env/mujoco/hopper.h"
#include "greenrl/env/mujoco/humanoid.h"
#include "greenrl/env/mujoco/humanoid_standup.h"
#include "greenrl/env/mujoco/inverted_double_pendulum.h"
#include "greenrl/env/mujoco/inverted_pendulum.h"
#include "greenrl/env/mujoco/mujoco_model.h"
#include "greenrl/env/mujoco/pusher.h"
#include "greenrl/env/mujoco/reacher.h"
#include "greenrl/env/mujoco/swimmer.h"
#include "greenrl/env/mujoco/walker2d.h"

namespace greenrl::env {
namespace {

// A MuJoCo task's registration: its own factory, which loads one model per VecEnv; a row is
// tens of microseconds, so every thread with a row pays off (min_rows_per_thread 1).
template <typename Task>
EnvRegistration MujocoTask() {
  return EnvRegistration{&Task::Spec(), &Task::MakeBatched, 1};
}

// The registry itself: the built-in env types, then those RegisterEnv added.
std::vector<EnvRegistration>& Registry() {
  static std::vector<EnvRegistration> registry = {
      // CartPole: the struct-of-arrays batch (same results as BatchedEnvOf<CartPole>, faster).
      // min_rows_per_thread (registry.h): the measurements behind each value are in
      // docs/speed-history.md, "`threads.env` is an upper bound".
      EnvRegistration{&CartPole::Spec(), &CartPoleBatched::Make, 256},
      EnvRegistrationOf<Acrobot>(8),
      EnvRegistrationOf<MountainCar>(256),
      EnvRegistrationOf<MountainCarContinuous>(64),
      EnvRegistrationOf<Pendulum>(64),
      // MuJoCo: v4 then v5 of each task (mujoco/locomotion.h says what v5 changes).
      MujocoTask<mujoco::HalfCheetah>(),
      MujocoTask<mujoco::HalfCheetahV5>(),
      MujocoTask<mujoco::Hopper>(),
      MujocoTask<mujoco::HopperV5>(),
      MujocoTask<mujoco::Walker2d>(),
      MujocoTask<mujoco::Walker2dV5>(),
      MujocoTask<mujoco::Ant>(),
      MujocoTask<mujoco::AntV5>(),
      MujocoTask<mujoco::Swimmer>(),
      MujocoTask<mujoco::SwimmerV5>(),
      MujocoTask<mujoco::InvertedPendulum>(),
      MujocoTask<mujoco::InvertedPendulumV5>(),
      MujocoTask<mujoco::InvertedDoublePendulum>(),
      MujocoTask<mujoco::InvertedDoublePendulumV5>(),
      MujocoTask<mujoco::Reacher>(),
      MujocoTask<mujoco::ReacherV5>(),
      MujocoTask<mujoco::Humanoid>(),
      MujocoTask<mujoco::HumanoidV5>(),
      MujocoTask<mujoco::HumanoidStandup>(),
      MujocoTask<mujoco::HumanoidStandupV5>(),
      MujocoTask<mujoco::Pusher>(),
      MujocoTask<mujoco::PusherV5>(),
  };
  return registry;
}

}  // namespace

const std::vector<EnvRegistration>& RegisteredEnvs() { return Registry(); }

void RegisterEnv(const EnvRegistration& registration) {
  if (registration.spec == nullptr || registration.make_batched == nullptr) {
    throw std::invalid_argument("RegisterEnv: an EnvRegistration needs a spec and make_batched");
  }
  const EnvSpec& spec = *registration.spec;
  const std::string id = spec.id.empty() ? "(empty id)" : spec.id;
  if (spec.id.empty()) throw std::invalid_argument("RegisterEnv: the spec has an empty id");
  if (registration.min_rows_per_thread < 1) {
    throw std::invalid_argument("RegisterEnv: " + id + ": min_rows_per_thread must be >= 1, got " +
                                std::to_string(registration.min_rows_per_thread));
  }
  const Box& obs = spec.observation_space;
  // A shape of () is one value (Gymnasium's scalar Box); an entry below 1 is no shape.
  const bool bad_shape =
      std::any_of(obs.shape.begin(), obs.shape.end(), [](int64_t n) { return n < 1; });
  if (bad_shape || obs.dim() < 1 || obs.low.size() != static_cast<size_t>(obs.dim()) ||
      obs.high.size() != static_cast<size_t>(obs.dim())) {
    throw std::invalid_argument("RegisterEnv: " + id +
                                ": the observation space needs a shape whose entries are all "
                                ">= 1 and one low and one high bound per value");
  }
  for (int64_t k = 0; k < obs.dim(); ++k) {
    const double low = obs.low[static_cast<size_t>(k)], high = obs.high[static_cast<size_t>(k)];
    if (std::isnan(low) || std::isnan(high) || low > high) {
      throw std::invalid_argument(
          "RegisterEnv: " + id + ": observation bound " + std::to_string(k) + " is [" +
          std::to_string(low) + ", " + std::to_string(high) +
          "]; each needs low <= high and neither NaN (Gymnasium's Box refuses both)");
    }
  }
  if (spec.max_episode_steps < 1) {
    throw std::invalid_argument("RegisterEnv: " + id +
                                ": max_episode_steps (the TimeLimit) must be >= 1, got " +
                                std::to_string(spec.max_episode_steps));
  }
  CheckSampleable(id, spec.action_space);  // std::invalid_argument naming the component
  for (const EnvRegistration& entry : Registry()) {
    if (entry.spec->id == spec.id) {
      throw ConfigError(
          "env_id", spec.id,
          "an id that is not registered yet (registered: " + RegisteredEnvIdList() + ")");
    }
  }
  Registry().push_back(registration);
}

void SetSimulatorWarningsPrinted(bool printed) { mujoco::SetWarningsPrinted(printed); }

bool SimulatorWarningsPrinted() { return mujoco::WarningsPrinted(); }

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
  std::vector<std::string> ids;
  for (const EnvRegistration& entry : RegisteredEnvs()) ids.push_back(entry.spec->id);
  throw ConfigError("env_id", env_id, OneOfWithHint(env_id, ids));
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
