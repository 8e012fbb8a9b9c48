#include "greenrl/nn/categorical.h"

#include <cmath>

namespace greenrl::nn {

double LogSoftmaxRow(const float* logits, int n, float* out_log_probs, double* out_probs) {
  float max = logits[0];
  for (int k = 1; k < n; ++k) max = logits[k] > max ? logits[k] : max;
  double sum = 0.0;
  for (int k = 0; k < n; ++k) sum += std::exp(static_cast<double>(logits[k] - max));
  const float log_sum = static_cast<float>(std::log(sum));
  double entropy = 0.0;
  for (int k = 0; k < n; ++k) {
    out_log_probs[k] = (logits[k] - max) - log_sum;
    const double p = std::exp(static_cast<double>(out_log_probs[k]));
    if (out_probs != nullptr) out_probs[k] = p;
    entropy -= p * out_log_probs[k];
  }
  return entropy;
}

int64_t SampleCategorical(const float* log_probs, int n, Rng& rng) {
  const double u = rng.Uniform();
  double cdf = 0.0;
  for (int k = 0; k < n - 1; ++k) {
    cdf += std::exp(static_cast<double>(log_probs[k]));
    if (u < cdf) return k;
  }
  return n - 1;
}

int64_t ArgmaxRow(const float* logits, int n) {
  int best = 0;
  for (int k = 1; k < n; ++k) {
    if (logits[k] > logits[best]) best = k;
  }
  return best;
}

}  // namespace greenrl::nn
