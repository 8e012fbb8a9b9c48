#include "greenrl/nn/squashed_gaussian.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

namespace greenrl::nn {
namespace {

const double kHalfLog2Pi = 0.5 * std::log(2.0 * M_PI);

// Closed forms of log(1 - tanh(u)^2) = -2 log cosh(u), by hand:
//   u = 0:   log(1 - 0) = 0
//   u = 1:   -2 log cosh(1), cosh(1) = 1.5430806348152437 -> -2 x 0.43378083048302710
//            = -0.86756166096605...
//   |u| large: -2 log cosh(u) = -2 |u| + 2 log 2 - 2 log1p(exp(-2 |u|)); u = 20 -> -38.6137056,
//            u = -50 -> -98.6137056 (exp(-40), exp(-100) vanish in float64).
TEST(SquashedGaussianTest, TanhLogDetJacobianMatchesClosedFormIncludingSaturation) {
  EXPECT_DOUBLE_EQ(TanhLogDetJacobian(0.0), 0.0);
  EXPECT_NEAR(TanhLogDetJacobian(1.0), -2.0 * std::log(std::cosh(1.0)), 1e-14);
  EXPECT_NEAR(TanhLogDetJacobian(1.0), -0.8675616609660542, 1e-12);
  EXPECT_NEAR(TanhLogDetJacobian(20.0), -40.0 + 2.0 * std::log(2.0), 1e-12);
  EXPECT_NEAR(TanhLogDetJacobian(-50.0), -100.0 + 2.0 * std::log(2.0), 1e-12);
  // The naive form loses everything where tanh rounds to 1: the reason for the stable form.
  EXPECT_TRUE(std::isinf(std::log(1.0 - std::pow(std::tanh(20.0), 2))));
}

TEST(SquashedGaussianTest, TorchTanhLogDetJacobianMatchesScalarAndIsFinite) {
  const std::vector<float> u = {0.0f, 1.0f, 20.0f, -50.0f, -1.0f, 9.5f};
  const torch::Tensor t = TanhLogDetJacobian(torch::tensor(u));
  for (size_t k = 0; k < u.size(); ++k) {
    const float got = t[k].item<float>();
    EXPECT_TRUE(std::isfinite(got)) << "u = " << u[k];
    EXPECT_NEAR(got, TanhLogDetJacobian(static_cast<double>(u[k])), 1e-5) << "u = " << u[k];
  }
  // float32 naive form at u = 20: tanh rounds to exactly 1, log(0) = -inf.
  EXPECT_TRUE(std::isinf(torch::log(1 - torch::tanh(torch::tensor({20.0f})).square())
                             .item<float>()));
}

// log p(tanh(u)) with mean = u (Gaussian term -0.5 log 2 pi at log_std 0) minus the Jacobian
// term: u = 0 -> -0.91893853; u = 1 -> -0.91893853 + 0.86756166 = -0.05137687;
// u = 20 -> -0.91893853 + 38.6137056 = 37.6947671; u = -50 -> 97.6947671.
TEST(SquashedGaussianTest, LogProbAtPreTanhValuesByHand) {
  const double us[] = {0.0, 1.0, 20.0, -50.0};
  const double want[] = {-kHalfLog2Pi, -kHalfLog2Pi + 0.8675616609660542,
                         -kHalfLog2Pi + 40.0 - 2.0 * std::log(2.0),
                         -kHalfLog2Pi + 100.0 - 2.0 * std::log(2.0)};
  for (int i = 0; i < 4; ++i) {
    const double zero = 0.0;
    EXPECT_NEAR(SquashedGaussianLogProb(&us[i], &us[i], &zero, 1), want[i], 1e-12) << us[i];
    // The same through the batched LibTorch function (float32).
    const auto u = torch::tensor({static_cast<float>(us[i])}).reshape({1, 1});
    const float got = SquashedGaussianLogProb(u, u, torch::zeros({1, 1})).item<float>();
    EXPECT_TRUE(std::isfinite(got));
    EXPECT_NEAR(got, want[i], 1e-4 * std::max(1.0, std::fabs(want[i])));
  }
  // Two components with a non-trivial Gaussian term: u = (0.5, -2), mean = (0, -1),
  // log_std = (log 2, 0): Gaussian -0.5 (0.25)^2 - log 2 - c - 0.5 (1)^2 - 0 - c.
  const double u[] = {0.5, -2.0}, mean[] = {0.0, -1.0}, log_std[] = {std::log(2.0), 0.0};
  const double gauss = -0.5 * 0.0625 - std::log(2.0) - kHalfLog2Pi - 0.5 - kHalfLog2Pi;
  const double jac = std::log(1.0 - std::pow(std::tanh(0.5), 2)) +
                     std::log(1.0 - std::pow(std::tanh(-2.0), 2));
  EXPECT_NEAR(SquashedGaussianLogProb(u, mean, log_std, 2), gauss - jac, 1e-12);
  const auto tu = torch::tensor({0.5f, -2.0f}).reshape({1, 2});
  const auto tm = torch::tensor({0.0f, -1.0f}).reshape({1, 2});
  const auto tl = torch::tensor({static_cast<float>(std::log(2.0)), 0.0f}).reshape({1, 2});
  EXPECT_NEAR(SquashedGaussianLogProb(tu, tm, tl).item<float>(), gauss - jac, 1e-5);
  // A state-independent log std [A] broadcasts (continuous PPO).
  EXPECT_NEAR(DiagGaussianLogProb(tu, tm, tl.reshape({2})).item<float>(), gauss, 1e-5);
}

TEST(SquashedGaussianTest, SampleIsReparameterisedAndFiniteWhenSaturated) {
  // Row 0 ordinary, row 1 saturated (u = 30 + exp(0.5) * 1: tanh rounds to 1 in float32).
  auto mean = torch::tensor({0.3f, 30.0f}).reshape({2, 1}).requires_grad_(true);
  auto log_std = torch::tensor({-0.7f, 0.5f}).reshape({2, 1}).requires_grad_(true);
  const auto noise = torch::tensor({0.8f, 1.0f}).reshape({2, 1});
  const SquashedGaussianSample s = SampleSquashedGaussian(mean, log_std, noise);
  const double u0 = 0.3 + std::exp(-0.7) * 0.8;
  EXPECT_NEAR(s.action[0][0].item<float>(), std::tanh(u0), 1e-6);
  EXPECT_EQ(s.action[1][0].item<float>(), 1.0f);
  const double m0 = 0.3, l0 = -0.7;
  EXPECT_NEAR(s.log_prob[0].item<float>(), SquashedGaussianLogProb(&u0, &m0, &l0, 1), 1e-5);
  const double u1 = 30.0 + std::exp(0.5), m1 = 30.0, l1 = 0.5;
  EXPECT_NEAR(s.log_prob[1].item<float>(), SquashedGaussianLogProb(&u1, &m1, &l1, 1), 1e-3);
  EXPECT_TRUE(std::isfinite(s.log_prob[1].item<float>()));
  // Gradients through the saturated row stay finite: d/du of the Jacobian term is -2 tanh(u).
  s.log_prob.sum().backward();
  EXPECT_TRUE(torch::isfinite(mean.grad()).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(log_std.grad()).all().item<bool>());
  // d log_prob / d mean = -d/du TanhLogDetJacobian(u) = 2 tanh(u) (the Gaussian term, written
  // in the noise, does not depend on mean).
  EXPECT_NEAR(mean.grad()[0][0].item<float>(), 2.0 * std::tanh(u0), 1e-5);
  EXPECT_NEAR(mean.grad()[1][0].item<float>(), 2.0, 1e-5);
}

// gSDE by hand: latent h = (1, 2), L = A = 2, log_std = [[0, log 2], [log 0.5, 0]] (rows j,
// columns k), eps = [[0.5, -1], [1, 0.25]], mean = (0.2, -0.3).
//   E = exp(log_std) * eps = [[0.5, -2], [0.5, 0.25]];  z = h @ E = (0.5 + 1, -2 + 0.5) = (1.5,
//   -1.5) s_k^2 = sum_j h_j^2 exp(2 log_std_jk) + 1e-6: s_0^2 = 1 + 4 x 0.25 = 2 (+1e-6),
//                                                  s_1^2 = 1 x 4 + 4 x 1 = 8 (+1e-6)
//   u = mean + z = (1.7, -1.8); action = tanh(u) = (0.93540907, -0.94680601)
//   log_prob = sum_k [-0.5 z_k^2 / s_k^2 - log s_k - 0.5 log(2 pi) + 2 log cosh(u_k)]
//            = (-0.5625 - 0.34657 - 0.91894 + 2.07936) + (-0.140625 - 1.03972 - 0.91894 + 2.26762)
//            = 0.41968596
TEST(SquashedGaussianTest, SdeSampleAndLogProbByHand) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  const auto latent = torch::tensor({1.0, 2.0}, opts).reshape({1, 2});
  const auto log_std =
      torch::tensor({0.0, std::log(2.0), std::log(0.5), 0.0}, opts).reshape({2, 2});
  const auto eps = torch::tensor({0.5, -1.0, 1.0, 0.25}, opts).reshape({2, 2});
  const auto mean = torch::tensor({0.2, -0.3}, opts).reshape({1, 2});
  const torch::Tensor s = SdeStd(latent, log_std);
  EXPECT_NEAR(s[0][0].item<double>(), std::sqrt(2.000001), 1e-14);
  EXPECT_NEAR(s[0][1].item<double>(), std::sqrt(8.000001), 1e-14);
  const SquashedGaussianSample x = SampleSquashedSde(mean, latent, log_std, eps);
  EXPECT_NEAR(x.action[0][0].item<double>(), std::tanh(1.7), 1e-14);
  EXPECT_NEAR(x.action[0][1].item<double>(), std::tanh(-1.8), 1e-14);
  EXPECT_NEAR(x.log_prob[0].item<double>(), 0.4196859634251793, 1e-12);
  // One matrix per row ([B, L, A]) gives each row what the single matrix gives it.
  const auto latent2 = torch::tensor({1.0, 2.0, -0.5, 3.0}, opts).reshape({2, 2});
  const auto eps_b =
      torch::tensor({0.5, -1.0, 1.0, 0.25, -0.7, 0.1, 0.3, 2.0}, opts).reshape({2, 2, 2});
  const auto mean2 = torch::tensor({0.2, -0.3, 1.0, 0.5}, opts).reshape({2, 2});
  const SquashedGaussianSample batched = SampleSquashedSde(mean2, latent2, log_std, eps_b);
  for (int i = 0; i < 2; ++i) {
    const SquashedGaussianSample row =
        SampleSquashedSde(mean2.slice(0, i, i + 1), latent2.slice(0, i, i + 1), log_std, eps_b[i]);
    EXPECT_TRUE(torch::allclose(batched.action[i], row.action[0], 0.0, 1e-15)) << i;
    EXPECT_NEAR(batched.log_prob[i].item<double>(), row.log_prob[0].item<double>(), 1e-13) << i;
  }
}

// Gradients flow to mean, latent and log_std (through the std and through E = exp(log_std) eps,
// SB3's rsample) and match central finite differences of the log-prob and of the action; a
// saturated sample (u = 40: tanh rounds to 1) keeps a finite log-prob and finite gradients.
TEST(SquashedGaussianTest, SdeGradientsMatchFiniteDifferencesAndSaturationIsFinite) {
  const auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  const auto eps = torch::tensor({0.5, -1.0, 1.0, 0.25, -0.3, 0.8}, opts).reshape({3, 2});
  std::vector<torch::Tensor> params = {
      torch::tensor({0.2, -0.3, 0.7, 0.1}, opts).reshape({2, 2}),              // mean [B=2, A=2]
      torch::tensor({1.0, 2.0, -0.5, 0.3, 0.4, -1.2}, opts).reshape({2, 3}),   // latent [2, L=3]
      torch::tensor({0.0, 0.3, -0.5, 0.1, -1.0, 0.2}, opts).reshape({3, 2})};  // log_std [3, 2]
  auto objective = [&](const std::vector<torch::Tensor>& p) {
    const SquashedGaussianSample x = SampleSquashedSde(p[0], p[1], p[2], eps);
    return x.log_prob.sum() + 3.0 * x.action.sum();
  };
  for (auto& p : params) p.requires_grad_(true);
  objective(params).backward();
  const double h = 1e-6;
  for (size_t which = 0; which < params.size(); ++which) {
    for (int64_t k = 0; k < params[which].numel(); ++k) {
      std::vector<torch::Tensor> plus, minus;
      for (const auto& p : params) {
        plus.push_back(p.detach().clone());
        minus.push_back(p.detach().clone());
      }
      plus[which].view(-1)[k] += h;
      minus[which].view(-1)[k] -= h;
      const double fd =
          (objective(plus).item<double>() - objective(minus).item<double>()) / (2.0 * h);
      EXPECT_NEAR(params[which].grad().view(-1)[k].item<double>(), fd, 1e-6)
          << "parameter " << which << " element " << k;
    }
  }
  // Saturation in float32: mean 2, z = 38 (latent 38 times E = 1) -> u = 40.
  auto mean = torch::full({1, 1}, 2.0f).requires_grad_(true);
  auto latent = torch::full({1, 1}, 38.0f).requires_grad_(true);
  auto log_std = torch::zeros({1, 1}).requires_grad_(true);
  const SquashedGaussianSample sat = SampleSquashedSde(mean, latent, log_std, torch::ones({1, 1}));
  EXPECT_EQ(sat.action.item<float>(), 1.0f);
  EXPECT_TRUE(std::isfinite(sat.log_prob.item<float>()));
  // -0.5 (38 / 38)^2 - log 38 - 0.5 log(2 pi) + 2 log cosh(40) (= 80 - 2 log 2).
  EXPECT_NEAR(sat.log_prob.item<float>(),
              -0.5 - std::log(38.0) - kHalfLog2Pi + 80.0 - 2.0 * std::log(2.0), 1e-3);
  sat.log_prob.sum().backward();
  for (const auto* t : {&mean, &latent, &log_std}) {
    EXPECT_TRUE(torch::isfinite(t->grad()).all().item<bool>());
  }
}

TEST(SquashedGaussianTest, RescaleToBoxAndBack) {
  // Pendulum-v1's torque Box [-2, 2] and an asymmetric [0, 10].
  const float low[] = {-2.0f, 0.0f}, high[] = {2.0f, 10.0f};
  const float a[] = {-1.0f, -0.5f, 0.0f, 1.0f, 0.5f, 0.2f};
  float x[6];
  RescaleToBox(a, 3, 2, low, high, x);
  const float want[] = {-2.0f, 2.5f, 0.0f, 10.0f, 1.0f, 6.0f};
  for (int j = 0; j < 6; ++j) EXPECT_FLOAT_EQ(x[j], want[j]) << j;
  float back[6];
  ScaleFromBox(x, 3, 2, low, high, back);
  for (int j = 0; j < 6; ++j) EXPECT_NEAR(back[j], a[j], 1e-6) << j;
  // Rounding never leaves the Box.
  const float one[] = {1.0f, 1.0f};
  float y[2];
  RescaleToBox(one, 1, 2, low, high, y);
  EXPECT_LE(y[0], high[0]);
  EXPECT_LE(y[1], high[1]);
}

}  // namespace
}  // namespace greenrl::nn
