#include "greenrl/algo/vec_env_tensors.h"

namespace greenrl::algo {
namespace {

// from_blob over memory the VecEnv owns: no deleter, no copy.
template <typename T>
torch::Tensor View(const T* data, std::vector<int64_t> sizes, torch::Dtype dtype) {
  return torch::from_blob(const_cast<T*>(data), sizes, torch::TensorOptions().dtype(dtype));
}

}  // namespace

VecEnvTensors MakeVecEnvTensors(env::VecEnv& env) {
  const int64_t n = env.num_envs();
  const int64_t obs_dim = env.spec().obs_dim();
  VecEnvTensors t;
  t.obs = View(env.obs(), {n, obs_dim}, torch::kFloat32);
  t.final_obs = View(env.final_obs(), {n, obs_dim}, torch::kFloat32);
  t.reward = View(env.reward(), {n}, torch::kFloat32);
  t.terminated = View(env.terminated(), {n}, torch::kUInt8);
  t.truncated = View(env.truncated(), {n}, torch::kUInt8);
  if (env.spec().discrete_actions()) {
    t.actions = View(env.discrete_actions(), {n}, torch::kInt64);
  } else {
    t.actions = View(env.continuous_actions(), {n, env.spec().act_dim()}, torch::kFloat32);
  }
  return t;
}

}  // namespace greenrl::algo
