// rl-baselines3-zoo's command-line flags (train.py, enjoy.py) given to greenrl's commands: what
// greenrl takes instead, so a user's rl-zoo command line is refused with its greenrl spelling.
#pragma once

#include <string>
#include <vector>

namespace greenrl::cli {

// The rl-zoo flags among `args` (the arguments `greenrl <command>` did not take, in the order
// given; `-flag=value` and `-flag value ...` forms) with greenrl's spelling of each, values
// carried over: for command "train" and args {"-n", "5", "-params", "gamma:0.9"},
// "rl-zoo's flags, which `greenrl train` spells otherwise: -n 5 -> --set n_timesteps=5; -params
// gamma:0.9 -> --set gamma=0.9". Flags greenrl has no use for say why ("-tb logs -> nothing:
// ..."). Commands: "train" (rl-zoo's train.py; flags of rl_zoo3 2.x) and "eval" (enjoy.py).
// Returns "" when no argument is such a flag or the command has none. Errors: none.
std::string ZooFlagsHint(const std::string& command, const std::vector<std::string>& args);

}  // namespace greenrl::cli
