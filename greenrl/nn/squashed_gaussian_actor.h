// squashed_gaussian_actor.h: SAC's actor (SB3 2.x sac/policies.py Actor) sampled and
// differentiated by hand on a flat float32 parameter buffer, for SAC's fused update
// (update_path: fused). LibTorch eager costs several microseconds per op and a sample with its
// log-prob and backward is ~40 ops; here the latent MLP is an nn::FusedMlp and the heads, the
// squashing and the gSDE noise are BLAS calls and loops over the batch. sac_test.cc
// (SacTest.FusedUpdateMatchesAutograd) checks whole gradient steps against the LibTorch actor,
// and squashed_gaussian_actor_test.cc the gradients against autograd.
//
// The actor, for each row (h = the latent, L = net_arch.back(), A = action dims):
//   h = act(MLP(obs)) (SB3 create_mlp: the activation after every hidden layer),
//   mean = W_mu h + b_mu;
//   Gaussian: log_std = clamp(W_ls h + b_ls, -20, 2), u = mean + exp(log_std) * noise,
//     log_prob = sum_k [-0.5 noise_k^2 - log_std_k - 0.5 log(2 pi) - TanhLogDetJacobian(u_k)];
//   gSDE: mean clamped to [-clip_mean, clip_mean] when clip_mean > 0, E = exp(log_std) * eps
//     (log_std a parameter [L, A]), z = h E, s_k = sqrt(sum_j h_j^2 exp(2 log_std_jk) + 1e-6),
//     u = mean + z, log_prob = sum_k [-0.5 (z_k / s_k)^2 - log s_k - 0.5 log(2 pi) -
//     TanhLogDetJacobian(u_k)];
//   action = tanh(u).
// These are nn::SampleSquashedGaussian and nn::SampleSquashedSde (squashed_gaussian.h), the
// LibTorch path's formulas, written out; results agree with them to float32 rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "greenrl/nn/fused_mlp.h"

namespace greenrl::nn {

// Where the actor's parameters lie in its flat float32 buffer (offsets in floats), and its shape.
struct SquashedGaussianActorLayout {
  int obs_dim = 0;
  int act_dim = 0;
  std::vector<int> net_arch;  // hidden sizes, at least one (L = net_arch.back())
  Activation activation = Activation::kReLU;
  bool use_sde = false;
  double clip_mean = 0.0;  // gSDE: the mean is clamped to [-clip_mean, clip_mean]; 0: not
  // latent_pi: FusedMlp's layout of sizes [obs_dim, net_arch...] (W_l [out, in], then b_l).
  int64_t latent = 0;
  int64_t mu_weight = 0, mu_bias = 0;  // float32 [A, L] and [A]
  // Gaussian: the log-std head, float32 [A, L] and [A]; gSDE: log_std float32 [L, A].
  int64_t log_std_weight = 0, log_std_bias = 0;
  int64_t sde_log_std = 0;
};

// Forward (a reparameterised sample and its log-density) and backward of SAC's actor for batches
// of up to max_batch rows. Owns its workspace (allocated once); parameters and gradients live
// outside. One instance holds one Forward for its Backward, so an update that samples twice
// before one backward (a_pi, then a' for the target) uses two instances.
// Thread-safety: one instance per thread.
class FusedSquashedGaussianActor {
 public:
  // Errors: GREENRL_CHECK on an empty net_arch, obs_dim or act_dim < 1, or max_batch < 1.
  FusedSquashedGaussianActor(SquashedGaussianActorLayout layout, int max_batch);

  // Samples `batch` rows. params: the actor's float32 buffer; obs float32 [batch, obs_dim],
  // which must stay valid and unchanged until Backward; noise: Gaussian float32 [batch, A] of
  // N(0, 1) draws, gSDE float32 [L, A] of N(0, 1) draws (one exploration matrix for the batch,
  // as SB3's train()). Errors: GREENRL_CHECK when batch is not in [1, max_batch].
  void Forward(const float* params, const float* obs, const float* noise, int batch);
  // The last Forward's actions float32 [batch, A] in [-1, 1] and log-densities float32 [batch].
  const float* action() const { return a_.data(); }
  const float* log_prob() const { return log_prob_.data(); }

  // Backpropagates dL/d action = grad_action (float32 [batch, A]) and dL/d log_prob_i =
  // grad_log_prob for every row through the last Forward and ADDS dL/dparams into grads
  // (float32, the same layout as params). Clamps pass gradient where their input lies within
  // the bounds, bounds included (torch.clamp's backward). Errors: GREENRL_CHECK when called
  // before Forward.
  void Backward(const float* params, const float* grad_action, float grad_log_prob, float* grads);

  // Runs each hidden layer's two backward GEMMs (dW and dX) of the latent MLP at once on
  // `pool` (FusedMlp::set_thread_pool with ThreadedPasses::kBackward: the same results bit for
  // bit); Forward stays on the calling thread, so it may run inside one of the pool's jobs.
  // nullptr (the default) runs everything on the calling thread. The pool must outlive this
  // actor.
  void set_thread_pool(ThreadPool* pool) {
    latent_mlp_.set_thread_pool(pool, FusedMlp::ThreadedPasses::kBackward);
  }

 private:
  SquashedGaussianActorLayout layout_;
  int max_batch_, latent_dim_;
  int batch_ = 0;
  FusedMlp latent_mlp_;  // [obs_dim, net_arch...]: its output is the last hidden layer's input
                         // to the activation, which Forward applies
  const float* noise_ = nullptr;
  // float32 [max_batch, L]: the latent h, then h^2 (gSDE), the gradient at h and at the
  // activation's input.
  std::vector<float> h_, h_sq_, grad_h_, tmp_h_;
  // float32 [max_batch, A]: pre-clamp head outputs (mean, log_std), exp(log_std) or s, z (gSDE),
  // u, action, and the gradients at u, mean, log_std (Gaussian) or z and the variance (gSDE).
  std::vector<float> mean0_, log_std0_, std_, z_, a_, grad_u_, grad_mean_, grad_b_;
  std::vector<float> log_prob_;  // float32 [max_batch]
  // gSDE, float32 [L, A]: E = exp(log_std) * eps, exp(2 log_std), and two gradient terms.
  std::vector<float> e_, w2_, t1_, t2_;
};

}  // namespace greenrl::nn
