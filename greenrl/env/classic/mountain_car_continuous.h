// mountain_car_continuous.h: MountainCarContinuous-v0, a re-implementation of Gymnasium 1.0.0's
// gymnasium/envs/classic_control/continuous_mountain_car.py (commit
// 9938990977eb5e85ea4523ecf5cb2678c1708ba4) as registered by
// gymnasium.make("MountainCarContinuous-v0"), i.e. with its TimeLimit of 999 steps.
//
// MountainCar with a continuous force in [-1, 1] and a reward of +100 at the goal (x >= 0.45)
// minus 0.1 a^2 per step. Arithmetic runs in float64 with every float32 input widened first (NumPy
// 1.24 promotion), and, as in Gymnasium, the state is stored as float32 after every step; so
// trajectories match ../shared/testdata/classic_control/ bit for bit with glibc's libm.
#pragma once

#include <array>
#include <cstdint>

#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/classic/classic_env_base.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// One MountainCarContinuous-v0 env with its own Rng. Thread-safety: none; one thread per instance.
class MountainCarContinuous : public ClassicEnvBase<MountainCarContinuous, 2> {
 public:
  static constexpr int kActDim = 1;
  using Action = const float*;  // float32 [1]: force (clipped to [-1, 1]
                                //   for the physics; NaN passes, as in Gymnasium)
  static constexpr int kObsDim = 2;                // [position, velocity]
  using Observation = std::array<float, kObsDim>;  // float32 [2]
  using State = std::array<double, 2>;  // float64 [2]: position, velocity (float32 values after
                                        //   the first step)
  using StepResult = env::StepResult<kObsDim>;

  // Constants of Gymnasium 1.0.0 continuous_mountain_car.py (Continuous_MountainCarEnv.__init__,
  // goal_velocity=0).
  static constexpr double kMinAction = -1.0;
  static constexpr double kMaxAction = 1.0;
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;
  static constexpr double kGoalPosition = 0.45;  // not 0.5 as in MountainCar-v0
  static constexpr double kGoalVelocity = 0.0;
  static constexpr double kPower = 0.0015;    // velocity change per step at force 1
  static constexpr double kGravity = 0.0025;  // literal 0.0025 in step()
  static constexpr double kResetLow = -0.6;   // reset: position ~ U(-0.6, -0.4), velocity 0
  static constexpr double kResetHigh = -0.4;
  static constexpr int kMaxEpisodeSteps = 999;      // TimeLimit of MountainCarContinuous-v0
  static constexpr double kRewardThreshold = 90.0;  // reward_threshold of MountainCarContinuous-v0

  // The static spec: id "MountainCarContinuous-v0"; observation Box float32 [2] with
  // low = [-1.2, -0.07], high = [0.6, 0.07]; action Box float32 [1] in [-1, 1];
  // max_episode_steps 999; reward_threshold 90.
  static const EnvSpec& Spec();

  explicit MountainCarContinuous(uint64_t seed = 0) : ClassicEnvBase(seed) {}

  using ClassicEnvBase::Reset;  // Reset(seed): reseed the Rng, then Reset()
  // position ~ U(-0.6, -0.4) from the env's own Rng, velocity 0 (float64 until the first step);
  // clears the TimeLimit count. Returns: float32 [2], the initial observation.
  Observation Reset();

  // force = clip(a, -1, 1); velocity += force * 0.0015 - 0.0025 cos(3 position), clipped to
  // +-0.07; position += velocity, clipped to [-1.2, 0.6]; at the left wall a leftward velocity
  // becomes 0; the state is then rounded to float32.
  // Out-of-range actions (Gymnasium's rule): the physics use the clipped force, the reward the raw
  // action, so a = 3 is penalised by 0.1 * 9.
  // Args: action: float32 [1].
  // Returns: the new (float32) state; reward (100 if terminated else 0) - 0.1 a^2 with the raw a;
  //   terminated when position >= 0.45 and velocity >= 0; truncated when the steps since Reset()
  //   reach 999. No latch after termination. Non-finite actions are not checked (as Gymnasium).
  // Errors: greenrl::InternalError (GREENRL_CHECK) when called before any Reset().
  StepResult Step(Action action);
};

}  // namespace greenrl::env
