// run_config.h: the schema of a `greenrl train` config (common keys + the algorithm's keys) and
// its loading from a YAML preset, --set overrides and CLI flags, validated before any work.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "greenrl/core/config.h"
#include "greenrl/dist/process_group.h"
#include "greenrl/energy/budget.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/energy/select.h"
#include "greenrl/env/wrappers.h"

namespace greenrl::train {

// Algorithms `greenrl train` knows: {"ppo", "dqn", "sac"}.
const std::vector<std::string>& AlgorithmIds();

// The accepted keys for `algo`: the common keys (algo, env_id, seed, n_envs, n_timesteps,
// threads.*, eval.*, energy.*, carbon.*) followed by the algorithm's own. env_id's default is
// CartPole-v1, Pendulum-v1 for SAC (which needs Box actions).
// Errors: ConfigError("algo", algo, "one of: ppo, dqn, sac", with a "did you mean" guess) for an
//   unknown algorithm; another rl-zoo algorithm (a2c, td3, ...) is named as one greenrl does not
//   have.
ConfigSchema BuildSchema(const std::string& algo);

// Checks that `algo` supports `env_id`'s action space: DQN needs a Discrete one, SAC a Box one
// (PPO takes both; algo::MakePpo refuses a Box with an infinite bound).
// Errors: ConfigError("env_id", id, "an env with a Discrete action space for DQN: CartPole-v1,
//   Acrobot-v1, MountainCar-v0") and the Box counterpart for SAC, listing the registered envs
//   that fit; FindEnvSpec's ConfigError for an unknown env id.
void CheckAlgorithmFitsEnv(const Config& config);

// Loads a run config: reads `algo` from the overrides or the file (default "ppo"), builds that
// algorithm's schema, loads and validates the file and overrides, applies `seed` when given, and
// checks cross-key and cross-module constraints (env id exists, the algorithm fits its action
// space, energy and carbon options, the algorithm's own checks) so that a config this returns
// can train.
// Args: yaml_path: a greenrl preset, or an rl-zoo hyperparameter file (hyperparams/ppo.yml:
//   one section per env id, zoo_hyperparams.h) whose section is picked by the overrides'
//   env_id, or empty for defaults; given_overrides: "key=value" texts, applied after the file
//   (rl-zoo's Python values policy_kwargs=dict(...) and normalize={...} are read as in an rl-zoo
//   file: ZooPolicyKwargs, ZooNormalize); seed: --seed, overriding the file's.
// Errors: ConfigError naming the key, the value and what is accepted (ReadZooSection's for an
//   rl-zoo file without env_id or algo); for an unknown env id in a file whose first line is
//   TrainedByProgramLine(P), P other than ProgramName(), the error also names P.
Config LoadRunConfig(const std::string& yaml_path, const std::vector<std::string>& given_overrides,
                     std::optional<int64_t> seed);

// config.yaml's first line for a run trained by a program of the user's own (ProgramName()
// other than "greenrl", which does not know that program's envs): "# trained by <program>, a
// program that registers envs of its own: run its train, eval and export".
std::string TrainedByProgramLine(const std::string& program);

// The energy and carbon options of a loaded config. Errors: CarbonOptionsFrom throws
// ConfigError("carbon.intensity_g_per_kwh", ...) for a value that is neither auto nor a number
// (the others read keys the schema validated).
energy::MeterOptions MeterOptionsFrom(const Config& config);
energy::CarbonOptions CarbonOptionsFrom(const Config& config);
energy::BudgetOptions BudgetOptionsFrom(const Config& config);
// eval.reward_threshold resolved: nullopt for "off"; the env's Gymnasium reward_threshold for
// "env" (env::EnvSpec::reward_threshold, from Gymnasium 1.0's registry: CartPole-v1 475,
// Acrobot-v1 -100, MountainCar-v0 -110, MountainCarContinuous-v0 90, HalfCheetah-v4 4800,
// Hopper-v4 3800; Pendulum-v1 has none); else the number. A run stops after the first periodic
// evaluation whose mean reward is >= it (SB3's StopTrainingOnRewardThreshold, SB3 2.4.1).
// Errors: ConfigError("eval.reward_threshold", text, ...) for text that is none of these, for
//   "env" on an env without a threshold (naming the envs that have one), and for any threshold
//   while eval.freq is 0.
std::optional<double> RewardThresholdFrom(const Config& config);
// The data-parallel options (dist.backend, dist.timeout_s).
dist::DistOptions DistOptionsFrom(const Config& config);
// VecNormalize options (normalize_kwargs.*, gamma from the algorithm's `gamma`).
env::NormalizeOptions NormalizeOptionsFrom(const Config& config);

}  // namespace greenrl::train
