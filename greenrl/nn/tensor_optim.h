// tensor_optim.h: the flat-buffer optimiser step (loss-scale unscale and inf/NaN check, global
// gradient-norm clip, Adam, scale update) as a handful of LibTorch ops on one flat tensor per
// quantity, on any device. Every hyperparameter that changes during training (learning rate,
// Adam's step count) lives in a device tensor and a step with non-finite gradients is masked
// on the device, so one optimiser step never waits for the host: it can be captured in a CUDA
// graph (nn/cuda_graph.h). The arithmetic is the same as the host path's nn::FlatAdam,
// nn::ClipGradNorm and precision::GradScaler (tensor_optim_test.cc compares them; nn does not
// depend on precision, so the scaler's settings arrive as plain values).
#pragma once

#include <torch/types.h>

#include <cstdint>

#include "greenrl/nn/flat_optim.h"

namespace greenrl::nn {

// Optimiser state for one flat parameter buffer on one device.
struct TensorOptimState {
  torch::Tensor params;          // float32 [P]: the parameters (master weights, fp32 always)
  torch::Tensor grads;           // float32 [P]: gradients of loss x scale, unscaled in place
  torch::Tensor exp_avg;         // float32 [P]: Adam first moment
  torch::Tensor exp_avg_sq;      // float32 [P]: Adam second moment
  torch::Tensor step;            // float32 [1]: Adam steps taken (skipped steps not counted)
  torch::Tensor lr;              // float32 [1]: learning rate of the next step (set by the host)
  torch::Tensor scale;           // float32 [1]: loss scale (1 when the scaler is disabled)
  torch::Tensor growth_tracker;  // int32 [1]: finite steps in a row since the last growth
  torch::Tensor found_inf;       // float32 [1]: 1 when the last step's gradients had inf or NaN
  torch::Tensor skipped;         // float32 [1]: steps skipped so far for inf or NaN
  // float32 [1]: of those, the ones skipped at a scale <= 1, whose gradients were non-finite
  // before any scaling (a loss or gradient the numerical guard counts), not for the scale.
  torch::Tensor skipped_unscaled;
  torch::Tensor grad_norm;       // float32 [1]: gradient norm of the last step (before clipping)
};

// GradScaler's update settings (precision::GradScalerOptions; PyTorch's torch.amp.GradScaler).
struct ScaleUpdateOptions {
  bool enabled = false;         // false: the scale stays as it is (1 for a disabled scaler)
  double growth_factor = 2.0;   // scale *= this after growth_interval finite steps in a row
  double backoff_factor = 0.5;  // scale *= this after a step with inf or NaN gradients
  int64_t growth_interval = 2000;
};

// Allocates the state on `options`'s device: params copied from host float32 [num_params],
// moments from host Adam state (float32 [num_params] each, may be null for zeros), Adam's step
// count, and the scaler's scale, growth tracker and skipped-step count.
// Errors: std::invalid_argument for num_params < 0.
TensorOptimState MakeTensorOptimState(const float* params, const float* exp_avg,
                                      const float* exp_avg_sq, int64_t num_params,
                                      int64_t step_count, double scale, int64_t growth_tracker,
                                      int64_t skipped_steps, const torch::TensorOptions& options);

// One optimiser step from state.grads (computed for loss x state.scale), all on the device:
//  1. unscale: grads *= 1 / scale; found_inf = any(!isfinite(grads)) (on CUDA ATen's
//     _amp_foreach_non_finite_check_and_unscale_, elsewhere the same with plain ops, since
//     LibTorch 1.13 has no CPU kernel for it); when the scaler is disabled scale is 1;
//  2. grad_norm = ||grads||_2; grads *= min(1, max_grad_norm / (grad_norm + 1e-6))
//     (torch.nn.utils.clip_grad_norm_); max_grad_norm <= 0 or inf: no clip;
//  3. Adam (Kingma & Ba 2015; PyTorch's torch.optim.Adam without weight decay or amsgrad):
//     m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; t += 1;
//     params -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps),
//     applied only when found_inf is 0 (then m, v, t and params are left as they were,
//     GradScaler.step);
//  4. when scaler.enabled, the scale update of GradScaler.update (_amp_update_scale_ on CUDA).
// No host synchronisation. Errors: LibTorch's c10::Error for tensors on mixed devices.
void TensorOptimStep(TensorOptimState& state, const AdamOptions& adam, double max_grad_norm,
                     const ScaleUpdateOptions& scaler);

}  // namespace greenrl::nn
