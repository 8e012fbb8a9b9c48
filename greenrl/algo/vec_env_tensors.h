// vec_env_tensors.h: the one bridge from env buffers to LibTorch (../shared/DESIGN.md,
// "Dependency rules"): torch::from_blob views of a VecEnv's struct-of-arrays buffers, no copy.
//
// Each tensor aliases the VecEnv's memory: writing through it writes the buffer, and every
// VecEnv::Step() is seen by the tensor at once. The tensors do not own the memory; they are valid
// while the VecEnv lives (hold the VecEnv longer than the views). All views are CPU tensors.
#pragma once

#include <torch/torch.h>

#include "greenrl/env/vec_env.h"

namespace greenrl::algo {

// Non-owning tensor views of one VecEnv's buffers (N = num_envs).
struct VecEnvTensors {
  torch::Tensor obs;         // float32 [N, obs_dim]
  torch::Tensor final_obs;   // float32 [N, obs_dim]
  torch::Tensor reward;      // float32 [N]
  torch::Tensor terminated;  // uint8 [N], 0 or 1
  torch::Tensor truncated;   // uint8 [N], 0 or 1
  // int64 [N] for Discrete action spaces, float32 [N, act_dim] for Box action spaces; write the
  // actions here before VecEnv::Step().
  torch::Tensor actions;
};

// Views of env's buffers. The read-only buffers (obs, final_obs, reward, flags) are exposed as
// writable tensors for from_blob's sake; writing them is allowed but is overwritten by the next
// Step(). Args: env: must outlive the tensors (a wrapped VecEnv works the same way: the views are
// of what its accessors return, e.g. the normalised observations).
VecEnvTensors MakeVecEnvTensors(env::VecEnv& env);

}  // namespace greenrl::algo
