// categorical.h: the categorical distribution over discrete actions, parameterised by logits
// (SB3's CategoricalDistribution / torch.distributions.Categorical), on raw float32 rows.
#pragma once

#include <cstdint>

#include "greenrl/core/rng.h"

namespace greenrl::nn {

// log_softmax of one row: out_log_probs[k] = logits[k] - max - log(sum_j exp(logits[j] - max)).
// logits, out_log_probs: float32 [n]. Returns the entropy H = -sum_k p_k log p_k (nats) of the row,
// with p_k = exp(out[k]) in float64; out_probs (float64 [n], optional) receives those p_k, so a
// caller that needs them does not take the exponentials again.
double LogSoftmaxRow(const float* logits, int n, float* out_log_probs,
                     double* out_probs = nullptr);

// Draws k ~ Categorical(exp(log_probs)) by inverse CDF with one uniform from rng.
// log_probs: float32 [n], normalised. Returns k in [0, n).
int64_t SampleCategorical(const float* log_probs, int n, Rng& rng);

// argmax of logits float32 [n] (the deterministic action); ties go to the lowest index, as
// torch.argmax does.
int64_t ArgmaxRow(const float* logits, int n);

}  // namespace greenrl::nn
