// pendulum.h: Pendulum-v1, a re-implementation of Gymnasium 1.0.0's
// gymnasium/envs/classic_control/pendulum.py (commit 9938990977eb5e85ea4523ecf5cb2678c1708ba4)
// as registered by gymnasium.make("Pendulum-v1"), i.e. with its TimeLimit of 200 steps.
//
// Swing a pendulum up and hold it upright with a torque in [-2, 2] N m. Semi-implicit Euler with
// dt = 0.05 s, in float64 with float32 actions widened first (NumPy 1.24 promotion), so
// trajectories match ../shared/testdata/classic_control/ bit for bit with glibc's libm.
// Never terminates; Pendulum-v1 has no reward threshold in Gymnasium's registry.
#pragma once

#include <array>
#include <cstdint>

#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/classic/classic_env_base.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// One Pendulum-v1 env with its own Rng. Thread-safety: none; one thread per instance.
class Pendulum : public ClassicEnvBase<Pendulum, 2> {
 public:
  static constexpr int kActDim = 1;
  using Action = const float*;                     // float32 [1]: torque (N m), any finite value
  static constexpr int kObsDim = 3;                // [cos theta, sin theta, theta_dot]
  using Observation = std::array<float, kObsDim>;  // float32 [3]
  using State = std::array<double, 2>;  // float64 [2]: theta (rad, 0 = upright, never wrapped),
                                        //   theta_dot (rad/s)
  using StepResult = env::StepResult<kObsDim>;

  // Constants of Gymnasium 1.0.0 pendulum.py (PendulumEnv.__init__ with g = 10.0).
  static constexpr double kPi = 3.141592653589793;   // numpy.pi
  static constexpr double kMaxSpeed = 8.0;           // rad/s, |theta_dot| is clipped to this
  static constexpr double kMaxTorque = 2.0;          // N m, |u| is clipped to this
  static constexpr double kDt = 0.05;                // s per step
  static constexpr double kG = 10.0;                 // m/s^2
  static constexpr double kM = 1.0;                  // kg
  static constexpr double kL = 1.0;                  // m
  static constexpr double kResetThetaHigh = kPi;     // reset: theta ~ U(-pi, pi)
  static constexpr double kResetThetaDotHigh = 1.0;  // reset: theta_dot ~ U(-1, 1)
  static constexpr int kMaxEpisodeSteps = 200;       // TimeLimit of the registered Pendulum-v1

  // The static spec: id "Pendulum-v1"; observation Box float32 [3] with high = [1, 1, 8] and
  // low = -high; action Box float32 [1] in [-2, 2]; max_episode_steps 200; no reward_threshold.
  static const EnvSpec& Spec();

  explicit Pendulum(uint64_t seed = 0) : ClassicEnvBase(seed) {}

  using ClassicEnvBase::Reset;  // Reset(seed): reseed the Rng, then Reset()
  // theta ~ U(-pi, pi), then theta_dot ~ U(-1, 1), from the env's own Rng; clears the TimeLimit
  // count. Returns: float32 [3], the initial observation.
  Observation Reset();

  // u = clip(a, -2, 2); cost = AngleNormalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2 from the
  // state before the update; theta_dot' = clip(theta_dot + (15 sin theta + 3 u) dt, -8, 8);
  // theta' = theta + theta_dot' dt (theta is never wrapped).
  // Out-of-range actions (Gymnasium's rule): clipped, for the physics and the cost alike.
  // Args: action: float32 [1].
  // Returns: observation [cos theta', sin theta', theta_dot']; reward -cost; never terminated;
  //   truncated when the steps since Reset() reach 200 (and on every step after).
  // Errors: greenrl::InternalError (GREENRL_CHECK) when called before any Reset().
  StepResult Step(Action action);

  // pendulum.py's angle_normalize: ((x + pi) mod 2 pi) - pi with floor modulo (Python's %), so
  // the result lies in [-pi, pi) and AngleNormalize(pi) == -pi.
  static double AngleNormalize(double x);
};

}  // namespace greenrl::env
