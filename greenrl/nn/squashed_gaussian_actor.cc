#include "greenrl/nn/squashed_gaussian_actor.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "greenrl/core/errors.h"

namespace greenrl::nn {
namespace {

constexpr float kHalfLog2Pi = 0.918938533204672742f;  // 0.5 log(2 pi)
constexpr float kLog2 = 0.693147180559945309f;
// SB3 sac/policies.py: LOG_STD_MIN, LOG_STD_MAX.
constexpr float kLogStdMin = -20.0f;
constexpr float kLogStdMax = 2.0f;
// gSDE's variance floor: nn::kSdeEpsilon (squashed_gaussian.h, which includes LibTorch; this
// file stays torch-free), SB3 StateDependentNoiseDistribution.epsilon.
constexpr float kSdeVarianceFloor = 1e-6f;

// Row-major C[m, n] = op(A) op(B) + beta C, op(X) = X^T when its flag is set; A is [m, k] (or
// [k, m] transposed), B is [k, n] (or [n, k] transposed), all densely packed.
void RowGemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta,
             float* c) {
  // Column-major, C^T = op(B)^T op(A)^T.
  blas::Sgemm(tb ? 'T' : 'N', ta ? 'T' : 'N', n, m, k, 1.0f, b, tb ? k : n, a, ta ? m : k, beta, c,
              n);
}

// log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), float32 (squashed_gaussian.h).
float TanhLogDetJacobianF(float u) {
  const float x = -2.0f * u;
  const float softplus = std::max(x, 0.0f) + std::log1p(std::exp(-std::fabs(x)));
  return 2.0f * (kLog2 - u - softplus);
}

}  // namespace

FusedSquashedGaussianActor::FusedSquashedGaussianActor(SquashedGaussianActorLayout layout,
                                                       int max_batch)
    : layout_(std::move(layout)),
      max_batch_(max_batch),
      latent_dim_(layout_.net_arch.empty() ? 0 : layout_.net_arch.back()),
      latent_mlp_(
          [this] {
            GREENRL_CHECK(!layout_.net_arch.empty() && layout_.obs_dim >= 1 &&
                              layout_.act_dim >= 1 && max_batch_ >= 1,
                          "the fused SAC actor needs net_arch, obs and action dims and a batch");
            MlpSpec spec{{layout_.obs_dim}, layout_.activation};
            for (int h : layout_.net_arch) spec.sizes.push_back(h);
            return spec;
          }(),
          max_batch) {
  const size_t bl = static_cast<size_t>(max_batch) * latent_dim_;
  const size_t ba = static_cast<size_t>(max_batch) * layout_.act_dim;
  const size_t la = static_cast<size_t>(latent_dim_) * layout_.act_dim;
  for (std::vector<float>* v : {&h_, &h_sq_, &grad_h_, &tmp_h_}) v->assign(bl, 0.0f);
  for (std::vector<float>* v :
       {&mean0_, &log_std0_, &std_, &z_, &a_, &grad_u_, &grad_mean_, &grad_b_}) {
    v->assign(ba, 0.0f);
  }
  log_prob_.assign(static_cast<size_t>(max_batch), 0.0f);
  if (layout_.use_sde) {
    for (std::vector<float>* v : {&e_, &w2_, &t1_, &t2_}) v->assign(la, 0.0f);
  }
}

void FusedSquashedGaussianActor::Forward(const float* params, const float* obs, const float* noise,
                                         int batch) {
  GREENRL_CHECK(batch >= 1 && batch <= max_batch_, "batch outside [1, max_batch]");
  batch_ = batch;
  noise_ = noise;
  const int L = latent_dim_, A = layout_.act_dim;
  const size_t bl = static_cast<size_t>(batch) * L;
  // h = act(latent MLP's last layer output).
  const float* z2 = latent_mlp_.Forward(params + layout_.latent, obs, batch);
  if (layout_.activation == Activation::kTanh) {
    for (size_t j = 0; j < bl; ++j) h_[j] = TanhApprox(z2[j]);
  } else {
    for (size_t j = 0; j < bl; ++j) h_[j] = std::max(z2[j], 0.0f);
  }
  // mean0 = h W_mu^T + b_mu.
  RowGemm(false, true, batch, A, L, h_.data(), params + layout_.mu_weight, 0.0f, mean0_.data());
  const float* b_mu = params + layout_.mu_bias;
  for (int i = 0; i < batch; ++i) {
    for (int k = 0; k < A; ++k) mean0_[i * A + k] += b_mu[k];
  }
  if (!layout_.use_sde) {
    RowGemm(false, true, batch, A, L, h_.data(), params + layout_.log_std_weight, 0.0f,
            log_std0_.data());
    const float* b_ls = params + layout_.log_std_bias;
    for (int i = 0; i < batch; ++i) {
      double lp = 0.0;
      for (int k = 0; k < A; ++k) {
        const int j = i * A + k;
        log_std0_[j] += b_ls[k];
        const float ls = std::clamp(log_std0_[j], kLogStdMin, kLogStdMax);
        std_[j] = std::exp(ls);
        const float n = noise[j];
        const float u = mean0_[j] + std_[j] * n;
        a_[j] = std::tanh(u);
        lp += -0.5f * n * n - ls - kHalfLog2Pi - TanhLogDetJacobianF(u);
      }
      log_prob_[i] = static_cast<float>(lp);
    }
    return;
  }
  // gSDE: E = exp(log_std) * eps, z = h E, s^2 = h^2 exp(2 log_std) + 1e-6.
  const float* log_std = params + layout_.sde_log_std;
  for (int j = 0; j < L * A; ++j) {
    e_[j] = std::exp(log_std[j]) * noise[j];
    w2_[j] = std::exp(2.0f * log_std[j]);
  }
  for (size_t j = 0; j < bl; ++j) h_sq_[j] = h_[j] * h_[j];
  RowGemm(false, false, batch, A, L, h_.data(), e_.data(), 0.0f, z_.data());
  RowGemm(false, false, batch, A, L, h_sq_.data(), w2_.data(), 0.0f, std_.data());
  const float c = static_cast<float>(layout_.clip_mean);
  for (int i = 0; i < batch; ++i) {
    double lp = 0.0;
    for (int k = 0; k < A; ++k) {
      const int j = i * A + k;
      std_[j] = std::sqrt(std_[j] + kSdeVarianceFloor);
      const float mean = c > 0.0f ? std::clamp(mean0_[j], -c, c) : mean0_[j];
      const float u = mean + z_[j];
      a_[j] = std::tanh(u);
      const float r = z_[j] / std_[j];
      lp += -0.5f * r * r - std::log(std_[j]) - kHalfLog2Pi - TanhLogDetJacobianF(u);
    }
    log_prob_[i] = static_cast<float>(lp);
  }
}

void FusedSquashedGaussianActor::Backward(const float* params, const float* grad_action,
                                          float grad_log_prob, float* grads) {
  GREENRL_CHECK(batch_ >= 1, "Backward called before Forward");
  const int batch = batch_, L = latent_dim_, A = layout_.act_dim;
  const float gp = grad_log_prob;
  const float c = static_cast<float>(layout_.clip_mean);
  // At u: through action = tanh(u) and through -TanhLogDetJacobian(u), whose derivative is
  // 2 tanh(u).
  for (int j = 0; j < batch * A; ++j) {
    const float a = a_[j];
    grad_u_[j] = grad_action[j] * (1.0f - a * a) + gp * 2.0f * a;
  }
  if (!layout_.use_sde) {
    // u = mean + exp(log_std) noise; log_prob's -log_std.
    for (int j = 0; j < batch * A; ++j) {
      grad_mean_[j] = grad_u_[j];
      const bool inside = log_std0_[j] >= kLogStdMin && log_std0_[j] <= kLogStdMax;
      grad_b_[j] = inside ? grad_u_[j] * std_[j] * noise_[j] - gp : 0.0f;
    }
  } else {
    // u = mean + z; log_prob's -0.5 (z / s)^2 - log s; s = sqrt(var).
    for (int j = 0; j < batch * A; ++j) {
      const float s = std_[j], z = z_[j];
      const bool inside = c <= 0.0f || (mean0_[j] >= -c && mean0_[j] <= c);
      grad_mean_[j] = inside ? grad_u_[j] : 0.0f;
      const float grad_s = gp * (z * z / (s * s * s) - 1.0f / s);
      grad_b_[j] = grad_s / (2.0f * s);  // at the variance
      grad_u_[j] -= gp * z / (s * s);    // now at z
    }
  }
  // The mean head, and its part of the gradient at h.
  RowGemm(true, false, A, L, batch, grad_mean_.data(), h_.data(), 1.0f, grads + layout_.mu_weight);
  float* g_b_mu = grads + layout_.mu_bias;
  for (int i = 0; i < batch; ++i) {
    for (int k = 0; k < A; ++k) g_b_mu[k] += grad_mean_[i * A + k];
  }
  RowGemm(false, false, batch, L, A, grad_mean_.data(), params + layout_.mu_weight, 0.0f,
          grad_h_.data());
  const size_t bl = static_cast<size_t>(batch) * L;
  if (!layout_.use_sde) {
    RowGemm(true, false, A, L, batch, grad_b_.data(), h_.data(), 1.0f,
            grads + layout_.log_std_weight);
    float* g_b_ls = grads + layout_.log_std_bias;
    for (int i = 0; i < batch; ++i) {
      for (int k = 0; k < A; ++k) g_b_ls[k] += grad_b_[i * A + k];
    }
    RowGemm(false, false, batch, L, A, grad_b_.data(), params + layout_.log_std_weight, 1.0f,
            grad_h_.data());
  } else {
    // z = h E: dh += dz E^T, dE = h^T dz (E = exp(log_std) eps, so dlog_std += E * dE);
    // var = h^2 exp(2 log_std): dh += 2 h (dvar exp(2 log_std)^T),
    // dlog_std += 2 exp(2 log_std) * (h^2)^T dvar.
    RowGemm(false, true, batch, L, A, grad_u_.data(), e_.data(), 1.0f, grad_h_.data());
    RowGemm(false, true, batch, L, A, grad_b_.data(), w2_.data(), 0.0f, tmp_h_.data());
    for (size_t j = 0; j < bl; ++j) grad_h_[j] += 2.0f * h_[j] * tmp_h_[j];
    RowGemm(true, false, L, A, batch, h_.data(), grad_u_.data(), 0.0f, t1_.data());
    RowGemm(true, false, L, A, batch, h_sq_.data(), grad_b_.data(), 0.0f, t2_.data());
    float* g_log_std = grads + layout_.sde_log_std;
    for (int j = 0; j < L * A; ++j) g_log_std[j] += e_[j] * t1_[j] + 2.0f * w2_[j] * t2_[j];
  }
  // Through the last hidden activation, then the latent MLP.
  if (layout_.activation == Activation::kTanh) {
    for (size_t j = 0; j < bl; ++j) tmp_h_[j] = grad_h_[j] * (1.0f - h_[j] * h_[j]);
  } else {
    for (size_t j = 0; j < bl; ++j) tmp_h_[j] = h_[j] > 0.0f ? grad_h_[j] : 0.0f;
  }
  latent_mlp_.Backward(params + layout_.latent, tmp_h_.data(), grads + layout_.latent);
}

}  // namespace greenrl::nn
