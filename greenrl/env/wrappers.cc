#include "greenrl/env/wrappers.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <variant>

#include "greenrl/core/errors.h"

namespace greenrl::env {

// ---------------------------------------------------------------------------------------------
// VecEnvWrapper

namespace {

const EnvSpec* SpecOf(const std::unique_ptr<VecEnv>& inner, const EnvSpec* spec) {
  GREENRL_CHECK(inner != nullptr, "a VecEnv wrapper needs an inner VecEnv");
  return spec != nullptr ? spec : &inner->spec();
}

}  // namespace

VecEnvWrapper::VecEnvWrapper(std::unique_ptr<VecEnv> inner, const EnvSpec* spec)
    : VecEnv(SpecOf(inner, spec), inner->num_envs(), inner->seed()), inner_(std::move(inner)) {
  if (inner_->spec().discrete_actions()) {
    views_.discrete_actions = inner_->discrete_actions();
  } else {
    views_.continuous_actions = inner_->continuous_actions();
  }
  views_.obs = inner_->obs();
  views_.reward = inner_->reward();
  views_.terminated = inner_->terminated();
  views_.truncated = inner_->truncated();
  views_.final_obs = inner_->final_obs();
  views_.episode_return = inner_->episode_return();
  views_.episode_length = inner_->episode_length();
}

// ---------------------------------------------------------------------------------------------
// RunningMeanStd

template <typename T>
void RunningMeanStd::Update(const T* rows, int64_t n, std::vector<double>* batch_mean,
                            std::vector<double>* batch_var) {
  const size_t dim = mean.size();
  std::vector<double>& bm = *batch_mean;
  std::vector<double>& bv = *batch_var;
  std::fill(bm.begin(), bm.end(), 0.0);
  std::fill(bv.begin(), bv.end(), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < dim; ++k) bm[k] += static_cast<double>(rows[i * dim + k]);
  }
  for (size_t k = 0; k < dim; ++k) bm[k] /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < dim; ++k) {
      const double d = static_cast<double>(rows[i * dim + k]) - bm[k];
      bv[k] += d * d;
    }
  }
  // SB3 RunningMeanStd.update_from_moments (parallel merge).
  const double batch_count = static_cast<double>(n);
  const double tot_count = count + batch_count;
  for (size_t k = 0; k < dim; ++k) {
    bv[k] /= batch_count;  // np.var: population variance
    const double delta = bm[k] - mean[k];
    const double m_a = var[k] * count;
    const double m_b = bv[k] * batch_count;
    const double m_2 = m_a + m_b + delta * delta * count * batch_count / tot_count;
    mean[k] = mean[k] + delta * batch_count / tot_count;
    var[k] = m_2 / tot_count;
  }
  count = tot_count;
}

template void RunningMeanStd::Update<float>(const float*, int64_t, std::vector<double>*,
                                            std::vector<double>*);
template void RunningMeanStd::Update<double>(const double*, int64_t, std::vector<double>*,
                                             std::vector<double>*);

// ---------------------------------------------------------------------------------------------
// NormalizeVecEnv

namespace {

void CheckPositive(const char* field, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    throw ConfigError(field, std::to_string(value), "a finite number > 0");
  }
}

}  // namespace

NormalizeVecEnv::NormalizeVecEnv(std::unique_ptr<VecEnv> inner, const NormalizeOptions& options)
    : VecEnvWrapper(std::move(inner), nullptr), options_(options) {
  CheckPositive("normalize_kwargs.clip_obs", options.clip_obs);
  CheckPositive("normalize_kwargs.clip_reward", options.clip_reward);
  CheckPositive("NormalizeOptions.epsilon", options.epsilon);
  if (!(options.gamma >= 0.0 && options.gamma <= 1.0)) {
    throw ConfigError("gamma", std::to_string(options.gamma), "a number in [0, 1]");
  }
  const int64_t obs_dim = spec().obs_dim();
  const size_t n = static_cast<size_t>(num_envs());
  obs_rms_ = RunningMeanStd(obs_dim);
  ret_rms_ = RunningMeanStd(1);
  returns_.assign(n, 0.0);
  scratch_mean_.assign(static_cast<size_t>(obs_dim), 0.0);
  scratch_var_.assign(static_cast<size_t>(obs_dim), 0.0);
  if (options_.norm_obs) {
    obs_.assign(n * obs_dim, 0.0f);
    final_obs_.assign(n * obs_dim, 0.0f);
    views_.obs = obs_.data();
    views_.final_obs = final_obs_.data();
  }
  if (options_.norm_reward) {
    reward_.assign(n, 0.0f);
    views_.reward = reward_.data();
  }
}

void NormalizeVecEnv::NormalizeObs(const float* src, float* dst, int64_t rows) const {
  const size_t dim = obs_rms_.mean.size();
  const size_t total = static_cast<size_t>(rows) * dim;
  if (!options_.norm_obs) {
    if (src != dst) std::copy(src, src + total, dst);
    return;
  }
  for (size_t j = 0; j < total; ++j) {
    const size_t k = j % dim;
    const double z = (static_cast<double>(src[j]) - obs_rms_.mean[k]) /
                     std::sqrt(obs_rms_.var[k] + options_.epsilon);
    dst[j] = static_cast<float>(std::clamp(z, -options_.clip_obs, options_.clip_obs));
  }
}

void NormalizeVecEnv::NormalizeRewards(float* rewards, int64_t n) const {
  if (!options_.norm_reward) return;
  const double scale = std::sqrt(ret_rms_.var[0] + options_.epsilon);
  for (int64_t i = 0; i < n; ++i) {
    rewards[i] = static_cast<float>(
        std::clamp(rewards[i] / scale, -options_.clip_reward, options_.clip_reward));
  }
}

void NormalizeVecEnv::Reset() {
  inner_->Reset();
  std::fill(returns_.begin(), returns_.end(), 0.0);
  if (options_.norm_obs) {
    if (training_) {
      obs_rms_.Update(inner_->obs(), num_envs(), &scratch_mean_, &scratch_var_);
    }
    NormalizeObs(inner_->obs(), obs_.data(), num_envs());
    std::copy(obs_.begin(), obs_.end(), final_obs_.begin());
  }
  if (options_.norm_reward) std::fill(reward_.begin(), reward_.end(), 0.0f);
}

void NormalizeVecEnv::Step() {
  inner_->Step();
  const int n = num_envs();
  if (options_.norm_obs) {
    if (training_) obs_rms_.Update(inner_->obs(), n, &scratch_mean_, &scratch_var_);
    NormalizeObs(inner_->obs(), obs_.data(), num_envs());
    NormalizeObs(inner_->final_obs(), final_obs_.data(), num_envs());
  }
  const float* raw = inner_->reward();
  if (training_) {
    for (int i = 0; i < n; ++i) returns_[i] = returns_[i] * options_.gamma + raw[i];
    ret_rms_.Update(returns_.data(), n, &scratch_mean_, &scratch_var_);
  }
  if (options_.norm_reward) {
    std::copy(raw, raw + n, reward_.begin());
    NormalizeRewards(reward_.data(), n);
  }
  const uint8_t* terminated = inner_->terminated();
  const uint8_t* truncated = inner_->truncated();
  for (int i = 0; i < n; ++i) {
    if (terminated[i] || truncated[i]) returns_[i] = 0.0;
  }
}

bool NormalizeVecEnv::SaveState(std::string* bytes) const {
  if (!inner_->SaveState(bytes)) return false;
  const std::vector<double> stats = GetState();
  AppendBytes(bytes, stats.data(), sizeof(double) * stats.size());
  AppendBytes(bytes, returns_.data(), sizeof(double) * returns_.size());
  AppendBytes(bytes, obs_.data(), sizeof(float) * obs_.size());
  AppendBytes(bytes, final_obs_.data(), sizeof(float) * final_obs_.size());
  AppendBytes(bytes, reward_.data(), sizeof(float) * reward_.size());
  const uint8_t training = training_ ? 1 : 0;
  AppendBytes(bytes, &training, 1);
  return true;
}

void NormalizeVecEnv::LoadState(const std::string& bytes, size_t* offset) {
  inner_->LoadState(bytes, offset);
  std::vector<double> stats(GetState().size());
  ReadBytes(bytes, offset, stats.data(), sizeof(double) * stats.size());
  SetState(stats);
  ReadBytes(bytes, offset, returns_.data(), sizeof(double) * returns_.size());
  ReadBytes(bytes, offset, obs_.data(), sizeof(float) * obs_.size());
  ReadBytes(bytes, offset, final_obs_.data(), sizeof(float) * final_obs_.size());
  ReadBytes(bytes, offset, reward_.data(), sizeof(float) * reward_.size());
  uint8_t training = 1;
  ReadBytes(bytes, offset, &training, 1);
  training_ = training != 0;
}

std::vector<double> NormalizeVecEnv::GetState() const {
  std::vector<double> state;
  const size_t dim = obs_rms_.mean.size();
  state.reserve(6 + 2 * dim);
  state.push_back(kStateVersion);
  state.push_back(static_cast<double>(dim));
  state.push_back(obs_rms_.count);
  state.insert(state.end(), obs_rms_.mean.begin(), obs_rms_.mean.end());
  state.insert(state.end(), obs_rms_.var.begin(), obs_rms_.var.end());
  state.push_back(ret_rms_.count);
  state.push_back(ret_rms_.mean[0]);
  state.push_back(ret_rms_.var[0]);
  return state;
}

RunningMeanStd NormalizeVecEnv::ObsStatsFromState(const std::vector<double>& state,
                                                  int64_t obs_dim) {
  const size_t dim = static_cast<size_t>(obs_dim);
  const std::string expected = "normaliser statistics of version 1 for obs_dim " +
                               std::to_string(dim) + " (" + std::to_string(6 + 2 * dim) +
                               " numbers)";
  if (state.size() != 6 + 2 * dim || state[0] != kStateVersion ||
      state[1] != static_cast<double>(dim)) {
    const std::string got = std::to_string(state.size()) + " numbers" +
                            (state.size() >= 2 ? ", version " + std::to_string(state[0]) +
                                                     ", obs_dim " + std::to_string(state[1])
                                               : "");
    throw ConfigError("normalizer_state", got, expected);
  }
  RunningMeanStd stats(obs_dim);
  stats.count = state[2];
  std::copy(state.begin() + 3, state.begin() + 3 + obs_dim, stats.mean.begin());
  std::copy(state.begin() + 3 + obs_dim, state.begin() + 3 + 2 * obs_dim, stats.var.begin());
  return stats;
}

void NormalizeVecEnv::SetState(const std::vector<double>& state) {
  RunningMeanStd obs = ObsStatsFromState(state, static_cast<int64_t>(obs_rms_.mean.size()));
  const size_t j = 3 + 2 * obs.mean.size();
  obs_rms_ = std::move(obs);
  ret_rms_.count = state[j];
  ret_rms_.mean[0] = state[j + 1];
  ret_rms_.var[0] = state[j + 2];
  // The observations already produced are normalised again with the new statistics, as SB3's
  // VecNormalize.load gives them before the first reset: a MuJoCo resume (which resets the envs
  // and then restores the statistics) and a data-parallel merge act on them next.
  if (options_.norm_obs) {
    NormalizeObs(inner_->obs(), obs_.data(), num_envs());
    NormalizeObs(inner_->final_obs(), final_obs_.data(), num_envs());
  }
}

// ---------------------------------------------------------------------------------------------
// ClipActionVecEnv and RescaleActionVecEnv

namespace {

const Box& RequireBox(const VecEnv& env, const char* field) {
  const Box* box = std::get_if<Box>(&env.spec().action_space);
  if (box == nullptr) {
    throw ConfigError(field, env.spec().id, "an env with a Box action space");
  }
  return *box;
}

}  // namespace

ClipActionVecEnv::ClipActionVecEnv(std::unique_ptr<VecEnv> inner)
    : VecEnvWrapper(std::move(inner), nullptr), box_(RequireBox(*inner_, "wrappers.clip_action")) {
  actions_.assign(static_cast<size_t>(num_envs()) * box_.dim(), 0.0f);
  views_.continuous_actions = actions_.data();
}

void ClipActionVecEnv::Step() {
  float* dst = inner_->continuous_actions();
  const size_t dim = box_.low.size();
  for (size_t j = 0; j < actions_.size(); ++j) {
    const size_t k = j % dim;
    dst[j] = std::clamp(actions_[j], box_.low[k], box_.high[k]);
  }
  inner_->Step();
}

RescaleActionVecEnv::RescaleActionVecEnv(std::unique_ptr<VecEnv> inner, float min_action,
                                         float max_action)
    : VecEnvWrapper(std::move(inner), &spec_),
      spec_(inner_->spec()),
      inner_box_(RequireBox(*inner_, "wrappers.rescale_action")),
      min_action_(min_action),
      max_action_(max_action) {
  if (!(min_action < max_action)) {
    throw ConfigError("wrappers.rescale_action",
                      "[" + std::to_string(min_action) + ", " + std::to_string(max_action) + "]",
                      "min_action < max_action");
  }
  for (size_t k = 0; k < inner_box_.low.size(); ++k) {
    if (!std::isfinite(inner_box_.low[k]) || !std::isfinite(inner_box_.high[k])) {
      throw ConfigError("wrappers.rescale_action", spec_.id, "an action Box with finite bounds");
    }
  }
  Box outer = inner_box_;
  std::fill(outer.low.begin(), outer.low.end(), min_action);
  std::fill(outer.high.begin(), outer.high.end(), max_action);
  spec_.action_space = outer;
  actions_.assign(static_cast<size_t>(num_envs()) * inner_box_.dim(), 0.0f);
  views_.continuous_actions = actions_.data();
}

void RescaleActionVecEnv::Step() {
  float* dst = inner_->continuous_actions();
  const size_t dim = inner_box_.low.size();
  const double span = static_cast<double>(max_action_) - min_action_;
  for (size_t j = 0; j < actions_.size(); ++j) {
    const size_t k = j % dim;
    const double low = inner_box_.low[k];
    const double high = inner_box_.high[k];
    const double a = low + (high - low) * ((actions_[j] - static_cast<double>(min_action_)) / span);
    dst[j] = static_cast<float>(std::clamp(a, low, high));
  }
  inner_->Step();
}

}  // namespace greenrl::env
