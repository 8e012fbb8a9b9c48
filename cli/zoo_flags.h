// rl-baselines3-zoo's command-line flags (train.py, enjoy.py), and CleanRL's (the Args of its
// ppo.py, dqn.py and sac_continuous_action.py), given to greenrl's commands: what greenrl takes
// instead, so a user's rl-zoo or CleanRL command line is refused with its greenrl spelling.
#pragma once

#include <string>
#include <vector>

namespace greenrl::cli {

// Whether a command-line argument is a flag ("--x", "-x", "--x=v") rather than a value: a
// negative number ("-5", "-.5", "-1e5") and "--" alone are values. No errors.
bool LooksLikeFlag(const std::string& arg);

// What ZooFlagsHint found.
struct ZooFlags {
  // "rl-zoo's flags, which `greenrl train` spells otherwise: -n 5 -> --set n_timesteps=5; ...",
  // or "" when no argument is an rl-zoo flag.
  std::string hint;
  // The arguments that are neither such a flag nor one of its values, in order (a misspelt
  // greenrl flag given beside rl-zoo's, for the caller to report too).
  std::vector<std::string> others;
};

// The rl-zoo flags among `args` (the arguments `greenrl <command>` did not take, in the order
// given; `-flag=value` and `-flag value ...` forms) with greenrl's spelling of each, the values
// given carried over where greenrl's key takes the same value: for command "train" and args
// {"-n", "5", "-params", "gamma:0.9"}, "rl-zoo's flags, which `greenrl train` spells otherwise:
// -n 5 -> --set n_timesteps=5; -params gamma:0.9 -> --set gamma=0.9". rl-zoo's -1 sentinels
// (--eval-freq -1: no evaluation) get greenrl's own (eval.freq=0); -params' policy_kwargs and
// normalize values stay whole (--set 'policy_kwargs=dict(...)', which greenrl reads as rl-zoo
// does), int(x) and float(x) become x, and train_freq's (n, 'step') n; `algo` ("" for ppo)
// decides --device (a PPO key: nothing for another algo); a --set whose value a shell would
// split or expand is single-quoted. Flags greenrl has no use for say why ("-tb
// logs -> nothing: ..."). Commands: "train" (rl-zoo's train.py, flags of rl_zoo3 2.x; CleanRL's
// scripts, the hint then saying "CleanRL's flags" or "rl-zoo's and CleanRL's flags") and "eval"
// (enjoy.py); any other command finds none.
// Errors: none (a value greenrl cannot translate is shown as given).
ZooFlags ZooFlagsHint(const std::string& command, const std::vector<std::string>& args,
                      const std::string& algo = "");

}  // namespace greenrl::cli
