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

}  // namespace

MlpSpec ActorCriticSpec::actor_spec() const {
  return MakeSpec(obs_dim, pi_arch, num_actions, activation);
}

MlpSpec ActorCriticSpec::critic_spec() const { return MakeSpec(obs_dim, vf_arch, 1, activation); }

int ActorCriticSpec::latent_sde_dim() const { return pi_arch.empty() ? obs_dim : pi_arch.back(); }

int64_t ActorCriticSpec::log_std_size() const {
  if (!gaussian) return 0;
  return use_sde ? static_cast<int64_t>(latent_sde_dim()) * num_actions : num_actions;
}

ActorCriticParams::ActorCriticParams(ActorCriticSpec spec)
    : spec_(std::move(spec)),
      actor_num_params_(spec_.actor_spec().num_params()),
      log_std_offset_(actor_num_params_ + spec_.critic_spec().num_params()) {
  const int64_t total = log_std_offset_ + spec_.log_std_size();
  params_.assign(total, 0.0f);
  grads_.assign(total, 0.0f);
}

void ActorCriticParams::Initialize(Rng& rng) {
  // SB3 ActorCriticPolicy: mlp_extractor gain sqrt(2), action_net 0.01, value_net 1.
  const double sqrt2 = std::sqrt(2.0);
  InitMlp(spec_.actor_spec(), actor_params(), spec_.ortho_init, sqrt2, 0.01, rng);
  InitMlp(spec_.critic_spec(), critic_params(), spec_.ortho_init, sqrt2, 1.0, rng);
  if (spec_.gaussian) {
    std::fill(log_std(), log_std() + spec_.log_std_size(), static_cast<float>(spec_.log_std_init));
  }
}

void ActorCriticParams::ZeroGrads() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

}  // namespace greenrl::nn
