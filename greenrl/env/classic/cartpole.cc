#include "greenrl/env/classic/cartpole.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "greenrl/core/errors.h"

namespace greenrl::env {
namespace {

CartPole::Observation ToObservation(const CartPole::State& s) {
  return {static_cast<float>(s[0]), static_cast<float>(s[1]), static_cast<float>(s[2]),
          static_cast<float>(s[3])};
}

EnvSpec MakeSpec() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float x_high = static_cast<float>(CartPole::kXThreshold * 2);
  const float theta_high = static_cast<float>(CartPole::kThetaThresholdRad * 2);
  EnvSpec spec;
  spec.id = "CartPole-v1";
  spec.observation_space.high = {x_high, kInf, theta_high, kInf};
  spec.observation_space.low = {-x_high, -kInf, -theta_high, -kInf};
  spec.observation_space.shape = {CartPole::kObsDim};
  spec.action_space = Discrete{2};
  spec.max_episode_steps = CartPole::kMaxEpisodeSteps;
  spec.reward_threshold = CartPole::kRewardThreshold;
  return spec;
}

}  // namespace

const EnvSpec& CartPole::Spec() {
  static const EnvSpec spec = MakeSpec();
  return spec;
}

void CartPole::ThrowInvalidAction(Action action) {
  throw std::invalid_argument("CartPole-v1: invalid action " + std::to_string(action) +
                              "; expected 0 or 1");
}

CartPole::Observation CartPole::Reset() {
  state_ = DrawResetState(rng_);
  has_reset_ = true;
  elapsed_steps_ = 0;
  steps_beyond_terminated_ = -1;
  return ToObservation(state_);
}

CartPole::StepResult CartPole::Step(Action action) {
  if (action != 0 && action != 1) ThrowInvalidAction(action);
  GREENRL_CHECK(has_reset_, "CartPole::Step() called before Reset()");

  const double force = action == 1 ? kForceMag : -kForceMag;
  // glibc's sincos runs the same correctly rounded kernels as sin and cos in one call (the
  // golden-trajectory test checks the results stay bit-identical).
  double sintheta, costheta;
  ::sincos(state_[2], &sintheta, &costheta);
  EulerStep<double>(force, sintheta, costheta, state_[0], state_[1], state_[2], state_[3]);

  StepResult result;
  result.obs = ToObservation(state_);
  result.terminated = OutOfBounds<double>(state_[0], state_[2]) != 0;
  if (!result.terminated) {
    result.reward = 1.0;
  } else if (steps_beyond_terminated_ < 0) {
    steps_beyond_terminated_ = 0;  // the pole just fell: this step still pays 1.0
    result.reward = 1.0;
  } else {
    if (steps_beyond_terminated_ == 0) {
      std::fputs(
          "greenrl warning: CartPole-v1: step() called after terminated = True; call Reset() "
          "once terminated is returned, further steps are undefined behaviour (as in "
          "Gymnasium)\n",
          stderr);
    }
    ++steps_beyond_terminated_;
    result.reward = 0.0;
  }

  // TimeLimit(max_episode_steps=500), as applied by gymnasium.make.
  ++elapsed_steps_;
  result.truncated = elapsed_steps_ >= kMaxEpisodeSteps;
  return result;
}

}  // namespace greenrl::env
