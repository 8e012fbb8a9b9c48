// wrappers.h: VecEnv decorators: observation and reward normalisation (SB3 VecNormalize), action
// clipping and action rescaling (Gymnasium ClipAction / RescaleAction, batched).
//
// A wrapper is a VecEnv (VecEnvWrapper derives from it), so the trainer and PPO take a wrapped
// env exactly like a plain one. Wrappers own the buffers they change (e.g. normalised obs) and
// point every other accessor at the inner env's buffers; all buffers are allocated at
// construction, so Step() allocates nothing. Episode statistics (VecEnv::episode_return /
// episode_length) are computed by the innermost env on raw rewards and passed through unchanged
// by every wrapper, so they always report the true undiscounted return.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "greenrl/env/spaces.h"
#include "greenrl/env/vec_env.h"

namespace greenrl::env {

// Base of all decorators: forwards Reset/Step to the inner env and starts with every view
// pointing at the inner env's buffers; a derived wrapper re-points the ones it replaces.
class VecEnvWrapper : public VecEnv {
 public:
  // Args: inner: the wrapped env (non-null); spec: the spec this wrapper exposes (null: the
  //   inner's); it must outlive the wrapper (wrappers keep theirs as a member).
  // Errors: greenrl::InternalError (GREENRL_CHECK) when inner is null.
  VecEnvWrapper(std::unique_ptr<VecEnv> inner, const EnvSpec* spec);

  int num_threads() const override { return inner_->num_threads(); }
  void SetActiveThreads(int threads) override { inner_->SetActiveThreads(threads); }
  void Reset() override { inner_->Reset(); }
  void Step() override { inner_->Step(); }
  int64_t non_finite_resets() const override { return inner_->non_finite_resets(); }
  int64_t non_finite_outputs() const override { return inner_->non_finite_outputs(); }
  bool SaveState(std::string* bytes) const override { return inner_->SaveState(bytes); }
  void LoadState(const std::string& bytes, size_t* offset) override {
    inner_->LoadState(bytes, offset);
  }

  // The wrapped env.
  VecEnv& inner() { return *inner_; }
  const VecEnv& inner() const { return *inner_; }

 protected:
  std::unique_ptr<VecEnv> inner_;
};

// Options of NormalizeVecEnv; names and defaults of SB3's VecNormalize (stable_baselines3 2.x,
// common/vec_env/vec_normalize.py).
struct NormalizeOptions {
  bool norm_obs = true;       // normalise observations by the running mean/var of observations
  bool norm_reward = true;    // scale rewards by the running std of the discounted return
  double clip_obs = 10.0;     // normalised observations are clipped to [-clip_obs, clip_obs]
  double clip_reward = 10.0;  // normalised rewards are clipped to [-clip_reward, clip_reward]
  double gamma = 0.99;        // discount of the return whose std scales the reward
  double epsilon = 1e-8;      // added to the variance before the square root
};

// Running mean and variance of a stream of vectors, merged batch by batch (Chan et al.'s parallel
// algorithm, as SB3's RunningMeanStd): count starts at 1e-4, mean at 0, var at 1.
struct RunningMeanStd {
  std::vector<double> mean;  // float64 [dim]
  std::vector<double> var;   // float64 [dim], population variance
  double count = 1e-4;       // samples seen (SB3's epsilon start)

  explicit RunningMeanStd(int64_t dim = 0) : mean(dim, 0.0), var(dim, 1.0) {}
  // Merges a batch of n rows (row-major float32 [n, dim] or float64 via the template) into the
  // statistics. Args: batch_mean, batch_var: scratch float64 [dim] (no allocation here).
  template <typename T>
  void Update(const T* rows, int64_t n, std::vector<double>* batch_mean,
              std::vector<double>* batch_var);
};

// SB3 VecNormalize semantics, batched:
//   Reset(): returns <- 0; if training, obs_rms.Update(obs); obs <- Normalize(obs).
//   Step():  if training, obs_rms.Update(obs) (the obs after autoreset); obs and final_obs are
//            normalised with the updated statistics; if training, returns <- returns * gamma +
//            raw reward and ret_rms.Update(returns); reward <- clip(reward / sqrt(ret_rms.var +
//            eps), +-clip_reward); returns[i] <- 0 where row i ended.
//   Normalize(x) = clip((x - mean) / sqrt(var + eps), +-clip_obs), computed in float64, stored
//   as float32 [N, obs_dim].
// Frozen (set_training(false), for evaluation): statistics never change, normalisation still
// applies. The statistics travel through checkpoints as GetState()/SetState().
class NormalizeVecEnv final : public VecEnvWrapper {
 public:
  // Errors: greenrl::ConfigError("normalize_kwargs.clip_obs" / "normalize_kwargs.clip_reward"
  //   / "gamma", ..., the config keys they come from; "NormalizeOptions.epsilon", which no key
  //   sets) for a non-positive clip or epsilon or a gamma outside [0, 1]; greenrl::InternalError
  //   when inner is null.
  NormalizeVecEnv(std::unique_ptr<VecEnv> inner, const NormalizeOptions& options);

  void Reset() override;
  void Step() override;
  // The inner env's state, then the statistics, the running discounted returns and the
  // normalised buffers (exact resume).
  bool SaveState(std::string* bytes) const override;
  void LoadState(const std::string& bytes, size_t* offset) override;

  // Whether Reset/Step update the statistics (SB3's `training`). Default true.
  bool training() const { return training_; }
  void set_training(bool training) { training_ = training; }

  // The raw (unnormalised) buffers of the inner env: float32 [N, obs_dim], float32 [N] and
  // float32 [N, obs_dim] (final_obs: where a row ended, its real last observation). An
  // off-policy algorithm stores these in its replay buffer, as SB3's
  // OffPolicyAlgorithm._store_transition stores get_original_obs() and get_original_reward().
  const float* raw_obs() const { return inner_->obs(); }
  const float* raw_reward() const { return inner_->reward(); }
  const float* raw_final_obs() const { return inner_->final_obs(); }

  // SB3 VecNormalize.normalize_obs with the current statistics, on `rows` observations: src and
  // dst float32 [rows, obs_dim] (they may be the same buffer). Identity when norm_obs is false.
  void NormalizeObs(const float* src, float* dst, int64_t rows) const;
  // SB3 VecNormalize.normalize_reward with the current statistics: clip(r / sqrt(ret_rms.var +
  // epsilon), +-clip_reward) on `n` float32 rewards in place. Identity when norm_reward is false.
  void NormalizeRewards(float* rewards, int64_t n) const;

  const RunningMeanStd& obs_rms() const { return obs_rms_; }
  const RunningMeanStd& ret_rms() const { return ret_rms_; }
  const NormalizeOptions& options() const { return options_; }

  // The statistics as a flat float64 vector, for checkpoints:
  //   [kStateVersion, obs_dim, obs_count, obs_mean[obs_dim], obs_var[obs_dim], ret_count,
  //    ret_mean, ret_var]  (length 6 + 2 obs_dim).
  // The discounted running returns of the current episodes are not included (as SB3, whose
  // VecNormalize.__getstate__ drops them: they restart at 0 after a reload, which only matters
  // mid-episode for reward scaling).
  std::vector<double> GetState() const;
  // Restores statistics saved by GetState() and normalises obs() and final_obs() again with
  // them (the inner env's current observations). Errors: greenrl::ConfigError("normalizer_state",
  // ...) when the vector has another version, obs_dim or length (nothing changes then).
  void SetState(const std::vector<double>& state);
  static constexpr double kStateVersion = 1.0;
  // The observation statistics (count, mean, var) in a GetState() vector of an env with obs_dim
  // values per observation (`greenrl export` reads them). Errors: the ConfigError SetState
  // raises for a vector of another version, obs_dim or length.
  static RunningMeanStd ObsStatsFromState(const std::vector<double>& state, int64_t obs_dim);

 private:
  NormalizeOptions options_;
  bool training_ = true;
  RunningMeanStd obs_rms_;
  RunningMeanStd ret_rms_;
  std::vector<double> returns_;       // float64 [N], discounted return of each running episode
  std::vector<float> obs_;            // float32 [N, obs_dim], normalised obs
  std::vector<float> final_obs_;      // float32 [N, obs_dim], normalised final_obs
  std::vector<float> reward_;         // float32 [N], normalised reward
  std::vector<double> scratch_mean_;  // float64 [obs_dim], batch statistics scratch
  std::vector<double> scratch_var_;   // float64 [obs_dim]
};

// Gymnasium ClipAction, batched: Step() copies the caller's float32 [N, act_dim] actions into the
// inner env's buffer clipped to the inner Box [low, high]. The exposed spec's action space stays
// the inner Box, where Gymnasium 1.0's ClipAction widens it to (-inf, inf)
// (gymnasium/wrappers/transform_action.py, "v1.0.0 - Action space is updated to infinite
// bounds"): greenrl's agents read the Box's bounds (SAC rescales its tanh actions to them, PPO
// clips its samples to them), so the bounds must stay those of the env. The constructor raises
// greenrl::ConfigError("wrappers.clip_action", env id, ...) for a Discrete action space.
class ClipActionVecEnv final : public VecEnvWrapper {
 public:
  explicit ClipActionVecEnv(std::unique_ptr<VecEnv> inner);
  void Step() override;

 private:
  Box box_;                     // the inner env's action Box
  std::vector<float> actions_;  // float32 [N, act_dim], what the caller writes
};

// Gymnasium RescaleAction, batched: exposes the action Box [min_action, max_action] (default
// [-1, 1]) and maps each component linearly onto the inner Box:
//   a_inner = low + (high - low) * ((a - min_action) / (max_action - min_action)),
// then clips to [low, high] (Gymnasium 1.0 RescaleAction clips the result too), in float64,
// stored as float32. Errors (constructor): greenrl::ConfigError("wrappers.rescale_action", ...)
// for a Discrete action space, a non-finite inner bound or min_action >= max_action.
class RescaleActionVecEnv final : public VecEnvWrapper {
 public:
  RescaleActionVecEnv(std::unique_ptr<VecEnv> inner, float min_action = -1.0f,
                      float max_action = 1.0f);
  void Step() override;

 private:
  EnvSpec spec_;   // the inner spec with the action Box replaced
  Box inner_box_;  // the inner env's action Box
  float min_action_;
  float max_action_;
  std::vector<float> actions_;  // float32 [N, act_dim], what the caller writes
};

}  // namespace greenrl::env
