// batched_env.h: the per-env-type interface that VecEnv steps, and the adapter that turns any
// single-env class into one.
//
// EnvPool style: VecEnv owns the struct-of-arrays buffers; a BatchedEnv owns N copies of one env
// type and writes rows [begin, end) of those buffers. The virtual call happens once per row range
// (per worker thread), not once per env. Same-step autoreset (SB3 DummyVecEnv, ../shared/DESIGN.md
// "Environments") and the episode statistics live here, once, for every env type.
//
// A single-env class `E` plugs in through BatchedEnvOf<E> when it provides (CartPole is the model):
//   using Action = int64_t;            // Discrete spaces; for Box spaces `const float*` reading
//                                      //   float32 [kActDim], plus `static constexpr int kActDim`
//                                      //   (valid during Step only; each component inside the
//                                      //   Box: PPO clips, SAC rescales, random draws stay in)
//   static constexpr int kObsDim;      // == Spec().obs_dim()
//   using StepResult = env::StepResult<kObsDim>;
//   static const EnvSpec& Spec();
//   E();                               // default-constructible
//   std::array<float, kObsDim> Reset(uint64_t seed);  // reseeds the env's own Rng, then resets
//   std::array<float, kObsDim> Reset();               // resets, continuing the env's own Rng
//   StepResult Step(Action action);    // may truncate itself; BatchedEnvOf applies the TimeLimit
// and optionally
//   static constexpr bool kSaveBytes = false;  // E holds a pointer, span or handle (see SaveState)
// EnvRegistrationOf<E> (registry.h) checks kObsDim, kActDim and Action against Spec().
//
// BatchedEnvOf applies the spec's TimeLimit, as gymnasium.make wraps an env in TimeLimit
// (gymnasium/wrappers/common.py): a row whose episode reaches max_episode_steps steps is truncated
// there, whether or not E's Step says so (and also where it terminates, as Gymnasium's wrapper).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// What a single env's Step returns (Gymnasium's (obs, reward, terminated, truncated) minus info).
template <int ObsDim>
struct StepResult {
  std::array<float, ObsDim> obs{};  // float32 [ObsDim], the observation after the step
  double reward = 0.0;              // reward of this step
  bool terminated = false;          // the MDP reached a terminal state
  // The episode ended for a reason outside the MDP (Gymnasium's truncated: a time limit of the
  // env's own, leaving the valid region, a simulator fault); the algorithms bootstrap from obs
  // unless terminated is set too. BatchedEnvOf also sets it at the spec's max_episode_steps
  // (Gymnasium's TimeLimit).
  bool truncated = false;
};

// Raw views of VecEnv's buffers (N = num_envs). VecEnv owns the memory; a BatchedEnv only writes
// the rows it is given. Pointers stay valid for the VecEnv's lifetime.
struct VecBuffers {
  const int64_t* discrete_actions = nullptr;  // int64 [N]; null for Box action spaces
  const float* continuous_actions = nullptr;  // float32 [N, act_dim]; null for Discrete spaces
  float* obs = nullptr;                       // float32 [N, obs_dim]
  float* reward = nullptr;                    // float32 [N]
  uint8_t* terminated = nullptr;              // uint8 [N], 0 or 1
  uint8_t* truncated = nullptr;               // uint8 [N], 0 or 1
  float* final_obs = nullptr;                 // float32 [N, obs_dim]
  float* episode_return = nullptr;            // float32 [N]
  int32_t* episode_length = nullptr;          // int32 [N], steps
};

// N copies of one env type, stepped by row range. Implementations must let different threads call
// ResetRows/StepRows concurrently on disjoint row ranges.
class BatchedEnv {
 public:
  virtual ~BatchedEnv() = default;

  // The env type's static spec.
  virtual const EnvSpec& spec() const = 0;
  // Number of copies N.
  virtual int num_envs() const = 0;

  // Resets rows [begin, end): row i reseeds its own generator with DeriveSeed(seed, i), so the
  // result does not depend on how rows are split across threads. Writes obs[i]; clears reward,
  // terminated, truncated, episode_return and episode_length; final_obs[i] = obs[i].
  virtual void ResetRows(int begin, int end, uint64_t seed, const VecBuffers& buffers) = 0;

  // Steps rows [begin, end) with the actions in `buffers`, with same-step autoreset: where row i
  // ends (terminated or truncated), final_obs[i] gets the terminal observation, obs[i] the first
  // observation of the next episode (reset from row i's own generator), and episode_return[i] /
  // episode_length[i] the finished episode's return and length. Elsewhere final_obs[i] = obs[i]
  // and both statistics are 0. The TimeLimit is the implementation's to apply (VecEnv does not):
  // truncated[i] = 1 once row i has taken spec().max_episode_steps steps since its reset, as
  // BatchedEnvOf does (an env registered through RegisterEnv<E> gets it); EvaluatePolicy counts
  // on it. Errors: whatever the env's Step throws (e.g. std::invalid_argument for an invalid
  // action); rows before the failing one have been stepped.
  virtual void StepRows(int begin, int end, const VecBuffers& buffers) = 0;

  // Steps since construction that hit a numerical fault (non-finite state) and were answered by
  // resetting that row (../shared/STYLE.md, "Errors"); 0 for env types that cannot fault.
  // Read it from the driving thread between steps.
  virtual int64_t non_finite_resets() const { return 0; }
  // Resets and steps whose observation or reward was NaN or infinite, summed over the rows (an
  // env's own bug, which Gymnasium's passive env checker warns of on the first steps): counted by
  // BatchedEnvOf, 0 for env types that do not count. Read it from the driving thread between
  // steps.
  virtual int64_t non_finite_outputs() const { return 0; }
  // Resume checkpoints: appends the exact state of every row (physics state, generator, step
  // counts, running episode statistics) to *bytes and returns true, or returns false when this
  // env type cannot (the trainer then resets the envs on resume; README "Checkpoints, resume
  // and signals"). The bytes are for the same build only (an in-memory image).
  virtual bool SaveState(std::string* bytes) const {
    (void)bytes;
    return false;
  }
  // Restores what SaveState wrote, reading from bytes[*offset] and advancing *offset.
  // Errors: std::invalid_argument when the bytes are too short.
  virtual void LoadState(const std::string& bytes, size_t* offset) {
    (void)bytes, (void)offset;
    throw std::invalid_argument(spec().id + " cannot restore a saved env state");
  }
};

// Appends / reads raw bytes of trivially copyable values (BatchedEnv and VecEnv states).
inline void AppendBytes(std::string* out, const void* data, size_t n) {
  out->append(static_cast<const char*>(data), n);
}
inline void ReadBytes(const std::string& in, size_t* offset, void* data, size_t n) {
  if (*offset + n > in.size()) throw std::invalid_argument("saved env state is truncated");
  std::memcpy(data, in.data() + *offset, n);
  *offset += n;
}
// The same for a whole vector of trivially copyable T (its size is not stored: the reader's
// vector must already have the saved size).
template <typename T, typename Alloc>
void AppendVector(std::string* out, const std::vector<T, Alloc>& v) {
  AppendBytes(out, v.data(), sizeof(T) * v.size());
}
template <typename T, typename Alloc>
void ReadVector(const std::string& in, size_t* offset, std::vector<T, Alloc>* v) {
  ReadBytes(in, offset, v->data(), sizeof(T) * v->size());
}

// Whether E declares kSaveBytes (see the top of this file).
template <typename E, typename = void>
struct HasSaveBytesFlag : std::false_type {};
template <typename E>
struct HasSaveBytesFlag<E, std::void_t<decltype(E::kSaveBytes)>> : std::true_type {};

// BatchedEnv over a single-env class E (see the requirements at the top of this file).
template <typename E>
class BatchedEnvOf final : public BatchedEnv {
 public:
  static constexpr int kObsDim = E::kObsDim;

  // Args: num_envs: N >= 1 default-constructed copies of E.
  explicit BatchedEnvOf(int num_envs)
      : envs_(num_envs),
        running_return_(num_envs, 0.0),
        running_length_(num_envs, 0),
        non_finite_outputs_(num_envs, 0) {}

  int64_t non_finite_outputs() const override {
    int64_t total = 0;
    for (int64_t n : non_finite_outputs_) total += n;
    return total;
  }

  const EnvSpec& spec() const override { return E::Spec(); }
  int num_envs() const override { return static_cast<int>(envs_.size()); }

  void ResetRows(int begin, int end, uint64_t seed, const VecBuffers& buffers) override {
    for (int i = begin; i < end; ++i) {
      const std::array<float, kObsDim> obs = envs_[i].Reset(DeriveSeed(seed, i));
      if (!AllFinite(obs)) ++non_finite_outputs_[i];
      WriteRow(obs, buffers.obs, i);
      WriteRow(obs, buffers.final_obs, i);
      buffers.reward[i] = 0.0f;
      buffers.terminated[i] = 0;
      buffers.truncated[i] = 0;
      buffers.episode_return[i] = 0.0f;
      buffers.episode_length[i] = 0;
      running_return_[i] = 0.0;
      running_length_[i] = 0;
    }
  }

  // Whether E's bytes are its state: a trivially copyable class (classic control: state, Rng,
  // counters), unless it declares kSaveBytes = false because a member points into memory (a
  // pointer's bytes would name an address of the process that saved them).
  static constexpr bool kSavesBytes = [] {
    if constexpr (!std::is_trivially_copyable_v<E>) {
      return false;
    } else if constexpr (HasSaveBytesFlag<E>::value) {
      return static_cast<bool>(E::kSaveBytes);
    } else {
      return true;
    }
  }();

  bool SaveState(std::string* bytes) const override {
    if constexpr (kSavesBytes) {
      AppendBytes(bytes, envs_.data(), sizeof(E) * envs_.size());
      AppendBytes(bytes, running_return_.data(), sizeof(double) * running_return_.size());
      AppendBytes(bytes, running_length_.data(), sizeof(int32_t) * running_length_.size());
      return true;
    } else {
      (void)bytes;
      return false;
    }
  }
  void LoadState(const std::string& bytes, size_t* offset) override {
    if constexpr (kSavesBytes) {
      ReadBytes(bytes, offset, envs_.data(), sizeof(E) * envs_.size());
      ReadBytes(bytes, offset, running_return_.data(), sizeof(double) * running_return_.size());
      ReadBytes(bytes, offset, running_length_.data(), sizeof(int32_t) * running_length_.size());
    } else {
      BatchedEnv::LoadState(bytes, offset);
    }
  }

  void StepRows(int begin, int end, const VecBuffers& buffers) override {
    for (int i = begin; i < end; ++i) {
      const typename E::StepResult result = envs_[i].Step(ActionAt(buffers, i));
      if (!std::isfinite(result.reward) || !AllFinite(result.obs)) ++non_finite_outputs_[i];
      running_return_[i] += result.reward;
      running_length_[i] += 1;
      // The TimeLimit (Gymnasium's TimeLimit: elapsed steps >= max_episode_steps).
      const bool truncated =
          result.truncated || (max_episode_steps_ > 0 && running_length_[i] >= max_episode_steps_);
      buffers.reward[i] = static_cast<float>(result.reward);
      buffers.terminated[i] = result.terminated ? 1 : 0;
      buffers.truncated[i] = truncated ? 1 : 0;
      WriteRow(result.obs, buffers.final_obs, i);
      if (result.terminated || truncated) {
        buffers.episode_return[i] = static_cast<float>(running_return_[i]);
        buffers.episode_length[i] = running_length_[i];
        running_return_[i] = 0.0;
        running_length_[i] = 0;
        const std::array<float, kObsDim> first = envs_[i].Reset();  // the next episode's
        if (!AllFinite(first)) ++non_finite_outputs_[i];
        WriteRow(first, buffers.obs, i);
      } else {
        buffers.episode_return[i] = 0.0f;
        buffers.episode_length[i] = 0;
        WriteRow(result.obs, buffers.obs, i);
      }
    }
  }

 private:
  static bool AllFinite(const std::array<float, kObsDim>& row) {
    bool finite = true;
    for (float v : row) finite = finite && std::isfinite(v);
    return finite;
  }

  static void WriteRow(const std::array<float, kObsDim>& row, float* dst, int i) {
    std::memcpy(dst + static_cast<int64_t>(i) * kObsDim, row.data(), sizeof(float) * kObsDim);
  }

  static typename E::Action ActionAt(const VecBuffers& buffers, int i) {
    if constexpr (std::is_same_v<typename E::Action, int64_t>) {
      return buffers.discrete_actions[i];
    } else {
      return buffers.continuous_actions + static_cast<int64_t>(i) * E::kActDim;
    }
  }

  // Spec().max_episode_steps (RegisterEnv requires >= 1; 0, in a spec never registered: none).
  const int32_t max_episode_steps_ = E::Spec().max_episode_steps;
  std::vector<E> envs_;                  // one env per row
  std::vector<double> running_return_;   // float64 [N], return of the running episode so far
  std::vector<int32_t> running_length_;  // int32 [N], steps of the running episode so far
  std::vector<int64_t> non_finite_outputs_;  // int64 [N], non_finite_outputs() per row
};

}  // namespace greenrl::env
