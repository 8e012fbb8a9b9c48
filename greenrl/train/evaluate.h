// evaluate.h: deterministic evaluation episodes, as SB3's evaluate_policy (one finished
// episode per env, mean and population std of the returns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"

namespace greenrl::train {

struct EvalResult {
  std::vector<double> returns;   // one undiscounted return per episode, in env order
  std::vector<int64_t> lengths;  // steps per episode
  double mean_return = 0.0;
  double std_return = 0.0;  // population std (numpy.std, ddof 0), as SB3's evaluate_policy
};

// Runs `episodes` episodes of env_id in parallel (one env each, seeds derived from `seed`),
// acting with the policy's mode when deterministic. Every episode ends by the env's TimeLimit at
// the latest. Errors: ConfigError for an unknown env_id or episodes < 1.
EvalResult EvaluatePolicy(algo::Algorithm& algorithm, const std::string& env_id, int episodes,
                          uint64_t seed, bool deterministic = true);

}  // namespace greenrl::train
