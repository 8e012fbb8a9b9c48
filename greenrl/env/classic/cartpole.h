// cartpole.h: CartPole-v1, a re-implementation of Gymnasium 1.0.0's
// gymnasium/envs/classic_control/cartpole.py (commit 9938990977eb5e85ea4523ecf5cb2678c1708ba4)
// as registered by gymnasium.make("CartPole-v1"), i.e. with its TimeLimit of 500 steps.
//
// The dynamics run in float64 in Gymnasium's order of operations, so trajectories match the
// reference data in ../shared/testdata/classic_control/ bit for bit with glibc's libm and
// -ffp-contract=off. A cart moves on a frictionless track with an unactuated pole on top; each step
// pushes the cart left (action 0, -10 N) or right (action 1, +10 N) for tau = 0.02 s.
#pragma once

#include <array>
#include <cstdint>

#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/classic/classic_env_base.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// One CartPole-v1 env with its own Rng. Thread-safety: none; one thread per instance (VecEnv gives
// each row to exactly one thread per call).
class CartPole : public ClassicEnvBase<CartPole, 4> {
 public:
  using Action = int64_t;                          // 0: push left, 1: push right
  static constexpr int kObsDim = 4;                // [x, x_dot, theta, theta_dot]
  using Observation = std::array<float, kObsDim>;  // float32 [4], the state cast to float32
  using State = std::array<double, 4>;             // float64 [4]: x (m), x_dot (m/s), theta (rad,
                                                   //   0 = upright), theta_dot (rad/s)
  using StepResult = env::StepResult<kObsDim>;

  // Constants of Gymnasium 1.0.0 cartpole.py (CartPoleEnv.__init__), same names and arithmetic.
  static constexpr double kGravity = 9.8;                           // m/s^2
  static constexpr double kMassCart = 1.0;                          // kg
  static constexpr double kMassPole = 0.1;                          // kg
  static constexpr double kTotalMass = kMassPole + kMassCart;       // kg
  static constexpr double kLength = 0.5;                            // m, half the pole length
  static constexpr double kPoleMassLength = kMassPole * kLength;    // kg m
  static constexpr double kForceMag = 10.0;                         // N
  static constexpr double kTau = 0.02;                              // s per step (euler)
  static constexpr double kPi = 3.141592653589793;                  // Python's math.pi
  static constexpr double kThetaThresholdRad = 12 * 2 * kPi / 360;  // rad, 12 degrees
  static constexpr double kXThreshold = 2.4;                        // m
  static constexpr double kResetLow = -0.05;  // reset: each state component ~ U(-0.05, 0.05)
  static constexpr double kResetHigh = 0.05;
  static constexpr int kMaxEpisodeSteps = 500;       // TimeLimit of the registered CartPole-v1
  static constexpr double kRewardThreshold = 475.0;  // reward_threshold of CartPole-v1

  // The static spec: id "CartPole-v1"; observation Box float32 [4] with
  // high = [2 * 2.4, +inf, 2 * 12 degrees in rad, +inf] and low = -high (the velocity bounds were
  // np.finfo(np.float32).max before Gymnasium 1.0 and became np.inf with
  // Farama-Foundation/Gymnasium#1092); action Discrete(2); max_episode_steps 500;
  // reward_threshold 475.
  static const EnvSpec& Spec();

  explicit CartPole(uint64_t seed = 0) : ClassicEnvBase(seed) {}

  using ClassicEnvBase::Reset;  // Reset(seed): reseed the Rng, then Reset()
  // Draws each state component from U(-0.05, 0.05) (in the order x, x_dot, theta, theta_dot) from
  // the env's own Rng, and clears the TimeLimit step count and the after-termination counter.
  // Returns: float32 [4], the initial observation.
  Observation Reset();

  // Advances the physics one explicit-Euler step of kTau with force +-kForceMag.
  // Returns: the new state as float32; reward 1.0 while in bounds and on the step that first
  //   terminates, 0.0 on each later step that is still out of bounds (with a warning logged once
  //   to stderr per episode); terminated when |x| > 2.4 or |theta| > 12 degrees (strict);
  //   truncated when the steps since Reset() reach 500 (and on every step after).
  // Errors: std::invalid_argument naming the action when action is not 0 or 1 (nothing changes);
  //   greenrl::InternalError (GREENRL_CHECK) when called before any Reset().
  StepResult Step(Action action);

 private:
  int steps_beyond_terminated_ = -1;  // -1 plays Python's None: not terminated yet this episode
};

}  // namespace greenrl::env
