// spaces.h: static descriptions of what an environment type accepts and returns.
//
// EnvPool style (../shared/STYLE.md, point 1): every env type declares its observation and action
// spaces, bounds, TimeLimit and reward threshold once, in an EnvSpec that is separate from
// Reset/Step. VecEnv allocates all of its buffers from the spec, once. The space types mirror
// gymnasium.spaces.Discrete and gymnasium.spaces.Box (Gymnasium 1.0.0) restricted to what greenrl
// needs: Discrete starts at 0 and Box is always float32.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace greenrl::env {

// The finite action set {0, 1, ..., n - 1} (gymnasium.spaces.Discrete(n), start 0).
// Actions travel as int64 (VecEnv's `int64 actions[N]`).
struct Discrete {
  int64_t n = 0;  // number of actions, >= 1
};

// A float32 box low <= v <= high (gymnasium.spaces.Box(low, high, shape, dtype=np.float32)).
// Unbounded components use +-infinity.
struct Box {
  std::vector<float> low;      // float32 [dim()], lower bounds
  std::vector<float> high;     // float32 [dim()], upper bounds
  std::vector<int64_t> shape;  // shape of one value, e.g. {4}; row-major when flattened

  // Number of float32 components: the product of `shape` (1 for an empty shape, a scalar).
  int64_t dim() const;
};

// An action space is either Discrete or Box.
using ActionSpace = std::variant<Discrete, Box>;

// Everything static about one env type: spaces, TimeLimit and reward threshold. One instance per
// env type, built once and never mutated (e.g. CartPole::Spec()).
struct EnvSpec {
  std::string id;             // registered id, e.g. "CartPole-v1"
  Box observation_space;      // observations are float32 [obs_dim()]
  ActionSpace action_space;   // Discrete (int64 actions) or Box (float32 [act_dim()] actions)
  int max_episode_steps = 0;  // TimeLimit: truncated once steps since reset >= this (steps)
  // Mean episodic return that counts as solved (Gymnasium registry's reward_threshold); empty
  // where Gymnasium registers none (Pendulum-v1).
  std::optional<double> reward_threshold;

  // True when action_space holds a Discrete space.
  bool discrete_actions() const { return std::holds_alternative<Discrete>(action_space); }
  // Length of one flattened observation: observation_space.dim().
  int64_t obs_dim() const { return observation_space.dim(); }
  // Values per action: 1 for Discrete (one int64), Box::dim() for Box.
  int64_t act_dim() const;
  // Number of discrete actions (Discrete::n). Errors: greenrl::InternalError (GREENRL_CHECK) when
  // the action space is a Box.
  int64_t num_actions() const;
};

// Gymnasium's repr of a space (`greenrl envs`, the exported policy's observation_space and
// action_space): "Discrete(2)"; a Box side whose components are all equal as the one value, as
// Gymnasium's Box.__repr__ does ("Box(-1.0, 1.0, (6,), float32)", "Box(-inf, inf, (17,),
// float32)"), other sides as a list of per-component bounds ("Box([-1.2, -0.07], [0.6, 0.07],
// (2,), float32)", where NumPy would print "[-1.2  -0.07]"). A uniform side prints as Python
// prints a float ("-1.0", "2.0"), a list's components as the shortest round-trip decimal of the
// float32 ("-1", "-12.566371"); infinite bounds as "inf" or "-inf"; the shape as Python's tuple
// ("()", "(6,)", "(2, 3)").
std::string FormatSpace(const Box& box);
std::string FormatSpace(const ActionSpace& space);

// Checks that `space` can be sampled by SampleActionRows: a Discrete space with n >= 1, or a Box
// whose shape entries are all >= 1 (a shape of () is one value), with dim() low and dim() high
// bounds, all finite, low <= high, and a width high - low that is finite in float32.
// Errors: std::invalid_argument naming the space (`env_id`'s action space) and the first
// offending component, e.g. "Custom-v0: action space component 1 has bounds [-inf, 1]; random
// actions need finite bounds low <= high whose width high - low is finite in float32"; for bounds
// of the wrong length "Custom-v0: action space Box has 2 components but 1 low and 1 high bounds";
// for Discrete(n), n < 1: "Custom-v0: action space Discrete(0) has no action; ...".
void CheckSampleable(const std::string& env_id, const ActionSpace& space);

// Uniformly random actions for rows [begin, end) of a VecEnv's action buffer: gymnasium's
// Space.sample() for every row, but counter-based, so each row's action depends only on (key,
// row) and any thread may draw any row range in any order with the same result. The random bits
// are outputs of SplitMix64 seeded with `key` (SplitMix64At, core/rng.h):
//   - Discrete(n), n a power of two 2^k (CartPole-v1's 2): with r = floor(64 / k) rows per output
//     (64 for k = 1, 21 for Discrete(8)), output w gives the k-bit actions of rows
//     [w * r, (w + 1) * r), lowest bits first (the top 64 - r * k bits unused); n == 1 gives 0;
//   - Discrete(n), other n: row i takes floor(SplitMix64At(key, i) * n / 2^64) (the multiply-shift
//     map of Lemire 2019 without its rejection step; bias below n / 2^64);
//   - Box: component c of row i takes low[c] + (high[c] - low[c]) * u with u the top 24 bits of
//     SplitMix64At(key, i * dim + c) times 2^-24 (u in [0, 1)), so uniform on [low, high) as
//     gymnasium's Box.sample() for bounded components (float32 rounding may reach high).
// Args: discrete_actions: int64 [N] for a Discrete space (else unused, may be null);
//   continuous_actions: float32 [N, dim] for a Box (else unused, may be null); 0 <= begin <= end.
// Preconditions: CheckSampleable(space) passed. Allocates nothing; thread-safe on disjoint rows.
void SampleActionRows(const ActionSpace& space, uint64_t key, int begin, int end,
                      int64_t* discrete_actions, float* continuous_actions);

}  // namespace greenrl::env
