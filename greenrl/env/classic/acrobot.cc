#include "greenrl/env/classic/acrobot.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "greenrl/core/errors.h"
#include "greenrl/env/classic/internal/py_math.h"

namespace greenrl::env {
namespace {

using internal::PowSquare;

// s_augmented of acrobot.py: [theta1, theta2, dtheta1, dtheta2, torque].
using Augmented = std::array<double, 5>;

Acrobot::Observation ToObservation(const Acrobot::State& s) {
  return {static_cast<float>(std::cos(s[0])), static_cast<float>(std::sin(s[0])),
          static_cast<float>(std::cos(s[1])), static_cast<float>(std::sin(s[1])),
          static_cast<float>(s[2]),           static_cast<float>(s[3])};
}

// AcrobotEnv._dsdt with book_or_nips == "book", term by term in Gymnasium's order (left to right
// as Python evaluates it, so the float64 results are the same). Squares of NumPy float64 values
// go through pow (PowSquare); squares of the Python float constants are exact either way.
Augmented Dsdt(const Augmented& s) {
  constexpr double m1 = Acrobot::kLinkMass1;
  constexpr double m2 = Acrobot::kLinkMass2;
  constexpr double l1 = Acrobot::kLinkLength1;
  constexpr double lc1 = Acrobot::kLinkComPos1;
  constexpr double lc2 = Acrobot::kLinkComPos2;
  constexpr double I1 = Acrobot::kLinkMoi;
  constexpr double I2 = Acrobot::kLinkMoi;
  constexpr double g = Acrobot::kGravity;
  constexpr double pi = Acrobot::kPi;
  const double a = s[4];
  const double theta1 = s[0];
  const double theta2 = s[1];
  const double dtheta1 = s[2];
  const double dtheta2 = s[3];
  const double cos_theta2 = std::cos(theta2);
  const double sin_theta2 = std::sin(theta2);
  const double d1 =
      m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * cos_theta2) + I1 + I2;
  const double d2 = m2 * ((lc2 * lc2) + l1 * lc2 * cos_theta2) + I2;
  const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - pi / 2.0);
  const double phi1 = -m2 * l1 * lc2 * PowSquare(dtheta2) * sin_theta2 -
                      2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin_theta2 +
                      (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - pi / 2) + phi2;
  const double ddtheta2 =
      (a + d2 / d1 * phi1 - m2 * l1 * lc2 * PowSquare(dtheta1) * sin_theta2 - phi2) /
      (m2 * (lc2 * lc2) + I2 - PowSquare(d2) / d1);
  const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
  return {dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0};
}

// acrobot.py's wrap(x, -pi, pi): whole turns while strictly outside.
double Wrap(double x, double m, double big_m) {
  const double diff = big_m - m;
  while (x > big_m) x = x - diff;
  while (x < m) x = x + diff;
  return x;
}

// acrobot.py's bound(x, m, M) = min(max(x, m), M).
double Bound(double x, double m, double big_m) { return std::fmin(std::fmax(x, m), big_m); }

EnvSpec MakeSpec() {
  const float v1 = static_cast<float>(Acrobot::kMaxVel1);
  const float v2 = static_cast<float>(Acrobot::kMaxVel2);
  EnvSpec spec;
  spec.id = "Acrobot-v1";
  spec.observation_space.high = {1.0f, 1.0f, 1.0f, 1.0f, v1, v2};
  spec.observation_space.low = {-1.0f, -1.0f, -1.0f, -1.0f, -v1, -v2};
  spec.observation_space.shape = {Acrobot::kObsDim};
  spec.action_space = Discrete{3};
  spec.max_episode_steps = Acrobot::kMaxEpisodeSteps;
  spec.reward_threshold = Acrobot::kRewardThreshold;
  return spec;
}

}  // namespace

const EnvSpec& Acrobot::Spec() {
  static const EnvSpec spec = MakeSpec();
  return spec;
}

Acrobot::Observation Acrobot::Reset() {
  // np_random.uniform(-0.1, 0.1, size=(4,)).astype(np.float32)
  for (double& v : state_) v = static_cast<float>(rng_.Uniform(kResetLow, kResetHigh));
  has_reset_ = true;
  elapsed_steps_ = 0;
  return ToObservation(state_);
}

Acrobot::StepResult Acrobot::Step(Action action) {
  if (action < 0 || action > 2) {
    throw std::invalid_argument("Acrobot-v1: invalid action " + std::to_string(action) +
                                "; expected 0, 1 or 2");
  }
  GREENRL_CHECK(has_reset_, "Acrobot::Step() called before Reset()");

  // acrobot.py's rk4(self._dsdt, s_augmented, [0, self.dt]): one step, dt = 0.2 - 0.
  const Augmented y0 = {state_[0], state_[1], state_[2], state_[3], kAvailTorque[action]};
  constexpr double dt = kDt - 0.0;
  constexpr double dt2 = dt / 2.0;
  Augmented y;
  const Augmented k1 = Dsdt(y0);
  for (int j = 0; j < 5; ++j) y[j] = y0[j] + dt2 * k1[j];
  const Augmented k2 = Dsdt(y);
  for (int j = 0; j < 5; ++j) y[j] = y0[j] + dt2 * k2[j];
  const Augmented k3 = Dsdt(y);
  for (int j = 0; j < 5; ++j) y[j] = y0[j] + dt * k3[j];
  const Augmented k4 = Dsdt(y);
  for (int j = 0; j < 4; ++j) {
    y[j] = y0[j] + dt / 6.0 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
  }

  state_[0] = Wrap(y[0], -kPi, kPi);
  state_[1] = Wrap(y[1], -kPi, kPi);
  state_[2] = Bound(y[2], -kMaxVel1, kMaxVel1);
  state_[3] = Bound(y[3], -kMaxVel2, kMaxVel2);

  StepResult result;
  result.obs = ToObservation(state_);
  result.terminated = -std::cos(state_[0]) - std::cos(state_[1] + state_[0]) > 1.0;
  result.reward = result.terminated ? 0.0 : -1.0;
  // TimeLimit(max_episode_steps=500), as applied by gymnasium.make.
  ++elapsed_steps_;
  result.truncated = elapsed_steps_ >= kMaxEpisodeSteps;
  return result;
}

}  // namespace greenrl::env
