// actor_critic_module.h: the LibTorch view of an ActorCriticParams buffer (holder idiom,
// ../shared/STYLE.md point 9): every torch::nn::Linear weight and bias is a view into the flat
// parameter buffer and its .grad a view into the flat gradient buffer, so the autograd path
// and the fused path read and write the same memory.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <tuple>
#include <utility>

#include "greenrl/nn/actor_critic.h"

namespace greenrl::nn {

class ActorCriticModuleImpl : public torch::nn::Module {
 public:
  // Binds to params' host buffers; params must outlive the module and keep its buffers in place.
  explicit ActorCriticModuleImpl(ActorCriticParams& params);
  // Binds to flat tensors on any device laid out as ActorCriticParams ([actor | critic], each
  // layer's weight [out, in] then bias [out]): params float32 [num_params] and grads float32
  // [num_params], which must outlive the module. Errors: std::invalid_argument when either
  // tensor's size differs from the spec's parameter count.
  ActorCriticModuleImpl(const ActorCriticSpec& spec, const torch::Tensor& params,
                        const torch::Tensor& grads);

  // obs: float32 [batch, obs_dim]. Returns (actor output float32 [batch, num_actions]: logits,
  // or Gaussian means for a Gaussian spec; values float32 [batch]).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& obs);

  // As forward, plus the actor's last hidden features (float32 [batch, latent_sde_dim], the
  // input of its output layer; obs itself when pi_arch is empty), which gSDE uses.
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> ForwardWithLatent(
      const torch::Tensor& obs);
  // The Gaussian log std, float32 [num_actions], or [latent_sde_dim, num_actions] with use_sde
  // (a view of the flat buffer); undefined for a categorical spec.
  const torch::Tensor& log_std() const { return log_std_; }

 private:
  torch::nn::Sequential pi_{nullptr};
  torch::nn::Sequential vf_{nullptr};
  torch::nn::Sequential pi_trunk_{nullptr};  // pi_ without its output layer (shared modules)
  torch::nn::Linear pi_head_{nullptr};       // pi_'s output layer
  torch::Tensor log_std_;
};
TORCH_MODULE(ActorCriticModule);

}  // namespace greenrl::nn
