// one_value_spec.h (tests only): the EnvSpec of a test's tiny env class, one observation value
// in Box [0, high] and the actions Discrete(2), for the single-env classes tests register or
// step (batched_env.h's requirements).
#pragma once

#include <string>

#include "greenrl/env/spaces.h"

namespace greenrl::env::testing {

// Returns: id, observation Box{{0}, {high}, {1}} float32, action Discrete(2), the TimeLimit
// max_episode_steps, no reward threshold.
inline EnvSpec OneValueSpec(const std::string& id, float high, int max_episode_steps) {
  EnvSpec s;
  s.id = id;
  s.observation_space = Box{{0.0f}, {high}, {1}};
  s.action_space = Discrete{2};
  s.max_episode_steps = max_episode_steps;
  return s;
}

}  // namespace greenrl::env::testing
