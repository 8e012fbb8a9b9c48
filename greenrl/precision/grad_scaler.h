// grad_scaler.h: dynamic loss scaling with the semantics of PyTorch's GradScaler
// (torch.cuda.amp.GradScaler, PyTorch 1.13; ATen's _amp_foreach_non_finite_check_and_unscale_ and
// _amp_update_scale_) over one flat float32 gradient buffer. LibTorch 1.13 has no CPU kernel for
// those two ops ("Could not run ... with arguments from the 'CPU' backend"), so this is the CPU
// implementation of the same rules; grad_scaler_test.cc pins them. Torch-free.
//
// Use per optimiser step: seed the backward pass with scale() (loss x scale), then
//   found_inf = UnscaleAndCheck(grads)   // grads /= scale; any inf or NaN?
//   if (!found_inf) { clip; optimizer step }   // a non-finite step is skipped
//   Update(found_inf)                     // back off, or grow after growth_interval good steps
#pragma once

#include <cstdint>

namespace greenrl::precision {

// GradScaler's constructor arguments and defaults (torch.amp.GradScaler's).
struct GradScalerOptions {
  bool enabled = true;          // false: scale 1, nothing unscaled, no step ever skipped
  double init_scale = 65536.0;  // 2^16
  double growth_factor = 2.0;   // scale *= this after growth_interval finite steps in a row
  double backoff_factor = 0.5;  // scale *= this after a step with inf or NaN gradients
  int64_t growth_interval = 2000;  // optimiser steps with finite gradients before a growth
};

class GradScaler {
 public:
  // Errors: greenrl::ConfigError naming grad_scaler.init_scale (> 0, finite),
  //   grad_scaler.growth_factor (> 1), grad_scaler.backoff_factor (in (0, 1)),
  //   grad_scaler.growth_interval (>= 1).
  explicit GradScaler(const GradScalerOptions& options);

  // The current scale (1 when disabled).
  double scale() const { return options_.enabled ? scale_ : 1.0; }
  bool enabled() const { return options_.enabled; }

  // Multiplies grads (float32 [n]) by 1 / scale in place and returns whether any entry is inf or
  // NaN (checked on the scaled values, as ATen does). Disabled: checks only.
  bool UnscaleAndCheck(float* grads, int64_t n) const;

  // _amp_update_scale_: on found_inf, scale *= backoff_factor and the growth tracker resets; else
  // the tracker counts up and at growth_interval scale *= growth_factor (kept as it was when the
  // product overflows float32, as ATen's kernels do) and the tracker resets. The scale is held as
  // a float32 value (init_scale rounded to float32, each product rounded), as GradScaler's
  // float32 _scale tensor. Also counts skipped steps (found_inf). Disabled: only counts.
  void Update(bool found_inf);

  int64_t growth_tracker() const { return growth_tracker_; }
  int64_t skipped_steps() const { return skipped_steps_; }
  // For checkpoints: sets what scale(), growth_tracker() and skipped_steps() return (the options
  // stay this scaler's own). No errors.
  void Restore(double scale, int64_t growth_tracker, int64_t skipped_steps);

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
};

}  // namespace greenrl::precision
