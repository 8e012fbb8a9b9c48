// random_actions.h: uniformly random actions for a VecEnv's action buffer, drawn the same way
// by every env benchmark (env_benchmark.cc, env_scaling.cc) so their figures compare.
// Discrete(2^k) spaces (CartPole-v1) take k bits of a 64-bit xoshiro256** draw per env, other
// Discrete(n) spaces one Lemire draw Below(n) per env, Box spaces U(low, high) per component
// from a 24-bit float.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/vec_env.h"

namespace greenrl::bench {

// Writes uniformly random Discrete(num_actions) actions to actions[0, n).
inline void DrawDiscrete(Rng& rng, int64_t num_actions, int n, int64_t* actions) {
  const bool power_of_two = (num_actions & (num_actions - 1)) == 0;
  if (!power_of_two) {
    for (int i = 0; i < n; ++i) actions[i] = static_cast<int64_t>(rng.Below(num_actions));
    return;
  }
  int bits = 0;
  while ((int64_t{1} << bits) < num_actions) ++bits;
  if (bits == 0) {
    for (int i = 0; i < n; ++i) actions[i] = 0;
    return;
  }
  const int per_draw = 64 / bits;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  for (int i = 0; i < n; i += per_draw) {
    uint64_t word = rng.NextU64();
    const int m = n - i < per_draw ? n - i : per_draw;
    for (int j = 0; j < m; ++j, word >>= bits) actions[i + j] = static_cast<int64_t>(word & mask);
  }
}

// Fills `env`'s action buffer (discrete or continuous) with fresh random actions per Draw. The
// env must outlive it. No allocation per Draw.
class RandomActions {
 public:
  explicit RandomActions(env::VecEnv& env) : env_(env), n_(env.num_envs()) {
    const env::EnvSpec& spec = env.spec();
    if (spec.discrete_actions()) {
      num_actions_ = spec.num_actions();
      return;
    }
    const auto& box = std::get<env::Box>(spec.action_space);
    d_ = static_cast<int>(spec.act_dim());
    low_.assign(box.low.begin(), box.low.end());
    for (int k = 0; k < d_; ++k) width_.push_back(box.high[k] - box.low[k]);
  }

  void Draw(Rng& rng) {
    if (num_actions_ > 0) {
      DrawDiscrete(rng, num_actions_, n_, env_.discrete_actions());
      return;
    }
    float* actions = env_.continuous_actions();
    for (int i = 0; i < n_; ++i) {
      for (int k = 0; k < d_; ++k) actions[i * d_ + k] = low_[k] + width_[k] * rng.UniformF();
    }
  }

 private:
  env::VecEnv& env_;
  int n_;
  int64_t num_actions_ = 0;  // Discrete(n)'s n; 0 for a Box space
  int d_ = 0;                // Box: action dims
  std::vector<float> low_, width_;
};

}  // namespace greenrl::bench
