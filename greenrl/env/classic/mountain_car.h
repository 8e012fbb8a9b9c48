// mountain_car.h: MountainCar-v0, a re-implementation of Gymnasium 1.0.0's
// gymnasium/envs/classic_control/mountain_car.py (commit 9938990977eb5e85ea4523ecf5cb2678c1708ba4)
// as registered by gymnasium.make("MountainCar-v0"), i.e. with its TimeLimit of 200 steps.
//
// An under-powered car in a valley (height sin(3 x)) must reach the flag at x = 0.5 on the right
// hill by rocking back and forth. Dynamics run in float64 in Gymnasium's order of operations, so
// trajectories match ../shared/testdata/classic_control/ bit for bit with glibc's libm.
// Units: position and velocity are in Gymnasium's abstract units (position per step).
#pragma once

#include <array>
#include <cstdint>

#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/classic/classic_env_base.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// One MountainCar-v0 env with its own Rng. Thread-safety: none; one thread per instance.
class MountainCar : public ClassicEnvBase<MountainCar, 2> {
 public:
  using Action = int64_t;                          // 0: push left, 1: no push, 2: push right
  static constexpr int kObsDim = 2;                // [position, velocity]
  using Observation = std::array<float, kObsDim>;  // float32 [2], the state cast to float32
  using State = std::array<double, 2>;             // float64 [2]: position, velocity
  using StepResult = env::StepResult<kObsDim>;

  // Constants of Gymnasium 1.0.0 mountain_car.py (MountainCarEnv.__init__, goal_velocity=0).
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;  // |velocity| is clipped to this
  static constexpr double kGoalPosition = 0.5;
  static constexpr double kGoalVelocity = 0.0;
  static constexpr double kForce = 0.001;  // velocity change per step of a push
  static constexpr double kGravity = 0.0025;
  static constexpr double kResetLow = -0.6;  // reset: position ~ U(-0.6, -0.4), velocity 0
  static constexpr double kResetHigh = -0.4;
  static constexpr int kMaxEpisodeSteps = 200;        // TimeLimit of the registered MountainCar-v0
  static constexpr double kRewardThreshold = -110.0;  // reward_threshold of MountainCar-v0

  // The static spec: id "MountainCar-v0"; observation Box float32 [2] with low = [-1.2, -0.07],
  // high = [0.6, 0.07]; action Discrete(3); max_episode_steps 200; reward_threshold -110.
  static const EnvSpec& Spec();

  explicit MountainCar(uint64_t seed = 0) : ClassicEnvBase(seed) {}

  using ClassicEnvBase::Reset;  // Reset(seed): reseed the Rng, then Reset()
  // position ~ U(-0.6, -0.4) from the env's own Rng, velocity 0; clears the TimeLimit count.
  // Returns: float32 [2], the initial observation.
  Observation Reset();

  // velocity += (action - 1) * 0.001 - 0.0025 cos(3 position), clipped to +-0.07; position +=
  // velocity, clipped to [-1.2, 0.6]; at the left wall a leftward velocity becomes 0.
  // Returns: the new state as float32; reward -1.0 on every step (the terminating one included);
  //   terminated when position >= 0.5 and velocity >= 0; truncated when the steps since Reset()
  //   reach 200. Steps after termination follow the same rules (no latch; as Gymnasium).
  // Errors: std::invalid_argument naming the action when it is not 0, 1 or 2 (nothing changes);
  //   greenrl::InternalError (GREENRL_CHECK) when called before any Reset().
  StepResult Step(Action action);
};

}  // namespace greenrl::env
