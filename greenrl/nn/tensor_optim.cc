#include "greenrl/nn/tensor_optim.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace greenrl::nn {

namespace {
torch::Tensor HostCopy(const float* data, int64_t n, const torch::TensorOptions& options) {
  if (data == nullptr) return torch::zeros({n}, options.dtype(torch::kFloat32));
  return torch::from_blob(const_cast<float*>(data), {n}, torch::kFloat32)
      .to(options.dtype(torch::kFloat32), /*non_blocking=*/false, /*copy=*/true);
}
}  // namespace

TensorOptimState MakeTensorOptimState(const float* params, const float* exp_avg,
                                      const float* exp_avg_sq, int64_t num_params,
                                      int64_t step_count, double scale, int64_t growth_tracker,
                                      int64_t skipped_steps, const torch::TensorOptions& options) {
  if (num_params < 0) throw std::invalid_argument("MakeTensorOptimState: num_params < 0");
  const auto f32 = options.dtype(torch::kFloat32);
  TensorOptimState s;
  s.params = HostCopy(params, num_params, options);
  s.grads = torch::zeros({num_params}, f32);
  s.exp_avg = HostCopy(exp_avg, num_params, options);
  s.exp_avg_sq = HostCopy(exp_avg_sq, num_params, options);
  s.step = torch::full({1}, static_cast<double>(step_count), f32);
  s.lr = torch::zeros({1}, f32);
  s.scale = torch::full({1}, scale, f32);
  s.growth_tracker =
      torch::full({1}, static_cast<double>(growth_tracker), options.dtype(torch::kInt32));
  s.found_inf = torch::zeros({1}, f32);
  s.skipped_unscaled = torch::zeros({1}, f32);
  s.skipped = torch::full({1}, static_cast<double>(skipped_steps), f32);
  s.grad_norm = torch::zeros({1}, f32);
  return s;
}

void TensorOptimStep(TensorOptimState& s, const AdamOptions& adam, double max_grad_norm,
                     const ScaleUpdateOptions& scaler) {
  torch::NoGradGuard no_grad;
  // 1. Unscale and check (checked on the scaled values, as ATen does).
  s.found_inf.zero_();
  // GradScaler._unscale_grads_: inv_scale = _scale.double().reciprocal().float().
  const torch::Tensor inv_scale = s.scale.to(torch::kFloat64).reciprocal().to(torch::kFloat32);
  if (s.grads.is_cuda()) {
    at::_amp_foreach_non_finite_check_and_unscale_({s.grads}, s.found_inf, inv_scale);
  } else {
    s.found_inf.copy_(s.grads.isfinite().logical_not().any().to(torch::kFloat32).reshape({1}));
    s.grads.mul_(inv_scale);
  }

  // 2. Global-norm clip (clip_grad_norm_'s 1e-6). A non-finite norm skips the step too: finite
  // scaled gradients can unscale to inf (a scale so small that 1 / scale overflows), as the
  // fused path checks its norm.
  s.grad_norm.copy_(s.grads.norm().reshape({1}));
  s.found_inf.copy_(
      torch::maximum(s.found_inf, s.grad_norm.isfinite().logical_not().to(torch::kFloat32)));
  const torch::Tensor found = s.found_inf > 0;
  s.skipped_unscaled.add_(s.found_inf * (s.scale <= 1.0).to(torch::kFloat32));
  if (max_grad_norm > 0.0 && std::isfinite(max_grad_norm)) {
    s.grads.mul_((max_grad_norm / (s.grad_norm + 1e-6)).clamp_max(1.0));
  }

  // 3. Adam, masked by found_inf: a skipped step leaves m, v, t and the parameters unchanged.
  const double b1 = adam.beta1, b2 = adam.beta2;
  const torch::Tensor step = s.step + (1.0 - s.found_inf);
  const torch::Tensor m = s.exp_avg * b1 + s.grads * (1.0 - b1);
  const torch::Tensor v = s.exp_avg_sq * b2 + s.grads * s.grads * (1.0 - b2);
  const torch::Tensor bias_correction1 = 1.0 - torch::pow(b1, step);
  const torch::Tensor bias_correction2 = 1.0 - torch::pow(b2, step);
  const torch::Tensor denom = v.sqrt() * bias_correction2.rsqrt() + adam.eps;
  const torch::Tensor params = s.params - (s.lr / bias_correction1) * (m / denom);
  s.exp_avg.copy_(torch::where(found, s.exp_avg, m));
  s.exp_avg_sq.copy_(torch::where(found, s.exp_avg_sq, v));
  s.params.copy_(torch::where(found, s.params, params));
  s.step.copy_(step);
  s.skipped.add_(s.found_inf);

  // 4. Scale update (GradScaler.update).
  if (!scaler.enabled) return;
  if (s.scale.is_cuda()) {
    at::_amp_update_scale_(s.scale, s.growth_tracker, s.found_inf, scaler.growth_factor,
                           scaler.backoff_factor, scaler.growth_interval);
  } else {
    // _amp_update_scale_cpu_kernel's rules: products in double rounded to float32, and a growth
    // that overflows float32 leaves the scale as it is.
    const torch::Tensor grown = s.growth_tracker + 1;
    const torch::Tensor at_interval = grown == scaler.growth_interval;
    const torch::Tensor scale64 = s.scale.to(torch::kFloat64);
    const torch::Tensor backed_off = (scale64 * scaler.backoff_factor).to(torch::kFloat32);
    torch::Tensor larger = (scale64 * scaler.growth_factor).to(torch::kFloat32);
    larger = torch::where(larger.isfinite(), larger, s.scale);
    s.scale.copy_(torch::where(found, backed_off, torch::where(at_interval, larger, s.scale)));
    s.growth_tracker.copy_(
        torch::where(found.logical_or(at_interval), torch::zeros_like(grown), grown));
  }
}

}  // namespace greenrl::nn
