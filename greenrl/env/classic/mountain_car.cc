#include "greenrl/env/classic/mountain_car.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "greenrl/core/errors.h"

namespace greenrl::env {
namespace {

MountainCar::Observation ToObservation(const MountainCar::State& s) {
  return {static_cast<float>(s[0]), static_cast<float>(s[1])};
}

EnvSpec MakeSpec() {
  EnvSpec spec;
  spec.id = "MountainCar-v0";
  spec.observation_space.low = {static_cast<float>(MountainCar::kMinPosition),
                                static_cast<float>(-MountainCar::kMaxSpeed)};
  spec.observation_space.high = {static_cast<float>(MountainCar::kMaxPosition),
                                 static_cast<float>(MountainCar::kMaxSpeed)};
  spec.observation_space.shape = {MountainCar::kObsDim};
  spec.action_space = Discrete{3};
  spec.max_episode_steps = MountainCar::kMaxEpisodeSteps;
  spec.reward_threshold = MountainCar::kRewardThreshold;
  return spec;
}

// np.clip(x, lo, hi) for finite bounds.
double Clip(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

}  // namespace

const EnvSpec& MountainCar::Spec() {
  static const EnvSpec spec = MakeSpec();
  return spec;
}

MountainCar::Observation MountainCar::Reset() {
  state_ = {rng_.Uniform(kResetLow, kResetHigh), 0.0};
  has_reset_ = true;
  elapsed_steps_ = 0;
  return ToObservation(state_);
}

MountainCar::StepResult MountainCar::Step(Action action) {
  if (action < 0 || action > 2) {
    throw std::invalid_argument("MountainCar-v0: invalid action " + std::to_string(action) +
                                "; expected 0, 1 or 2");
  }
  GREENRL_CHECK(has_reset_, "MountainCar::Step() called before Reset()");

  // MountainCarEnv.step, in Gymnasium's order: the increment is computed, then added.
  double position = state_[0];
  double velocity = state_[1];
  velocity += static_cast<double>(action - 1) * kForce + std::cos(3 * position) * (-kGravity);
  velocity = Clip(velocity, -kMaxSpeed, kMaxSpeed);
  position += velocity;
  position = Clip(position, kMinPosition, kMaxPosition);
  if (position == kMinPosition && velocity < 0) velocity = 0;  // inelastic left wall
  state_ = {position, velocity};

  StepResult result;
  result.obs = ToObservation(state_);
  result.terminated = position >= kGoalPosition && velocity >= kGoalVelocity;
  result.reward = -1.0;
  // TimeLimit(max_episode_steps=200), as applied by gymnasium.make.
  ++elapsed_steps_;
  result.truncated = elapsed_steps_ >= kMaxEpisodeSteps;
  return result;
}

}  // namespace greenrl::env
