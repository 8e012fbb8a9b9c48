// sac.h: Soft Actor-Critic (Haarnoja et al., 2018, arXiv:1801.01290 and arXiv:1812.05905) for
// Box action spaces, with Stable-Baselines3's hyperparameters, defaults and update (SB3 2.x
// stable_baselines3/sac/sac.py, sac/policies.py). sac.cc reads top to bottom in CleanRL's order
// (cleanrl/sac_continuous_action.py): config, seeding, networks and optimisers, storage, loop.
//
// Mapping onto the Algorithm interface (algorithm.h):
// - CollectRollout: `train_freq` steps of the VecEnv (train_freq x n_envs env steps), each
//   stored in the replay buffer; uniform random actions until `learning_starts` env steps
//   were taken, then samples of the squashed-Gaussian actor;
// - Update(progress_remaining): `gradient_steps` gradient steps (-1: as many as env steps
//   collected by the last rollout) once more than `learning_starts` env steps were taken (SB3's
//   `num_timesteps > learning_starts`); before that a no-op that returns the same metric keys
//   with NaN losses;
// - ActContinuous: the actor's mode tanh(mean) (deterministic) or a sample, rescaled to the Box
//   (with gSDE a fresh draw from the noise's marginal N(mean, SdeStd^2), not a rollout matrix).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/algo/replay_buffer.h"
#include "greenrl/core/config.h"
#include "greenrl/core/schedule.h"
#include "greenrl/env/spaces.h"
#include "greenrl/nn/flat_optim.h"
#include "greenrl/nn/fused_mlp.h"

namespace greenrl::algo {

// SAC's flat config (../shared/STYLE.md point 6). Each field comes from one YAML key or --set
// override (SacConfigFromConfig; most have the key's name, the others say which); defaults
// are SB3's SAC defaults; configs/sac/*.yaml hold rl-zoo's presets.
struct SacConfig {
  int n_envs = 1;                                     // parallel envs (rows of the VecEnv)
  Schedule learning_rate = Schedule::Constant(3e-4);  // Adam step size of all three optimisers
  int64_t buffer_size = 1000000;  // replay capacity in transitions (all envs together)
  int64_t learning_starts = 100;  // env steps of uniform random actions before training
  int batch_size = 256;           // transitions per gradient step
  double tau = 0.005;             // Polyak coefficient of the target critics (1: hard copy)
  double gamma = 0.99;            // discount factor
  int train_freq = 1;             // VecEnv steps per rollout (SB3 train_freq=(n, "step"))
  int gradient_steps = 1;         // gradient steps per update; -1: train_freq * n_envs
  // Entropy coefficient alpha: learned (SB3 ent_coef="auto" / "auto_<init>") from ent_coef_init,
  // or fixed at ent_coef_init.
  bool learn_ent_coef = true;
  double ent_coef_init = 1.0;
  // Target entropy of the learned alpha; NaN: SB3's "auto", -dim(A) (set by MakeSac).
  double target_entropy = std::nan("");
  // Polyak updates at gradient steps 0, N, 2N, ... of each Update, as SB3's sac.py train()
  // tests gradient_step % target_update_interval == 0 with gradient_step counted from 0 per call.
  int target_update_interval = 1;
  // gSDE, generalized state-dependent exploration (SB3 SAC use_sde; Raffin, Kober and Stulp,
  // 2022, arXiv:2005.05719): the actor's noise is latent @ E, E ~ N(0, exp(log_std)^2) float32
  // [L, A] with log_std a learned state-independent parameter (nn::SampleSquashedSde). The
  // rollout draws one E per env at its start and every sde_sample_freq VecEnv steps; each
  // gradient step draws one E for its whole batch (SB3 train(): actor.reset_noise()).
  bool use_sde = false;
  int sde_sample_freq = -1;             // VecEnv steps between draws in a rollout; <= 0: once
  bool use_sde_at_warmup = false;       // gSDE actions, not uniform ones, before learning_starts
  double log_std_init = -3.0;           // policy_kwargs.log_std_init: gSDE's initial log std
  double clip_mean = 2.0;               // policy_kwargs.clip_mean: gSDE mean in [-c, c]; 0: no clip
  std::vector<int> net_arch{256, 256};  // policy_kwargs.net_arch (actor and each critic)
  nn::Activation activation = nn::Activation::kReLU;  // policy_kwargs.activation_fn
  // The gradient step's forward and backward: "fused" (the critics as nn::FusedMlp and the actor
  // as nn::FusedSquashedGaussianActor, hand-written over BLAS on the flat float32 buffers; with
  // an empty net_arch the actor stays on LibTorch) or "autograd" (LibTorch modules). Both compute
  // the same update up to float32 rounding (SacTest.FusedUpdateMatchesAutograd). Acting in the
  // rollout is LibTorch in both. Config "auto" reads as "fused".
  std::string update_path = "fused";
  // threads.update: 1 runs the update on the training thread; 2 (update_path fused only) adds
  // one worker of greenrl's ThreadPool that runs, beside the training thread, the second
  // critic's forward and backward passes, the fused actor's a' sample beside a_pi, and one of
  // each pair of the actor's backward GEMMs (dW | dX): the same results bit for bit
  // (SacTest.TwoUpdateThreadsMatchOneBitForBit). From the first update on the worker spins
  // between hand-offs, up to ThreadPool::kBurstSpin (2 ms) at a time before it blocks
  // (ThreadPool::Burst), which costs CPU seconds beside the ones it saves the training thread.
  int update_threads = 1;
  uint64_t seed = 0;  // network init, random warm-up actions, sampling, replay indices
};

// Declares SAC's keys (names, types, SB3 defaults, ranges, one-line docs) in `schema`.
void AddSacKeys(ConfigSchema* schema);

// Reads SAC's fields from a loaded config (keys declared by AddSacKeys plus "n_envs" and
// "seed"). Errors: ConfigError naming the field for text keys that do not parse (ent_coef:
// "auto, auto_<initial value > 0> or a number >= 0"; target_entropy: "auto or a finite number")
// and for threads.update 2 with update_path autograd. batch_size > buffer_size is valid, as in
// SB3: minibatches are drawn with replacement.
SacConfig SacConfigFromConfig(const Config& config);

// Creates SAC for `spec`.
// Errors: ConfigError("env_id", id, ...) for a Discrete action space or a Box with an infinite
// bound (actions are rescaled from [-1, 1] to the bounds).
std::unique_ptr<Algorithm> MakeSac(const SacConfig& config, const env::EnvSpec& spec);

// ---------------------------------------------------------------------------------------------
// The pieces of SAC's update as free functions, so tests check them against hand-computed
// values. sac.cc's loop calls exactly these.

// SB3 SAC's critic target (sac.py train()), per row i:
//   y_i = r_i + (1 - done_i) * gamma * (min(q1'_i, q2'_i) - alpha * next_log_prob_i),
// where q1', q2' are the target critics at (next_obs, a'), a' ~ pi(.|next_obs) with log-density
// next_log_prob, and done = terminated (ReplayBuffer::Gather). All arrays float32 [n].
void SacTdTarget(const float* rewards, const float* dones, const float* next_q1,
                 const float* next_q2, const float* next_log_prob, double alpha, double gamma,
                 int n, float* target);

// SB3's polyak_update (common/utils.py): target = (1 - tau) target + tau params, over n floats.
void PolyakUpdate(const float* params, float* target, int64_t n, double tau);

// One step of SB3's learned entropy coefficient (sac.py train()):
//   alpha_loss = -(log_alpha * (log_prob + target_entropy).detach()).mean(), so
//   d alpha_loss / d log_alpha = -mean_i(log_prob_i + target_entropy),
// then one Adam step of *log_alpha with `adam` (1 parameter) at `lr`.
// Args: log_probs: float32 [n], the actor's log-densities of its fresh samples.
// Returns: alpha_loss at the log_alpha before the step.
double EntropyCoefStep(const float* log_probs, int n, double target_entropy, double lr,
                       nn::FlatAdam& adam, float* log_alpha);

}  // namespace greenrl::algo
