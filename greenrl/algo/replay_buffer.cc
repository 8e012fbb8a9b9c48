#include "greenrl/algo/replay_buffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "greenrl/algo/checkpoint.h"
#include "greenrl/core/cpu_info.h"
#include "greenrl/core/errors.h"

namespace greenrl::algo {

ReplayBuffer::ReplayBuffer(int64_t capacity, int obs_dim, int act_dim)
    : capacity_(capacity), obs_dim_(obs_dim), act_dim_(act_dim) {
  GREENRL_CHECK(capacity >= 1 && obs_dim >= 1 && act_dim >= 1,
                "replay buffer needs capacity, obs_dim and act_dim >= 1");
  // new T[n] without () leaves the memory untouched: the OS commits pages as rows are written.
  try {
    obs_.reset(new float[capacity * obs_dim]);
    next_obs_.reset(new float[capacity * obs_dim]);
    actions_.reset(new float[capacity * act_dim]);
    rewards_.reset(new float[capacity]);
    terminated_.reset(new uint8_t[capacity]);
    truncated_.reset(new uint8_t[capacity]);
  } catch (const std::bad_alloc&) {
    const double row_bytes = (2.0 * obs_dim + act_dim + 1) * sizeof(float) + 2;
    const double memory = MachineMemoryBytes();
    throw ConfigError(
        "buffer_size", std::to_string(capacity),
        fmt::format("a replay buffer this process can reserve: {} rows of {:g} bytes are {:.1f} "
                    "GB, more than it could{}",
                    capacity, row_bytes, capacity * row_bytes / 1e9,
                    memory > 0 ? fmt::format(" (the machine's memory: {:.1f} GB; a ulimit or "
                                             "cgroup may allow less)",
                                             memory / 1e9)
                               : ""));
  }
}

void ReplayBuffer::Add(const float* obs, const float* actions, const float* rewards,
                       const uint8_t* terminated, const uint8_t* truncated, const float* next_obs,
                       int n) {
  for (int i = 0; i < n; ++i) {
    const int64_t r = pos_;
    std::copy(obs + static_cast<int64_t>(i) * obs_dim_,
              obs + static_cast<int64_t>(i + 1) * obs_dim_, &obs_[r * obs_dim_]);
    std::copy(next_obs + static_cast<int64_t>(i) * obs_dim_,
              next_obs + static_cast<int64_t>(i + 1) * obs_dim_, &next_obs_[r * obs_dim_]);
    std::copy(actions + static_cast<int64_t>(i) * act_dim_,
              actions + static_cast<int64_t>(i + 1) * act_dim_, &actions_[r * act_dim_]);
    rewards_[r] = rewards[i];
    terminated_[r] = terminated[i] != 0;
    truncated_[r] = truncated[i] != 0;
    pos_ = (pos_ + 1) % capacity_;
    size_ = std::min(size_ + 1, capacity_);
  }
}

void ReplayBuffer::AddDiscrete(const float* obs, const float* next_obs, int64_t action,
                               float reward, bool terminated, bool truncated) {
  const float a = static_cast<float>(action);
  const uint8_t term = terminated ? 1 : 0, trunc = truncated ? 1 : 0;
  Add(obs, &a, &reward, &term, &trunc, next_obs, 1);
}

void ReplayBuffer::Gather(const int64_t* indices, int batch, float* obs, float* actions,
                          float* rewards, float* dones, float* next_obs) const {
  for (int j = 0; j < batch; ++j) {
    const int64_t k = indices[j];
    std::copy(&obs_[k * obs_dim_], &obs_[(k + 1) * obs_dim_],
              obs + static_cast<int64_t>(j) * obs_dim_);
    std::copy(&next_obs_[k * obs_dim_], &next_obs_[(k + 1) * obs_dim_],
              next_obs + static_cast<int64_t>(j) * obs_dim_);
    std::copy(&actions_[k * act_dim_], &actions_[(k + 1) * act_dim_],
              actions + static_cast<int64_t>(j) * act_dim_);
    rewards[j] = rewards_[k];
    dones[j] = terminated_[k] ? 1.0f : 0.0f;
  }
}

void ReplayBuffer::Save(CheckpointWriter& w, const std::string& prefix) const {
  w.WriteInt(prefix + ".capacity", capacity_);
  w.WriteInt(prefix + ".size", size_);
  w.WriteInt(prefix + ".pos", pos_);
  // Borrowed, not copied: the buffer is not written to before the writer's Save returns.
  w.BorrowFloats(prefix + ".obs", obs_.get(), size_ * obs_dim_);
  w.BorrowFloats(prefix + ".next_obs", next_obs_.get(), size_ * obs_dim_);
  w.BorrowFloats(prefix + ".actions", actions_.get(), size_ * act_dim_);
  w.BorrowFloats(prefix + ".rewards", rewards_.get(), size_);
  w.BorrowBytes(prefix + ".terminated", terminated_.get(), size_);
  w.BorrowBytes(prefix + ".truncated", truncated_.get(), size_);
}

void ReplayBuffer::Load(CheckpointReader& r, const std::string& prefix) {
  const int64_t capacity = r.Int(prefix + ".capacity");
  const int64_t size = r.Int(prefix + ".size");
  const int64_t pos = r.Int(prefix + ".pos");
  if (capacity != capacity_ || size < 0 || size > capacity_ || pos < 0 || pos >= capacity_) {
    r.Fail("the replay buffer was saved with buffer_size " + std::to_string(capacity) +
           " (this run has " + std::to_string(capacity_) + ")");
  }
  const std::string terminated = r.Bytes(prefix + ".terminated");
  const std::string truncated = r.Bytes(prefix + ".truncated");
  if (static_cast<int64_t>(terminated.size()) != size ||
      static_cast<int64_t>(truncated.size()) != size) {
    r.Fail("replay buffer flags of another size than its " + std::to_string(size) + " rows");
  }
  r.ReadFloats(prefix + ".obs", obs_.get(), size * obs_dim_);
  r.ReadFloats(prefix + ".next_obs", next_obs_.get(), size * obs_dim_);
  r.ReadFloats(prefix + ".actions", actions_.get(), size * act_dim_);
  r.ReadFloats(prefix + ".rewards", rewards_.get(), size);
  std::copy(terminated.begin(), terminated.end(), terminated_.get());
  std::copy(truncated.begin(), truncated.end(), truncated_.get());
  size_ = size;
  pos_ = pos;
}

void WriteOffPolicyResumeState(CheckpointWriter& w, const OffPolicyResumeState& state,
                               const ReplayBuffer& buffer, bool save_replay) {
  w.WriteInt("guard.nonfinite_skips", state.nonfinite_skips);
  w.WriteDouble("guard.lr_scale", state.lr_scale);
  w.WriteInt("replay.saved", save_replay ? 1 : 0);
  w.WriteInt("replay.refill_until", state.refill_until);
  if (save_replay) buffer.Save(w, "replay");
}

OffPolicyResumeState ReadOffPolicyResumeState(CheckpointReader& r) {
  OffPolicyResumeState state;
  state.nonfinite_skips = r.Int("guard.nonfinite_skips");
  state.lr_scale = r.Double("guard.lr_scale");
  state.has_replay = r.Int("replay.saved") != 0;
  if (r.Has("replay.refill_until")) state.refill_until = r.Int("replay.refill_until");
  return state;
}

int64_t RefillUntil(const OffPolicyResumeState& state, int64_t num_timesteps,
                    int64_t learning_starts) {
  return state.has_replay ? state.refill_until : num_timesteps + learning_starts;
}

void RestoreReplayBuffer(CheckpointReader& r, bool has_replay, ReplayBuffer& buffer) {
  if (has_replay) {
    buffer.Load(r, "replay");
  } else {
    buffer.Clear();
  }
}

}  // namespace greenrl::algo
