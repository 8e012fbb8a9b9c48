// greenrl train: loads and validates the config, trains, prints the summary.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/presets.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/schedule.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/signals.h"
#include "greenrl/train/trainer.h"

namespace greenrl::cli {

namespace {

// The preset file's top-level `key` as text; "" when there is no preset, no such scalar, or the
// file does not read as YAML (Config::Load reports that). No errors.
std::string PresetScalar(const std::string& preset, const char* key) {
  if (preset.empty()) return "";
  try {
    const YAML::Node node = YAML::LoadFile(preset)[key];
    return node && node.IsScalar() ? node.Scalar() : "";
  } catch (const YAML::Exception&) {
    return "";
  }
}

// A greenrl preset names the env its hyperparameters were tuned for (its env_id, as rl-zoo's
// sections do); training another env with it (--env, --set env_id=) is allowed, and said on
// stderr: the line to say, or "" for the preset's own env, an rl-zoo file (whose sections are
// picked by env) or an unreadable file.
std::string PresetTunedForAnotherEnv(const std::string& preset, const Config& config) {
  const std::string tuned_for = PresetScalar(preset, "env_id");
  const std::string& env_id = config.GetString("env_id");
  if (tuned_for.empty() || tuned_for == env_id) return "";
  // Another version of the same task (Hopper-v4's preset on Hopper-v5): rl-zoo's section names
  // the version the preset was tuned on, so the hint is that greenrl has none for this one.
  const bool other_version =
      WithoutVersion(tuned_for) == WithoutVersion(env_id) && WithoutVersion(env_id) != env_id;
  // Where greenrl has a preset of this algorithm for env_id itself, the hint names it.
  const std::string own = TunedPreset(config.GetString("algo"), env_id);
  const std::string own_steps = own.empty() ? "" : PresetTimesteps(own);
  const std::string steps = own_steps.empty() ? "" : ", n_timesteps " + own_steps;
  return fmt::format(
      "training {} with {}, a preset tuned for {}: its hyperparameters may not suit {} ({})",
      env_id, preset, tuned_for, env_id,
      !own.empty()    ? "greenrl's preset for " + env_id + " is `--config " + own + "`" + steps
      : other_version ? "greenrl has no preset for " + env_id
                      : std::string("rl-zoo's hyperparams/<algo>.yml has a section per env"));
}

// A greenrl preset names its algorithm (its algo); --algo or --set algo= may replace it, and the
// preset's keys then configure another algorithm (a SAC preset's learning_rate for PPO): said on
// stderr, as a preset of another env is. The line to say, or "" for the preset's own algorithm, a
// file without algo (rl-zoo's, whose name is the algorithm) or an unreadable file.
std::string PresetOfAnotherAlgo(const std::string& preset, const Config& config) {
  const std::string preset_algo = PresetScalar(preset, "algo");
  const std::string& algo = config.GetString("algo");
  if (preset_algo.empty() || preset_algo == algo) return "";
  const std::string& env_id = config.GetString("env_id");
  const std::string own = TunedPreset(algo, env_id);
  const std::string own_steps = own.empty() ? "" : PresetTimesteps(own);
  return fmt::format(
      "training {} with {}, a {} preset (its algo: {}): its values were tuned for {} and may not "
      "suit {} ({})",
      algo, preset, preset_algo, preset_algo, preset_algo, algo,
      own.empty() ? "`greenrl keys --algo " + algo + "` lists SB3's defaults"
                  : "greenrl's " + algo + " preset for " + env_id + " is `--config " + own + "`" +
                        (own_steps.empty() ? "" : ", n_timesteps " + own_steps));
}

struct TrainArgs {
  std::string config_path;
  std::string env_id;  // --env: env_id, rl-zoo's flag (picks an rl-zoo file's section)
  std::string algo;    // --algo: algo, rl-zoo's flag
  std::vector<std::string> sets;
  std::optional<int64_t> seed;
  std::string out;
  bool quiet = false;
  std::string resume;
  std::string trained_agent;  // --trained-agent: --set trained_agent= (rl-zoo's -i)
  bool dry_run = false;       // check everything, print the resolved config, write nothing
};

// train's flags that are --set key=value (rl-zoo's): (flag, key, value), value "" when absent.
std::array<std::tuple<std::string, std::string, std::string>, 3> KeyFlags(const TrainArgs& args) {
  return {{{"--algo", "algo", args.algo},
           {"--env", "env_id", args.env_id},
           {"--trained-agent", "trained_agent", args.trained_agent}}};
}

// An error about a value that --env, --algo or --trained-agent gave (they are --set env_id=,
// algo=, trained_agent=) names the flag the user typed beside the key: "--env (env_id): got
// 'Foo-v1'; one of: ...". Any other error, including one about the same key's value from the
// preset, is returned unchanged.
ConfigError NamedByFlag(const ConfigError& e, const TrainArgs& args) {
  for (const auto& [flag, key, value] : KeyFlags(args)) {
    if (value.empty() || e.field() != key) continue;
    if (std::string(e.what()) == ConfigError(key, value, e.accepted()).what()) {
      return ConfigError(flag + " (" + key + ")", value, e.accepted());
    }
  }
  return e;
}

// Returns f(), with a ConfigError it throws renamed by NamedByFlag. f: any callable taking no
// argument. Errors: what f throws (a ConfigError perhaps renamed).
template <class F>
auto NamingFlags(const TrainArgs& args, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const ConfigError& e) {
    throw NamedByFlag(e, args);
  }
}

// Keys a resume cannot change, each with what fixes it: the checkpoint holds the agent of that
// algo and network, the envs of that id and count, the normaliser statistics its policy was
// trained with, the replay buffer of that capacity, and generators seeded from that seed (the
// run directory is named after it too). Checked before the overrides are validated, where a
// change would fail on some other key first (a smaller n_envs on batch_size's bound, another algo
// on its keys, another net_arch as a checkpoint that does not load). Init-only keys
// (policy_kwargs.log_std_init, .ortho_init, SAC's ent_coef auto_<initial>) are refused too when
// they change. A shorthand or section override (policy_kwargs.net_arch for PPO's pi and vf,
// normalize_kwargs={...}) is judged on each key it sets. energy.watts_per_core is refused too:
// the CPU-time estimator's earlier segments were estimated at the run's own figure, and the
// totals add their joules to the new segment's.
// Returns: a note for each carbon key (carbon.region, carbon.intensity_g_per_kwh, carbon.pue)
// an --set changes: a fixed intensity and the PUE price the whole run's energy, earlier
// segments' included, so a resume re-prices all of it (carbon.intensity_csv, a series, prices
// each segment at its own time instead); and one for another n_timesteps when schedules follow
// the run's progress (lin_ schedules, DQN's epsilon), which then run over it.
// Errors: ConfigError(key, value, ...) for an --set key=V other than the run's own.
std::vector<std::string> CheckResumeOverrides(const std::string& run_dir,
                                              const std::vector<std::string>& sets) {
  const Config saved = train::LoadRunConfig(run_dir + "/config.yaml", {}, std::nullopt);
  static constexpr const char* kInitOnly =
      " only sets the agent's initial parameters, which a resume takes from its checkpoint, so "
      "it cannot change";
  static constexpr const char* kNetwork =
      " shapes the network whose trained parameters a resume continues, so it cannot change";
  static constexpr const char* kNormalized =
      " describes the observations the agent was trained on, whose normaliser statistics a "
      "resume continues, so it cannot change";
  struct Fixed {
    const char* key;
    std::string why;
  };
  // The checkpoint holds the envs, the generators and the trained agent, so these keys keep the
  // run's own values; a new init-only value would do nothing but make config.yaml describe
  // another run.
  static const Fixed kFixed[] = {
      {"n_envs", "a resume continues the saved envs, so n_envs cannot change"},
      {"seed", "a resume continues the saved generators, so seed cannot change"},
      {"algo", "a resume continues the saved agent, so algo cannot change"},
      {"env_id", "a resume continues the saved envs, so env_id cannot change"},
      {"trained_agent",
       "trained_agent only sets the agent a new run starts from, which a resume takes from its "
       "checkpoint, so it cannot change"},
      {"normalize", std::string("normalize") + kNormalized},
      {"normalize_kwargs.norm_obs", std::string("normalize_kwargs.norm_obs") + kNormalized},
      {"normalize_kwargs.clip_obs", std::string("normalize_kwargs.clip_obs") + kNormalized},
      {"normalize_kwargs.norm_reward",
       "a resume continues the saved normaliser, whose state holds the reward normalisation's "
       "running returns only with norm_reward on, so normalize_kwargs.norm_reward cannot "
       "change"},
      {"policy_kwargs.net_arch", std::string("policy_kwargs.net_arch") + kNetwork},
      {"policy_kwargs.net_arch.pi", std::string("policy_kwargs.net_arch.pi") + kNetwork},
      {"policy_kwargs.net_arch.vf", std::string("policy_kwargs.net_arch.vf") + kNetwork},
      {"policy_kwargs.activation_fn", std::string("policy_kwargs.activation_fn") + kNetwork},
      {"use_sde", std::string("use_sde") + kNetwork},
      {"buffer_size",
       "a resume continues the saved replay buffer of that capacity, so buffer_size cannot "
       "change"},
      {"policy_kwargs.log_std_init", std::string("policy_kwargs.log_std_init") + kInitOnly},
      {"policy_kwargs.ortho_init", std::string("policy_kwargs.ortho_init") + kInitOnly},
      {"energy.watts_per_core",
       "the CPU-time estimator estimated the run's earlier segments at it, and a resume adds "
       "their energy to the new segment's, so energy.watts_per_core cannot change (with a "
       "measuring meter it changes nothing)"}};
  // Every key an override sets (a shorthand's or section's each), with the override's value text
  // for the message; the last override of a key is the one the run would use.
  std::map<std::string, std::pair<std::string, std::string>> last;  // key -> (set key, value)
  for (const std::string& set : sets) {
    const size_t eq = set.find('=');
    if (eq == std::string::npos) continue;  // refused later, as any malformed --set
    for (const std::string& key : Config::KeysSetBy(saved.schema(), set)) {
      last[key] = {set.substr(0, eq), set.substr(eq + 1)};
    }
  }
  // A key's value as the run's config.yaml would give it.
  const auto text = [](const Config& config, const KeySpec& spec) -> std::string {
    switch (spec.type) {
      case ValueType::kInt:
        return std::to_string(config.GetInt(spec.key));
      case ValueType::kBool:
        return config.GetBool(spec.key) ? "true" : "false";
      case ValueType::kFloat:
        return fmt::format("{}", config.GetFloat(spec.key));
      case ValueType::kIntList:
        return fmt::format("[{}]", fmt::join(config.GetIntList(spec.key), ", "));
      default:
        return "'" + config.GetString(spec.key) + "'";
    }
  };
  // The values of these keys the newest resume checkpoint recorded (TrainerState::fixed_keys):
  // the run's own where config.yaml was edited since (which the resume refuses by name), so
  // that an --set of the recorded value is taken (and mends config.yaml).
  std::map<std::string, std::string> recorded;
  if (const auto checkpoints = train::ListCheckpoints(run_dir); !checkpoints.empty()) {
    if (const auto state = train::PeekTrainerState(checkpoints.back().second)) {
      recorded = state->fixed_keys;
    }
  }
  for (const Fixed& f : kFixed) {
    const auto it = last.find(f.key);
    const KeySpec* spec = saved.schema().Find(f.key);
    if (it == last.end() || spec == nullptr) continue;  // an unknown key is refused later
    const bool normalizer_key = std::string(f.key).rfind("normalize_kwargs.", 0) == 0;
    if (normalizer_key && !saved.GetBool("normalize")) continue;  // no statistics to keep
    Config changed = saved;
    changed.Set(it->second.first, it->second.second);  // a malformed value is refused here
    if (const auto own = recorded.find(f.key); own != recorded.end()) {
      if (changed.ValueText(f.key) == own->second) continue;
      Config as_recorded = saved;  // named as config.yaml's values are
      as_recorded.Set(f.key, own->second);
      throw ConfigError(f.key, it->second.second,
                        "the run's own " + text(as_recorded, *spec) + ": " + f.why);
    }
    if (text(changed, *spec) == text(saved, *spec)) continue;
    throw ConfigError(f.key, it->second.second,
                      "the run's own " + text(saved, *spec) + ": " + f.why);
  }
  // SAC's ent_coef auto_<initial>: the learned coefficient is in the checkpoint, so another
  // initial value would do nothing (a fixed value, or auto after a fixed one, does act).
  const auto ent = last.find("ent_coef");
  if (saved.GetString("algo") == "sac" && ent != last.end()) {
    Config changed = saved;
    changed.Set("ent_coef", ent->second.second);
    const std::string& mine = saved.GetString("ent_coef");
    const std::string& want = changed.GetString("ent_coef");
    if (mine.rfind("auto", 0) == 0 && want.rfind("auto", 0) == 0 && mine != want) {
      throw ConfigError("ent_coef", ent->second.second,
                        "the run's own '" + mine +
                            "': an auto ent_coef's initial value only starts the learned "
                            "coefficient, which a resume takes from its checkpoint, so it cannot "
                            "change (a fixed number can)");
    }
  }
  std::vector<std::string> notes;
  for (const char* key : {"carbon.region", "carbon.intensity_g_per_kwh", "carbon.pue"}) {
    const auto it = last.find(key);
    if (it == last.end()) continue;
    Config changed = saved;
    changed.Set(it->second.first, it->second.second);
    const KeySpec* spec = saved.schema().Find(key);
    if (spec == nullptr) continue;
    std::string mine = text(saved, *spec), want = text(changed, *spec);
    if (std::string(key) == "carbon.region") {  // the same region by another name: no change
      mine = energy::CanonicalRegion(saved.GetString(key));
      want = energy::CanonicalRegion(changed.GetString(key));
    }
    if (want == mine) continue;
    notes.push_back(fmt::format(
        "{} {} replaces the run's own {}: the carbon figures price the whole run's energy, its "
        "earlier segments' too, at the new value (metrics.csv's carbon/g_co2e steps to it at "
        "this resume); carbon.intensity_csv prices each segment at its own time instead",
        key, want, mine));
  }
  // The reward scaling's gamma and clip_reward (normalize: true with norm_reward): the saved
  // normaliser goes on with the new value, as a run from a trained agent does (trained_agent.cc
  // says the same), where rl-zoo's VecNormalize.load keeps the saved one's.
  if (saved.GetBool("normalize") && saved.GetBool("normalize_kwargs.norm_reward")) {
    for (const char* key : {"gamma", "normalize_kwargs.clip_reward"}) {
      const auto it = last.find(key);
      const KeySpec* spec = saved.schema().Find(key);
      if (it == last.end() || spec == nullptr) continue;
      Config changed = saved;
      changed.Set(it->second.first, it->second.second);
      if (text(changed, *spec) == text(saved, *spec)) continue;
      notes.push_back(fmt::format(
          "{} {} replaces the run's own {}: the saved normaliser's reward scaling goes on with it "
          "from the checkpoint ({}; rl-zoo's VecNormalize.load would keep the saved one's)",
          key, text(changed, *spec), text(saved, *spec),
          std::string(key) == "gamma" ? "its running returns were discounted with the old one"
                                      : "its scaled rewards were clipped at the old one"));
    }
  }
  // n_timesteps: the schedules over the run's progress (step / n_timesteps) run over the new
  // value from the checkpoint's step on, as SB3's learn(reset_num_timesteps=False) recomputes
  // its progress over the new total: said, with where DQN's epsilon reaches its final value.
  if (const auto n = last.find("n_timesteps"); n != last.end()) {
    Config changed = saved;  // every override given, so the schedules named are the run's next
    for (const auto& [key, set] : last) changed.Set(set.first, set.second);
    const int64_t mine = saved.GetInt("n_timesteps"), want = changed.GetInt("n_timesteps");
    std::vector<std::string> follow;
    for (const KeySpec& spec : changed.schema().keys()) {
      if (spec.type == ValueType::kSchedule &&
          changed.GetSchedule(spec.key).kind == Schedule::Kind::kLinear) {
        follow.push_back(spec.key + " " + changed.ValueText(spec.key));
      }
    }
    if (changed.GetString("algo") == "dqn" && changed.GetFloat("exploration_fraction") > 0.0 &&
        changed.GetFloat("exploration_initial_eps") != changed.GetFloat("exploration_final_eps")) {
      const double fraction = changed.GetFloat("exploration_fraction");
      const int64_t at = std::llround(fraction * static_cast<double>(want));
      const int64_t was = std::llround(fraction * static_cast<double>(mine));
      follow.push_back(
          fmt::format("epsilon (exploration_final_eps {} from step {}, not {}{})",
                      changed.GetFloat("exploration_final_eps"), at, was,
                      at > was ? fmt::format(": a checkpoint past step {} explores more again", was)
                      : at < was ? fmt::format(": a checkpoint past step {} goes to it at once", at)
                                 : ""));
    }
    if (want != mine && !follow.empty()) {
      notes.push_back(fmt::format(
          "n_timesteps {} replaces the run's own {}: {} {} the run's progress, step / "
          "n_timesteps, so from the checkpoint's step on {} over the new n_timesteps, as SB3's "
          "learn(reset_num_timesteps=False) recomputes its progress (greenrl's n_timesteps is "
          "the run's total; SB3's total_timesteps there counts the steps still to take)",
          want, mine, fmt::join(follow, ", "), follow.size() == 1 ? "follows" : "follow",
          follow.size() == 1 ? "it runs" : "they run"));
    }
  }
  return notes;
}

}  // namespace

Runner RegisterTrain(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train an agent from a YAML preset");
  cmd->add_option("--config", args->config_path,
                  "YAML preset, e.g. configs/ppo/cartpole.yaml, or an rl-zoo hyperparameter file "
                  "(hyperparams/ppo.yml) with --env");
  cmd->add_option("--env", args->env_id,
                  "env id (--set env_id=ID); with an rl-zoo file, the section to train");
  cmd->add_option("--algo", args->algo,
                  "ppo, dqn or sac (--set algo=...); an rl-zoo file's default is its name");
  cmd->add_option("--set", args->sets, "override a key: --set key=value (repeatable)");
  cmd->add_option("--seed", args->seed, "seed (overrides the preset's)")
      ->check(CLI::Range(int64_t{0}, int64_t{4294967295}));  // before CLI11 saturates 2^63
  cmd->add_option("--out", args->out, "run directory (default runs/<env>_<algo>_s<seed>_<time>)");
  cmd->add_flag("--quiet", args->quiet, "no progress line, log lines or warnings");
  cmd->add_flag("--dry-run", args->dry_run,
                "check the config and its inputs as a run would, print the resolved config "
                "(config.yaml, itself a preset) and write nothing");
  CLI::Option* resume = cmd->add_option(
      "--resume", args->resume,
      "continue the run in RUN_DIR from its newest checkpoint (its config.yaml; --set may "
      "override keys such as n_timesteps)");
  cmd->add_option("--trained-agent,-i", args->trained_agent,
                  "start from a trained agent (--set trained_agent=PATH; rl-zoo's flag): a run "
                  "directory, or its checkpoints/best.pt, final.pt or step_<12 digits>.pt, of the "
                  "same algo, env and "
                  "network; a new run, whose env-step counts and schedules start afresh")
      ->excludes(resume);
  resume->excludes("--config")
      ->excludes("--seed")
      ->excludes("--out")
      ->excludes("--env")
      ->excludes("--algo");
  // An empty value would mean the flag's absence (--resume '' a new run, --config '' the
  // defaults): refused, with what the flag takes.
  const std::vector<std::pair<const CLI::Option*, std::string>> non_empty = {
      {cmd->get_option("--config"),
       "a preset or rl-zoo file (leave --config out to train the defaults)"},
      {cmd->get_option("--env"), "an env id (`greenrl envs` lists them)"},
      {cmd->get_option("--algo"), "one of: ppo, dqn, sac"},
      {cmd->get_option("--out"),
       "a directory path (leave --out out for a new runs/<env_id>_<algo>_s<seed>_<UTC time>)"},
      {resume, "a run directory written by `greenrl train`"},
      {cmd->get_option("--trained-agent"),
       "a run directory, or its checkpoints/best.pt, final.pt or step_<12 digits>.pt"}};
  return [args, non_empty]() {
    for (const auto& [option, accepted] : non_empty) {
      if (option->count() > 0 && option->as<std::string>().empty()) {
        throw ConfigError(option->get_name(), "", accepted);
      }
    }
    const bool resuming = !args->resume.empty();
    if (resuming && !std::filesystem::is_regular_file(args->resume + "/config.yaml")) {
      // Named as the user typed it, before LoadRunConfig would blame --config.
      // A checkpoint's path where the run directory goes: name the run (eval's --run says the
      // same).
      namespace fs = std::filesystem;
      const fs::path given(args->resume);
      const std::string run = given.parent_path().parent_path().string();
      if (fs::is_regular_file(given) && given.parent_path().filename() == "checkpoints") {
        throw ConfigError("--resume", args->resume,
                          "a run directory, not a checkpoint in it: --resume " +
                              (run.empty() ? "." : run) +
                              " (a resume continues from the run's newest checkpoint)");
      }
      throw ConfigError("--resume", args->resume,
                        fs::is_directory(given)
                            ? "a run directory written by `greenrl train` (it has no config.yaml)"
                            : "a run directory written by `greenrl train` (no such directory)");
    }
    // Said with the warnings, once the run's own checks have passed (a refused resume says only
    // why).
    const std::vector<std::string> resume_notes =
        resuming ? CheckResumeOverrides(args->resume, args->sets) : std::vector<std::string>{};
    if (const std::string elsewhere = resuming ? "" : PresetElsewhere(args->config_path);
        !elsewhere.empty()) {
      // README's "configs/..." from outside a checkout: name the copy that exists.
      throw ConfigError("--config", args->config_path,
                        "an existing, readable YAML file (no such file here; this preset is at " +
                            elsewhere + ": greenrl train --config " + elsewhere + ")");
    }
    // --algo and --env are --set algo= and env_id= (rl-zoo's flags); both ways at once must
    // agree, so an rl-zoo file's section is never picked by the one the user did not mean.
    std::vector<std::string> sets = args->sets;
    for (const auto& [flag, key, value] : KeyFlags(*args)) {
      if (value.empty()) continue;
      for (const std::string& set : args->sets) {
        if (set.rfind(key + "=", 0) == 0 && set.substr(key.size() + 1) != value) {
          throw ConfigError(flag, value,
                            "the same value as --set " + set + ", or only one of the two");
        }
      }
      sets.insert(sets.begin(), key + "=" + value);
    }
    // --seed and --set seed= at once must agree as well.
    for (const std::string& set : args->sets) {
      if (args->seed && set.rfind("seed=", 0) == 0 &&
          set.substr(5) != std::to_string(*args->seed)) {
        throw ConfigError("--seed", std::to_string(*args->seed),
                          "the same value as --set " + set + ", or only one of the two");
      }
    }
    const Config config = NamingFlags(*args, [&] {
      return train::LoadRunConfig(resuming ? args->resume + "/config.yaml" : args->config_path,
                                  sets, args->seed);
    });
    train::TrainOptions options;
    for (const std::string& note : resume_notes) options.warnings.push_back("note: " + note);
    // An intensity below every national average of the table, but not 0 (a contract's
    // market-based figure may be): likely kg/kWh written as g/kWh (the key takes g).
    if (const std::optional<double> g = train::CarbonOptionsFrom(config).intensity_g_per_kwh;
        g && *g > 0.0 && *g < 1.0) {
      const auto& rows = energy::RegionIntensities();
      const auto lowest =
          std::min_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
            return a.intensity_g_per_kwh < b.intensity_g_per_kwh;
          });
      options.warnings.push_back(fmt::format(
          "carbon.intensity_g_per_kwh {} is far below every national average in greenrl's table "
          "(the lowest, {}'s, is {} g/kWh): the key takes g CO2e per kWh; {} kg/kWh would be "
          "--set carbon.intensity_g_per_kwh={}",
          *g, lowest->code, lowest->intensity_g_per_kwh, *g, *g * 1000.0));
    }
    // Keys that do nothing without another setting (the one `without` names), given with another
    // value than their default (a value equal to it is no mistake: a --dry-run's, `greenrl
    // keys`' or a run's config.yaml lists every key): said in one warning.
    const auto warn_inert = [&](std::initializer_list<const char*> keys, const char* without) {
      std::vector<std::string> inert;
      for (const char* key : keys) {
        const KeySpec* spec = config.schema().Find(key);
        if (!config.IsSet(key) || spec == nullptr || !spec->default_yaml) continue;
        Config as_default = config;
        as_default.Set(key, *spec->default_yaml);
        if (as_default.ValueText(key) != config.ValueText(key)) inert.push_back(key);
      }
      if (inert.empty()) return;
      options.warnings.push_back(fmt::format("{} {} no effect {}", fmt::join(inert, ", "),
                                             inert.size() == 1 ? "has" : "have", without));
    };
    // normalize_kwargs.* configure VecNormalize, which only normalize: true turns on (rl-zoo
    // passes them through normalize's own kwargs): given without it, they do nothing.
    if (!resuming && !config.GetBool("normalize")) {
      warn_inert({"normalize_kwargs.norm_obs", "normalize_kwargs.norm_reward",
                  "normalize_kwargs.clip_obs", "normalize_kwargs.clip_reward"},
                 "with normalize: false (they configure VecNormalize, which normalize: true turns "
                 "on)");
    }
    // The budget's ladder settings likewise do nothing without a budget.
    if (config.GetFloat("energy.budget_wh") <= 0.0) {
      warn_inert({"energy.budget.warmup_steps", "energy.budget.reduced_precision_at",
                  "energy.budget.skip_at", "energy.budget.throttle_at",
                  "energy.budget.throttle_duty_cycle",
                  "energy.budget.throttle_env_threads_fraction", "energy.budget.stop_margin"},
                 "without an energy budget (they tune its ladder, which energy.budget_wh > 0 turns "
                 "on)");
    }
    // A thread pool larger than the machine's cores oversubscribes them (README "Threads": the
    // threads take turns, each pool's idle waits cost): said per pool, as the run still works.
    if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0) {
      for (const char* key : {"threads.torch", "threads.env", "threads.update"}) {
        if (config.schema().Find(key) == nullptr) continue;
        const int64_t threads = config.GetInt(key);
        if (threads > static_cast<int64_t>(cores)) {
          options.warnings.push_back(fmt::format(
              "{} {} is above this machine's {} core{}: the threads take turns on them, which "
              "costs time and energy (README \"Threads\"); {} or fewer",
              key, threads, cores, cores == 1 ? "" : "s", cores));
        }
      }
    }
    if (const std::string tuned =
            resuming ? "" : PresetTunedForAnotherEnv(args->config_path, config);
        !tuned.empty()) {
      options.warnings.push_back(tuned);  // said once the run's own checks have passed
    }
    if (const std::string other = resuming ? "" : PresetOfAnotherAlgo(args->config_path, config);
        !other.empty()) {
      options.warnings.push_back(other);
    }
    // No --config: SB3's defaults for the algorithm's keys, greenrl's for its own keys and for
    // n_timesteps (SB3 has none), where rl-zoo would train its file's values; the preset's
    // length is said, as it may be hours.
    const bool steps_set = std::any_of(args->sets.begin(), args->sets.end(), [](const auto& s) {
      return s.rfind("n_timesteps=", 0) == 0;
    });
    const std::string defaults = fmt::format(
        "no --config, so every key{} takes its default (`greenrl keys --algo {}` lists them: "
        "SB3's for the algorithm's hyperparameters{})",
        args->sets.empty() ? "" : " not given by --set", config.GetString("algo"),
        steps_set ? ""
                  : fmt::format("; greenrl's {} for n_timesteps, which SB3 leaves to the caller",
                                config.GetInt("n_timesteps")));
    auto length_and_note = [](const std::string& preset) {
      const std::string steps = PresetTimesteps(preset);
      const std::string note = PresetNote(preset);
      std::string said = steps.empty() ? "" : "n_timesteps " + steps;
      if (!note.empty()) said += (said.empty() ? "" : "; ") + ("its note: " + note);
      return said.empty() ? "" : " (" + said + ")";
    };
    if (const std::string preset =
            resuming || !args->config_path.empty()
                ? ""
                : TunedPreset(config.GetString("algo"), config.GetString("env_id"));
        !preset.empty()) {
      options.warnings.push_back(fmt::format(
          "{}; `--config {}` is greenrl's preset for {} on {}, rl-zoo's hyperparameters{}",
          defaults, preset, config.GetString("algo"), config.GetString("env_id"),
          length_and_note(preset)));
    }
    std::string tuned_for;
    if (const std::string other =
            resuming || !args->config_path.empty()
                ? ""
                : TunedPresetForAnotherVersion(config.GetString("algo"), config.GetString("env_id"),
                                               &tuned_for);
        !other.empty()) {
      options.warnings.push_back(fmt::format(
          "{}; greenrl has no preset for {} on {}, but `--config {} --env {}` trains it with "
          "greenrl's preset for {}, rl-zoo's hyperparameters{}",
          defaults, config.GetString("algo"), config.GetString("env_id"), other,
          config.GetString("env_id"), tuned_for, length_and_note(other)));
    }
    options.out_dir = resuming ? args->resume : args->out;
    options.resume = resuming;
    options.handle_signals = true;
    options.verbose = !args->quiet;
    options.progress = !args->quiet && ::isatty(STDERR_FILENO);
    options.dry_run = args->dry_run;
    // SIGINT/SIGTERM: finish the iteration, checkpoint, report, exit 128 + signal (signals.h).
    train::StopSignalScope signals;
    if (!args->quiet) {
      for (const std::string& note : train::IgnoredStopSignalNotes(signals, "run")) {
        fmt::print(stderr, "{}\n", note);
      }
    }
    const train::TrainResult result =
        NamingFlags(*args, [&] { return train::Train(config, std::move(options)); });
    if (result.dry_run) {
      if (result.rank != 0) return 0;
      fmt::print("{}", result.config_yaml);
      std::fflush(stdout);
      const std::string where = resuming || !args->out.empty()
                                    ? result.run_dir
                                    : fmt::format("a new runs/{}_{}_s{}_<UTC time at its start>",
                                                  config.GetString("env_id"),
                                                  config.GetString("algo"), config.GetInt("seed"));
      const std::string& agent = result.report.trained_agent.checkpoint;
      fmt::print(stderr,
                 "greenrl: dry run: every check a run makes before writing passed, and nothing "
                 "was written; without --dry-run this {} {} on {} to {} env steps{} in {}{}\n",
                 resuming ? "continues" : "trains", config.GetString("algo"),
                 config.GetString("env_id"), result.last_step,
                 result.last_step == config.GetInt("n_timesteps")
                     ? ""
                     : fmt::format(
                           " (n_timesteps {} rounded up to whole {})", config.GetInt("n_timesteps"),
                           config.GetString("algo") == "ppo" ? "rollouts" : "train_freq blocks"),
                 where, agent.empty() || resuming ? "" : ", from the trained agent " + agent);
      return 0;
    }
    if (result.rank == 0) fmt::print("{}", report::FormatSummary(result.report));
    std::fflush(stdout);
    if (result.interrupted) {
      fmt::print(stderr, "greenrl: stopped by signal {} at step {}; checkpoint {}\n",
                 result.stop_signal, result.report.steps, result.resume_checkpoint);
      return 128 + result.stop_signal;
    }
    if (result.late_stop_signal != 0) {
      fmt::print(stderr,
                 "greenrl: signal {} arrived after the last iteration had begun; the run {} at "
                 "step {} with its reports written{}\n",
                 result.late_stop_signal,
                 result.report.budget.stopped ? "was stopped by the energy budget" : "finished",
                 result.report.steps,
                 result.report.budget.stopped ? " and its resume checkpoint" : " and final.pt");
    }
    return 0;
  };
}

}  // namespace greenrl::cli
