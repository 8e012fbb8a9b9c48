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

  // The dynamics, shared by Step() and the batched CartPoleBatched (cartpole_batched.h) so both
  // compute the same bits. Inline so that a loop over rows can be vectorised around them.

  // One explicit-Euler step of Gymnasium 1.0.0 CartPoleEnv.step, term by term in its order of
  // operations (see the README of ../shared/testdata/classic_control/ for why the order matters).
  // T is double, or a GCC/Clang vector of doubles stepping several envs at once with the same
  // IEEE operations per lane (no reassociation, no FMA contraction: -ffp-contract=off). Always
  // inlined: CartPoleBatched's AVX2 clone passes it 32-byte vectors (cartpole_batched.cc).
  // Args: force: +-kForceMag (N); sintheta, costheta: sin and cos of theta (glibc's sincos);
  //   x (m), x_dot (m/s), theta (rad), theta_dot (rad/s): the float64 state, updated in place.
  template <typename T>
  __attribute__((always_inline)) static inline void EulerStep(const T& force, const T& sintheta,
                                                              const T& costheta, T& x, T& x_dot,
                                                              T& theta, T& theta_dot) {
    const T temp = (force + kPoleMassLength * (theta_dot * theta_dot) * sintheta) / kTotalMass;
    const T thetaacc = (kGravity * sintheta - costheta * temp) /
                       (kLength * (4.0 / 3.0 - kMassPole * (costheta * costheta) / kTotalMass));
    const T xacc = temp - kPoleMassLength * thetaacc * costheta / kTotalMass;
    // Explicit Euler: every new value uses the old state.
    x = x + kTau * x_dot;
    x_dot = x_dot + kTau * xacc;
    theta = theta + kTau * theta_dot;
    theta_dot = theta_dot + kTau * thetaacc;
  }

  // Gymnasium's termination test on the state after a step: |x| > 2.4 m or |theta| > 12 degrees
  // (strict), without branches. T as in EulerStep. Returns: for double, an int, 1 when
  // terminated, else 0; for a vector, a vector of 64-bit ints, -1 (all bits) or 0 per lane.
  // Always inlined, as EulerStep.
  template <typename T>
  __attribute__((always_inline)) static inline auto OutOfBounds(const T& x, const T& theta) {
    return (x < -kXThreshold) | (x > kXThreshold) | (theta < -kThetaThresholdRad) |
           (theta > kThetaThresholdRad);
  }

  // Throws std::invalid_argument("CartPole-v1: invalid action <action>; expected 0 or 1").
  [[noreturn]] static void ThrowInvalidAction(Action action);

  // Gymnasium's reset draw: each component U(kResetLow, kResetHigh) from `rng`, in the order x,
  // x_dot, theta, theta_dot. Returns: the float64 state.
  static inline State DrawResetState(Rng& rng) {
    State s;
    for (double& v : s) v = rng.Uniform(kResetLow, kResetHigh);
    return s;
  }

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
