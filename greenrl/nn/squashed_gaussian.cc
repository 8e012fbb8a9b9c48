#include "greenrl/nn/squashed_gaussian.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace greenrl::nn {

namespace {
constexpr double kLog2 = 0.69314718055994530942;
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 log(2 pi)

double Softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
}  // namespace

double TanhLogDetJacobian(double u) { return 2.0 * (kLog2 - u - Softplus(-2.0 * u)); }

double GaussianLogProb(double x, double mean, double log_std) {
  const double z = (x - mean) / std::exp(log_std);
  return -0.5 * z * z - log_std - kHalfLog2Pi;
}

double SquashedGaussianLogProb(const double* u, const double* mean, const double* log_std,
                               int dim) {
  double sum = 0.0;
  for (int k = 0; k < dim; ++k) {
    sum += GaussianLogProb(u[k], mean[k], log_std[k]) - TanhLogDetJacobian(u[k]);
  }
  return sum;
}

torch::Tensor TanhLogDetJacobian(const torch::Tensor& u) {
  // torch::softplus is stable (it switches to the identity above its threshold of 20).
  return 2.0 * (kLog2 - u - torch::softplus(-2.0 * u));
}

torch::Tensor DiagGaussianLogProb(const torch::Tensor& x, const torch::Tensor& mean,
                                  const torch::Tensor& log_std) {
  const torch::Tensor z = (x - mean) * torch::exp(-log_std);
  return (-0.5 * z.square() - log_std - kHalfLog2Pi).sum(/*dim=*/-1);
}

torch::Tensor SquashedGaussianLogProb(const torch::Tensor& u, const torch::Tensor& mean,
                                      const torch::Tensor& log_std) {
  return DiagGaussianLogProb(u, mean, log_std) - TanhLogDetJacobian(u).sum(/*dim=*/-1);
}

SquashedGaussianSample SampleSquashedGaussian(const torch::Tensor& mean,
                                              const torch::Tensor& log_std,
                                              const torch::Tensor& noise) {
  const torch::Tensor u = mean + torch::exp(log_std) * noise;
  SquashedGaussianSample s;
  s.action = torch::tanh(u);
  s.log_prob =
      (-0.5 * noise.square() - log_std - kHalfLog2Pi - TanhLogDetJacobian(u)).sum(/*dim=*/-1);
  return s;
}

torch::Tensor SdeStd(const torch::Tensor& latent, const torch::Tensor& log_std) {
  return torch::sqrt(latent.square().mm(torch::exp(2.0 * log_std)) + kSdeEpsilon);
}

SquashedGaussianSample SampleSquashedSde(const torch::Tensor& mean, const torch::Tensor& latent,
                                         const torch::Tensor& log_std, const torch::Tensor& eps) {
  const torch::Tensor e = torch::exp(log_std) * eps;
  const torch::Tensor z =
      eps.dim() == 2 ? latent.mm(e) : latent.unsqueeze(1).bmm(e).squeeze(/*dim=*/1);
  const torch::Tensor u = mean + z;
  const torch::Tensor s = SdeStd(latent, log_std);
  SquashedGaussianSample out;
  out.action = torch::tanh(u);
  out.log_prob =
      (-0.5 * (z / s).square() - torch::log(s) - kHalfLog2Pi - TanhLogDetJacobian(u)).sum(-1);
  return out;
}

void RescaleToBox(const float* a, int64_t n, int dim, const float* low, const float* high,
                  float* out) {
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < dim; ++k) {
      const int64_t j = i * dim + k;
      const float x = low[k] + 0.5f * (a[j] + 1.0f) * (high[k] - low[k]);
      out[j] = std::clamp(x, low[k], high[k]);
    }
  }
}

void ScaleFromBox(const float* x, int64_t n, int dim, const float* low, const float* high,
                  float* out) {
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < dim; ++k) {
      const int64_t j = i * dim + k;
      out[j] = 2.0f * ((x[j] - low[k]) / (high[k] - low[k])) - 1.0f;
    }
  }
}

}  // namespace greenrl::nn
