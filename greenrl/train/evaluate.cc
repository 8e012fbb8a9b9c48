#include "greenrl/train/evaluate.h"

#include <cmath>

#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"

namespace greenrl::train {

EvalResult EvaluatePolicy(algo::Algorithm& algorithm, const std::string& env_id, int episodes,
                          uint64_t seed, bool deterministic) {
  if (episodes < 1) {
    throw ConfigError("episodes", std::to_string(episodes), "an integer >= 1");
  }
  // Eval envs use their own seed stream, apart from the training envs' (seed, i) streams.
  auto env = env::MakeVecEnv(env_id, episodes, DeriveSeed(seed, 0x6576616cULL), 1);
  env->Reset();
  EvalResult result;
  result.returns.assign(episodes, 0.0);
  result.lengths.assign(episodes, 0);
  std::vector<uint8_t> done(episodes, 0);
  int remaining = episodes;
  const int64_t max_steps = static_cast<int64_t>(env->spec().max_episode_steps) + 1;
  for (int64_t step = 0; remaining > 0; ++step) {
    GREENRL_CHECK(step <= max_steps, "an evaluation episode outlived its TimeLimit");
    algorithm.Act(env->obs(), episodes, deterministic, env->discrete_actions());
    env->Step();
    for (int i = 0; i < episodes; ++i) {
      if (!done[i] && (env->terminated()[i] || env->truncated()[i])) {
        done[i] = 1;
        --remaining;
        result.returns[i] = env->episode_return()[i];
        result.lengths[i] = env->episode_length()[i];
      }
    }
  }
  double sum = 0.0;
  for (double r : result.returns) sum += r;
  result.mean_return = sum / episodes;
  double var = 0.0;
  for (double r : result.returns) var += (r - result.mean_return) * (r - result.mean_return);
  result.std_return = std::sqrt(var / episodes);
  return result;
}

}  // namespace greenrl::train
