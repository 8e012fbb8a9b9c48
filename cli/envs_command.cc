// greenrl envs: every registered environment with its observation space, action space, TimeLimit
// and reward threshold (Gymnasium 1.0.0 registry values), one row per env.
#include <fmt/format.h>

#include <string>

#include "cli/commands.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/spaces.h"

namespace greenrl::cli {

Runner RegisterEnvs(CLI::App& app) {
  app.add_subcommand("envs", "List the registered environments, their spaces and limits");
  return []() {
    fmt::print(
        "greenrl envs: the registered envs (greenrl's own are Gymnasium 1.0.0's; a program of "
        "yours adds its own), stepped with SB3 DummyVecEnv's same-step autoreset (the real last "
        "observation in final_obs)\n");
    for (const env::EnvRegistration& entry : env::RegisteredEnvs()) {
      const env::EnvSpec& spec = *entry.spec;
      const std::string threshold =
          spec.reward_threshold ? fmt::format("{}", *spec.reward_threshold) : "none";
      fmt::print(
          "{}\n  observation: {}\n  action:      {}\n  time limit:  {} steps\n"
          "  reward threshold: {}\n  envs per env thread: {} or more (threads.env)\n",
          spec.id, env::FormatSpace(spec.observation_space), env::FormatSpace(spec.action_space),
          spec.max_episode_steps, threshold, entry.min_rows_per_thread);
    }
    return 0;
  };
}

}  // namespace greenrl::cli
