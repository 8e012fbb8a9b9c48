#include "greenrl/env/classic/pendulum.h"

#include <cmath>

#include "greenrl/core/errors.h"
#include "greenrl/env/classic/internal/py_math.h"

namespace greenrl::env {
namespace {

Pendulum::Observation ToObservation(const Pendulum::State& s) {
  return {static_cast<float>(std::cos(s[0])), static_cast<float>(std::sin(s[0])),
          static_cast<float>(s[1])};
}

EnvSpec MakeSpec() {
  const float max_speed = static_cast<float>(Pendulum::kMaxSpeed);
  const float max_torque = static_cast<float>(Pendulum::kMaxTorque);
  EnvSpec spec;
  spec.id = "Pendulum-v1";
  spec.observation_space.high = {1.0f, 1.0f, max_speed};
  spec.observation_space.low = {-1.0f, -1.0f, -max_speed};
  spec.observation_space.shape = {Pendulum::kObsDim};
  Box action;
  action.low = {-max_torque};
  action.high = {max_torque};
  action.shape = {Pendulum::kActDim};
  spec.action_space = action;
  spec.max_episode_steps = Pendulum::kMaxEpisodeSteps;
  spec.reward_threshold = std::nullopt;  // Gymnasium registers Pendulum-v1 without one
  return spec;
}

// np.clip(x, lo, hi) for finite bounds.
double Clip(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

}  // namespace

const EnvSpec& Pendulum::Spec() {
  static const EnvSpec spec = MakeSpec();
  return spec;
}

double Pendulum::AngleNormalize(double x) {
  constexpr double kTwoPi = 2 * kPi;
  double r = std::fmod(x + kPi, kTwoPi);
  if (r < 0) r += kTwoPi;  // floor modulo, as NumPy's %: the result takes the divisor's sign
  return r - kPi;
}

Pendulum::Observation Pendulum::Reset() {
  const double theta = rng_.Uniform(-kResetThetaHigh, kResetThetaHigh);
  const double theta_dot = rng_.Uniform(-kResetThetaDotHigh, kResetThetaDotHigh);
  state_ = {theta, theta_dot};
  has_reset_ = true;
  elapsed_steps_ = 0;
  return ToObservation(state_);
}

Pendulum::StepResult Pendulum::Step(Action action) {
  GREENRL_CHECK(has_reset_, "Pendulum::Step() called before Reset()");
  // PendulumEnv.step, in Gymnasium's order; the float32 action widened to float64.
  const double th = state_[0];
  const double thdot = state_[1];
  const double u = Clip(static_cast<double>(action[0]), -kMaxTorque, kMaxTorque);
  const double angle = AngleNormalize(th);
  // NumPy's `x ** 2` is pow(x, 2.0) (PowSquare).
  const double costs = internal::PowSquare(angle) + 0.1 * internal::PowSquare(thdot) +
                       0.001 * internal::PowSquare(u);
  double newthdot = thdot + (3 * kG / (2 * kL) * std::sin(th) + 3.0 / (kM * (kL * kL)) * u) * kDt;
  newthdot = Clip(newthdot, -kMaxSpeed, kMaxSpeed);
  const double newth = th + newthdot * kDt;
  state_ = {newth, newthdot};

  StepResult result;
  result.obs = ToObservation(state_);
  result.reward = -costs;
  result.terminated = false;
  // TimeLimit(max_episode_steps=200), as applied by gymnasium.make.
  ++elapsed_steps_;
  result.truncated = elapsed_steps_ >= kMaxEpisodeSteps;
  return result;
}

}  // namespace greenrl::env
