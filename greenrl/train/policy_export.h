// policy_export.h: `greenrl export`: a trained agent's deterministic policy as a TorchScript
// module, so the policy runs without greenrl: in Python with torch.jit.load, in C++ with
// torch::jit::load (README "Using a trained policy"). The module takes raw observations (the
// run's observation normalisation, when it had one, is inside it, frozen) and returns the
// actions `greenrl eval` takes.
#pragma once

#include <string>

#include "greenrl/algo/deterministic_policy.h"
#include "greenrl/train/evaluate.h"

namespace greenrl::train {

// What the exported module records about where it came from (its string attributes).
struct PolicyExportInfo {
  std::string env_id;      // e.g. "CartPole-v1"
  std::string checkpoint;  // the checkpoint it was exported from, as given
};

// Writes `policy` as a TorchScript module to `path`, atomically (temp file, fsync, rename).
// The module's methods:
//   forward(obs) -> actions: obs float [N, obs_dim] or [obs_dim] (any floating dtype; read as
//     float32, as greenrl's envs store observations); returns int64 [N] (Discrete) or float32
//     [N, action_dim] (Box), or [] / [action_dim] for a 1-D obs: the policy's mode
//     (deterministic_policy.h), the actions Algorithm::Act / ActContinuous(deterministic=true)
//     take on the same observations.
//   net(obs) -> float32 [N, out]: the last layer's output before the head (PPO's logits,
//     DQN's Q-values, the Gaussian or pre-tanh mean); obs float [N, obs_dim].
//   normalize_obs(obs) -> float32 [N, obs_dim]: what the policy's first layer sees; with
//     normalizer->options.norm_obs, SB3 VecNormalize's clip((obs - mean) / sqrt(var + epsilon),
//     -clip_obs, clip_obs), computed in float64 as NormalizeVecEnv does; otherwise obs as float32.
// Attributes: algo, env_id, checkpoint, head (ToString(PolicyHead)), observation_space and
// action_space (env::FormatSpace, e.g. "Discrete(2)", "Box(-2.0, 2.0, (1,), float32)"),
// obs_dim, action_dim, normalize (bool), and with normalisation obs_mean and obs_var (float64
// [obs_dim] buffers), obs_epsilon and clip_obs (float); every SAC policy's clip_mean (float: with
// gSDE its mean actions pass through hardtanh(-clip_mean, clip_mean) before tanh, as SB3's;
// 0.0 without gSDE, no clamp).
// normalizer: the run's statistics (NormalizerSnapshot, as `greenrl eval` loads them), or null.
// Errors: greenrl::ConfigError("env_id", ...) for an unregistered info.env_id;
// greenrl::ConfigError("normalizer_state", ...) when the statistics do not fit obs_dim
// (NormalizeVecEnv::ObsStatsFromState);
// greenrl::InternalError for a policy whose layers do not chain from obs_dim to its head;
// std::runtime_error naming the path when it cannot be written.
void ExportTorchScriptPolicy(const algo::DeterministicPolicy& policy,
                             const NormalizerSnapshot* normalizer, const PolicyExportInfo& info,
                             const std::string& path);

// Returns: whether `path` holds a module ExportTorchScriptPolicy wrote (a TorchScript archive with
// a forward method and the algo, env_id, checkpoint and head attributes), the only existing file
// `greenrl export --out` replaces. False for a missing or unreadable file and for any other file,
// greenrl's own checkpoints included (they are LibTorch archives without forward).
bool IsExportedPolicy(const std::string& path);

}  // namespace greenrl::train
