// flat_optim.h: Adam and gradient-norm clipping over one flat float32 buffer, so an optimiser
// step is one pass over memory instead of a handful of LibTorch ops per parameter tensor.
// Semantics follow LibTorch 1.13's torch::optim::Adam (no weight decay, no amsgrad) and
// torch.nn.utils.clip_grad_norm_; flat_optim_test.cc checks both against LibTorch.
#pragma once

#include <cstdint>
#include <vector>

namespace greenrl::nn {

// Adam hyperparameters. Defaults are PyTorch's (torch.optim.Adam: betas (0.9, 0.999), eps 1e-8).
// PPO passes eps 1e-5, as SB3's ActorCriticPolicy does (stable_baselines3/common/policies.py).
struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

// Adam (Kingma and Ba, 2015) with PyTorch's bias correction:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  t += 1
//   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// One difference from PyTorch: a moment that falls below float32's smallest normal value
// (|m| or v < 2^-126, FLT_MIN) is stored as 0. A parameter whose gradient stays 0 (a dead ReLU
// unit) otherwise keeps m decaying by b1 each step through the subnormal range, and on Intel
// cores every arithmetic operation on a subnormal takes a microcode assist: measured on a 2-core
// Xeon with AVX-512 (2026-12-02), the DQN CartPole preset spent 60% of its time in this loop
// and ran 30.9 s instead of 10.1 s. The update such a moment contributes is below
// lr * 2^-126 / eps, far under a float32 ulp of any parameter that is not itself near 0.
class FlatAdam {
 public:
  // Zeroed moments for num_params parameters (>= 0). Errors: greenrl::InternalError
  // (GREENRL_CHECK) for a negative num_params.
  FlatAdam(int64_t num_params, AdamOptions options);

  // One update of params (float32 [num_params]) with grads (float32 [num_params]) at learning
  // rate lr (>= 0).
  void Step(float* params, const float* grads, double lr);

  // Step split over threads: Step(params, grads, lr) is exactly BeginStep(lr) followed by
  // StepRange(coefficients, params, grads, 0, num_params()). BeginStep advances the step count
  // once and returns the float32 coefficients of this step; StepRange updates entries
  // [begin, end) of params and of the moments, so calls over disjoint ranges may run
  // concurrently. Errors: GREENRL_CHECK when [begin, end) is not inside [0, num_params()].
  struct StepCoefficients {
    float b1, one_minus_b1, b2, one_minus_b2;
    float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
    float eps;
    float step_size;  // lr / (1 - beta1^t)
  };
  StepCoefficients BeginStep(double lr);
  void StepRange(const StepCoefficients& c, float* params, const float* grads, int64_t begin,
                 int64_t end);

  int64_t num_params() const { return static_cast<int64_t>(exp_avg_.size()); }
  int64_t step_count() const { return step_count_; }
  const AdamOptions& options() const { return options_; }
  // First and second moment estimates, float32 [num_params] each (checkpointed).
  std::vector<float>& exp_avg() { return exp_avg_; }
  std::vector<float>& exp_avg_sq() { return exp_avg_sq_; }
  const std::vector<float>& exp_avg() const { return exp_avg_; }
  const std::vector<float>& exp_avg_sq() const { return exp_avg_sq_; }
  void set_step_count(int64_t step_count) { step_count_ = step_count; }

 private:
  AdamOptions options_;
  int64_t step_count_ = 0;
  std::vector<float> exp_avg_;
  std::vector<float> exp_avg_sq_;
};

// torch.nn.utils.clip_grad_norm_ (PyTorch 1.13) over one flat buffer: total = ||grads||_2 (over
// all entries), coef = max_norm / (total + 1e-6), grads *= min(coef, 1). Returns the total norm
// before clipping. max_norm <= 0 or infinite disables clipping (the norm is still returned); a
// non-finite total (an inf or NaN entry) leaves grads unchanged.
double ClipGradNorm(float* grads, int64_t n, double max_norm);

// The parts of ClipGradNorm, for a buffer split over threads: SumOfSquares of each part (float64,
// eight partial sums), total = sqrt(sum of the parts), then ClipCoefficient(total, max_norm) is
// the float32 factor ClipGradNorm multiplies the gradients by, 1 when it leaves them unchanged
// (no clipping needed, clipping disabled, or a non-finite total).
double SumOfSquares(const float* x, int64_t n);
float ClipCoefficient(double total_norm, double max_norm);

// Whether every entry of x (float32 [n]) is finite: no inf and no NaN (an exponent field of all
// ones). One branch-free pass over memory, for the numerical guard of an update without a
// gradient norm to read it from (SAC).
bool AllFinite(const float* x, int64_t n);

}  // namespace greenrl::nn
