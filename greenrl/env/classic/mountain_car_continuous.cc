#include "greenrl/env/classic/mountain_car_continuous.h"

#include <cmath>

#include "greenrl/core/errors.h"
#include "greenrl/env/classic/internal/py_math.h"

namespace greenrl::env {
namespace {

EnvSpec MakeSpec() {
  using E = MountainCarContinuous;
  EnvSpec spec;
  spec.id = "MountainCarContinuous-v0";
  spec.observation_space.low = {static_cast<float>(E::kMinPosition),
                                static_cast<float>(-E::kMaxSpeed)};
  spec.observation_space.high = {static_cast<float>(E::kMaxPosition),
                                 static_cast<float>(E::kMaxSpeed)};
  spec.observation_space.shape = {E::kObsDim};
  Box action;
  action.low = {static_cast<float>(E::kMinAction)};
  action.high = {static_cast<float>(E::kMaxAction)};
  action.shape = {E::kActDim};
  spec.action_space = action;
  spec.max_episode_steps = E::kMaxEpisodeSteps;
  spec.reward_threshold = E::kRewardThreshold;
  return spec;
}

MountainCarContinuous::Observation ToObservation(const MountainCarContinuous::State& s) {
  return {static_cast<float>(s[0]), static_cast<float>(s[1])};
}

// x rounded to float32. Through a volatile: GCC 12.2 at -O2 (Debian 12.2.0-14) compiled
// `state_ = {double(float(p)), double(float(v))}` as `state_ = {p, v}` after the pow call of the
// reward went in, which the golden test caught; the volatile keeps the rounding.
float RoundToFloat32(double x) {
  volatile float rounded = static_cast<float>(x);
  return rounded;
}

}  // namespace

const EnvSpec& MountainCarContinuous::Spec() {
  static const EnvSpec spec = MakeSpec();
  return spec;
}

MountainCarContinuous::Observation MountainCarContinuous::Reset() {
  state_ = {rng_.Uniform(kResetLow, kResetHigh), 0.0};
  has_reset_ = true;
  elapsed_steps_ = 0;
  return ToObservation(state_);
}

MountainCarContinuous::StepResult MountainCarContinuous::Step(Action action) {
  GREENRL_CHECK(has_reset_, "MountainCarContinuous::Step() called before Reset()");
  // Continuous_MountainCarEnv.step, in Gymnasium's order; float32 inputs widened to float64.
  const double a = static_cast<double>(action[0]);
  double position = state_[0];
  double velocity = state_[1];
  // Python's min(max(a, lo), hi), which passes a NaN through (std::fmin/fmax would not).
  const double force = a < kMinAction ? kMinAction : (a > kMaxAction ? kMaxAction : a);
  velocity += force * kPower - kGravity * std::cos(3 * position);
  if (velocity > kMaxSpeed) velocity = kMaxSpeed;
  if (velocity < -kMaxSpeed) velocity = -kMaxSpeed;
  position += velocity;
  if (position > kMaxPosition) position = kMaxPosition;
  if (position < kMinPosition) position = kMinPosition;
  if (position == kMinPosition && velocity < 0) velocity = 0;  // inelastic left wall

  StepResult result;
  result.terminated = position >= kGoalPosition && velocity >= kGoalVelocity;
  // reward -= math.pow(action[0], 2) * 0.1, with the raw, unclipped action.
  result.reward = (result.terminated ? 100.0 : 0.0) - internal::PowSquare(a) * 0.1;
  // self.state = np.array([position, velocity], dtype=np.float32): the next step starts from it.
  result.obs = {RoundToFloat32(position), RoundToFloat32(velocity)};
  state_ = {static_cast<double>(result.obs[0]), static_cast<double>(result.obs[1])};
  // TimeLimit(max_episode_steps=999), as applied by gymnasium.make.
  ++elapsed_steps_;
  result.truncated = elapsed_steps_ >= kMaxEpisodeSteps;
  return result;
}

}  // namespace greenrl::env
