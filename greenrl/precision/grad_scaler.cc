#include "greenrl/precision/grad_scaler.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "greenrl/core/errors.h"

namespace greenrl::precision {

namespace {
// As a config value is written: the shortest text that reads back as v ("1", not "1.000000").
std::string Num(double v) { return fmt::format("{}", v); }
}  // namespace

GradScaler::GradScaler(const GradScalerOptions& options)
    : options_(options), scale_(static_cast<float>(options.init_scale)) {
  if (!std::isfinite(options.init_scale) || options.init_scale <= 0.0) {
    throw ConfigError("grad_scaler.init_scale", Num(options.init_scale), "a finite number > 0");
  }
  if (!std::isfinite(options.growth_factor) || options.growth_factor <= 1.0) {
    throw ConfigError("grad_scaler.growth_factor", Num(options.growth_factor), "a number > 1");
  }
  if (!(options.backoff_factor > 0.0 && options.backoff_factor < 1.0)) {
    throw ConfigError("grad_scaler.backoff_factor", Num(options.backoff_factor),
                      "a number in (0, 1)");
  }
  if (options.growth_interval < 1) {
    throw ConfigError("grad_scaler.growth_interval", std::to_string(options.growth_interval),
                      "an integer >= 1");
  }
}

bool GradScaler::UnscaleAndCheck(float* grads, int64_t n) const {
  bool found_inf = false;
  const float inv_scale = static_cast<float>(1.0 / scale());
  for (int64_t i = 0; i < n; ++i) {
    found_inf |= !std::isfinite(grads[i]);
    grads[i] *= inv_scale;
  }
  return found_inf;
}

void GradScaler::Update(bool found_inf) {
  if (found_inf) ++skipped_steps_;
  if (!options_.enabled) return;
  // The scale is a float32 value, as GradScaler's _scale tensor: each product is formed in
  // double and rounded to float32 (ATen's _amp_update_scale_ kernels), and growth that would
  // overflow float32 to inf leaves the scale as it is ("Do not grow the scale past fp32 bounds
  // to inf", AmpGradScalerKernels.cpp and AmpKernels.cu).
  if (found_inf) {
    scale_ = static_cast<float>(scale_ * options_.backoff_factor);
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ == options_.growth_interval) {
    const float grown = static_cast<float>(scale_ * options_.growth_factor);
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
}

void GradScaler::Restore(double scale, int64_t growth_tracker, int64_t skipped_steps) {
  scale_ = scale;
  growth_tracker_ = growth_tracker;
  skipped_steps_ = skipped_steps;
}

}  // namespace greenrl::precision
