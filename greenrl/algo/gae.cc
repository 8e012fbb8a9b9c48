#include "greenrl/algo/gae.h"

#include "greenrl/core/errors.h"

namespace greenrl::algo {

void ComputeGae(int num_steps, int num_envs, double gamma, double gae_lambda, const float* rewards,
                const float* values, const uint8_t* terminated, const uint8_t* truncated,
                const float* final_values, const float* last_values, float* advantages,
                float* returns) {
  GREENRL_CHECK(num_steps >= 1 && num_envs >= 1, "empty rollout");
  for (int i = 0; i < num_envs; ++i) {
    double next_advantage = 0.0;
    for (int t = num_steps - 1; t >= 0; --t) {
      const int k = t * num_envs + i;
      double next_value;
      if (terminated[k]) {
        next_value = 0.0;
      } else if (truncated[k]) {
        next_value = final_values[k];
      } else if (t + 1 < num_steps) {
        next_value = values[k + num_envs];
      } else {
        next_value = last_values[i];
      }
      const bool done = terminated[k] || truncated[k];
      const double delta = rewards[k] + gamma * next_value - values[k];
      const double advantage = delta + (done ? 0.0 : gamma * gae_lambda * next_advantage);
      advantages[k] = static_cast<float>(advantage);
      returns[k] = static_cast<float>(advantage + values[k]);
      next_advantage = advantage;
    }
  }
}

}  // namespace greenrl::algo
