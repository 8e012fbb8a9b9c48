#include "greenrl/nn/actor_critic.h"

#include <algorithm>
#include <cmath>

#include "greenrl/nn/init.h"

namespace greenrl::nn {

namespace {
MlpSpec MakeSpec(int in, const std::vector<int>& hidden, int out, Activation activation) {
  MlpSpec spec;
  spec.sizes.push_back(in);
  spec.sizes.insert(spec.sizes.end(), hidden.begin(), hidden.end());
  spec.sizes.push_back(out);
  spec.activation = activation;
  return spec;
}

// Initialises one MLP in place: hidden layers with gain_hidden, the last with gain_out.
void InitMlp(const MlpSpec& spec, float* params, bool ortho, double gain_hidden, double gain_out,
             Rng& rng) {
  for (int l = 0; l < spec.num_layers(); ++l) {
    const int in = spec.sizes[l];
    const int out = spec.sizes[l + 1];
    float* w = params + spec.weight_offset(l);
    float* b = params + spec.bias_offset(l);
    if (ortho) {
      OrthogonalInit(w, out, in, l + 1 == spec.num_layers() ? gain_out : gain_hidden, rng);
      std::fill(b, b + out, 0.0f);
    } else {
      // torch.nn.Linear.reset_parameters: kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(in),
      // 1/sqrt(in)).
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      for (int i = 0; i < out * in; ++i) w[i] = static_cast<float>(rng.Uniform(-bound, bound));
      for (int i = 0; i < out; ++i) b[i] = static_cast<float>(rng.Uniform(-bound, bound));
    }
  }
}
}  // namespace

MlpSpec ActorCriticSpec::actor_spec() const {
  return MakeSpec(obs_dim, pi_arch, num_actions, activation);
}

MlpSpec ActorCriticSpec::critic_spec() const { return MakeSpec(obs_dim, vf_arch, 1, activation); }

ActorCriticParams::ActorCriticParams(ActorCriticSpec spec)
    : spec_(std::move(spec)),
      actor_num_params_(spec_.actor_spec().num_params()),
      log_std_offset_(actor_num_params_ + spec_.critic_spec().num_params()) {
  const int64_t total = log_std_offset_ + (spec_.gaussian ? spec_.num_actions : 0);
  params_.assign(total, 0.0f);
  grads_.assign(total, 0.0f);
}

void ActorCriticParams::Initialize(Rng& rng) {
  // SB3 ActorCriticPolicy: mlp_extractor gain sqrt(2), action_net 0.01, value_net 1.
  const double sqrt2 = std::sqrt(2.0);
  InitMlp(spec_.actor_spec(), actor_params(), spec_.ortho_init, sqrt2, 0.01, rng);
  InitMlp(spec_.critic_spec(), critic_params(), spec_.ortho_init, sqrt2, 1.0, rng);
  if (spec_.gaussian) {
    std::fill(log_std(), log_std() + spec_.num_actions, static_cast<float>(spec_.log_std_init));
  }
}

void ActorCriticParams::ZeroGrads() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

}  // namespace greenrl::nn
