#include "cli/zoo_flags.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "greenrl/core/shell_word.h"
#include "greenrl/train/zoo_hyperparams.h"

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
  const char* placeholder = "";
  // greenrl's spelling for a negative value (rl-zoo's -1 sentinels), for 0, and for an algo
  // other than PPO; null: as above.
  const char* if_negative = nullptr;
  const char* if_zero = nullptr;
  const char* if_not_ppo = nullptr;
};

constexpr const char* kNoSearch = "nothing: greenrl has no hyperparameter search";
constexpr const char* kNoWandb =
    "nothing: greenrl has no Weights & Biases tracking (TensorBoard event files are in the run "
    "directory)";
constexpr const char* kRunConfig =
    "nothing: eval takes the run's config.yaml (device, threads.torch)";

// rl_zoo3/train.py and rl_zoo3/enjoy.py (rl-baselines3-zoo 2.x), every flag; the ones greenrl
// spells alike (--algo, --env and --seed of train, -i, eval's --stochastic and --seed) are not
// listed.
const ZooFlag kZooFlags[] = {
    {"train", "-n|--n-timesteps", Values::kOne, "--set n_timesteps={}", "N",
     "nothing: n_timesteps stays the preset's"},
    {"train", "-params|--hyperparams", Values::kMany, "--set {}", "key=value"},
    {"train", "-conf|--conf-file", Values::kOne, "--config {}", "FILE"},
    {"train", "-f|--log-folder", Values::kOne,
     "--out DIR (one run's own new or empty directory; default "
     "runs/<env>_<algo>_s<seed>_<time>)"},
    {"train", "--eval-freq", Values::kOne, "--set eval.freq={}", "N",
     "--set eval.freq=0 (no periodic evaluation; the final one still runs)"},
    {"train", "--eval-episodes", Values::kOne, "--set eval.episodes={}", "N"},
    {"train", "--n-eval-envs|--vec-env", Values::kOne,
     "nothing: envs run natively, in threads (threads.env), not in subprocesses, and an "
     "evaluation steps all its episodes at once, one env each"},
    {"train", "--save-freq", Values::kOne, "--set checkpoint_freq={}", "N",
     "--set checkpoint_freq=0 (no periodic resume checkpoint)"},
    // rl-zoo saves replay_buffer.pkl beside the final model for -i to load; greenrl's final.pt
    // never holds the buffer (README "Starting from a trained agent").
    {"train", "--save-replay-buffer", Values::kNone,
     "nothing: --trained-agent starts with an empty replay buffer (final.pt holds none); "
     "--resume's checkpoints hold it (checkpoint_replay_buffer, true by default)"},
    {"train", "--num-threads", Values::kOne, "--set threads.torch={}", "N",
     "nothing: threads.torch stays 1 (greenrl sizes every thread pool itself)"},
    {"train", "--log-interval", Values::kOne, "--set log_interval={}", "N",
     "nothing: log_interval stays the algorithm's"},
    {"train", "--device", Values::kOne, "--set device={}", "cpu|cuda|auto", nullptr, nullptr,
     "nothing: greenrl's DQN and SAC run on the CPU (device is a PPO key)"},
    {"train", "--verbose", Values::kOne, "nothing: log lines are on unless --quiet", "", nullptr,
     "--quiet"},
    {"train", "-tb|--tensorboard-log", Values::kOne,
     "nothing: TensorBoard event files are always written into the run directory"},
    {"train", "-P|--progress", Values::kNone,
     "nothing: the progress line shows whenever stderr is a terminal"},
    {"train", "-uuid|--uuid", Values::kNone, "nothing: every run has its own directory"},
    {"train", "--env-kwargs|--eval-env-kwargs", Values::kMany,
     "nothing: greenrl's registered envs take no constructor arguments (each id runs with "
     "Gymnasium's defaults)"},
    {"train", "--gym-packages", Values::kMany,
     "nothing: envs are registered in C++ (README, \"Your own environment\")"},
    {"train", "--truncate-last-trajectory", Values::kOne,
     "nothing: it concerns HER's replay buffer, which greenrl does not have"},
    {"train", "-optimize|--optimize-hyperparameters|--no-optim-plots", Values::kNone, kNoSearch},
    {"train",
     "--n-trials|--max-total-trials|--n-jobs|--sampler|--pruner|--n-startup-trials|"
     "--n-evaluations|--storage|--study-name|--trial-id|--optimization-log-path",
     Values::kOne, kNoSearch},
    {"train", "--track", Values::kNone, kNoWandb},
    {"train", "--wandb-project-name|--wandb-entity|--wandb-group", Values::kOne, kNoWandb},
    {"train", "-tags|--wandb-tags", Values::kMany, kNoWandb},
    {"eval", "--load-best", Values::kNone, "--best"},
    {"eval", "-f|--folder|--exp-id", Values::kOne,
     "--run RUN_DIR (one run's directory, written by greenrl train)"},
    {"eval", "-n|--n-timesteps", Values::kOne,
     "--episodes N (greenrl eval counts whole episodes, not steps)"},
    {"eval", "--env|--algo", Values::kOne, "nothing: --run's config.yaml names both"},
    {"eval", "--no-render", Values::kNone, "nothing: greenrl eval does not render"},
    {"eval", "--load-last-checkpoint", Values::kNone, "--checkpoint last"},
    {"eval", "--load-checkpoint", Values::kOne, "--checkpoint {}", "STEP"},
    {"eval", "--num-threads|--device", Values::kOne, kRunConfig},
    {"eval", "--n-envs", Values::kOne,
     "nothing: eval steps every episode in its own env, all at once"},
    {"eval", "--norm-reward", Values::kNone,
     "nothing: eval reports the env's own rewards (VecNormalize's statistics frozen)"},
    {"eval", "-P|--progress", Values::kNone, "nothing: eval prints its result when it is done"},
    {"eval", "--custom-objects", Values::kNone,
     "nothing: a run's checkpoints load as they are (no pickled objects to replace)"},
    {"eval", "--reward-log", Values::kOne, "nothing: eval prints the mean return and its spread"},
    {"eval", "--verbose", Values::kOne, "nothing: eval's notes are on unless --quiet", "", nullptr,
     "--quiet"},
    {"eval", "--env-kwargs", Values::kMany,
     "nothing: greenrl's registered envs take no constructor arguments (each id runs with "
     "Gymnasium's defaults)"},
    {"eval", "--gym-packages", Values::kMany,
     "nothing: envs are registered in C++ (README, \"Your own environment\")"},
    // train.py's --eval-episodes (and SB3's n_eval_episodes), given to eval.
    {"eval", "--eval-episodes|--n-eval-episodes|--n_eval_episodes", Values::kOne, "--episodes {}",
     "N"},
};

// CleanRL's flags (vwxyzjn/cleanrl's ppo.py, ppo_continuous_action.py, dqn.py and
// sac_continuous_action.py Args, tyro's --kebab-case), those greenrl spells otherwise; --seed and
// rl-zoo's own (--track, --wandb-*) are alike or listed above.
const ZooFlag kCleanRlFlags[] = {
    {"train", "--env-id", Values::kOne, "--env {}", "ID"},
    {"train", "--total-timesteps", Values::kOne, "--set n_timesteps={}", "N"},
    {"train", "--learning-rate", Values::kOne, "--set learning_rate={}", "LR"},
    {"train", "--num-envs", Values::kOne, "--set n_envs={}", "N"},
    {"train", "--num-steps", Values::kOne, "--set n_steps={}", "N"},
    {"train", "--anneal-lr", Values::kNone,
     "--set learning_rate=lin_LR (SB3's linear schedule from LR to 0, what anneal_lr does; SB3 "
     "reads it after each rollout, CleanRL before, so each update's rate is one rollout lower)"},
    {"train", "--no-anneal-lr", Values::kNone, "--set learning_rate=LR (a constant rate)"},
    {"train", "--gamma", Values::kOne, "--set gamma={}", "GAMMA"},
    {"train", "--gae-lambda", Values::kOne, "--set gae_lambda={}", "LAMBDA"},
    {"train", "--num-minibatches", Values::kOne,
     "--set batch_size=N (SB3 and greenrl give the minibatch's size, n_envs x n_steps / the "
     "count CleanRL gives)"},
    {"train", "--update-epochs", Values::kOne, "--set n_epochs={}", "N"},
    {"train", "--norm-adv", Values::kNone, "--set normalize_advantage=true"},
    {"train", "--no-norm-adv", Values::kNone, "--set normalize_advantage=false"},
    {"train", "--clip-coef", Values::kOne, "--set clip_range={}", "EPS"},
    {"train", "--clip-vloss", Values::kNone,
     "--set clip_range_vf=EPS (SB3's value clipping takes the range itself and the clipped "
     "prediction's loss; CleanRL's takes clip_coef and the larger of the clipped and unclipped "
     "losses)"},
    {"train", "--no-clip-vloss", Values::kNone, "nothing: clip_range_vf is 0 (off) by default"},
    {"train", "--ent-coef", Values::kOne, "--set ent_coef={}", "C"},
    // CleanRL's value loss is 0.5 x the mean squared error (ppo.py's v_loss), SB3's and greenrl's
    // the mean squared error: a numeric C is halved below.
    {"train", "--vf-coef", Values::kOne,
     "--set vf_coef={} (half CleanRL's: its value loss is half the mean squared error that SB3 "
     "and greenrl weigh)",
     "C/2"},
    {"train", "--max-grad-norm", Values::kOne, "--set max_grad_norm={}", "N"},
    {"train", "--target-kl", Values::kOne,
     "--set target_kl={} (SB3's rule: each minibatch is checked before its step and ends the "
     "update at approx_kl > 1.5 x target_kl; CleanRL checks after each epoch, at target_kl)",
     "KL"},
    {"train", "--exp-name", Values::kOne,
     "--out DIR (one run's own new or empty directory; default "
     "runs/<env>_<algo>_s<seed>_<time>)"},
    {"train", "--torch-deterministic|--no-torch-deterministic", Values::kNone,
     "nothing: a greenrl run repeats from its seed (the same build, device and threads)"},
    {"train", "--cuda", Values::kNone, "--set device=cuda", "", nullptr, nullptr,
     "nothing: greenrl's DQN and SAC run on the CPU (device is a PPO key)"},
    {"train", "--no-cuda", Values::kNone, "nothing: device is cpu by default"},
    {"train", "--capture-video", Values::kNone, "nothing: greenrl does not render"},
    {"train", "--save-model", Values::kNone,
     "nothing: checkpoints/final.pt is always written (greenrl export makes a TorchScript "
     "module of it)"},
    {"train", "--upload-model|--hf-entity", Values::kNone,
     "nothing: greenrl does not upload to the Hugging Face Hub"},
    {"train", "--buffer-size", Values::kOne, "--set buffer_size={}", "N"},
    {"train", "--tau", Values::kOne, "--set tau={}", "TAU"},
    {"train", "--target-network-frequency", Values::kOne, "--set target_update_interval={}", "N"},
    {"train", "--batch-size", Values::kOne, "--set batch_size={}", "N"},
    {"train", "--start-e", Values::kOne, "--set exploration_initial_eps={}", "EPS"},
    {"train", "--end-e", Values::kOne, "--set exploration_final_eps={}", "EPS"},
    {"train", "--exploration-fraction", Values::kOne, "--set exploration_fraction={}", "F"},
    {"train", "--learning-starts", Values::kOne, "--set learning_starts={}", "N"},
    {"train", "--train-frequency", Values::kOne, "--set train_freq={}", "N"},
    {"train", "--policy-lr|--q-lr", Values::kOne,
     "--set learning_rate=LR (SB3's and greenrl's SAC use one rate for the actor, the critics "
     "and the entropy coefficient)"},
    {"train", "--policy-frequency", Values::kOne,
     "nothing: greenrl's SAC updates the actor at every gradient step, as SB3's"},
    // --alpha counts only with --no-autotune (CleanRL's autotune, on by default, ignores it):
    // ZooFlagsHint reads the two together.
    {"train", "--alpha", Values::kOne,
     "nothing: CleanRL's autotune (its default) learns the coefficient and ignores --alpha; "
     "with --no-autotune, --set ent_coef=ALPHA"},
    {"train", "--autotune", Values::kNone, "--set ent_coef=auto (the default)"},
    {"train", "--no-autotune", Values::kNone,
     "--set ent_coef=0.2 (a fixed coefficient, CleanRL's default --alpha)"},
    {"train", "--noise-clip", Values::kOne,
     "nothing: target policy smoothing is TD3's, which greenrl does not have"},
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

// A number, as rl-zoo's argparse reads int and float values.
bool IsNumber(const std::string& arg) {
  char* end = nullptr;
  std::strtod(arg.c_str(), &end);
  return !arg.empty() && end != nullptr && *end == '\0';
}

// A value on rl-zoo's command line: anything but a flag (a negative number is a value).
bool IsValue(const std::string& arg) { return arg.empty() || arg[0] != '-' || IsNumber(arg); }

// "{}" in `text` replaced by `value`.
std::string Fill(std::string text, const std::string& value) {
  const size_t at = text.find("{}");
  if (at != std::string::npos) text.replace(at, 2, value);
  return text;
}

// rl-zoo's -params key:value (StoreDict: the value evaluated as Python) as greenrl overrides.
// policy_kwargs and normalize stay whole values (--set policy_kwargs=dict(...)), which greenrl
// reads as rl-zoo does: the whole value replaces the preset's (train::LoadRunConfig). Python's
// int(x) and float(x) become x, train_freq's (n, 'step') becomes n, and a schedule's
// "<word>_<value>" becomes lin_<value> (train::ZooScheduleText). Anything else is
// key=value as given, for greenrl's own check to name.
std::vector<std::string> ParamsAsSets(const std::string& item) {
  const size_t colon = item.find(':');
  if (colon == std::string::npos) return {item};
  const std::string key = item.substr(0, colon);
  std::string value = item.substr(colon + 1);
  for (const char* call : {"int(", "float("}) {
    if (value.rfind(call, 0) == 0 && value.back() == ')') {
      value = value.substr(std::strlen(call), value.size() - std::strlen(call) - 1);
    }
  }
  if (key == "train_freq") {
    if (const std::optional<std::string> steps = train::ZooTrainFreqSteps(value)) {
      return {key + "=" + *steps};
    }
  }
  if (const std::optional<std::string> off = train::ZooNoneAsOff(key, value)) return {*off};
  // A schedule as rl-zoo's -params needs it quoted for Python's eval ('cos_1e-3'): the text
  // inside the quotes.
  std::string unquoted = value;
  if (unquoted.size() >= 2 && (unquoted.front() == '\'' || unquoted.front() == '"') &&
      unquoted.back() == unquoted.front()) {
    unquoted = unquoted.substr(1, unquoted.size() - 2);
  }
  const std::string schedule = train::ZooScheduleText(key, unquoted);
  return {key + "=" + (schedule != unquoted ? schedule : value)};
}

// argparse's strtobool, as older CleanRL read `--flag True|False`: 1 for a true word, 0 for a
// false one (any case), -1 for anything else.
int StrToBool(std::string word) {
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* t : {"true", "t", "yes", "y", "on", "1"}) {
    if (word == t) return 1;
  }
  for (const char* f : {"false", "f", "no", "n", "off", "0"}) {
    if (word == f) return 0;
  }
  return -1;
}

}  // namespace

bool LooksLikeFlag(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return false;
  const char next = arg[arg[1] == '-' ? 2 : 1];
  return std::isdigit(static_cast<unsigned char>(next)) == 0 && next != '.';
}

ZooFlags ZooFlagsHint(const std::string& command, const std::vector<std::string>& args,
                      const std::string& algo) {
  ZooFlags found;
  int count = 0;
  bool all_unneeded = true;  // every flag found maps to "nothing: ..."
  bool zoo = false, cleanrl = false;  // whose flags were found
  // CleanRL's --learning-rate V with --anneal-lr is one greenrl value, learning_rate=lin_V (and
  // with --no-anneal-lr or --anneal-lr False, the constant V): found first, said at both flags.
  std::string cleanrl_lr;
  int anneal = -1;  // -1 not given, 0 off, 1 on
  // Likewise --alpha V with --no-autotune: ent_coef=V.
  std::string cleanrl_alpha;
  bool no_autotune = false;
  // CleanRL's DQN (--algo dqn, or one of its own flags): what differs beyond its flags is said.
  bool cleanrl_dqn = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t eq = args[i].find('=');
    const std::string name = args[i].substr(0, eq);
    const std::string next = eq != std::string::npos ? args[i].substr(eq + 1)
                             : i + 1 < args.size()   ? args[i + 1]
                                                     : "";
    if (name == "--learning-rate" && IsNumber(next)) cleanrl_lr = next;
    if (name == "--no-anneal-lr") anneal = 0;
    if (name == "--anneal-lr") anneal = StrToBool(next) == 0 ? 0 : 1;
    if (name == "--alpha" && IsNumber(next)) cleanrl_alpha = next;
    if (name == "--no-autotune") no_autotune = true;
    if (name == "--autotune") no_autotune = StrToBool(next) == 0;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t eq = args[i].find('=');
    const std::string name = args[i].substr(0, eq);
    const ZooFlag* flag = nullptr;
    for (const ZooFlag& candidate : kZooFlags) {
      if (command == candidate.command && HasName(candidate, name)) flag = &candidate, zoo = true;
    }
    for (const ZooFlag& candidate : kCleanRlFlags) {
      if (flag == nullptr && command == candidate.command && HasName(candidate, name)) {
        flag = &candidate, cleanrl = true;
      }
    }
    if (flag == nullptr) {
      found.others.push_back(args[i]);
      continue;
    }
    std::vector<std::string> values;
    if (eq != std::string::npos) values.push_back(args[i].substr(eq + 1));
    // CleanRL's boolean flags before its tyro port took a value (`--anneal-lr False`, argparse's
    // strtobool): a false one means the --no- form.
    if (cleanrl && flag->values == Values::kNone && flag >= std::begin(kCleanRlFlags) &&
        flag < std::end(kCleanRlFlags)) {
      const int truth = StrToBool(eq != std::string::npos ? values.front()
                                  : i + 1 < args.size()   ? args[i + 1]
                                                          : "");
      const bool is_true = truth == 1;
      const bool is_false = truth == 0;
      if ((is_true || is_false) && eq == std::string::npos) values.push_back(args[++i]);
      if (is_false && name.rfind("--no-", 0) != 0) {
        for (const ZooFlag& negated : kCleanRlFlags) {
          if (HasName(negated, "--no-" + name.substr(2))) flag = &negated;
        }
      }
    }
    while (flag->values != Values::kNone && i + 1 < args.size() && IsValue(args[i + 1]) &&
           (values.empty() || flag->values == Values::kMany)) {
      values.push_back(args[++i]);
    }
    std::string given = name, greenrl;
    for (const std::string& value : values) given += " " + ShellWord(value);
    const std::string first = values.empty() ? "" : values.front();
    if (flag->if_not_ppo != nullptr && !algo.empty() && algo != "ppo") {
      greenrl = flag->if_not_ppo;
    } else if (flag->if_negative != nullptr && IsNumber(first) &&
               std::strtod(first.c_str(), nullptr) < 0) {
      greenrl = flag->if_negative;
    } else if (flag->if_zero != nullptr && IsNumber(first) &&
               std::strtod(first.c_str(), nullptr) == 0) {
      greenrl = flag->if_zero;
    } else if (flag->greenrl[0] != '-') {
      greenrl = flag->greenrl;
    } else if (flag->values == Values::kMany) {  // -params key:value ... -> --set key=value ...
      for (const std::string& value : values) {
        for (const std::string& set : ParamsAsSets(value)) {
          greenrl += (greenrl.empty() ? "--set " : " --set ") + ShellWord(set);
        }
      }
      if (values.empty()) greenrl = Fill(flag->greenrl, flag->placeholder);
    } else {
      greenrl = Fill(flag->greenrl, values.empty() ? flag->placeholder : ShellWord(first));
    }
    if (cleanrl && !cleanrl_lr.empty() && anneal >= 0) {
      const std::string value = (anneal == 1 ? "lin_" : "") + cleanrl_lr;
      if (name == "--learning-rate") {
        greenrl = "--set learning_rate=" + value +
                  (anneal == 1 ? " (annealed: SB3's linear schedule from it to 0)" : "");
      } else if (name == "--anneal-lr" || name == "--no-anneal-lr") {
        greenrl = "nothing: --learning-rate's learning_rate=" + value + " says it";
      }
    } else if (cleanrl && name == "--learning-rate" && IsNumber(first) &&
               (algo.empty() || algo == "ppo")) {
      // CleanRL's PPO anneals unless told not to (anneal_lr: bool = True); its DQN keeps the
      // rate constant (its SAC has --policy-lr and --q-lr instead).
      greenrl = "--set learning_rate=lin_" + first +
                " (CleanRL's PPO anneals by default: SB3's linear schedule from it to 0; with "
                "--no-anneal-lr, or for DQN, --set learning_rate=" +
                first + ")";
    }
    if (cleanrl && name == "--vf-coef" && IsNumber(first)) {
      char half[32];
      std::snprintf(half, sizeof(half), "%.6g", std::strtod(first.c_str(), nullptr) / 2.0);
      greenrl = Fill(flag->greenrl, half);
    }
    if (cleanrl && !cleanrl_alpha.empty() && no_autotune) {
      if (name == "--alpha") {
        greenrl = "--set ent_coef=" + cleanrl_alpha + " (a fixed coefficient)";
      } else if (name == "--autotune" || name == "--no-autotune") {
        greenrl = "nothing: --alpha's ent_coef=" + cleanrl_alpha + " says it";
      }
    }
    found.hint += (count++ == 0 ? "" : "; ") + given + " -> " + greenrl;
    for (const char* dqn_only : {"--target-network-frequency", "--start-e", "--end-e",
                                 "--exploration-fraction", "--train-frequency"}) {
      cleanrl_dqn = cleanrl_dqn || (cleanrl && name == dqn_only);
    }
    all_unneeded = all_unneeded && greenrl.rfind("nothing", 0) == 0;
  }
  if (count > 0) {
    const char* whose = zoo && cleanrl ? "rl-zoo's and CleanRL's" : zoo ? "rl-zoo's" : "CleanRL's";
    found.hint = std::string(whose) + " flag" + (count == 1 ? "" : "s") + ", which `greenrl " +
                 command + (all_unneeded ? "` has no equivalent of: " : "` spells otherwise: ") +
                 found.hint;
    // vwxyzjn/cleanrl's dqn.py: QNetwork Linear(obs, 120), ReLU, Linear(120, 84), ReLU,
    // Linear(84, n); loss F.mse_loss; no gradient clipping.
    if (cleanrl && (cleanrl_dqn || algo == "dqn")) {
      found.hint +=
          ". Beyond its flags, CleanRL's dqn.py has a [120, 84] network (SB3's and greenrl's "
          "default is [64, 64]: --set policy_kwargs.net_arch=[120,84]), no gradient clipping "
          "(greenrl's max_grad_norm is 10: --set max_grad_norm=1e6 clips practically nothing) "
          "and a mean squared error loss (SB3's and greenrl's is the Huber loss, which no key "
          "changes)";
    }
  }
  return found;
}

}  // namespace greenrl::cli
