// squashed_gaussian.h: the tanh-squashed diagonal Gaussian of SAC's actor (Haarnoja et al., 2018,
// arXiv:1801.01290, appendix C), the plain diagonal Gaussian it is built on (continuous PPO's
// policy too), its gSDE variant (SAC with use_sde; the std formula PPO's gSDE shares), and the
// maps between a policy's [-1, 1] actions and an env's Box bounds.
//
// Semantics follow Stable-Baselines3 2.x (common/distributions.py SquashedDiagGaussianDistribution,
// common/policies.py BasePolicy.scale_action / unscale_action), with one deliberate difference:
// the change-of-variables term log(1 - tanh(u)^2) is computed as 2 (log 2 - u - softplus(-2u))
// (SpinningUp's sac/core.py, "numerically-stable equivalent"), not SB3's
// log(1 - tanh(u)^2 + 1e-6) (its TanhBijector.log_prob_correction). The stable form is exact for
// every finite u: a saturated action
// (|u| > ~9, where tanh(u) rounds to +-1 in float32) gives a large finite log-prob, never NaN or
// -inf, and no 1e-6 bias.
//
// Two flavours of each formula: torch-free scalar functions (tests, reference values) and
// LibTorch functions on batches (autograd flows through them). Shapes: batch B, action dim A.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace greenrl::nn {

// log |d tanh(u) / du| = log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), with
// softplus(x) = log(1 + exp(x)) evaluated as max(x, 0) + log1p(exp(-|x|)). Finite for every
// finite u (about -2 |u| + 2 log 2 for large |u|). Source: SpinningUp sac/core.py.
double TanhLogDetJacobian(double u);

// log N(x; mean, exp(log_std)^2) of one component (nats):
// -0.5 ((x - mean) / std)^2 - log_std - 0.5 log(2 pi), as torch.distributions.Normal.log_prob.
double GaussianLogProb(double x, double mean, double log_std);

// Log-density of the squashed action a = tanh(u) for one action of `dim` components, given the
// pre-tanh value u ~ N(mean, exp(log_std)^2) (diagonal):
//   sum_k [GaussianLogProb(u_k, mean_k, log_std_k) - TanhLogDetJacobian(u_k)].
// u, mean, log_std: float64 [dim]. Finite for every finite input.
double SquashedGaussianLogProb(const double* u, const double* mean, const double* log_std,
                               int dim);

// Batched TanhLogDetJacobian, elementwise: u float32 [...] -> float32 [...]; differentiable.
torch::Tensor TanhLogDetJacobian(const torch::Tensor& u);

// Diagonal Gaussian log-density summed over the last dim: x, mean, log_std float32 [B, A]
// (log_std may also be [A] or [1, A], broadcast, as continuous PPO's state-independent log std)
// -> float32 [B]; differentiable in all three.
torch::Tensor DiagGaussianLogProb(const torch::Tensor& x, const torch::Tensor& mean,
                                  const torch::Tensor& log_std);

// Squashed-Gaussian log-density of a = tanh(u) from the pre-tanh u: float32 [B, A] each ->
// float32 [B] = DiagGaussianLogProb(u, mean, log_std) - TanhLogDetJacobian(u).sum(-1).
torch::Tensor SquashedGaussianLogProb(const torch::Tensor& u, const torch::Tensor& mean,
                                      const torch::Tensor& log_std);

// A reparameterised sample of the squashed Gaussian and its log-density.
struct SquashedGaussianSample {
  torch::Tensor action;    // float32 [B, A], tanh(u), in [-1, 1] (+-1 exactly when saturated)
  torch::Tensor log_prob;  // float32 [B], log-density of `action` (change of variables included)
};

// u = mean + exp(log_std) * noise (the reparameterisation trick: gradients flow to mean and
// log_std), action = tanh(u), log_prob = sum_k [-0.5 noise_k^2 - log_std_k - 0.5 log(2 pi) -
// TanhLogDetJacobian(u_k)] (the Gaussian term written in noise, which equals (u - mean) / std).
// Args: mean, log_std: float32 [B, A] (SB3 clamps log_std to [-20, 2] before this);
//   noise: float32 [B, A] of N(0, 1) draws from the caller's generator (no global torch RNG).
SquashedGaussianSample SampleSquashedGaussian(const torch::Tensor& mean,
                                              const torch::Tensor& log_std,
                                              const torch::Tensor& noise);

// The variance floor of SdeStd: SB3 StateDependentNoiseDistribution.epsilon.
inline constexpr double kSdeEpsilon = 1e-6;

// gSDE, generalized state-dependent exploration (Raffin, Kober and Stulp, 2022, arXiv:2005.05719;
// SB3 2.x common/distributions.py StateDependentNoiseDistribution with full_std=True,
// use_expln=False): the action noise is latent @ E with one exploration matrix E ~ N(0, std^2)
// of shape [L, A], std = exp(log_std), so for a given latent h the noise of action k is
// Gaussian with standard deviation
//   sqrt(sum_j h_j^2 exp(2 log_std_jk) + 1e-6)   (SB3's epsilon 1e-6 keeps it above 0).
// latent: float32 [B, L]; log_std: float32 [L, A] -> float32 [B, A]; differentiable in both
// (PPO passes detached features: SB3's PPO has learn_features=False).
torch::Tensor SdeStd(const torch::Tensor& latent, const torch::Tensor& log_std);

// A reparameterised gSDE sample of the squashed Gaussian (SB3 SAC Actor with use_sde=True):
//   E = exp(log_std) * eps, z = latent @ E (per row i with its own matrix when eps has one per
//   row), u = mean + z, action = tanh(u),
//   log_prob = sum_k [-0.5 (z_k / s_k)^2 - log s_k - 0.5 log(2 pi) - TanhLogDetJacobian(u_k)],
//   s = SdeStd(latent, log_std).
// Gradients flow to mean, latent (SB3's SAC learns the features: learn_features=True) and log_std
// (through s and through E, as SB3's rsample of the exploration matrix). The log-prob is that of
// u, not of atanh(action) as SB3 recomputes it, for the stability reason in this file's header.
// Args: mean float32 [B, A]; latent float32 [B, L]; log_std float32 [L, A]; eps float32 [L, A]
//   (one matrix for the batch, as SB3's train() after reset_noise()) or [B, L, A] (one per row,
//   as SB3's rollout with one matrix per env), N(0, 1) draws from the caller's generator.
SquashedGaussianSample SampleSquashedSde(const torch::Tensor& mean, const torch::Tensor& latent,
                                         const torch::Tensor& log_std, const torch::Tensor& eps);

// SB3's unscale_action: a policy action in [-1, 1] to the Box, per component
//   out = low + 0.5 (a + 1) (high - low), then clamped to [low, high] (float rounding).
// a, out: float32 [n, dim] row-major (may alias); low, high: float32 [dim], finite.
void RescaleToBox(const float* a, int64_t n, int dim, const float* low, const float* high,
                  float* out);

// SB3's scale_action, the inverse map: a Box action to [-1, 1],
//   out = 2 (x - low) / (high - low) - 1.
// x, out: float32 [n, dim] row-major (may alias); low, high: float32 [dim], finite, low < high.
void ScaleFromBox(const float* x, int64_t n, int dim, const float* low, const float* high,
                  float* out);

}  // namespace greenrl::nn
