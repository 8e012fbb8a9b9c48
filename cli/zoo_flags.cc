#include "cli/zoo_flags.h"

#include <cstdlib>
#include <string_view>

namespace greenrl::cli {

namespace {

enum class Values { kNone, kOne, kMany };  // what follows the flag on rl-zoo's command line

struct ZooFlag {
  const char* command;  // greenrl's command the flag is given to
  const char* names;    // rl-zoo's spellings, '|'-separated
  Values values;
  // greenrl's spelling, "{}" standing for the value given (else `placeholder`), or, when it does
  // not start with '-', why greenrl needs nothing in its place.
  const char* greenrl;
  const char* placeholder;
};

// rl_zoo3/train.py and rl_zoo3/enjoy.py (rl-baselines3-zoo 2.x), the flags users carry over;
// the ones greenrl spells alike (--algo, --env, --seed, -i, --stochastic) are not listed.
constexpr ZooFlag kZooFlags[] = {
    {"train", "-n|--n-timesteps", Values::kOne, "--set n_timesteps={}", "N"},
    {"train", "-params|--hyperparams", Values::kMany, "--set {}", "key=value"},
    {"train", "-conf|--conf-file", Values::kOne, "--config {}", "FILE"},
    {"train", "-f|--log-folder", Values::kOne,
     "--out DIR (one run's own new or empty directory; default "
     "runs/<env>_<algo>_s<seed>_<time>)",
     ""},
    {"train", "--eval-freq", Values::kOne, "--set eval.freq={}", "N"},
    {"train", "--eval-episodes", Values::kOne, "--set eval.episodes={}", "N"},
    {"train", "--save-freq", Values::kOne, "--set checkpoint_freq={}", "N"},
    {"train", "--save-replay-buffer", Values::kNone,
     "--set checkpoint_replay_buffer=true (the default)", ""},
    {"train", "--num-threads", Values::kOne, "--set threads.torch={}", "N"},
    {"train", "--log-interval", Values::kOne, "--set log_interval={}", "N"},
    {"train", "--device", Values::kOne, "--set device={}", "cpu|cuda|auto"},
    {"train", "--vec-env", Values::kOne,
     "--set threads.env=N (native envs stepped by a thread pool, no subprocesses)", ""},
    {"train", "--verbose", Values::kOne, "--quiet for 0; nothing for 1", ""},
    {"train", "-tb|--tensorboard-log", Values::kOne,
     "nothing: TensorBoard event files are always written into the run directory", ""},
    {"train", "-P|--progress", Values::kNone,
     "nothing: the progress line shows whenever stderr is a terminal", ""},
    {"train", "-uuid|--uuid", Values::kNone, "nothing: every run has its own directory", ""},
    {"train", "--env-kwargs|--eval-env-kwargs", Values::kMany,
     "nothing: greenrl's registered envs take no constructor arguments", ""},
    {"train", "-optimize|--optimize-hyperparameters", Values::kNone,
     "nothing: greenrl has no hyperparameter search", ""},
    {"train", "--track", Values::kNone,
     "nothing: greenrl has no Weights & Biases tracking (TensorBoard event files are in the "
     "run directory)",
     ""},
    {"eval", "--load-best", Values::kNone, "--best", ""},
    {"eval", "-f|--folder|--exp-id", Values::kOne,
     "--run RUN_DIR (one run's directory, written by greenrl train)", ""},
    {"eval", "-n|--n-timesteps", Values::kOne, "--episodes N (greenrl eval counts whole episodes)",
     ""},
    {"eval", "--env|--algo", Values::kOne, "nothing: --run's config.yaml names both", ""},
    {"eval", "--deterministic", Values::kNone,
     "nothing: eval takes the policy's mode unless --stochastic", ""},
    {"eval", "--no-render", Values::kNone, "nothing: greenrl eval does not render", ""},
    {"eval", "--load-last-checkpoint|--load-checkpoint", Values::kOne,
     "nothing: --run of an unfinished run evaluates its newest resume checkpoint", ""},
};

bool HasName(const ZooFlag& flag, std::string_view name) {
  std::string_view names = flag.names;
  while (!names.empty()) {
    const size_t bar = names.find('|');
    if (names.substr(0, bar) == name) return true;
    names = bar == std::string_view::npos ? std::string_view() : names.substr(bar + 1);
  }
  return false;
}

// A value on rl-zoo's command line: anything but a flag (a negative number is a value).
bool IsValue(const std::string& arg) {
  if (arg.empty() || arg[0] != '-') return true;
  char* end = nullptr;
  std::strtod(arg.c_str(), &end);
  return end != nullptr && *end == '\0' && end != arg.c_str();
}

// "{}" in `text` replaced by `value`.
std::string Fill(std::string text, const std::string& value) {
  const size_t at = text.find("{}");
  if (at != std::string::npos) text.replace(at, 2, value);
  return text;
}

}  // namespace

std::string ZooFlagsHint(const std::string& command, const std::vector<std::string>& args) {
  std::string hints;
  int count = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t eq = args[i].find('=');
    const std::string name = args[i].substr(0, eq);
    const ZooFlag* found = nullptr;
    for (const ZooFlag& flag : kZooFlags) {
      if (command == flag.command && HasName(flag, name)) found = &flag;
    }
    if (found == nullptr) continue;
    std::vector<std::string> values;
    if (eq != std::string::npos) values.push_back(args[i].substr(eq + 1));
    while (found->values != Values::kNone && i + 1 < args.size() && IsValue(args[i + 1]) &&
           (values.empty() || found->values == Values::kMany)) {
      values.push_back(args[++i]);
    }
    std::string given = name, greenrl;
    for (const std::string& value : values) given += " " + value;
    if (found->greenrl[0] != '-') {
      greenrl = found->greenrl;
    } else if (found->values == Values::kMany) {  // -params key:value ... -> --set key=value ...
      for (std::string value : values) {
        const size_t colon = value.find(':');
        if (colon != std::string::npos) value[colon] = '=';
        greenrl += (greenrl.empty() ? "" : " ") + Fill(found->greenrl, value);
      }
      if (values.empty()) greenrl = Fill(found->greenrl, found->placeholder);
    } else {
      greenrl = Fill(found->greenrl, values.empty() ? found->placeholder : values.front());
    }
    hints += (count++ == 0 ? "" : "; ") + given + " -> " + greenrl;
  }
  if (count == 0) return "";
  return std::string("rl-zoo's flag") + (count == 1 ? "" : "s") + ", which `greenrl " + command +
         "` spells otherwise: " + hints;
}

}  // namespace greenrl::cli
