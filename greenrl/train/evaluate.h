// evaluate.h: deterministic evaluation episodes, as SB3's evaluate_policy (one finished
// episode per env, mean and population std of the returns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/env/wrappers.h"

namespace greenrl::train {

// What EvaluatePolicy found: every episode's return and length, and their statistics.
struct EvalResult {
  std::vector<double> returns;   // one undiscounted return per episode, in env order
  std::vector<int64_t> lengths;  // steps per episode
  double mean_return = 0.0;
  double std_return = 0.0;  // population std (numpy.std, ddof 0), as SB3's evaluate_policy
  // The eval envs' resets and steps that returned a NaN or infinite observation or reward
  // (VecEnv::non_finite_outputs): a custom env's bug, which makes the returns NaN.
  int64_t non_finite_outputs = 0;
};

// The observation/reward normaliser an agent trained with: NormalizeVecEnv's options and its
// statistics (NormalizeVecEnv::GetState()).
struct NormalizerSnapshot {
  env::NormalizeOptions options;
  std::vector<double> state;  // NormalizeVecEnv::GetState()
};
// A normaliser snapshot as one line of JSON (format version, options, state; doubles in their
// shortest round-trip form), what SaveNormalizer writes and checkpoints/best.pt embeds.
std::string NormalizerJson(const NormalizerSnapshot& snapshot);
// Parses NormalizerJson's text; `source` names where it came from in errors.
// Errors: ConfigError("normalizer", source, ...) for malformed text or another format version.
NormalizerSnapshot NormalizerFromJson(const std::string& text, const std::string& source);
// Writes a normaliser snapshot to `path` atomically (NormalizerJson and a newline).
// Errors: std::runtime_error naming the path when it cannot be written.
void SaveNormalizer(const std::string& path, const NormalizerSnapshot& snapshot);
// Reads what SaveNormalizer wrote.
// Errors: ConfigError("normalizer", path, ...) for a missing or malformed file.
NormalizerSnapshot LoadNormalizer(const std::string& path);

// Runs `episodes` episodes of env_id in parallel (one env each, seeds derived from `seed`),
// acting with the policy's mode when deterministic: Algorithm::Act for a Discrete action space,
// Algorithm::ActContinuous for a Box one. Every episode ends by the env's TimeLimit at the
// latest.
// normalizer: when non-null, the eval envs are wrapped in a NormalizeVecEnv with exactly those
// statistics, frozen (SB3: eval envs use training=False), so the agent sees the normalisation it
// trained with and evaluation never moves it. Returns are raw rewards.
// Errors: ConfigError for an unknown env_id or episodes < 1; ConfigError("normalizer_state", ...)
// (NormalizeVecEnv::SetState) when the normaliser's statistics do not fit the env.
EvalResult EvaluatePolicy(algo::Algorithm& algorithm, const std::string& env_id, int episodes,
                          uint64_t seed, bool deterministic = true,
                          const NormalizerSnapshot* normalizer = nullptr);

}  // namespace greenrl::train
