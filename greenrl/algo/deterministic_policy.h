// deterministic_policy.h: a trained agent's deterministic policy (the mode `greenrl eval` acts
// with) as plain arrays, so it can leave greenrl: `greenrl export` writes it as a TorchScript
// module (train/policy_export.h) that Python (torch.jit.load) and C++ (torch::jit::load) run
// without greenrl. Torch-free.
//
// The policy, for one observation row x float32 [obs_dim] (already normalised, as the agent saw
// it in training):
//   y = layers[last](act(... act(layers[0](x)))), layers[l](h) = W_l h + b_l, with `activation`
//   after every layer but the last;
//   kArgmax:    action = argmax_k y_k (int64; the lowest index on ties, as torch.argmax)
//   kClipToBox: action_k = min(max(y_k, low_k), high_k)
//   kTanhToBox: u_k = clamp(y_k, -clip_mean, clip_mean) when clip_mean > 0, else y_k;
//               action_k = min(max(low_k + 0.5 (tanh(u_k) + 1) (high_k - low_k), low_k), high_k)
//               (SB3's unscale_action of the squashed mean, nn::RescaleToBox).
#pragma once

#include <string>
#include <vector>

#include "greenrl/nn/fused_mlp.h"

namespace greenrl::algo {

// One affine layer, laid out as torch::nn::Linear's parameters.
struct DenseLayer {
  int in_dim = 0;
  int out_dim = 0;
  std::vector<float> weight;  // float32 [out_dim, in_dim], row-major
  std::vector<float> bias;    // float32 [out_dim]
};

// What the last layer's output becomes (see the file comment).
enum class PolicyHead {
  kArgmax,     // Discrete: PPO's logits, DQN's Q-values
  kClipToBox,  // Box, PPO: the Gaussian mean clipped to the bounds
  kTanhToBox,  // Box, SAC: the squashed mean rescaled to the bounds
};

// "argmax", "clip_to_box", "tanh_to_box".
inline const char* ToString(PolicyHead head) {
  switch (head) {
    case PolicyHead::kArgmax:
      return "argmax";
    case PolicyHead::kClipToBox:
      return "clip_to_box";
    case PolicyHead::kTanhToBox:
      return "tanh_to_box";
  }
  return "?";
}

// A policy's deterministic action as plain arrays (Algorithm::ExportDeterministicPolicy):
// obs float32 [obs_dim] through `layers` (`activation` between them), then `head`; what
// `greenrl export` writes as TorchScript. Observations as Algorithm::Act takes them (normalised
// when the run normalised them; the export adds the normalisation).
struct DeterministicPolicy {
  std::string algo;                // "ppo", "dqn", "sac"
  int obs_dim = 0;                 // observation size
  int action_dim = 0;              // Discrete: the number of actions n; Box: the action size
  std::vector<DenseLayer> layers;  // at least one; layers[0].in_dim == obs_dim
  nn::Activation activation = nn::Activation::kTanh;
  PolicyHead head = PolicyHead::kArgmax;
  double clip_mean = 0.0;   // kTanhToBox with gSDE: SB3's Hardtanh of the mean; 0: none
  std::vector<float> low;   // Box: float32 [action_dim] lower bounds; empty for Discrete
  std::vector<float> high;  // Box: float32 [action_dim] upper bounds; empty for Discrete
};

// The layers of an MLP stored in fused_mlp.h's flat layout (W_l float32 [out, in] row-major,
// then b_l float32 [out], layer by layer): copies of spec.num_layers() DenseLayers.
inline std::vector<DenseLayer> DenseLayersFromFlat(const nn::MlpSpec& spec, const float* params) {
  std::vector<DenseLayer> layers(static_cast<size_t>(spec.num_layers()));
  for (int l = 0; l < spec.num_layers(); ++l) {
    DenseLayer& d = layers[static_cast<size_t>(l)];
    d.in_dim = spec.sizes[static_cast<size_t>(l)];
    d.out_dim = spec.sizes[static_cast<size_t>(l) + 1];
    const float* w = params + spec.weight_offset(l);
    const float* b = params + spec.bias_offset(l);
    d.weight.assign(w, w + static_cast<size_t>(d.out_dim) * d.in_dim);
    d.bias.assign(b, b + d.out_dim);
  }
  return layers;
}

}  // namespace greenrl::algo
