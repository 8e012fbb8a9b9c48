// zoo_hyperparams.h: rl-baselines3-zoo hyperparameter files read as they are, so that a user's
// hyperparams/ppo.yml trains in greenrl without rewriting (README "Using it").
//
// An rl-zoo file (rl_zoo3/hyperparams/<algo>.yml) is a map from env id to that env's
// hyperparameters, with SB3's names and rl-zoo's value forms:
//
//   CartPole-v1:
//     n_envs: 8
//     n_timesteps: !!float 1e5
//     learning_rate: lin_0.001
//     policy_kwargs: "dict(net_arch=[64, 64], activation_fn=nn.ReLU)"
//     normalize: "{'norm_obs': True, 'norm_reward': False}"
//
// The algorithm is the file's name (ppo.yml) unless `algo` is given, and the env is picked with
// `env_id` (`--env` on the command line). rl-zoo evaluates policy_kwargs and a string `normalize`
// as Python (rl_zoo3/exp_manager.py, _preprocess_hyperparams); greenrl reads the literals they
// hold (numbers, strings, True/False/None, lists, tuples, dict(...) and {...}, names such as
// nn.ReLU, # comments) and turns them into its own keys; anything else is an error that names
// the text. Written as YAML maps instead, they are read the same way. YAML merge keys
// (`<<: *defaults`) are resolved, SB3's train_freq tuple [n, "step"] is n, and any
// "<word>_<value>" of learning_rate, clip_range or clip_range_vf is lin_<value>, as rl-zoo reads
// it. Torch-free.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace greenrl::train {

// One env's section of an rl-zoo file, as greenrl `key=value` overrides.
struct ZooSection {
  std::string algo;    // the last "algo=" of the caller's overrides, else the file's stem
  std::string env_id;  // the section's key
  // "algo=<algo>", "env_id=<env>", then the section's keys in file order, as greenrl keys
  // (policy_kwargs and normalize expanded, see below); values as YAML text.
  std::vector<std::string> overrides;
};

// Reads `path` as an rl-zoo hyperparameter file.
// Args: path: a YAML file (empty: none); set_overrides: the caller's "key=value" overrides, whose
//   last "env_id=" picks the section and last "algo=" the algorithm.
// Returns: nullopt when the file is not an rl-zoo file (Config::Load reads it as a greenrl
//   preset and reports its errors): unreadable, empty, not a map, a top-level `algo` or
//   `env_id` key, or no top-level map under a versioned env id ("CartPole-v1"); else the
//   section. Other top-level entries (a stray scalar, an empty section) are not sections.
//   known_env_ids: the env ids greenrl can train; when given, the errors below list only the
//   sections for them and count the others.
// Errors: ConfigError("--env", "", "the env id of one of the file's sections: ...") when no
//   env_id is given; ConfigError("--env", id, "an env id with a section of hyperparameters in
//   <path>: ...") when the file has none for it; ConfigError("algo", "", ...) when no algo is
//   given and the file's name is not ppo.yml, dqn.yml or sac.yml (.yaml too), ("algo", stem, ...)
//   when it is another rl-zoo algorithm's (a2c.yml, td3.yml, ...); ConfigError("policy_kwargs",
//   "normalize" or "train_freq", text, ...) for a value it cannot read (ZooPolicyKwargs,
//   ZooNormalize; train_freq as [n, "episode"]).
std::optional<ZooSection> ReadZooSection(const std::string& path,
                                         const std::vector<std::string>& set_overrides,
                                         const std::vector<std::string>& known_env_ids = {});

// An rl-zoo policy_kwargs text as greenrl overrides for `algo` ("ppo", "dqn", "sac").
// - net_arch=[64, 64]: PPO policy_kwargs.net_arch.pi and .vf, DQN/SAC policy_kwargs.net_arch;
//   net_arch=dict(pi=[...], vf=[...]) (SB3 >= 1.8) or [dict(pi=[...], vf=[...])] (older SB3):
//   PPO's pi and vf; dict(pi=[...], qf=[...]) for SAC when pi == qf (greenrl's SAC has one list
//   for its actor and critics);
// - activation_fn=nn.ReLU (or th.nn.ReLU, torch.nn.ReLU): policy_kwargs.activation_fn=relu, the
//   class name lower-cased (the schema accepts tanh and relu and names them);
// - any other keyword k=v: policy_kwargs.k=v (ortho_init, log_std_init; the schema refuses
//   keywords greenrl does not have, by name).
// Errors: ConfigError("policy_kwargs", text, ...) naming what it cannot read: a syntax error with
//   its position, a call other than dict(...), a net_arch of another form, SAC's pi != qf.
std::vector<std::string> ZooPolicyKwargs(const std::string& algo, const std::string& text);

// An rl-zoo `normalize` value as greenrl overrides: true/false (YAML or Python spelling) ->
// "normalize=true|false"; a Python dict text such as "{'norm_obs': True, 'norm_reward': False}"
// -> "normalize=true" and normalize_kwargs.<key>=<value> per entry (the schema checks the keys:
// norm_obs, norm_reward, clip_obs, clip_reward).
// Errors: ConfigError("normalize", text, ...) for any other text.
std::vector<std::string> ZooNormalize(const std::string& text);

// An rl-zoo `replay_buffer_kwargs` value (Python dict text, "dict(handle_timeout_termination=
// True)") as greenrl overrides, replay_buffer_kwargs.<key>=<value> per entry: the schema takes
// SB3's default handle_timeout_termination=True (greenrl's buffer has it) and refuses the rest
// by name. Errors: ConfigError("replay_buffer_kwargs", text, ...) for a text that is no dict.
std::vector<std::string> ZooReplayBufferKwargs(const std::string& text);

// SB3's train_freq tuple written in Python, as rl-zoo's -params gives it, (4, 'step') or
// [4, "step"], as its number of vec-env steps, "4". nullopt for any other text (the episode
// unit, a plain number, what the parser cannot read), which callers pass on as given.
std::optional<std::string> ZooTrainFreqSteps(const std::string& text);

// rl-zoo's schedule text of learning_rate, clip_range or clip_range_vf as greenrl writes it: any
// "<word>_<value>" (one '_', a number after it) is "lin_<value>", as rl_zoo3/exp_manager.py's
// _preprocess_schedules reads it, whatever the word ("linear_3e-4", "cos_0.1"). Any other key or
// text is returned as given, for Schedule::Parse to read or refuse by name.
std::string ZooScheduleText(const std::string& key, const std::string& text);

// SB3's None for a PPO key whose None means off, as greenrl's 0 does: "target_kl=0" or
// "clip_range_vf=0" when `key` is one of them and `text` is None or null; nullopt otherwise.
std::optional<std::string> ZooNoneAsOff(const std::string& key, const std::string& text);

// The algorithm an rl-zoo hyperparameter file's name names: ppo.yml (or .yaml) -> "ppo", and so
// for dqn and sac; "" for a name that is not an algorithm's.
// Errors: ConfigError("algo", ...) for another rl-zoo algorithm's file (a2c.yml, td3.yml, ...).
std::string AlgoOfFileName(const std::string& path);

// rl-baselines3-zoo's other algorithms (rl_zoo3/hyperparams/<name>.yml: a2c, ars, ..., td3, tqc,
// trpo), which greenrl does not implement; for messages that name them as such.
const std::vector<std::string>& OtherZooAlgorithms();

}  // namespace greenrl::train
