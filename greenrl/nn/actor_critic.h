// actor_critic.h: SB3's MlpPolicy: separate actor and critic MLPs (net_arch pi=[64, 64],
// vf=[64, 64], tanh), an action head (num_actions logits for Discrete actions; a diagonal
// Gaussian's mean, or gSDE's, for Box actions) and a value head of 1, with orthogonal init (gains
// sqrt(2) hidden, 0.01 action head, 1 value head; SB3 ActorCriticPolicy._init_weights /
// ortho_init). Torch-free: parameters live in one flat
// float32 buffer laid out as [actor MLP | critic MLP] (fused_mlp.h's layout), so Adam, gradient
// clipping and the data-parallel all-reduce each run over one buffer.
//
// actor_critic_module.h gives the LibTorch view of the same buffer (the autograd path).
#pragma once

#include <cstdint>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/nn/fused_mlp.h"

namespace greenrl::nn {

// Shape of the policy. Field names follow SB3's policy_kwargs.
struct ActorCriticSpec {
  int obs_dim = 0;      // observation size (Box shape [obs_dim])
  int num_actions = 0;  // actor outputs: Discrete(n) logits, or the Box's act_dim Gaussian means
  // Box actions: a diagonal Gaussian with a state-independent log std, one learned value per
  // action dimension (SB3 DiagGaussianDistribution), stored after the critic in the flat buffer
  // and initialised to log_std_init. False: categorical over num_actions logits.
  bool gaussian = false;
  double log_std_init = 0.0;                  // SB3 policy_kwargs.log_std_init
  std::vector<int> pi_arch{64, 64};           // actor hidden sizes (net_arch.pi)
  std::vector<int> vf_arch{64, 64};           // critic hidden sizes (net_arch.vf)
  Activation activation = Activation::kTanh;  // activation_fn
  bool ortho_init = true;                     // SB3 ortho_init
  // Box actions with generalized state-dependent exploration (gSDE; Raffin, Kober and Stulp,
  // "Smooth Exploration for Robotic Reinforcement Learning", CoRL 2021, PMLR 164; SB3's
  // StateDependentNoiseDistribution with full_std=True, use_expln=False, learn_features=False):
  // the log std is a matrix float32 [latent_sde_dim, num_actions] over the actor's last hidden
  // features h, and action k has std sqrt(sum_j h_j^2 exp(2 log_std[j, k]) + 1e-6).
  bool use_sde = false;

  MlpSpec actor_spec() const;   // [obs_dim, pi_arch..., num_actions]
  MlpSpec critic_spec() const;  // [obs_dim, vf_arch..., 1]
  // gSDE feature size: the last actor hidden size (obs_dim when pi_arch is empty).
  int latent_sde_dim() const;
  // Floats in the log-std block: 0 (categorical), num_actions (diagonal Gaussian) or
  // latent_sde_dim * num_actions (gSDE, row-major [latent, action]).
  int64_t log_std_size() const;
};

// Flat parameters (and gradients) of an actor-critic. Not thread-safe.
class ActorCriticParams {
 public:
  // Sizes the flat buffers for `spec` (parameters and gradients zero until Initialize).
  explicit ActorCriticParams(ActorCriticSpec spec);

  const ActorCriticSpec& spec() const { return spec_; }
  int64_t num_params() const { return static_cast<int64_t>(params_.size()); }
  int64_t actor_num_params() const { return actor_num_params_; }
  // Offset of the log-std block (float32 [spec().log_std_size()], Gaussian only) in the flat
  // buffers.
  int64_t log_std_offset() const { return log_std_offset_; }

  // Orthogonal init as SB3 (gains above, biases 0) when spec.ortho_init, else PyTorch's
  // nn.Linear default U(-1/sqrt(in), 1/sqrt(in)) for weights and biases.
  void Initialize(Rng& rng);

  // float32 [num_params]: actor parameters first, then critic parameters, then (Gaussian) the
  // log std [num_actions], or [latent_sde_dim, num_actions] with use_sde.
  float* params() { return params_.data(); }
  const float* params() const { return params_.data(); }
  // The actor's float32 [actor_num_params()] and the critic's float32 [num_params() -
  // actor_num_params() - spec().log_std_size()] blocks of params().
  float* actor_params() { return params_.data(); }
  float* critic_params() { return params_.data() + actor_num_params_; }
  float* log_std() { return params_.data() + log_std_offset_; }
  const float* log_std() const { return params_.data() + log_std_offset_; }
  // float32 [num_params], same layout.
  float* grads() { return grads_.data(); }
  float* actor_grads() { return grads_.data(); }
  float* critic_grads() { return grads_.data() + actor_num_params_; }
  float* log_std_grads() { return grads_.data() + log_std_offset_; }
  // Sets every gradient to 0 (before a minibatch's backward, which adds into grads()).
  void ZeroGrads();

 private:
  ActorCriticSpec spec_;
  int64_t actor_num_params_;
  int64_t log_std_offset_;
  std::vector<float> params_;
  std::vector<float> grads_;
};

}  // namespace greenrl::nn
