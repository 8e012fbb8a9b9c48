// cartpole_batched.h: N CartPole-v1 envs stepped as one batch over struct-of-arrays state, the
// BatchedEnv that MakeVecEnv("CartPole-v1", ...) builds.
//
// Same semantics and the same bits as BatchedEnvOf<CartPole> (N single CartPoles with same-step
// autoreset; vec_env_test checks them row by row against single envs, and cartpole_batched_test
// replays Gymnasium's recorded trajectories through it), but laid out for speed: the float64 state
// is four arrays x[N], x_dot[N], theta[N], theta_dot[N], the dynamics are CartPole::EulerStep
// (shared with the single env), termination is branch-free, and the episode statistics come from
// the TimeLimit counter (every CartPole reward a VecEnv sees is 1.0, so an episode's return equals
// its length). Only glibc's sincos is called per row; the rest of a block of rows is a loop the
// compiler vectorises.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/core/aligned_vector.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/classic/cartpole.h"
#include "greenrl/env/spaces.h"

namespace greenrl::env {

// Thread-safety: ResetRows/StepRows may run concurrently on disjoint row ranges (BatchedEnv).
class CartPoleBatched final : public BatchedEnv {
 public:
  // Args: num_envs: N >= 1 rows. Rows need ResetRows before StepRows (VecEnv::Reset does it).
  explicit CartPoleBatched(int num_envs);

  // The factory the registry stores for "CartPole-v1".
  static std::unique_ptr<BatchedEnv> Make(int num_envs);

  // CartPole::Spec().
  const EnvSpec& spec() const override { return CartPole::Spec(); }
  int num_envs() const override { return static_cast<int>(x_.size()); }

  // As BatchedEnv::ResetRows: row i reseeds its Rng with DeriveSeed(seed, i) and draws its state
  // with CartPole::DrawResetState (Gymnasium's U(-0.05, 0.05) per component).
  void ResetRows(int begin, int end, uint64_t seed, const VecBuffers& buffers) override;

  // As BatchedEnv::StepRows, with Gymnasium 1.0.0 CartPole-v1 per row: reward 1.0 (rows reset as
  // soon as they end, so no step ever follows a termination), terminated when |x| > 2.4 m or
  // |theta| > 12 degrees, truncated when the steps since reset reach 500.
  // Errors: std::invalid_argument with CartPole's message for the first action in [begin, end)
  //   outside {0, 1}, thrown before any row of the range changes.
  void StepRows(int begin, int end, const VecBuffers& buffers) override;

  // The SoA state, the TimeLimit counters and every row's Rng, as raw bytes (same build only).
  bool SaveState(std::string* bytes) const override;
  void LoadState(const std::string& bytes, size_t* offset) override;

  // Test hooks. Overwrites row i's float64 state (CartPole::State layout), like CartPole::SetState
  // (the step count stays). Errors: none; i must be in [0, N).
  void SetRowState(int i, const CartPole::State& state);
  // Row i's float64 state, CartPole::State layout.
  CartPole::State row_state(int i) const;

 private:
  // Draws row i's next initial state from its Rng, zeroes its step count and writes the float32
  // observation to obs_row (float32 [4]).
  void ResetRow(int i, float* obs_row);

  CacheAlignedVector<double> x_;               // float64 [N], cart position (m)
  CacheAlignedVector<double> x_dot_;           // float64 [N], cart velocity (m/s)
  CacheAlignedVector<double> theta_;           // float64 [N], pole angle (rad, 0 = upright)
  CacheAlignedVector<double> theta_dot_;       // float64 [N], pole angular velocity (rad/s)
  CacheAlignedVector<int32_t> elapsed_steps_;  // int32 [N], steps since reset (TimeLimit's counter)
  CacheAlignedVector<Rng> rng_;                // [N], row i's own generator
};

}  // namespace greenrl::env
