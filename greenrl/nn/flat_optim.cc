#include "greenrl/nn/flat_optim.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "greenrl/core/errors.h"

namespace greenrl::nn {

FlatAdam::FlatAdam(int64_t num_params, AdamOptions options)
    : options_(options), exp_avg_(num_params, 0.0f), exp_avg_sq_(num_params, 0.0f) {
  GREENRL_CHECK(num_params >= 0, "num_params must be >= 0");
}

namespace {
// A subnormal float32 (|x| < 2^-126 = FLT_MIN, nonzero) read as zero; any other x unchanged.
inline float FlushSubnormal(float x) {
  return std::fabs(x) < std::numeric_limits<float>::min() ? 0.0f : x;
}

// The per-element Adam update; cloned for AVX2 (chosen at run time by the loader's ifunc), with
// the same arithmetic per element in every clone (no FMA contraction: -ffp-contract=off).
// Moments that fall into the subnormal range are stored as zero (see FlatAdam in flat_optim.h).
__attribute__((target_clones("avx2", "default"))) void AdamKernel(
    float* params, const float* grads, float* m, float* v, int64_t n, float b1, float one_minus_b1,
    float b2, float one_minus_b2, float inv_sqrt_bc2, float eps, float step_size) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grads[i];
    const float mi = FlushSubnormal(m[i] * b1 + one_minus_b1 * g);
    const float vi = FlushSubnormal(v[i] * b2 + one_minus_b2 * g * g);
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;
    params[i] -= step_size * (mi / denom);
  }
}

// 32 independent float64 partial sums: a single accumulator is one long dependency chain the
// compiler may not reorder (no -ffast-math), ~4 cycles per element; eight (two AVX2 registers)
// were still latency-bound at ~2 elements per cycle; 32 (eight AVX2 or four AVX-512 registers)
// keep the adder busy. Every clone adds in the same order, so all give the same sum.
__attribute__((target_clones("avx512f", "avx2", "default"))) double SumOfSquaresKernel(
    const float* x, int64_t n) {
  constexpr int kLanes = 32;
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += static_cast<double>(x[i + j]) * x[i + j];
  }
  for (int width = kLanes / 2; width >= 1; width /= 2) {  // pairwise: lane j + lane j + width
    for (int j = 0; j < width; ++j) acc[j] += acc[j + width];
  }
  double sum_sq = acc[0];
  for (; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  return sum_sq;
}
}  // namespace

void FlatAdam::Step(float* params, const float* grads, double lr) {
  StepRange(BeginStep(lr), params, grads, 0, num_params());
}

FlatAdam::StepCoefficients FlatAdam::BeginStep(double lr) {
  ++step_count_;
  const double bias_correction1 = 1.0 - std::pow(options_.beta1, static_cast<double>(step_count_));
  const double bias_correction2 = 1.0 - std::pow(options_.beta2, static_cast<double>(step_count_));
  StepCoefficients c;
  c.b1 = static_cast<float>(options_.beta1);
  c.one_minus_b1 = static_cast<float>(1.0 - options_.beta1);
  c.b2 = static_cast<float>(options_.beta2);
  c.one_minus_b2 = static_cast<float>(1.0 - options_.beta2);
  c.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(bias_correction2));
  c.eps = static_cast<float>(options_.eps);
  c.step_size = static_cast<float>(lr / bias_correction1);
  return c;
}

void FlatAdam::StepRange(const StepCoefficients& c, float* params, const float* grads,
                         int64_t begin, int64_t end) {
  GREENRL_CHECK(0 <= begin && begin <= end && end <= num_params(),
                "Adam range outside [0, num_params]");
  AdamKernel(params + begin, grads + begin, exp_avg_.data() + begin, exp_avg_sq_.data() + begin,
             end - begin, c.b1, c.one_minus_b1, c.b2, c.one_minus_b2, c.inv_sqrt_bc2, c.eps,
             c.step_size);
}

double SumOfSquares(const float* x, int64_t n) { return SumOfSquaresKernel(x, n); }

float ClipCoefficient(double total_norm, double max_norm) {
  if (max_norm > 0.0 && std::isfinite(max_norm) && std::isfinite(total_norm)) {
    const double coef = max_norm / (total_norm + 1e-6);
    if (coef < 1.0) return static_cast<float>(coef);
  }
  return 1.0f;
}

bool AllFinite(const float* x, int64_t n) {
  static_assert(std::numeric_limits<float>::is_iec559, "float is IEEE 754 binary32");
  // IEEE 754 binary32: inf and NaN are exactly the values whose 8 exponent bits are all ones.
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof(bits));
    non_finite |= static_cast<uint32_t>((bits & kExponent) == kExponent);
  }
  return non_finite == 0;
}

double ClipGradNorm(float* grads, int64_t n, double max_norm) {
  const double total = std::sqrt(SumOfSquares(grads, n));
  const float c = ClipCoefficient(total, max_norm);
  if (c != 1.0f) {
    for (int64_t i = 0; i < n; ++i) grads[i] *= c;
  }
  return total;
}

}  // namespace greenrl::nn
