// greenrl envs: every registered environment with its observation space, action space, TimeLimit
// and reward threshold (Gymnasium 1.0.0 registry values), one row per env.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <variant>

#include "cli/commands.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/spaces.h"

namespace greenrl::cli {
namespace {

// "inf", "-inf" or the shortest round-trip decimal of a float32 bound.
std::string Bound(float v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

// Box(low, high, (d,), float32) with per-component bounds, as Gymnasium prints a Box.
std::string FormatBox(const env::Box& box) {
  std::string low;
  std::string high;
  for (size_t k = 0; k < box.low.size(); ++k) {
    low += (k ? ", " : "") + Bound(box.low[k]);
    high += (k ? ", " : "") + Bound(box.high[k]);
  }
  return fmt::format("Box([{}], [{}], ({},), float32)", low, high, box.dim());
}

std::string FormatAction(const env::ActionSpace& space) {
  if (const env::Discrete* d = std::get_if<env::Discrete>(&space)) {
    return fmt::format("Discrete({})", d->n);
  }
  return FormatBox(std::get<env::Box>(space));
}

}  // namespace

Runner RegisterEnvs(CLI::App& app) {
  app.add_subcommand("envs", "List the registered environments, their spaces and limits");
  return []() {
    fmt::print("greenrl envs: Gymnasium 1.0.0 semantics (same-step autoreset)\n");
    for (const env::EnvRegistration& entry : env::RegisteredEnvs()) {
      const env::EnvSpec& spec = *entry.spec;
      const std::string threshold =
          spec.reward_threshold ? fmt::format("{}", *spec.reward_threshold) : "none";
      fmt::print(
          "{}\n  observation: {}\n  action:      {}\n  time limit:  {} steps\n"
          "  reward threshold: {}\n  envs per env thread: {} or more (threads.env)\n",
          spec.id, FormatBox(spec.observation_space), FormatAction(spec.action_space),
          spec.max_episode_steps, threshold, entry.min_rows_per_thread);
    }
    return 0;
  };
}

}  // namespace greenrl::cli
