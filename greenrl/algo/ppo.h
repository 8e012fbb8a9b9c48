// ppo.h: Proximal Policy Optimization (Schulman et al., 2017, arXiv:1707.06347) for Discrete
// action spaces (categorical policy) and Box action spaces (diagonal Gaussian with a
// state-independent log std, SB3's DiagGaussianDistribution), with Stable-Baselines3's
// hyperparameters, defaults and update (SB3 2.x stable_baselines3/ppo/ppo.py), optionally with
// gSDE exploration for Box actions (use_sde, sde_sample_freq). ppo.cc reads top to
// bottom in CleanRL's order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/core/config.h"
#include "greenrl/core/schedule.h"
#include "greenrl/env/spaces.h"
#include "greenrl/nn/fused_mlp.h"
#include "greenrl/precision/autocast.h"
#include "greenrl/precision/grad_scaler.h"

namespace greenrl::algo {

// PPO's flat config (../shared/STYLE.md point 6). Each field comes from one YAML key or --set
// override (PpoConfigFromConfig; most have the key's name, the others say which); defaults
// are SB3's PPO defaults; configs/ppo/*.yaml hold rl-zoo's presets.
struct PpoConfig {
  int n_envs = 1;            // parallel envs (rows of the VecEnv)
  int n_steps = 2048;        // steps per env per rollout; rollout size = n_steps * n_envs
  int batch_size = 64;       // minibatch size (the last minibatch may be smaller)
  int n_epochs = 10;         // passes over the rollout per update
  double gamma = 0.99;       // discount factor
  double gae_lambda = 0.95;  // GAE lambda
  Schedule learning_rate = Schedule::Constant(3e-4);  // Adam step size, or lin_<initial>
  Schedule clip_range = Schedule::Constant(0.2);      // PPO clip epsilon, or lin_<initial>
  // SB3's clip_range_vf: the value prediction is clipped around the rollout's value,
  // v_pred = v_old + clamp(v - v_old, -c, c), in the value loss; 0 (constant): off, SB3's None.
  // Also lin_<initial>. The scale is the returns', so it depends on the reward scale.
  Schedule clip_range_vf = Schedule::Constant(0.0);
  double ent_coef = 0.0;                              // entropy bonus weight
  double vf_coef = 0.5;                               // value loss weight
  double max_grad_norm = 0.5;                         // global gradient-norm clip
  bool normalize_advantage = true;                    // per-minibatch advantage normalisation
  double target_kl = 0.0;            // stop the epochs early when approx_kl > 1.5 target_kl; 0: off
  std::vector<int> pi_arch{64, 64};  // policy_kwargs.net_arch.pi
  std::vector<int> vf_arch{64, 64};  // policy_kwargs.net_arch.vf
  nn::Activation activation = nn::Activation::kTanh;  // policy_kwargs.activation_fn
  bool ortho_init = true;                             // policy_kwargs.ortho_init
  double log_std_init = 0.0;  // policy_kwargs.log_std_init (Box actions: initial Gaussian log std)
  // Box actions: generalized state-dependent exploration (gSDE, SB3's use_sde; see
  // nn::ActorCriticSpec::use_sde). The noise of env i is h_i^T E_i with the actor's last hidden
  // features h_i and an exploration matrix E_i float32 [latent, act_dim] drawn from
  // N(0, exp(log_std)^2) at the start of each rollout and every sde_sample_freq steps.
  bool use_sde = false;
  // Steps between gSDE noise draws within a rollout; <= 0: only at the rollout's start (SB3's -1).
  int sde_sample_freq = -1;
  // "fused" (hand-written backward over BLAS, CPU and fp32 only) or "autograd" (LibTorch
  // autograd and the flat-tensor optimiser step of nn/tensor_optim.h, on `device`).
  std::string update_path = "fused";
  // Where policy and update run: "cpu", or "cuda" (device 0 of a CUDA build; autograd path).
  std::string device = "cpu";
  // With device "cuda": capture each full-size minibatch step (forward, loss, backward,
  // unscale, clip, Adam, scale update) in a CUDA graph after 3 eager warm-up steps (as PyTorch's
  // CUDA Graphs notes warm up on a side stream), and replay it. Ignored on the CPU and when
  // target_kl > 0 (the early stop reads approx_kl on the host before each step).
  bool cuda_graph = true;
  // Forward and loss dtype: fp32 (either path) or bf16/fp16 (autograd path under autocast; fp32
  // master weights, gradients and Adam state).
  precision::Precision precision = precision::Precision::kFp32;
  // Loss scaling (GradScaler semantics; torch.amp.GradScaler's defaults); enabled by default for
  // fp16 only.
  precision::GradScalerOptions grad_scaler{false, 65536.0, 2.0, 0.5, 2000};
  uint64_t seed = 0;  // network init, action sampling and minibatch shuffling
};

// Declares PPO's keys (names, types, SB3 defaults, ranges, one-line docs) in `schema`.
void AddPpoKeys(ConfigSchema* schema);

// Reads PPO's fields from a loaded config (keys declared by AddPpoKeys plus "n_envs" and
// "seed"). `device: auto` resolves to "cuda" when this LibTorch has CUDA and a device is
// present, else "cpu"; update_path "auto" to "fused" on the CPU in fp32, else "autograd".
// Errors: ConfigError for combinations a single key's range cannot express (batch_size 1, or
// n_steps * n_envs 1, with normalize_advantage, as SB3's PPO.__init__ asserts; device cuda
// without a CUDA device; update_path fused with device cuda or with precision bf16 or fp16;
// precision fp16 on the CPU). A
// batch_size above n_steps * n_envs is accepted, as in SB3: each epoch is then one minibatch.
PpoConfig PpoConfigFromConfig(const Config& config);

// Creates PPO for `spec`: a categorical policy for Discrete actions, a diagonal Gaussian (or
// gSDE with use_sde) for Box actions (samples are clipped to the Box before the env; the buffer
// keeps the unclipped sample and its log-prob, as SB3). Errors: ConfigError("env_id", ...) for a
// Box action space with an unbounded component (clipping needs finite bounds);
// ConfigError("use_sde", ...) for use_sde with Discrete actions.
std::unique_ptr<Algorithm> MakePpo(const PpoConfig& config, const env::EnvSpec& spec);

// Tests: PPO's rollout storage, which the next Update trains on, as CollectRollout leaves it
// (after GAE), rows t-major [n_steps, n_envs]. Writing through the pointers replaces the rollout
// (the data-parallel test feeds the same rows to 1 rank x 8 envs and to 2 ranks x 4 envs).
// Valid while `ppo` lives. Errors: std::invalid_argument when `ppo` was not made by MakePpo.
struct PpoRolloutView {
  int n_steps = 0, n_envs = 0, obs_dim = 0;
  int act_dim = 0;                  // Box: action dims; Discrete: 0
  float* obs = nullptr;             // float32 [T, N, obs_dim]
  int64_t* actions = nullptr;       // int64 [T, N] (Discrete; null for Box)
  float* cont_actions = nullptr;    // float32 [T, N, act_dim] (Box; null for Discrete)
  float* log_probs = nullptr;       // float32 [T, N]: log pi_old(a | obs)
  float* values = nullptr;          // float32 [T, N]: V_old(obs)
  float* advantages = nullptr;      // float32 [T, N]: GAE advantages
  float* returns = nullptr;         // float32 [T, N]: advantages + values
};
PpoRolloutView PpoRolloutForTesting(Algorithm* ppo);

}  // namespace greenrl::algo
