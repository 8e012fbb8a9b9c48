// The fused SAC actor against LibTorch autograd of the same actor built from the same flat
// parameters with nn::SampleSquashedGaussian / nn::SampleSquashedSde (squashed_gaussian.h).
#include "greenrl/nn/squashed_gaussian_actor.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/nn/squashed_gaussian.h"

namespace greenrl::nn {
namespace {

torch::Tensor View(float* data, std::vector<int64_t> shape) {
  return torch::from_blob(data, shape, torch::kFloat32);
}

struct Case {
  bool use_sde;
  Activation activation;
  double clip_mean;
  float head_scale;  // larger: more log_std / mean entries beyond their clamps
};

// L = sum(action * r) + g_lp * sum(log_prob) for random r, with the actor's parameters laid out
// as SAC's (gSDE: log_std first, then latent_pi and mu; Gaussian: latent_pi, mu, log_std head).
// Forward matches to 1e-5 and every parameter's gradient to 1e-4 (relative above 1). A large
// head scale puts some log-stds beyond [-20, 2] and some means beyond clip_mean, where the
// clamps stop the gradient.
TEST(FusedSquashedGaussianActorTest, MatchesAutograd) {
  const Case cases[] = {
      {false, Activation::kReLU, 0.0, 0.5f},  {false, Activation::kTanh, 0.0, 0.5f},
      {false, Activation::kReLU, 0.0, 12.0f}, {true, Activation::kReLU, 2.0, 0.5f},
      {true, Activation::kTanh, 0.0, 0.5f},   {true, Activation::kReLU, 0.5, 3.0f}};
  for (const Case& c : cases) {
    const std::string what = std::string(c.use_sde ? "gSDE" : "Gaussian") + " " +
                             ToString(c.activation) + " clip " + std::to_string(c.clip_mean) +
                             " scale " + std::to_string(c.head_scale);
    SCOPED_TRACE(what);
    const int obs_dim = 5, act_dim = 3, batch = 23;
    const std::vector<int> arch = {16, 12};
    const int L = arch.back();
    SquashedGaussianActorLayout layout;
    layout.obs_dim = obs_dim;
    layout.act_dim = act_dim;
    layout.net_arch = arch;
    layout.activation = c.activation;
    layout.use_sde = c.use_sde;
    layout.clip_mean = c.clip_mean;
    const int64_t latent_params = (obs_dim * 16 + 16) + (16 * 12 + 12);
    int64_t offset = 0;
    if (c.use_sde) {
      layout.sde_log_std = 0;
      offset = L * act_dim;
    }
    layout.latent = offset;
    offset += latent_params;
    layout.mu_weight = offset;
    layout.mu_bias = offset + act_dim * L;
    offset += act_dim * L + act_dim;
    if (!c.use_sde) {
      layout.log_std_weight = offset;
      layout.log_std_bias = offset + act_dim * L;
      offset += act_dim * L + act_dim;
    }
    Rng rng(11);
    std::vector<float> params(offset), obs(batch * obs_dim), r(batch * act_dim);
    for (float& p : params) p = static_cast<float>(rng.Normal() * 0.4);
    for (int64_t j = layout.mu_weight; j < offset; ++j) params[j] *= c.head_scale;
    if (c.use_sde) {
      for (int j = 0; j < L * act_dim; ++j) params[j] = static_cast<float>(rng.Uniform(-2, 0.5));
    }
    for (float& x : obs) x = static_cast<float>(rng.Normal());
    for (float& x : r) x = static_cast<float>(rng.Normal());
    std::vector<float> noise(c.use_sde ? L * act_dim : batch * act_dim);
    for (float& x : noise) x = static_cast<float>(rng.Normal());
    const float g_lp = 0.37f;

    // Autograd.
    torch::Tensor p = torch::tensor(params).requires_grad_(true);
    auto slice = [&](int64_t at, std::vector<int64_t> shape) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      return p.narrow(0, at, n).view(shape);
    };
    torch::Tensor h = View(obs.data(), {batch, obs_dim});
    int in = obs_dim;
    int64_t at = layout.latent;
    for (int width : arch) {
      const torch::Tensor w = slice(at, {width, in}), b = slice(at + width * in, {width});
      h = torch::nn::functional::linear(h, w, b);
      h = c.activation == Activation::kTanh ? torch::tanh(h) : torch::relu(h);
      at += width * in + width;
      in = width;
    }
    torch::Tensor mean = torch::nn::functional::linear(h, slice(layout.mu_weight, {act_dim, L}),
                                                       slice(layout.mu_bias, {act_dim}));
    SquashedGaussianSample s;
    int64_t clamped = 0;  // head outputs beyond their clamp
    if (c.use_sde) {
      if (c.clip_mean > 0) {
        clamped = (mean.abs() > c.clip_mean).sum().item<int64_t>();
        mean = torch::clamp(mean, -c.clip_mean, c.clip_mean);
      }
      s = SampleSquashedSde(mean, h, slice(layout.sde_log_std, {L, act_dim}),
                            View(noise.data(), {L, act_dim}));
    } else {
      const torch::Tensor log_std0 = torch::nn::functional::linear(
          h, slice(layout.log_std_weight, {act_dim, L}), slice(layout.log_std_bias, {act_dim}));
      clamped = ((log_std0 < -20.0) | (log_std0 > 2.0)).sum().item<int64_t>();
      s = SampleSquashedGaussian(mean, torch::clamp(log_std0, -20.0, 2.0),
                                 View(noise.data(), {batch, act_dim}));
    }
    const torch::Tensor loss =
        (s.action * View(r.data(), {batch, act_dim})).sum() + g_lp * s.log_prob.sum();
    loss.backward();
    const torch::Tensor expected_grads = p.grad().contiguous();
    const torch::Tensor action = s.action.detach().contiguous();
    const torch::Tensor log_prob = s.log_prob.detach().contiguous();

    // Fused.
    FusedSquashedGaussianActor actor(layout, 32);
    actor.Forward(params.data(), obs.data(), noise.data(), batch);
    for (int j = 0; j < batch * act_dim; ++j) {
      ASSERT_NEAR(actor.action()[j], action.data_ptr<float>()[j], 1e-5) << "action " << j;
    }
    for (int i = 0; i < batch; ++i) {
      const float e = log_prob.data_ptr<float>()[i];
      ASSERT_NEAR(actor.log_prob()[i], e, 2e-5 * std::max(1.0f, std::fabs(e))) << "row " << i;
    }
    std::vector<float> grads(params.size(), 0.25f);  // Backward adds: start from 0.25
    actor.Backward(params.data(), r.data(), g_lp, grads.data());
    const float* eg = expected_grads.data_ptr<float>();
    for (size_t j = 0; j < grads.size(); ++j) {
      const double e = 0.25 + eg[j];
      ASSERT_NEAR(grads[j], e, 1e-4 * std::max(1.0, std::fabs(e))) << "gradient " << j;
    }
    if (c.head_scale > 1.0f) {
      EXPECT_GT(clamped, 0);  // the clamps were exercised
    }
  }
}

}  // namespace
}  // namespace greenrl::nn
