#include "greenrl/nn/actor_critic_module.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace greenrl::nn {

namespace {
torch::Tensor View(const torch::Tensor& flat, int64_t offset, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  return flat.narrow(0, offset, numel).view(shape);
}

// params and grads: the flat tensors of this MLP's slice (weights then biases per layer).
torch::nn::Sequential MakeBoundMlp(const MlpSpec& spec, const torch::Tensor& params,
                                   const torch::Tensor& grads) {
  torch::nn::Sequential seq;
  for (int l = 0; l < spec.num_layers(); ++l) {
    const int in = spec.sizes[l];
    const int out = spec.sizes[l + 1];
    torch::nn::Linear linear(torch::nn::LinearOptions(in, out));
    {
      torch::NoGradGuard no_grad;
      linear->weight.set_data(View(params, spec.weight_offset(l), {out, in}));
      linear->bias.set_data(View(params, spec.bias_offset(l), {out}));
    }
    linear->weight.mutable_grad() = View(grads, spec.weight_offset(l), {out, in});
    linear->bias.mutable_grad() = View(grads, spec.bias_offset(l), {out});
    seq->push_back(linear);
    if (l + 1 < spec.num_layers()) {
      if (spec.activation == Activation::kTanh) {
        seq->push_back(torch::nn::Tanh());
      } else {
        seq->push_back(torch::nn::ReLU());
      }
    }
  }
  return seq;
}

torch::Tensor HostFlat(float* data, int64_t n) {
  return torch::from_blob(data, {n}, torch::TensorOptions().dtype(torch::kFloat32));
}
}  // namespace

ActorCriticModuleImpl::ActorCriticModuleImpl(ActorCriticParams& params)
    : ActorCriticModuleImpl(params.spec(), HostFlat(params.params(), params.num_params()),
                            HostFlat(params.grads(), params.num_params())) {}

ActorCriticModuleImpl::ActorCriticModuleImpl(const ActorCriticSpec& spec,
                                             const torch::Tensor& params,
                                             const torch::Tensor& grads) {
  const int64_t actor = spec.actor_spec().num_params();
  const int64_t critic = spec.critic_spec().num_params();
  const int64_t n = actor + critic + spec.log_std_size();
  if (params.numel() != n || grads.numel() != n) {
    throw std::invalid_argument("ActorCriticModule: flat tensors must hold " + std::to_string(n) +
                                " parameters");
  }
  pi_ = register_module(
      "pi", MakeBoundMlp(spec.actor_spec(), params.narrow(0, 0, actor), grads.narrow(0, 0, actor)));
  vf_ = register_module("vf", MakeBoundMlp(spec.critic_spec(), params.narrow(0, actor, critic),
                                           grads.narrow(0, actor, critic)));
  // The actor's hidden layers without its output layer, sharing pi_'s modules (not registered:
  // the parameters are pi_'s).
  pi_trunk_ = torch::nn::Sequential();
  for (size_t k = 0; k + 1 < pi_->size(); ++k) {
    if (pi_[k]->as<torch::nn::Linear>() != nullptr) {
      pi_trunk_->push_back(torch::nn::Linear(pi_->ptr<torch::nn::LinearImpl>(k)));
    } else if (pi_[k]->as<torch::nn::Tanh>() != nullptr) {
      pi_trunk_->push_back(torch::nn::Tanh());
    } else {
      pi_trunk_->push_back(torch::nn::ReLU());
    }
  }
  pi_head_ = torch::nn::Linear(pi_->ptr<torch::nn::LinearImpl>(pi_->size() - 1));
  if (spec.gaussian) {
    const int64_t size = spec.log_std_size();
    std::vector<int64_t> shape{spec.num_actions};
    if (spec.use_sde) shape = {spec.latent_sde_dim(), spec.num_actions};
    torch::Tensor log_std = torch::zeros(shape);
    {
      torch::NoGradGuard no_grad;
      log_std.set_data(params.narrow(0, actor + critic, size).view(shape));
    }
    log_std_ = register_parameter("log_std", log_std);
    log_std_.mutable_grad() = grads.narrow(0, actor + critic, size).view(shape);
  }
}

std::pair<torch::Tensor, torch::Tensor> ActorCriticModuleImpl::forward(const torch::Tensor& obs) {
  return {pi_->forward(obs), vf_->forward(obs).squeeze(/*dim=*/1)};
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> ActorCriticModuleImpl::ForwardWithLatent(
    const torch::Tensor& obs) {
  torch::Tensor latent = pi_trunk_->size() == 0 ? obs : pi_trunk_->forward(obs);
  return {pi_head_->forward(latent), vf_->forward(obs).squeeze(/*dim=*/1), latent};
}

}  // namespace greenrl::nn
