#include "greenrl/train/run_config.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/algo/sac.h"
#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/schedule.h"
#include "greenrl/env/registry.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/zoo_hyperparams.h"

namespace greenrl::train {

const std::vector<std::string>& AlgorithmIds() {
  static const std::vector<std::string> ids = {"ppo", "dqn", "sac"};
  return ids;
}

namespace {

// What eval.reward_threshold and carbon.intensity_g_per_kwh accept (RewardThresholdFrom,
// CarbonOptionsFrom), also named by a Load error such as an empty value.
constexpr const char* kRewardThresholdAccepted =
    "off, env (the env's Gymnasium reward_threshold) or a finite number";
constexpr const char* kIntensityAccepted =
    "auto or a number from 0 to 2000 (g CO2e per kWh; a larger value is likely another unit)";
// The preset file as YAML; nullopt when there is none or it cannot be read (Config::Load
// reports an unreadable or malformed file with the full message).
std::optional<YAML::Node> PeekYaml(const std::string& yaml_path) {
  if (yaml_path.empty()) return std::nullopt;
  try {
    return YAML::LoadFile(yaml_path);
  } catch (const std::exception&) {  // YAML errors, a directory (basic_filebuf)
    return std::nullopt;
  }
}

// The `algo` of a run: the last --set algo=..., else the file's `algo`, else "ppo".
std::string PeekAlgo(const std::optional<YAML::Node>& root,
                     const std::vector<std::string>& overrides) {
  std::string algo = "ppo";
  if (root && root->IsMap() && (*root)["algo"] && (*root)["algo"].IsScalar()) {
    algo = (*root)["algo"].Scalar();
  }
  for (const auto& o : overrides) {
    if (o.rfind("algo=", 0) == 0) algo = o.substr(5);
  }
  return algo;
}

// The algorithm whose policy_kwargs layout a whole --set policy_kwargs=dict(...) takes: PeekAlgo's,
// except that a file without `algo` (an rl-zoo file, whose name gives the algorithm, as sac.yml)
// and no --set algo= takes the file name's algorithm, as ReadZooSection will.
std::string PeekValueAlgo(const std::string& yaml_path, const std::optional<YAML::Node>& root,
                          const std::vector<std::string>& overrides) {
  const bool algo_given = (root && root->IsMap() && (*root)["algo"]) ||
                          std::any_of(overrides.begin(), overrides.end(), [](const std::string& o) {
                            return o.rfind("algo=", 0) == 0;
                          });
  if (!algo_given && root && root->IsMap()) {
    try {
      if (const std::string named = AlgoOfFileName(yaml_path); !named.empty()) return named;
    } catch (const ConfigError&) {  // another rl-zoo algorithm's file: ReadZooSection says so
    }
  }
  return PeekAlgo(root, overrides);
}

// "<key>=<default>" for every key of `sections` (e.g. "policy_kwargs") with a default that no
// text of `sets` gives: appended to the overrides, they return the keys a whole rl-zoo value
// leaves out to their defaults. A text whose keys cannot be read adds none (Config::Load names
// its error).
std::vector<std::string> SectionResets(const ConfigSchema& schema,
                                       const std::set<std::string>& sections,
                                       const std::vector<std::string>& sets) {
  std::vector<std::string> resets;
  if (sections.empty()) return resets;
  std::set<std::string> given;
  for (const std::string& text : sets) {
    try {
      for (std::string& key : Config::KeysSetBy(schema, text)) given.insert(std::move(key));
    } catch (const ConfigError&) {
    }
  }
  for (const KeySpec& spec : schema.keys()) {
    for (const std::string& section : sections) {
      if (spec.key.rfind(section + ".", 0) == 0 && given.count(spec.key) == 0 &&
          spec.default_yaml) {
        resets.push_back(spec.key + "=" + *spec.default_yaml);
      }
    }
  }
  return resets;
}

// Declares the keys of algorithm `id` (one of AlgorithmIds()).
void AddAlgoKeys(const std::string& id, ConfigSchema* s) {
  if (id == "ppo") algo::AddPpoKeys(s);
  if (id == "dqn") algo::AddDqnKeys(s);
  if (id == "sac") algo::AddSacKeys(s);
}
}  // namespace

ConfigSchema BuildSchema(const std::string& algo) {
  const auto& ids = AlgorithmIds();
  if (std::find(ids.begin(), ids.end(), algo) == ids.end()) {
    const auto& others = OtherZooAlgorithms();
    if (std::find(others.begin(), others.end(), algo) != others.end()) {
      throw ConfigError("algo", algo,
                        "one of: ppo, dqn, sac (" + algo +
                            " is one of rl-baselines3-zoo's other algorithms, which greenrl does "
                            "not implement)");
    }
    throw ConfigError("algo", algo, OneOfWithHint(algo, ids));
  }
  ConfigSchema s;
  std::vector<std::string> env_ids;
  for (const auto& r : env::RegisteredEnvs()) env_ids.push_back(r.spec->id);
  AddKey(&s, "algo", ValueType::kString, algo, "algorithm", {}, {}, ids);
  // SAC needs Box actions, so its default is the env of its classic-control preset.
  // An id not registered here may be an env of the user's own, which only their program has.
  AddKey(&s, "env_id", ValueType::kString, algo == "sac" ? "Pendulum-v1" : "CartPole-v1",
         "env id (Gymnasium's, or one a program of yours registers)", {}, {}, env_ids, false,
         fmt::format("one of: {}; an env of your own is trained, evaluated and exported by your "
                     "program that registers it (README \"Your own environment\")",
                     fmt::join(env_ids, ", ")));
  AddKey(&s, "seed", ValueType::kInt, "0", "seed of envs, network init, sampling, shuffling", 0,
         4294967295.0);
  AddKey(&s, "n_envs", ValueType::kInt, "1", "parallel envs", 1, 65536);
  AddKey(&s, "n_timesteps", ValueType::kInt, "100000", "env steps to train for (summed over envs)",
         1, 1e12);
  AddKey(&s, "normalize", ValueType::kBool, "false",
         "wrap the envs in VecNormalize (rl-zoo's normalize); gamma is the algorithm's");
  AddKey(&s, "normalize_kwargs.norm_obs", ValueType::kBool, "true",
         "normalise observations by their running mean and variance");
  AddKey(&s, "normalize_kwargs.norm_reward", ValueType::kBool, "true",
         "scale rewards by the running std of the discounted return");
  AddKey(&s, "normalize_kwargs.clip_obs", ValueType::kFloat, "10.0",
         "clip normalised observations to +-clip_obs", 0.0, 1e9, {}, true);
  AddKey(&s, "normalize_kwargs.clip_reward", ValueType::kFloat, "10.0",
         "clip normalised rewards to +-clip_reward", 0.0, 1e9, {}, true);
  AddKey(&s, "trained_agent", ValueType::kString, "''",
         "start from a trained agent, as rl-zoo's --trained-agent: a run directory (its final.pt, "
         "else its newest resume checkpoint) or its checkpoints/best.pt, final.pt or "
         "step_<12 digits>.pt, of the same "
         "algo, env_id and network; its parameters, optimiser state, update counts and "
         "normaliser statistics carry over, while env-step counts, schedules, exploration and "
         "the replay buffer start afresh (empty: a new agent; a --resume keeps the run's own)");
  AddKey(&s, "threads.env", ValueType::kInt, "1",
         "at most this many threads stepping envs (1: on the training thread); fewer when each "
         "would get too few envs to pay off (README, Threads)",
         1, 256);
  AddKey(&s, "threads.torch", ValueType::kInt, "1", "LibTorch intra-op and OpenMP/OpenBLAS threads",
         1, 256);
  AddKey(&s, "eval.freq", ValueType::kInt, "25000",
         "evaluate every this many env steps (0: only at the end); rl-zoo's eval_freq", 0, 1e12);
  AddKey(&s, "eval.episodes", ValueType::kInt, "5", "deterministic episodes per periodic eval", 1,
         10000);
  AddKey(&s, "eval.final_episodes", ValueType::kInt, "10",
         "deterministic episodes of the final evaluation", 1, 10000);
  AddKey(&s, "eval.save_best", ValueType::kBool, "true",
         "keep the policy of the evaluation with the highest mean reward so far (periodic or "
         "final) in checkpoints/best.pt, as SB3's EvalCallback does with best_model_save_path "
         "(rl-zoo's best_model; `greenrl eval --best`)");
  AddKey(&s, "eval.reward_threshold", ValueType::kString, "off",
         "stop training after the first periodic evaluation whose mean reward reaches this (SB3's "
         "StopTrainingOnRewardThreshold): off, env (the env's Gymnasium reward_threshold) or a "
         "number",
         {}, {}, {}, false, kRewardThresholdAccepted);
  // SB3's log_interval (BaseAlgorithm.learn): rollouts for on-policy PPO (default 1), finished
  // episodes for off-policy DQN and SAC (default 4), whose iterations are a few env steps each.
  AddKey(&s, "log_interval", ValueType::kInt, algo == "ppo" ? "1" : "4",
         algo == "ppo"
             ? "write a metrics.csv/TensorBoard row every this many iterations (rollout + "
               "update); rows of evaluations and the last iteration are always written"
             : "write a metrics.csv/TensorBoard row once this many training episodes "
               "have finished since the last row (SB3's off-policy log_interval); rows "
               "of evaluations and the last iteration are always written",
         1, 1e12);
  AddKey(&s, "energy.meter", ValueType::kString, "auto",
         "auto (RAPL when readable, else estimator), rapl, estimator", {}, {},
         energy::MeterKinds());
  AddKey(&s, "energy.powercap_root", ValueType::kString, energy::RaplMeter::kDefaultRoot,
         "powercap sysfs root");
  AddKey(&s, "energy.watts_per_core", ValueType::kFloat,
         internal::FormatShortestDouble(energy::kDefaultWattsPerCore),
         "estimator: W per busy core (Green Algorithms default)", 0.0, 1e4, {}, true);
  AddKey(&s, "energy.hwmon_root", ValueType::kString, "/sys/class/hwmon",
         "hwmon sysfs root (amd_energy), listed by greenrl meters");
  AddKey(&s, "energy.gpu", ValueType::kString, "auto",
         "auto: meter the visible GPUs through NVML beside the CPU meter; off", {}, {},
         {"auto", "off"});
  AddKey(&s, "energy.nvml_library", ValueType::kString, "libnvidia-ml.so.1",
         "NVML library loaded with dlopen at run time");
  AddKey(&s, "energy.sample_period_s", ValueType::kFloat, "1.0",
         "power sampling period of the sampler thread (power.csv), s", 0.01, 3600.0);
  AddKey(&s, "energy.budget_wh", ValueType::kFloat, "0.0",
         "energy budget of the run in Wh (0: none); the ladder below acts as it nears", 0.0, 1e9,
         {}, false, "watt-hours, written without a unit (e.g. 0.5 for 1800 J)");
  AddKey(&s, "energy.budget.warmup_steps", ValueType::kInt, "1000",
         "env steps before the forecast starts (setup energy is left out of the rate; DQN and SAC "
         "also wait for learning_starts, whose steps cost a fraction of later ones)",
         0, 1e12);
  AddKey(&s, "energy.budget.reduced_precision_at", ValueType::kFloat, "0.6",
         "fraction of the budget (forecast or used) at which the update goes reduced precision",
         0.0, 100.0, {}, true);
  AddKey(&s, "energy.budget.skip_at", ValueType::kFloat, "0.75",
         "fraction at which periodic evaluation is skipped (unless eval.reward_threshold is set) "
         "and per-iteration logging thinned to every 10th row",
         0.0, 100.0, {}, true);
  AddKey(&s, "energy.budget.throttle_at", ValueType::kFloat, "0.9",
         "fraction at which the run throttles (duty cycle, fewer env threads)", 0.0, 100.0, {},
         true);
  AddKey(&s, "energy.budget.throttle_duty_cycle", ValueType::kFloat, "0.5",
         "share of wall time spent working while throttled", 0.0, 1.0, {}, true);
  AddKey(&s, "energy.budget.throttle_env_threads_fraction", ValueType::kFloat, "0.5",
         "share of the env threads kept while throttled: max(1, round(n x fraction))", 0.0, 1.0, {},
         true);
  AddKey(&s, "energy.budget.stop_margin", ValueType::kFloat, "1.0",
         "stop when used + margin x next iteration's energy + a periodic checkpoint due + the "
         "final evaluation's or stop checkpoint's estimate would pass the budget",
         1.0, 100.0);
  AddKey(&s, "energy.power_limit", ValueType::kString, "off",
         "GPU power-limit profiling (Zeus): off, dry-run (plan only), auto (sets limits; root)", {},
         {}, {"off", "dry-run", "auto"});
  AddKey(&s, "energy.power_limit_eta", ValueType::kFloat, "0.5",
         "Zeus's eta: weight of energy against time in the limit choice", 0.0, 1.0);
  AddKey(&s, "energy.power_limit_iterations", ValueType::kInt, "3",
         "training iterations profiled at each power limit", 1, 1000);
  AddKey(&s, "dist.backend", ValueType::kString, "gloo",
         "data-parallel backend when launched with WORLD_SIZE > 1 (torch c10d)", {}, {},
         {"gloo", "nccl"});
  AddKey(&s, "dist.timeout_s", ValueType::kFloat, "300.0",
         "seconds a rendezvous or collective waits for the other ranks before failing", 1e-3, 1e6);
  AddKey(&s, "carbon.region", ValueType::kString, "''",
         "grid region: one of README's 26 countries (ISO 3166 code or name, e.g. FR, US) or "
         "world; empty: the world average as a default");
  AddKey(&s, "carbon.intensity_g_per_kwh", ValueType::kString, "auto",
         "grid intensity override in g CO2e/kWh, or auto (from carbon.region)", {}, {}, {}, false,
         kIntensityAccepted);
  AddKey(&s, "carbon.intensity_csv", ValueType::kString, "''",
         "optional CSV of timestamp,g_per_kwh integrated over the run (empty: none)");
  AddKey(&s, "carbon.pue", ValueType::kFloat, internal::FormatShortestDouble(energy::kDefaultPue),
         "power usage effectiveness of the facility (1: the machine's own draw)", 1.0, 10.0);
  AddCheckpointKeys(&s);
  AddAlgoKeys(algo, &s);
  // The other algorithms' own keys, so that one of them names them: "buffer_size: got '100';
  // unknown key for algo ppo (a key of dqn, sac); every key with its default: ...".
  std::map<std::string, std::string> owners;  // key -> "dqn, sac"
  for (const std::string& id : ids) {
    if (id == algo) continue;
    ConfigSchema other;
    AddAlgoKeys(id, &other);
    for (const KeySpec& spec : other.keys()) {
      // (A shorthand of this algorithm, e.g. PPO's policy_kwargs.net_arch, is not unknown.)
      if (s.Find(spec.key) == nullptr && s.ShorthandTargets(spec.key) == nullptr)
        owners[spec.key] += (owners[spec.key].empty() ? "" : ", ") + id;
    }
  }
  for (const auto& [key, algos] : owners) {
    s.AddUnknownKeyNote(key, "for algo " + algo + " (a key of " + algos + ")");
  }
  s.set_key_list_hint("`greenrl keys --algo " + algo + "`");  // cli/keys_command.cc
  // SB3's gSDE options: greenrl has their defaults (full_std=True, use_expln=False), which SB3
  // and rl-zoo files may write out, and the actor's last hidden features as gSDE's.
  if (s.Find("use_sde") != nullptr) {
    s.AddDefaultOnlyKey("policy_kwargs.full_std", true,
                        "greenrl's gSDE has SB3's default, one std per (feature, action) pair");
    s.AddDefaultOnlyKey("policy_kwargs.use_expln", false,
                        "greenrl's gSDE has SB3's default, std = exp(log_std)");
  }
  // SB3's policy_kwargs that greenrl's networks have at SB3's defaults
  // (stable_baselines3/sac/policies.py SACPolicy: n_critics=2, share_features_extractor=False;
  // stable_baselines3/common/policies.py ActorCriticPolicy: share_features_extractor=True,
  // squash_output=False), which rl-zoo files may write out.
  if (algo == "sac") {
    s.AddDefaultOnlyIntKey("policy_kwargs.n_critics", 2,
                           "greenrl's SAC has SB3's default, two critics (clipped double Q)");
    s.AddDefaultOnlyKey("policy_kwargs.share_features_extractor", false,
                        "greenrl's SAC has SB3's default: the actor and the critics share no "
                        "layers");
  }
  if (algo == "ppo") {
    s.AddDefaultOnlyKey("policy_kwargs.share_features_extractor", true,
                        "greenrl's PPO has SB3's default: pi and vf share only the flatten "
                        "features extractor, which has no parameters, and are separate MLPs");
    s.AddDefaultOnlyKey("policy_kwargs.squash_output", false,
                        "greenrl's PPO has SB3's default: Gaussian actions clipped to the Box, "
                        "not tanh-squashed");
  }
  if (s.Find("buffer_size") != nullptr) {
    // SB3 2.7's off-policy n_steps (DLR-RM/stable-baselines3 pull request 2144: n-step returns
    // through NStepReplayBuffer; default 1, one-step TD targets).
    std::string name = algo;
    std::transform(name.begin(), name.end(), name.begin(), ::toupper);
    s.AddDefaultOnlyIntKey("n_steps", 1,
                           "greenrl's " + name +
                               " has SB3's default, one-step TD targets; the n-step returns of "
                               "SB3 >= 2.7's n_steps above 1 are not implemented");
    s.AddDefaultOnlyKey("optimize_memory_usage", false,
                        "greenrl's replay buffer has SB3's default, next_obs kept per transition");
    s.AddDefaultOnlyKey("replay_buffer_kwargs.handle_timeout_termination", true,
                        "greenrl's replay buffer has SB3's default, terminated and truncated kept "
                        "apart: the TD target bootstraps through truncation");
  }
  for (const char* key :
       {"policy_kwargs.use_expln", "policy_kwargs.sde_net_arch", "policy_kwargs.full_std"}) {
    if (s.Find(key) == nullptr && s.DefaultOnlyKey(key) == nullptr) {
      s.AddUnknownKeyNote(key,
                          "(SB3's gSDE option, which greenrl does not have: it uses exp, the full "
                          "[features, actions] std and the actor's last hidden features)");
    }
  }
  // rl-zoo's VecNormalize gamma: greenrl's is the algorithm's (NormalizeOptionsFrom).
  s.AddUnknownKeyNote("normalize_kwargs.gamma",
                      "(VecNormalize's gamma is the algorithm's gamma in greenrl, as rl-zoo "
                      "passes it)");
  // rl-zoo's keys for Python objects greenrl does not have (rl_zoo3/exp_manager.py).
  for (const char* key :
       {"env_wrapper", "frame_stack", "callback", "vec_env_wrapper", "replay_buffer_class",
        "replay_buffer_kwargs", "noise_type", "noise_std", "monitor_kwargs"}) {
    // (replay_buffer_kwargs.handle_timeout_termination: SB3's default, taken above.)
    if (s.Find(key) == nullptr && s.UnknownKeyNote(key) == nullptr) {
      s.AddUnknownKeyNote(key,
                          "(rl-zoo's, for Python wrappers, callbacks, replay buffers or "
                          "action noise, which greenrl does not have)");
    }
  }
  // rl-zoo's gym.make arguments: greenrl's envs are the registered ids with Gymnasium's defaults.
  if (s.Find("env_kwargs") == nullptr && s.UnknownKeyNote("env_kwargs") == nullptr) {
    s.AddUnknownKeyNote("env_kwargs",
                        "(rl-zoo's arguments to the env's constructor, such as "
                        "terminate_when_unhealthy or reset_noise_scale; greenrl's envs take none: "
                        "each registered id runs with its Gymnasium defaults, e.g. Ant-v4 with "
                        "use_contact_forces=False, as README's \"MuJoCo locomotion\" describes "
                        "per env; a value equal to the default is refused too)");
  }
  // SB3 constructor arguments greenrl has no key for, each with what it does instead.
  for (const auto& [key, note] : std::initializer_list<std::pair<const char*, const char*>>{
           {"verbose", "(SB3's; greenrl prints its log lines unless --quiet is given)"},
           {"tensorboard_log",
            "(SB3's; greenrl always writes TensorBoard events into the run directory, --out)"},
           {"stats_window_size",
            "(SB3's; greenrl's rollout/ep_rew_mean window is SB3's default, 100 episodes)"},
           {"rollout_buffer_class", "(SB3's Python class option, which greenrl does not have)"},
           {"rollout_buffer_kwargs", "(SB3's Python class option, which greenrl does not have)"},
           {"optimize_memory_usage",
            "(SB3's replay buffer option, which greenrl does not have: its buffer keeps next_obs "
            "per transition, float32)"},
           {"action_noise", "(SB3's, for TD3/DDPG-style noise, which greenrl does not have)"},
           {"sde_support", "(an SB3 internal; use_sde turns gSDE on)"},
           {"policy_kwargs.optimizer_kwargs",
            "(SB3's optimiser arguments, which greenrl does not take: its Adam has SB3's "
            "defaults)"},
           {"policy_kwargs.optimizer_class", "(SB3's; greenrl's optimiser is Adam, SB3's default)"},
           {"policy_kwargs.n_critics", "(SB3's; greenrl's SAC has SB3's default, two critics)"},
           {"policy_kwargs.share_features_extractor",
            "(SB3's; greenrl's MlpPolicy networks share no layers, as SB3's default for SAC and "
            "PPO's separate pi and vf)"},
           // CleanRL's names (cleanrl/ppo.py, dqn.py, sac_continuous_action.py Args).
           {"update_epochs", "(CleanRL's; SB3 and greenrl call it n_epochs)"},
           {"clip_coef", "(CleanRL's; SB3 and greenrl call it clip_range)"},
           {"num_minibatches",
            "(CleanRL's; SB3 and greenrl give batch_size, the minibatch's size: n_envs x n_steps "
            "/ num_minibatches)"},
           {"norm_adv", "(CleanRL's; SB3 and greenrl call it normalize_advantage)"},
           {"clip_vloss",
            "(CleanRL's; SB3 and greenrl give clip_range_vf, the value clip range itself)"},
           {"anneal_lr", "(CleanRL's; SB3 and greenrl write learning_rate=lin_<initial rate>)"},
           {"num_steps", "(CleanRL's; SB3 and greenrl call it n_steps)"},
           {"target_network_frequency",
            "(CleanRL's; SB3 and greenrl call it target_update_interval)"},
           {"start_e", "(CleanRL's; SB3 and greenrl call it exploration_initial_eps)"},
           {"end_e", "(CleanRL's; SB3 and greenrl call it exploration_final_eps)"},
           {"train_frequency", "(CleanRL's; SB3 and greenrl call it train_freq)"},
           {"policy_lr", "(CleanRL's; SB3 and greenrl use one learning_rate for every network)"},
           {"q_lr", "(CleanRL's; SB3 and greenrl use one learning_rate for every network)"},
           {"alpha", "(CleanRL's; SB3 and greenrl call it ent_coef, a number or auto)"},
           {"autotune", "(CleanRL's; SB3 and greenrl write ent_coef=auto)"}}) {
    if (s.Find(key) == nullptr && s.UnknownKeyNote(key) == nullptr &&
        s.DefaultOnlyKey(key) == nullptr) {
      s.AddUnknownKeyNote(key, note);
    }
  }
  // PyTorch's optimiser argument, which SB3, rl-zoo and greenrl call learning_rate.
  if (s.Find("learning_rate") != nullptr) {
    s.AddUnknownKeyNote("lr", "(SB3, rl-zoo and greenrl call it learning_rate)");
  }
  return s;
}

energy::MeterOptions MeterOptionsFrom(const Config& config) {
  energy::MeterOptions o;
  o.meter = config.GetString("energy.meter");
  o.powercap_root = config.GetString("energy.powercap_root");
  o.watts_per_core = config.GetFloat("energy.watts_per_core");
  o.gpu = config.GetString("energy.gpu");
  o.nvml_library = config.GetString("energy.nvml_library");
  return o;
}

dist::DistOptions DistOptionsFrom(const Config& config) {
  dist::DistOptions o;
  o.backend = config.GetString("dist.backend");
  o.timeout_s = config.GetFloat("dist.timeout_s");
  return o;
}

env::NormalizeOptions NormalizeOptionsFrom(const Config& config) {
  env::NormalizeOptions o;
  o.norm_obs = config.GetBool("normalize_kwargs.norm_obs");
  o.norm_reward = config.GetBool("normalize_kwargs.norm_reward");
  o.clip_obs = config.GetFloat("normalize_kwargs.clip_obs");
  o.clip_reward = config.GetFloat("normalize_kwargs.clip_reward");
  o.gamma = config.GetFloat("gamma");  // rl-zoo passes the algorithm's gamma to VecNormalize
  return o;
}

energy::BudgetOptions BudgetOptionsFrom(const Config& config) {
  energy::BudgetOptions o;
  o.budget_wh = config.GetFloat("energy.budget_wh");
  o.warmup_steps = config.GetInt("energy.budget.warmup_steps");
  o.reduced_precision_at = config.GetFloat("energy.budget.reduced_precision_at");
  o.skip_at = config.GetFloat("energy.budget.skip_at");
  o.throttle_at = config.GetFloat("energy.budget.throttle_at");
  o.throttle_duty_cycle = config.GetFloat("energy.budget.throttle_duty_cycle");
  o.throttle_env_threads_fraction = config.GetFloat("energy.budget.throttle_env_threads_fraction");
  o.stop_margin = config.GetFloat("energy.budget.stop_margin");
  return o;
}

energy::CarbonOptions CarbonOptionsFrom(const Config& config) {
  energy::CarbonOptions o;
  const std::string& region = config.GetString("carbon.region");
  // Empty (the schema's default, also as written to config.yaml, so a resumed run keeps it) is
  // the world average as a default (intensity_is_default: the summary suggests setting a
  // region); "world" is the same average as an explicit choice.
  o.region = region;
  const std::string& intensity = config.GetString("carbon.intensity_g_per_kwh");
  if (intensity != "auto") {
    const auto value = internal::ParseYamlNumber(intensity);
    if (!value) {
      throw ConfigError("carbon.intensity_g_per_kwh", intensity, kIntensityAccepted);
    }
    o.intensity_g_per_kwh = *value;
  }
  o.pue = config.GetFloat("carbon.pue");
  return o;
}

std::optional<double> RewardThresholdFrom(const Config& config) {
  const std::string& text = config.GetString("eval.reward_threshold");
  if (text == "off") return std::nullopt;
  double threshold = 0.0;
  if (text == "env") {
    const env::EnvSpec& spec = env::FindEnvSpec(config.GetString("env_id"));
    if (!spec.reward_threshold) {
      std::string with;
      for (const env::EnvRegistration& entry : env::RegisteredEnvs()) {
        if (!entry.spec->reward_threshold) continue;
        with += fmt::format("{}{} ({:g})", with.empty() ? "" : ", ", entry.spec->id,
                            *entry.spec->reward_threshold);
      }
      throw ConfigError("eval.reward_threshold", text,
                        "off or a number: " + spec.id +
                            " has no reward_threshold in Gymnasium's registry (env works for " +
                            with + ")");
    }
    threshold = *spec.reward_threshold;
  } else {
    const std::optional<double> value = internal::ParseYamlNumber(text);
    if (!value || !std::isfinite(*value)) {
      throw ConfigError("eval.reward_threshold", text, kRewardThresholdAccepted);
    }
    threshold = *value;
  }
  if (config.GetInt("eval.freq") == 0) {
    throw ConfigError("eval.reward_threshold", text,
                      "off while eval.freq is 0: only periodic evaluations can stop a run (set "
                      "eval.freq too, e.g. eval.freq=10000)");
  }
  return threshold;
}

namespace {

// "CartPole-v1, Acrobot-v1, ...": the registered envs whose action space is Discrete (discrete
// true) or Box (false), for the message of an algorithm given the other kind.
std::string RegisteredEnvsWithActions(bool discrete) {
  std::string ids;
  for (const env::EnvRegistration& entry : env::RegisteredEnvs()) {
    if (entry.spec->discrete_actions() != discrete) continue;
    ids += (ids.empty() ? "" : ", ") + entry.spec->id;
  }
  return ids;
}

}  // namespace

void CheckAlgorithmFitsEnv(const Config& config) {
  const std::string& algo_id = config.GetString("algo");
  const env::EnvSpec& spec = env::FindEnvSpec(config.GetString("env_id"));
  // The message also says what trains the env given: PPO takes both kinds.
  if (algo_id == "dqn" && !spec.discrete_actions()) {
    throw ConfigError("env_id", spec.id,
                      "an env with a Discrete action space for DQN: " +
                          RegisteredEnvsWithActions(/*discrete=*/true) + " (" + spec.id +
                          " has a Box action space, which --algo ppo or --algo sac trains)");
  }
  if (algo_id == "sac" && spec.discrete_actions()) {
    throw ConfigError("env_id", spec.id,
                      "an env with a Box action space for SAC (continuous actions): " +
                          RegisteredEnvsWithActions(/*discrete=*/false) + " (" + spec.id +
                          " has a Discrete action space, which --algo ppo or --algo dqn trains)");
  }
}

namespace {
Config LoadRunConfigUnnamed(const std::string& yaml_path,
                            const std::vector<std::string>& given_overrides,
                            std::optional<int64_t> seed) {
  // A preset file with no key at all is a mistake (the wrong file, a failed copy), not a wish
  // for the defaults, which an empty --config gives.
  // rl-zoo's Python hyperparameter files (rl_zoo3's hyperparams/python/*.py) are code, not YAML.
  if (std::filesystem::path(yaml_path).extension() == ".py") {
    throw ConfigError("--config", yaml_path,
                      "a YAML preset or an rl-zoo .yml file (rl-zoo's Python hyperparameter "
                      "files are code greenrl does not run: give rl-zoo's hyperparams/<algo>.yml, "
                      "or write the values as YAML)");
  }
  const std::optional<YAML::Node> root = PeekYaml(yaml_path);
  // rl-zoo's Python values given to --set as such (policy_kwargs=dict(...),
  // normalize=dict(norm_obs=...) or {'norm_obs': ...}) become greenrl's keys, as in an rl-zoo
  // file.
  // Such a whole value replaces the whole section, as rl-zoo's --hyperparams does
  // (hyperparams.update): its keys that the value does not give return to their defaults
  // (SectionResets), where a dotted --set policy_kwargs.net_arch=... changes that key alone.
  // The resets follow the whole value they belong to, so that a later --set wins over them and
  // they over an earlier one, as any later --set does.
  std::vector<std::string> set_overrides;
  struct WholeValue {
    size_t begin, end;    // its overrides, [begin, end) of set_overrides
    std::string section;  // the section it replaces
  };
  std::vector<WholeValue> wholes;
  for (const std::string& text : given_overrides) {
    const size_t eq = text.find('=');
    const std::string key = text.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
    std::vector<std::string> expanded = {text};
    const bool dict = value.rfind("dict(", 0) == 0 || value.rfind("{", 0) == 0;
    std::string section;
    if (key == "policy_kwargs" && dict) {
      expanded = ZooPolicyKwargs(PeekValueAlgo(yaml_path, root, given_overrides), value);
      section = "policy_kwargs";
    } else if (key == "normalize" && dict) {
      expanded = ZooNormalize(value);
      section = "normalize_kwargs";
    } else if (key == "replay_buffer_kwargs" && dict) {  // no keys of its own to reset
      expanded = ZooReplayBufferKwargs(value);
    }
    if (!section.empty()) {
      wholes.push_back({set_overrides.size(), set_overrides.size() + expanded.size(), section});
    }
    set_overrides.insert(set_overrides.end(), expanded.begin(), expanded.end());
  }
  // set_overrides with each whole value's resets after it (SectionResets of the keys the value
  // itself gives); in an rl-zoo file, where normalize is one value, a plain --set normalize=...
  // replaces normalize_kwargs too.
  auto with_resets = [&](const ConfigSchema& schema, bool zoo_file) {
    std::vector<WholeValue> all = wholes;
    for (size_t i = 0; zoo_file && i < set_overrides.size(); ++i) {
      const bool in_whole = std::any_of(wholes.begin(), wholes.end(), [&](const WholeValue& w) {
        return i >= w.begin && i < w.end;
      });
      if (!in_whole && set_overrides[i].rfind("normalize=", 0) == 0) {
        all.push_back({i, i + 1, "normalize_kwargs"});
      }
    }
    std::vector<std::string> out;
    auto add_resets = [&](const WholeValue& w) {
      const std::vector<std::string> own(set_overrides.begin() + static_cast<ptrdiff_t>(w.begin),
                                         set_overrides.begin() + static_cast<ptrdiff_t>(w.end));
      const std::vector<std::string> resets = SectionResets(schema, {w.section}, own);
      out.insert(out.end(), resets.begin(), resets.end());
    };
    for (size_t i = 0; i <= set_overrides.size(); ++i) {
      for (const WholeValue& w : all) {  // an empty value (dict()): its resets alone, here
        if (w.begin == i && w.end == i) add_resets(w);
      }
      if (i == set_overrides.size()) break;
      out.push_back(set_overrides[i]);
      for (const WholeValue& w : all) {
        if (w.begin < w.end && w.end == i + 1) add_resets(w);
      }
    }
    return out;
  };
  if (root && (root->IsNull() || (root->IsMap() && root->size() == 0))) {
    throw ConfigError("--config", yaml_path,
                      "a preset with its keys, e.g. 'algo: ppo', 'env_id: CartPole-v1' (the "
                      "file holds none; leave --config out to train the defaults)");
  }
  Config config = [&] {
    std::vector<std::string> env_ids;
    for (const auto& r : env::RegisteredEnvs()) env_ids.push_back(r.spec->id);
    if (const std::optional<ZooSection> zoo = ReadZooSection(yaml_path, set_overrides, env_ids)) {
      // An rl-zoo file: its env's section, as overrides before the caller's.
      const ConfigSchema schema = BuildSchema(zoo->algo);
      // rl-zoo's normalize is one value (true, false or a kwargs dict), so a --set normalize
      // of any form replaces the section's whole normalize, kwargs included.
      set_overrides = with_resets(schema, /*zoo_file=*/true);
      // A section key that the caller's --set replaces is dropped unparsed, as a preset file's
      // (algo and env_id, which the section repeats from the file's name and --env, stay).
      std::set<std::string> overridden;
      for (const std::string& text : set_overrides) {
        for (std::string& key : Config::KeysSetBy(schema, text)) {
          if (key != "algo" && key != "env_id") overridden.insert(std::move(key));
        }
      }
      std::vector<std::string> section;
      try {  // the section's own keys first, so that an error in them names the file
        for (const std::string& text : zoo->overrides) {
          const std::vector<std::string> keys = Config::KeysSetBy(schema, text);
          const bool replaced = std::all_of(keys.begin(), keys.end(), [&](const std::string& key) {
            return overridden.count(key) > 0 && schema.Find(key) != nullptr;
          });
          if (!replaced) section.push_back(text);
        }
        Config::Load(schema, "", section);
      } catch (const ConfigError& e) {
        // algo and env_id come from the file's name and --env, not from the section.
        if (e.field() == "algo" || e.field() == "env_id") throw;
        throw e.WithSource(yaml_path + ", section " + zoo->env_id);
      }
      std::vector<std::string> overrides = section;
      overrides.insert(overrides.end(), set_overrides.begin(), set_overrides.end());
      return Config::Load(schema, "", overrides);
    }
    const std::string algo = PeekAlgo(root, set_overrides);
    const ConfigSchema schema = BuildSchema(algo);
    set_overrides = with_resets(schema, /*zoo_file=*/false);
    try {
      return Config::Load(schema, yaml_path, set_overrides);
    } catch (const ConfigError& e) {
      // A preset of another algorithm (--algo ppo on configs/sac/hopper.yaml): its own keys are
      // unknown to this one, which the error alone would not explain.
      const std::string file_algo = PeekAlgo(root, {});
      const bool preset_algo = root && root->IsMap() && (*root)["algo"];
      if (!preset_algo || file_algo == algo ||
          std::string(e.what()).find("unknown key") == std::string::npos) {
        throw;
      }
      // greenrl's presets are configs/<algo>/<env>.yaml: the same env's preset of `algo`, when
      // there is one beside it.
      namespace fs = std::filesystem;
      const fs::path given(yaml_path);
      const fs::path sibling = given.parent_path().parent_path() / algo / given.filename();
      std::error_code ec;
      const std::string fix =
          given.parent_path().filename() == file_algo && fs::is_regular_file(sibling, ec)
              ? "--config " + sibling.string() + ", the same env's " + algo + " preset"
              : "another preset, or no --config for SB3's defaults (`greenrl keys --algo " + algo +
                    "` lists them)";
      throw e.WithNote(fmt::format(
          "{} is a {} preset (its algo: {}), and algo {} (--algo or --set algo=) replaces its "
          "algo while its {} keys stay: give {}",
          yaml_path, file_algo, file_algo, algo, file_algo, fix));
    }
  }();
  if (seed) config.Set("seed", std::to_string(*seed));
  // Cross-module checks, so nothing fails after the run dir exists (or ranks have connected).
  CheckAlgorithmFitsEnv(config);
  energy::ValidateMeterOptions(MeterOptionsFrom(config));
  energy::ValidateCarbonOptions(CarbonOptionsFrom(config));
  energy::ValidateBudgetOptions(BudgetOptionsFrom(config));
  RewardThresholdFrom(config);
  const std::string& series = config.GetString("carbon.intensity_csv");
  if (!series.empty() && config.GetString("carbon.intensity_g_per_kwh") != "auto") {
    throw ConfigError("carbon.intensity_g_per_kwh", config.GetString("carbon.intensity_g_per_kwh"),
                      "auto while carbon.intensity_csv is set (the series prices the energy; set "
                      "one of the two)");
  }
  if (!series.empty()) {
    try {
      energy::IntensitySeries::LoadCsv(series);
    } catch (const ConfigError& e) {  // named by the key that gave the path, and its file
      std::string why = e.what();
      const std::string prefix = "intensity series " + series + ": ";
      if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
      ConfigError error("carbon.intensity_csv", series,
                        "a readable carbon-intensity series (" + why + ")");
      const bool set_here =
          std::any_of(set_overrides.begin(), set_overrides.end(), [&](const std::string& text) {
            const std::vector<std::string> keys = Config::KeysSetBy(config.schema(), text);
            return std::find(keys.begin(), keys.end(), "carbon.intensity_csv") != keys.end();
          });
      if (!set_here && !yaml_path.empty()) error = error.WithSource(yaml_path);
      // As every path a run is given (trained_agent too), not from the config file's folder.
      if (std::filesystem::path(series).is_relative()) {
        error = error.WithNote("a relative path is read from the working directory, " +
                               std::filesystem::current_path().string());
      }
      throw error;
    }
  }
  if (config.GetString("algo") == "ppo") algo::PpoConfigFromConfig(config);
  if (config.GetString("algo") == "dqn") algo::DqnConfigFromConfig(config);
  if (config.GetString("algo") == "sac") algo::SacConfigFromConfig(config);
  return config;
}
}  // namespace

namespace {
// TrainedByProgramLine's text around the program's name, which LoadRunConfig reads back.
constexpr char kTrainedBy[] = "# trained by ";
constexpr char kRegistersEnvs[] = ", a program that registers envs of its own";
}  // namespace

std::string TrainedByProgramLine(const std::string& program) {
  return kTrainedBy + program + kRegistersEnvs + ": run its train, eval and export";
}

Config LoadRunConfig(const std::string& yaml_path, const std::vector<std::string>& given_overrides,
                     std::optional<int64_t> seed) {
  try {
    return LoadRunConfigUnnamed(yaml_path, given_overrides, seed);
  } catch (const ConfigError& e) {
    // An env id unknown here, in a run's config.yaml that another program wrote: name it.
    std::string first_line;
    if (e.field() != "env_id" || yaml_path.empty()) throw;
    std::getline(std::ifstream(yaml_path), first_line);
    const std::string start = kTrainedBy;
    const size_t comma = first_line.find(kRegistersEnvs);
    if (first_line.rfind(start, 0) != 0 || comma == std::string::npos) throw;
    const std::string program = first_line.substr(start.size(), comma - start.size());
    if (program == ProgramName()) throw;
    throw e.WithNote("this run was trained by " + program +
                     ", which registers envs of its own: use that program");
  }
}

}  // namespace greenrl::train
