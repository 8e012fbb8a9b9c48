// classic_env_base.h: what every classic-control env shares (../shared/STYLE.md, point 3:
// constant model, mutable state): its own generator, the float64 internal state, the TimeLimit
// step count, and the test hooks SetState()/state(). Each env adds its spec, constants, Reset()
// and Step().
#pragma once

#include <array>
#include <cstdint>

#include "greenrl/core/rng.h"

namespace greenrl::env {

// Derived: the env class (CRTP, for Reset(seed)); kStateDim: size of its float64 state.
template <typename Derived, int kStateDim>
class ClassicEnvBase {
 public:
  using State = std::array<double, kStateDim>;  // float64 [kStateDim], the env's layout

  // Reseeds the env's Rng with `seed`, then resets as Derived::Reset() does (Gymnasium's
  // reset(seed=seed)). Returns: the initial observation, float32 [obs_dim].
  auto Reset(uint64_t seed) {
    rng_.Seed(seed);
    return static_cast<Derived*>(this)->Reset();
  }

  // Overwrites the float64 state (like `env.unwrapped.state = ...` in Python; for tests). Leaves
  // the TimeLimit step count (and any after-termination counter) as they are.
  // Args: state: float64 [kStateDim] in the State layout.
  void SetState(const double state[kStateDim]) {
    for (int i = 0; i < kStateDim; ++i) state_[i] = state[i];
  }
  // The float64 internal state, State layout.
  const State& state() const { return state_; }
  // Steps since the last Reset() (TimeLimit's _elapsed_steps).
  int elapsed_steps() const { return elapsed_steps_; }

 protected:
  // Args: seed: seeds the env's own Rng (used by Reset()). The env needs a Reset before Step.
  explicit ClassicEnvBase(uint64_t seed) : rng_(seed) {}

  Rng rng_;
  State state_{};
  bool has_reset_ = false;
  int elapsed_steps_ = 0;
};

}  // namespace greenrl::env
