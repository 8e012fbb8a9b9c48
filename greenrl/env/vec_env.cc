#include "greenrl/env/vec_env.h"

#include <algorithm>
#include <utility>

#include "greenrl/core/errors.h"

namespace greenrl::env {
namespace {

// The pool size for num_threads requested over num_envs rows: no thread without a row.
int PoolSize(int num_threads, int num_envs) {
  return num_threads < 1 ? num_threads : std::min(num_threads, std::max(num_envs, 1));
}

}  // namespace

VecEnv::VecEnv(std::unique_ptr<BatchedEnv> envs, uint64_t seed, int num_threads)
    : envs_(std::move(envs)),
      num_envs_(envs_ ? envs_->num_envs() : 0),
      seed_(seed),
      pool_(PoolSize(num_threads, num_envs_)) {
  GREENRL_CHECK(envs_ != nullptr, "VecEnv needs a BatchedEnv");
  GREENRL_CHECK(num_envs_ >= 1, "VecEnv needs at least one env");
  const EnvSpec& s = envs_->spec();
  const size_t n = static_cast<size_t>(num_envs_);
  const size_t obs_dim = static_cast<size_t>(s.obs_dim());
  if (s.discrete_actions()) {
    discrete_actions_.assign(n, 0);
  } else {
    continuous_actions_.assign(n * static_cast<size_t>(s.act_dim()), 0.0f);
  }
  obs_.assign(n * obs_dim, 0.0f);
  reward_.assign(n, 0.0f);
  terminated_.assign(n, 0);
  truncated_.assign(n, 0);
  final_obs_.assign(n * obs_dim, 0.0f);
  episode_return_.assign(n, 0.0f);
  episode_length_.assign(n, 0);

  buffers_.discrete_actions = discrete_actions_.empty() ? nullptr : discrete_actions_.data();
  buffers_.continuous_actions = continuous_actions_.empty() ? nullptr : continuous_actions_.data();
  buffers_.obs = obs_.data();
  buffers_.reward = reward_.data();
  buffers_.terminated = terminated_.data();
  buffers_.truncated = truncated_.data();
  buffers_.final_obs = final_obs_.data();
  buffers_.episode_return = episode_return_.data();
  buffers_.episode_length = episode_length_.data();

  reset_rows_ = [this](int begin, int end) { envs_->ResetRows(begin, end, seed_, buffers_); };
  step_rows_ = [this](int begin, int end) { envs_->StepRows(begin, end, buffers_); };
}

VecEnv::~VecEnv() = default;

void VecEnv::Reset() {
  pool_.ParallelFor(num_envs_, reset_rows_);
  has_reset_ = true;
}

int64_t* VecEnv::discrete_actions() {
  GREENRL_CHECK(spec().discrete_actions(),
                spec().id + " has a Box action space: use continuous_actions()");
  return discrete_actions_.data();
}

float* VecEnv::continuous_actions() {
  GREENRL_CHECK(!spec().discrete_actions(),
                spec().id + " has a Discrete action space: use discrete_actions()");
  return continuous_actions_.data();
}

void VecEnv::Step() {
  GREENRL_CHECK(has_reset_, "VecEnv::Step() called before Reset() (or after a failed Step())");
  try {
    pool_.ParallelFor(num_envs_, step_rows_);
  } catch (...) {
    has_reset_ = false;  // rows are partly stepped: demand a Reset() before the next Step()
    throw;
  }
}

}  // namespace greenrl::env
