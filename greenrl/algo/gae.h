// gae.h: generalized advantage estimation (Schulman et al., "High-Dimensional Continuous Control
// Using Generalized Advantage Estimation", ICLR 2016) over a [T, N] rollout with Gymnasium's
// terminated/truncated distinction. Torch-free.
#pragma once

#include <cstdint>

namespace greenrl::algo {

// Computes advantages and returns (returns = advantages + values), in place of SB3's
// RolloutBuffer.compute_returns_and_advantage plus its truncation fix in
// OnPolicyAlgorithm.collect_rollouts (reward += gamma * V(terminal_observation)):
//   next_value(t) = 0                       if terminated[t]
//                 = final_values[t]         if truncated[t] (and not terminated): V(final_obs)
//                 = values[t + 1]           otherwise, t < T - 1
//                 = last_values             otherwise, t = T - 1 (V of the obs after the rollout)
//   delta(t) = rewards[t] + gamma * next_value(t) - values[t]
//   A(t)     = delta(t) + gamma * gae_lambda * (1 - done[t]) * A(t + 1),  done = terminated ||
//   truncated
// Arithmetic in float64, results stored as float32.
// Args (all row-major, t-major, row t holds the N envs of step t):
//   num_steps T >= 1, num_envs N >= 1; gamma, gae_lambda in [0, 1];
//   rewards, values, final_values: float32 [T, N]; terminated, truncated: uint8 [T, N];
//   last_values: float32 [N]; advantages, returns: float32 [T, N] outputs.
// Errors: GREENRL_CHECK on T < 1 or N < 1.
void ComputeGae(int num_steps, int num_envs, double gamma, double gae_lambda, const float* rewards,
                const float* values, const uint8_t* terminated, const uint8_t* truncated,
                const float* final_values, const float* last_values, float* advantages,
                float* returns);

}  // namespace greenrl::algo
