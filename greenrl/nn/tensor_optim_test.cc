// The device-side optimiser step against the host path (FlatAdam + ClipGradNorm) and a scripted
// loss-scale sequence, on the CPU device (the same ops run on CUDA; cuda_test covers that).
#include "greenrl/nn/tensor_optim.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "greenrl/nn/flat_optim.h"

namespace greenrl::nn {
namespace {

std::vector<float> ToVector(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TEST(TensorOptimTest, AdamAndClipMatchHostPath) {
  const int64_t n = 37;
  std::vector<float> host_params(n), grads(n);
  for (int64_t i = 0; i < n; ++i) host_params[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  const AdamOptions adam{0.9, 0.999, 1e-5};
  FlatAdam host_adam(n, adam);
  TensorOptimState s = MakeTensorOptimState(host_params.data(), nullptr, nullptr, n, 0, 1.0, 0, 0,
                                            torch::TensorOptions().device(torch::kCPU));
  const double lrs[] = {1e-3, 5e-4, 2e-3, 1e-3, 0.0};
  for (int step = 0; step < 5; ++step) {
    for (int64_t i = 0; i < n; ++i) grads[i] = std::sin(0.7f * i + step) * (step == 2 ? 5.f : 1.f);
    std::vector<float> host_grads = grads;
    const double host_norm = ClipGradNorm(host_grads.data(), n, 0.5);
    host_adam.Step(host_params.data(), host_grads.data(), lrs[step]);
    s.grads.copy_(torch::from_blob(grads.data(), {n}, torch::kFloat32));
    s.lr.fill_(lrs[step]);
    TensorOptimStep(s, adam, 0.5, ScaleUpdateOptions{});
    EXPECT_NEAR(s.grad_norm.item<double>(), host_norm, 1e-5 * host_norm);
    const std::vector<float> p = ToVector(s.params);
    for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(p[i], host_params[i], 2e-7) << step << " " << i;
    const std::vector<float> m = ToVector(s.exp_avg);
    const std::vector<float> v = ToVector(s.exp_avg_sq);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(m[i], host_adam.exp_avg()[i], 1e-7);
      ASSERT_NEAR(v[i], host_adam.exp_avg_sq()[i], 1e-9);
    }
  }
  EXPECT_EQ(s.step.item<float>(), 5.0f);
  EXPECT_EQ(host_adam.step_count(), 5);
  EXPECT_EQ(s.skipped.item<float>(), 0.0f);
}

// A gradient with an inf (or NaN) skips the whole step: parameters, moments and the step count
// stay as they were, and the skip is counted.
TEST(TensorOptimTest, NonFiniteGradientSkipsTheStep) {
  const int64_t n = 4;
  const std::vector<float> params = {1.f, 2.f, 3.f, 4.f};
  TensorOptimState s = MakeTensorOptimState(params.data(), nullptr, nullptr, n, 3, 1.0, 0, 0,
                                            torch::TensorOptions());
  s.lr.fill_(0.1);
  for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    s.grads.copy_(torch::tensor({0.5f, bad, -0.5f, 1.f}));
    TensorOptimStep(s, AdamOptions{0.9, 0.999, 1e-5}, 0.5, ScaleUpdateOptions{});
    EXPECT_EQ(s.found_inf.item<float>(), 1.0f);
    EXPECT_EQ(ToVector(s.params), params);
    EXPECT_EQ(ToVector(s.exp_avg), std::vector<float>(4, 0.f));
    EXPECT_EQ(ToVector(s.exp_avg_sq), std::vector<float>(4, 0.f));
    EXPECT_EQ(s.step.item<float>(), 3.0f);
  }
  EXPECT_EQ(s.skipped.item<float>(), 2.0f);
  s.grads.copy_(torch::tensor({0.5f, 0.f, -0.5f, 1.f}));
  TensorOptimStep(s, AdamOptions{0.9, 0.999, 1e-5}, 0.5, ScaleUpdateOptions{});
  EXPECT_EQ(s.found_inf.item<float>(), 0.0f);
  EXPECT_EQ(s.step.item<float>(), 4.0f);
  EXPECT_NE(ToVector(s.params), params);
}

// GradScaler semantics with init_scale 8, growth_factor 2, backoff_factor 0.5,
// growth_interval 2 over finite (F) and non-finite (I) steps F F I F F F:
// scale 8 (tracker 1), 16 (0), 8 (0), 8 (1), 16 (0), 16 (1); 5 steps taken, 1 skipped.
// Gradients arrive multiplied by the scale and are unscaled before the norm.
TEST(TensorOptimTest, LossScaleSequence) {
  const int64_t n = 3;
  const std::vector<float> params = {0.f, 0.f, 0.f};
  TensorOptimState s = MakeTensorOptimState(params.data(), nullptr, nullptr, n, 0, 8.0, 0, 0,
                                            torch::TensorOptions());
  s.lr.fill_(1e-3);
  const ScaleUpdateOptions scaler{true, 2.0, 0.5, 2};
  const bool finite[] = {true, true, false, true, true, true};
  const float want_scale[] = {8, 16, 8, 8, 16, 16};
  const int want_tracker[] = {1, 0, 0, 1, 0, 1};
  for (int k = 0; k < 6; ++k) {
    const float scale = s.scale.item<float>();
    const float g = finite[k] ? 3.f * scale : std::numeric_limits<float>::infinity();
    s.grads.copy_(torch::tensor({g, 4.f * scale, 0.f}));
    TensorOptimStep(s, AdamOptions{0.9, 0.999, 1e-5}, 0.0, scaler);
    EXPECT_EQ(s.scale.item<float>(), want_scale[k]) << k;
    EXPECT_EQ(s.growth_tracker.item<int>(), want_tracker[k]) << k;
    if (finite[k]) {
      EXPECT_NEAR(s.grad_norm.item<float>(), 5.0f, 1e-6) << k;
    }
  }
  EXPECT_EQ(s.step.item<float>(), 5.0f);
  EXPECT_EQ(s.skipped.item<float>(), 1.0f);
}

// As GradScalerTest.GrowthStopsAtTheLargestFiniteFloat on the tensor path: from 2^126 with
// growth_interval 1 the scale grows to 2^127 and then stays (2^128 overflows float32); a
// non-finite step backs it off to 2^126.
TEST(TensorOptimTest, LossScaleStopsGrowingBeforeInf) {
  const std::vector<float> params = {0.f};
  TensorOptimState s = MakeTensorOptimState(params.data(), nullptr, nullptr, 1, 0,
                                            std::ldexp(1.0, 126), 0, 0, torch::TensorOptions());
  s.lr.fill_(1e-3);
  const ScaleUpdateOptions scaler{true, 2.0, 0.5, 1};
  const float finite[] = {1.f, 1.f, 1.f, std::numeric_limits<float>::infinity()};
  const double want_scale[] = {std::ldexp(1.0, 127), std::ldexp(1.0, 127), std::ldexp(1.0, 127),
                               std::ldexp(1.0, 126)};
  for (int k = 0; k < 4; ++k) {
    s.grads.fill_(finite[k]);
    TensorOptimStep(s, AdamOptions{0.9, 0.999, 1e-5}, 0.0, scaler);
    EXPECT_EQ(s.scale.item<float>(), static_cast<float>(want_scale[k])) << k;
  }
  EXPECT_EQ(s.step.item<float>(), 3.0f);
}

}  // namespace
}  // namespace greenrl::nn
