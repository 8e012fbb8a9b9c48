// custom_env.cc: an environment of your own in greenrl, and every greenrl command with it.
//
// Corridor-v0: an agent stands on cell 0 of a corridor of cells 0..9 and the goal is cell 9.
// Each step it moves left (action 0; the wall stops it at cell 0) or right (action 1). Reaching
// the goal ends the episode (terminated) with reward +1; every other step costs 0.1. A TimeLimit
// of 100 steps truncates the episode. The best return is 1 - 0.1 * 8 = 0.2 (nine steps right).
//
// Write a single-env class with the members batched_env.h asks for (the spec, Reset, Step), hand
// it to env::RegisterEnv through env::EnvRegistrationOf in the function given to
// greenrl::cli::Main: the program is then `greenrl` with one more env id.
//
//   build/bin/greenrl_example_custom_env envs
//   build/bin/greenrl_example_custom_env train --env Corridor-v0 --algo ppo
//       --set n_timesteps=20000 --out runs/corridor           (one line)
//   build/bin/greenrl_example_custom_env eval --run runs/corridor
//   build/bin/greenrl_example_custom_env export --run runs/corridor
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cli/cli_main.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/batched_env.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/spaces.h"

namespace {

class Corridor {
 public:
  using Action = int64_t;            // Discrete(2): 0 left, 1 right
  static constexpr int kObsDim = 2;  // [position / 9, 1 if at the left wall else 0]
  using StepResult = greenrl::env::StepResult<kObsDim>;
  static constexpr int kGoal = 9;
  static constexpr int kMaxEpisodeSteps = 100;

  // The env type's spaces, TimeLimit and reward threshold, built once.
  static const greenrl::env::EnvSpec& Spec() {
    static const greenrl::env::EnvSpec spec = [] {
      greenrl::env::EnvSpec s;
      s.id = "Corridor-v0";
      s.observation_space = greenrl::env::Box{{0.0f, 0.0f}, {1.0f, 1.0f}, {kObsDim}};
      s.action_space = greenrl::env::Discrete{2};
      s.max_episode_steps = kMaxEpisodeSteps;
      s.reward_threshold = 0.2;  // the best return
      return s;
    }();
    return spec;
  }

  // Reseeds the env's own generator, then resets. This env starts at cell 0 every time and
  // draws nothing; an env with a random start draws it from rng_ so that runs are reproducible.
  std::array<float, kObsDim> Reset(uint64_t seed) {
    rng_.Seed(seed);
    return Reset();
  }
  std::array<float, kObsDim> Reset() {
    position_ = 0;
    steps_ = 0;
    return Obs();
  }

  // Moves, rewards, and says when the TimeLimit is reached (greenrl applies the spec's TimeLimit
  // in any case, as gymnasium.make's TimeLimit wrapper: truncated at 100 steps, also where the
  // episode terminates).
  StepResult Step(Action action) {
    if (action != 0 && action != 1) {
      throw std::invalid_argument("Corridor-v0: action " + std::to_string(action) +
                                  " is not in Discrete(2)");
    }
    position_ = action == 1 ? position_ + 1 : (position_ > 0 ? position_ - 1 : 0);
    ++steps_;
    StepResult r;
    r.terminated = position_ == kGoal;
    r.reward = r.terminated ? 1.0 : -0.1;
    r.truncated = steps_ >= kMaxEpisodeSteps;
    r.obs = Obs();
    return r;
  }

 private:
  std::array<float, kObsDim> Obs() const {
    return {static_cast<float>(position_) / kGoal, position_ == 0 ? 1.0f : 0.0f};
  }

  greenrl::Rng rng_;  // unused here; see Reset(seed)
  int position_ = 0;
  int steps_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  // A trivially copyable env class is saved exactly in resume checkpoints (one that holds a
  // pointer declares kSaveBytes = false, see batched_env.h). min_rows_per_thread: the fewest
  // rows per env thread for which a second thread is used (registry.h); 256 is a guess, not a
  // measurement, for a step about as cheap as CartPole's (registry.h's figures are the built-in
  // envs'): time your env's runs at threads.env 1 and 2 to choose your own.
  return greenrl::cli::Main(argc, argv, [] {
    greenrl::env::RegisterEnv(
        greenrl::env::EnvRegistrationOf<Corridor>(/*min_rows_per_thread=*/256));
  });
}
