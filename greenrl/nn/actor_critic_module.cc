#include "greenrl/nn/actor_critic_module.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/torch.h>

namespace greenrl::nn {

namespace {
torch::Tensor View(float* data, std::vector<int64_t> shape) {
  return torch::from_blob(data, shape, torch::TensorOptions().dtype(torch::kFloat32));
}

torch::nn::Sequential MakeBoundMlp(const MlpSpec& spec, float* params, float* grads) {
  torch::nn::Sequential seq;
  for (int l = 0; l < spec.num_layers(); ++l) {
    const int in = spec.sizes[l];
    const int out = spec.sizes[l + 1];
    torch::nn::Linear linear(torch::nn::LinearOptions(in, out));
    {
      torch::NoGradGuard no_grad;
      linear->weight.set_data(View(params + spec.weight_offset(l), {out, in}));
      linear->bias.set_data(View(params + spec.bias_offset(l), {out}));
    }
    linear->weight.mutable_grad() = View(grads + spec.weight_offset(l), {out, in});
    linear->bias.mutable_grad() = View(grads + spec.bias_offset(l), {out});
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
}  // namespace

ActorCriticModuleImpl::ActorCriticModuleImpl(ActorCriticParams& params) {
  const ActorCriticSpec& spec = params.spec();
  pi_ = register_module(
      "pi", MakeBoundMlp(spec.actor_spec(), params.actor_params(), params.actor_grads()));
  vf_ = register_module(
      "vf", MakeBoundMlp(spec.critic_spec(), params.critic_params(), params.critic_grads()));
}

std::pair<torch::Tensor, torch::Tensor> ActorCriticModuleImpl::forward(const torch::Tensor& obs) {
  return {pi_->forward(obs), vf_->forward(obs).squeeze(/*dim=*/1)};
}

}  // namespace greenrl::nn
