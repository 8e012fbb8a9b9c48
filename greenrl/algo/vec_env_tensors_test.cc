// vec_env_tensors_test.cc: the torch::from_blob views alias VecEnv's buffers both ways (no copy).
#include "greenrl/algo/vec_env_tensors.h"

#include <gtest/gtest.h>

#include "greenrl/env/registry.h"

namespace greenrl::algo {
namespace {

TEST(VecEnvTensorsTest, ShapesDtypesAndAliasing) {
  auto env = env::MakeVecEnv("CartPole-v1", 5, /*seed=*/1, /*num_threads=*/1);
  env->Reset();
  VecEnvTensors t = MakeVecEnvTensors(*env);
  EXPECT_EQ(t.obs.sizes(), (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(t.obs.dtype(), torch::kFloat32);
  EXPECT_EQ(t.reward.sizes(), (std::vector<int64_t>{5}));
  EXPECT_EQ(t.terminated.dtype(), torch::kUInt8);
  EXPECT_EQ(t.actions.dtype(), torch::kInt64);
  EXPECT_EQ(t.obs.data_ptr<float>(), env->obs());
  EXPECT_EQ(t.final_obs.data_ptr<float>(), env->final_obs());
  EXPECT_EQ(t.actions.data_ptr<int64_t>(), env->discrete_actions());

  // Tensor -> buffer: actions written through the tensor drive the step.
  t.actions.fill_(1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(env->discrete_actions()[i], 1);
  env->Step();
  // Buffer -> tensor: the step's results are visible without a copy.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t.reward[i].item<float>(), env->reward()[i]);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(t.obs[i][k].item<float>(), env->obs()[i * 4 + k]);
  }
  // Buffer -> tensor for the action buffer too.
  env->discrete_actions()[3] = 0;
  EXPECT_EQ(t.actions[3].item<int64_t>(), 0);
  // Tensor -> buffer for an output buffer.
  t.obs[2][1] = 42.0f;
  EXPECT_EQ(env->obs()[2 * 4 + 1], 42.0f);
}

TEST(VecEnvTensorsTest, BoxActionsAreFloat32Rows) {
  auto env = env::MakeVecEnv("Pendulum-v1", 3, /*seed=*/2, /*num_threads=*/1);
  env->Reset();
  VecEnvTensors t = MakeVecEnvTensors(*env);
  EXPECT_EQ(t.actions.sizes(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.actions.dtype(), torch::kFloat32);
  t.actions.fill_(0.5f);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(env->continuous_actions()[i], 0.5f);
  env->continuous_actions()[1] = -1.5f;
  EXPECT_EQ(t.actions[1][0].item<float>(), -1.5f);
  EXPECT_EQ(t.obs.sizes(), (std::vector<int64_t>{3, 3}));
}

}  // namespace
}  // namespace greenrl::algo
