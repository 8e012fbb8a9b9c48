// FlatAdam and ClipGradNorm against torch::optim::Adam and clip_grad_norm_ (LibTorch 1.13).
#include "greenrl/nn/flat_optim.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "greenrl/core/rng.h"

namespace greenrl::nn {
namespace {

TEST(FlatAdamTest, MatchesTorchAdamOverSeveralSteps) {
  const int n = 300;
  Rng rng(5);
  std::vector<float> params(n), grads(n);
  for (float& p : params) p = static_cast<float>(rng.Normal());
  auto p_t = torch::from_blob(params.data(), {n}, torch::kFloat32).clone().requires_grad_(true);
  torch::optim::Adam torch_adam({p_t}, torch::optim::AdamOptions(1e-3).eps(1e-5));
  FlatAdam adam(n, AdamOptions{0.9, 0.999, 1e-5});
  for (int step = 0; step < 20; ++step) {
    for (float& g : grads) g = static_cast<float>(rng.Normal() * (step + 1));
    p_t.mutable_grad() = torch::from_blob(grads.data(), {n}, torch::kFloat32).clone();
    torch_adam.step();
    adam.Step(params.data(), grads.data(), 1e-3);
  }
  EXPECT_EQ(adam.step_count(), 20);
  for (int i = 0; i < n; ++i) {
    ASSERT_NEAR(params[i], p_t[i].item<float>(), 1e-6) << i;
  }
}

// Moments that would become subnormal are stored as 0 (flat_optim.h); normal ones follow
// PyTorch's formula exactly. FLT_MIN = 2^-126 ~ 1.1755e-38.
TEST(FlatAdamTest, SubnormalMomentsBecomeZero) {
  FlatAdam adam(3, AdamOptions{0.9, 0.999, 1e-8});
  // Entry 0: m 1e-38 * 0.9 and v 1e-38 * 0.999 are subnormal -> 0. Entry 1: a gradient of 1e-20
  // gives (1 - b2) g^2 = 1e-43 (subnormal) -> v = 0, while m = 1e-21 stays. Entry 2: normal.
  adam.exp_avg() = {1e-38f, 0.0f, 0.5f};
  adam.exp_avg_sq() = {1e-38f, 0.0f, 0.25f};
  std::vector<float> params = {1.0f, 2.0f, 3.0f};
  const std::vector<float> grads = {0.0f, 1e-20f, 0.1f};
  adam.Step(params.data(), grads.data(), 1e-3);
  EXPECT_EQ(adam.exp_avg()[0], 0.0f);
  EXPECT_EQ(adam.exp_avg_sq()[0], 0.0f);
  EXPECT_EQ(params[0], 1.0f);
  EXPECT_EQ(adam.exp_avg()[1], 0.1f * 1e-20f);
  EXPECT_EQ(adam.exp_avg_sq()[1], 0.0f);
  EXPECT_EQ(adam.exp_avg()[2], 0.5f * 0.9f + 0.1f * 0.1f);
  EXPECT_EQ(adam.exp_avg_sq()[2], 0.25f * 0.999f + 0.001f * 0.1f * 0.1f);
  // Entry 1's step: lr / (1 - 0.9) * 1e-21 / (0 + 1e-8) = 1e-15, under float32's ulp at 2.
  EXPECT_EQ(params[1], 2.0f);
}

TEST(ClipGradNormTest, MatchesTorchAndReturnsTotalNorm) {
  std::vector<float> g = {3.0f, 4.0f, 0.0f, 12.0f};  // norm 13
  auto t = torch::tensor({3.0f, 4.0f, 0.0f, 12.0f}).requires_grad_(true);
  t.mutable_grad() = t.detach().clone();
  const double torch_norm = torch::nn::utils::clip_grad_norm_({t}, 0.5);
  const double norm = ClipGradNorm(g.data(), 4, 0.5);
  EXPECT_DOUBLE_EQ(norm, 13.0);
  EXPECT_NEAR(norm, torch_norm, 1e-5);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(g[i], t.grad()[i].item<float>(), 1e-7);
  // Below the threshold nothing changes.
  std::vector<float> small = {0.1f, 0.2f};
  ClipGradNorm(small.data(), 2, 0.5);
  EXPECT_FLOAT_EQ(small[0], 0.1f);
  EXPECT_FLOAT_EQ(small[1], 0.2f);
}

// The split forms used by DQN's two update threads: Adam over two ranges equals one Step bit for
// bit, and SumOfSquares + ClipCoefficient reproduce ClipGradNorm (hand-computed: norm 13).
TEST(FlatAdamTest, StepRangesEqualStep) {
  const int n = 1001;
  Rng rng(7);
  std::vector<float> whole(n), split(n), grads(n);
  for (float& p : whole) p = static_cast<float>(rng.Normal());
  split = whole;
  FlatAdam a(n, AdamOptions{}), b(n, AdamOptions{});
  for (int step = 0; step < 5; ++step) {
    for (float& g : grads) g = static_cast<float>(rng.Normal());
    a.Step(whole.data(), grads.data(), 2.3e-3);
    const FlatAdam::StepCoefficients c = b.BeginStep(2.3e-3);
    b.StepRange(c, split.data(), grads.data(), 496, n);
    b.StepRange(c, split.data(), grads.data(), 0, 496);
  }
  EXPECT_EQ(b.step_count(), 5);
  EXPECT_EQ(whole, split);
  EXPECT_EQ(a.exp_avg(), b.exp_avg());
  EXPECT_EQ(a.exp_avg_sq(), b.exp_avg_sq());
}

TEST(ClipGradNormTest, PartsReproduceTheWhole) {
  const std::vector<float> g = {3.0f, 4.0f, 0.0f, 12.0f};
  const double total = std::sqrt(SumOfSquares(g.data(), 2) + SumOfSquares(g.data() + 2, 2));
  EXPECT_DOUBLE_EQ(total, 13.0);
  EXPECT_FLOAT_EQ(ClipCoefficient(total, 0.5), static_cast<float>(0.5 / (13.0 + 1e-6)));
  EXPECT_EQ(ClipCoefficient(total, 20.0), 1.0f);  // below the threshold
  EXPECT_EQ(ClipCoefficient(total, 0.0), 1.0f);   // disabled
  EXPECT_EQ(ClipCoefficient(std::nan(""), 0.5), 1.0f);
  std::vector<float> clipped = g;
  ClipGradNorm(clipped.data(), 4, 0.5);
  const float c = ClipCoefficient(total, 0.5);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(clipped[i], g[i] * c);
}

// Every non-finite float32 (both infinities, quiet and signalling NaN, a NaN with a sign) is found
// wherever it sits; the largest finite values, subnormals and -0 are finite.
TEST(AllFiniteTest, FindsInfAndNanAnywhere) {
  const float max = std::numeric_limits<float>::max();
  const float denorm = std::numeric_limits<float>::denorm_min();
  std::vector<float> x(37, 1.0f);
  x[0] = max, x[1] = -max, x[2] = denorm, x[3] = -0.0f;
  EXPECT_TRUE(AllFinite(x.data(), 37));
  EXPECT_TRUE(AllFinite(x.data(), 0));
  for (const float bad :
       {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
        std::numeric_limits<float>::signaling_NaN()}) {
    for (const int at : {0, 17, 36}) {
      std::vector<float> y = x;
      y[at] = bad;
      EXPECT_FALSE(AllFinite(y.data(), 37)) << bad << " at " << at;
      EXPECT_EQ(AllFinite(y.data(), at), true) << "the entries before it";
    }
  }
}

}  // namespace
}  // namespace greenrl::nn
