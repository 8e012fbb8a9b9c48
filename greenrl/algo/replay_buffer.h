// replay_buffer.h: the off-policy replay buffer DQN and SAC share (SB3's ReplayBuffer with
// handle_timeout_termination): a ring of transitions that keeps `terminated` and `truncated`
// apart and, for a truncated step, the real final observation as next_obs (VecEnv::final_obs),
// so the TD target can bootstrap through truncation and not through termination. Flat over
// envs: with N envs, each vec step adds N rows. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace greenrl::algo {

class CheckpointWriter;  // checkpoint.h
class CheckpointReader;

class ReplayBuffer {
 public:
  // act_dim: values per action (1 for Discrete: the index is stored as float32, exact below
  // 2^24). Memory is reserved and left untouched until rows are written, so a large capacity
  // costs only what is filled.
  // Errors: greenrl::InternalError (GREENRL_CHECK) for capacity < 1 or a dimension < 1;
  // ConfigError("buffer_size", capacity, ...) with the bytes it needs when the memory cannot be
  // reserved (std::bad_alloc), before anything is trained.
  ReplayBuffer(int64_t capacity, int obs_dim, int act_dim);

  // Appends n transitions (one per VecEnv row), overwriting the oldest once full.
  // obs, next_obs: float32 [n, obs_dim] (obs before the step; next_obs = VecEnv::final_obs());
  // actions: float32 [n, act_dim]; rewards: float32 [n]; terminated, truncated: uint8 [n].
  void Add(const float* obs, const float* actions, const float* rewards, const uint8_t* terminated,
           const uint8_t* truncated, const float* next_obs, int n);
  // One transition of a Discrete action.
  void AddDiscrete(const float* obs, const float* next_obs, int64_t action, float reward,
                   bool terminated, bool truncated);

  // Copies the rows `indices` (int64 [batch], each in [0, size())) into: obs, next_obs float32
  // [batch, obs_dim]; actions float32 [batch, act_dim]; rewards float32 [batch]; dones float32
  // [batch] = terminated (a truncation is not a done: SB3's done * (1 - timeout)).
  void Gather(const int64_t* indices, int batch, float* obs, float* actions, float* rewards,
              float* dones, float* next_obs) const;

  int64_t capacity() const { return capacity_; }
  // Transitions held: min(transitions added, capacity).
  int64_t size() const { return size_; }
  // Where the next transition goes, in [0, capacity).
  int64_t pos() const { return pos_; }
  int obs_dim() const { return obs_dim_; }

  // Resume checkpoints: the size() filled rows of every array and pos() under `prefix`
  // ("<prefix>.obs", ...): (2 obs_dim + act_dim + 1) float32 + 2 uint8 per row, e.g. 42 bytes
  // per CartPole transition (DQN), 42 MB for a full 1e6 buffer; 34 MB for Pendulum (SAC).
  // Borrowed (CheckpointWriter::BorrowFloats): the buffer must not change before w's Save.
  void Save(CheckpointWriter& w, const std::string& prefix) const;
  // Restores what Save wrote. Errors: ConfigError (the reader's, naming the file) when the
  // entries are missing or their sizes do not fit this buffer's capacity and dimensions.
  void Load(CheckpointReader& r, const std::string& prefix);
  // Forgets every transition (size() 0, pos() 0).
  void Clear() { pos_ = 0, size_ = 0; }
  int act_dim() const { return act_dim_; }

  // Row i in [0, size()).
  const float* obs(int64_t i) const { return &obs_[i * obs_dim_]; }            // [obs_dim]
  const float* next_obs(int64_t i) const { return &next_obs_[i * obs_dim_]; }  // [obs_dim]
  const float* action(int64_t i) const { return &actions_[i * act_dim_]; }     // [act_dim]
  int64_t discrete_action(int64_t i) const { return static_cast<int64_t>(actions_[i]); }
  float reward(int64_t i) const { return rewards_[i]; }
  uint8_t terminated(int64_t i) const { return terminated_[i]; }
  uint8_t truncated(int64_t i) const { return truncated_[i]; }

 private:
  int64_t capacity_;
  int obs_dim_, act_dim_;
  int64_t pos_ = 0, size_ = 0;
  std::unique_ptr<float[]> obs_, next_obs_;  // float32 [capacity, obs_dim]
  std::unique_ptr<float[]> actions_;         // float32 [capacity, act_dim]
  std::unique_ptr<float[]> rewards_;         // float32 [capacity]
  std::unique_ptr<uint8_t[]> terminated_;    // uint8 [capacity]
  std::unique_ptr<uint8_t[]> truncated_;     // uint8 [capacity]
};

// What DQN's and SAC's `train_freq` key accepts beside its range, for its ConfigError: the key
// counts vec-env steps; SB3's tuple form [n, "step"] is written n, and SB3's episode unit,
// [n, "episode"], is not supported (rl-zoo files are translated by train/zoo_hyperparams.h).
inline constexpr char kTrainFreqAccepted[] =
    "vec-env steps (SB3's [n, \"step\"] is written n; the episode unit is not supported)";

// The part of an off-policy algorithm's resume checkpoint (DQN, SAC) beside its model and RNGs:
// the numerical guard's counters and, optionally, the replay buffer. Keys: "guard.nonfinite_skips"
// (int), "guard.lr_scale" (double), "replay.saved" (0 or 1), "replay.refill_until" (int; absent
// from files of earlier builds: 0) and, when saved, ReplayBuffer::Save under "replay".
struct OffPolicyResumeState {
  int64_t nonfinite_skips = 0;  // update steps skipped for a non-finite loss or gradient, cumulative
  double lr_scale = 1.0;        // learning-rate factor left by the guard's restores (1, 0.5, ...)
  bool has_replay = false;      // whether the file holds the replay buffer
  // Updates wait while num_timesteps <= refill_until: after a resume without the saved buffer
  // (checkpoint_replay_buffer: false, or the guard's restore of such a checkpoint), until the
  // emptied buffer has learning_starts transitions again, as a new run's first update waits for
  // them (SB3, loaded without its buffer, trains at once on what it has collected: batch_size
  // draws from a handful of transitions). 0 otherwise.
  int64_t refill_until = 0;
};

// Writes `state`'s guard counters, "replay.saved" = save_replay, and the buffer when save_replay
// (state.has_replay is ignored).
void WriteOffPolicyResumeState(CheckpointWriter& w, const OffPolicyResumeState& state,
                               const ReplayBuffer& buffer, bool save_replay);
// Reads the guard counters and "replay.saved", not the buffer itself: callers read everything
// that can fail before they change their state. Errors: ConfigError (the reader's, naming the
// file and key) when a key is missing.
OffPolicyResumeState ReadOffPolicyResumeState(CheckpointReader& r);
// Loads the buffer when has_replay, else empties it (a resume without the saved buffer refills
// it from the environment). Errors: as ReplayBuffer::Load.
void RestoreReplayBuffer(CheckpointReader& r, bool has_replay, ReplayBuffer& buffer);
// The refill_until of an algorithm that loaded `state` at num_timesteps (the checkpoint's): the
// saved one when the file holds the buffer, else num_timesteps + learning_starts.
int64_t RefillUntil(const OffPolicyResumeState& state, int64_t num_timesteps,
                    int64_t learning_starts);

}  // namespace greenrl::algo
