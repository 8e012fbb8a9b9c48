#include "greenrl/train/evaluate.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"

namespace greenrl::train {

std::string NormalizerJson(const NormalizerSnapshot& snapshot) {
  nlohmann::json j;
  j["format_version"] = 1;
  j["norm_obs"] = snapshot.options.norm_obs;
  j["norm_reward"] = snapshot.options.norm_reward;
  j["clip_obs"] = snapshot.options.clip_obs;
  j["clip_reward"] = snapshot.options.clip_reward;
  j["gamma"] = snapshot.options.gamma;
  j["epsilon"] = snapshot.options.epsilon;
  j["state"] = snapshot.state;
  return j.dump();
}

NormalizerSnapshot NormalizerFromJson(const std::string& text, const std::string& source) {
  const std::string accepted = "a normaliser file written by greenrl train";
  NormalizerSnapshot s;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("format_version").get<int>() != 1) {
      throw ConfigError("normalizer", source, accepted + " of format version 1");
    }
    s.options.norm_obs = j.at("norm_obs").get<bool>();
    s.options.norm_reward = j.at("norm_reward").get<bool>();
    s.options.clip_obs = j.at("clip_obs").get<double>();
    s.options.clip_reward = j.at("clip_reward").get<double>();
    s.options.gamma = j.at("gamma").get<double>();
    s.options.epsilon = j.at("epsilon").get<double>();
    s.state = j.at("state").get<std::vector<double>>();
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw ConfigError("normalizer", source, accepted + " (" + e.what() + ")");
  }
  return s;
}

void SaveNormalizer(const std::string& path, const NormalizerSnapshot& snapshot) {
  WriteFileAtomic(path, NormalizerJson(snapshot) + "\n");
}

NormalizerSnapshot LoadNormalizer(const std::string& path) {
  std::string text;
  try {
    text = ReadFile(path);
  } catch (const std::exception& e) {
    throw ConfigError("normalizer", path,
                      std::string("a normaliser file written by greenrl train (") + e.what() + ")");
  }
  return NormalizerFromJson(text, path);
}

EvalResult EvaluatePolicy(algo::Algorithm& algorithm, const std::string& env_id, int episodes,
                          uint64_t seed, bool deterministic, const NormalizerSnapshot* normalizer) {
  if (episodes < 1) {
    throw ConfigError("episodes", std::to_string(episodes), "an integer >= 1");
  }
  // Eval envs use their own seed stream, apart from the training envs' (seed, i) streams.
  std::unique_ptr<env::VecEnv> env =
      env::MakeVecEnv(env_id, episodes, DeriveSeed(seed, 0x6576616cULL), 1);
  if (normalizer != nullptr) {
    auto wrapped = std::make_unique<env::NormalizeVecEnv>(std::move(env), normalizer->options);
    wrapped->SetState(normalizer->state);
    wrapped->set_training(false);
    env = std::move(wrapped);
  }
  env->Reset();
  EvalResult result;
  result.returns.assign(episodes, 0.0);
  result.lengths.assign(episodes, 0);
  std::vector<uint8_t> done(episodes, 0);
  int remaining = episodes;
  const int64_t max_steps = static_cast<int64_t>(env->spec().max_episode_steps) + 1;
  // Discrete spaces act through Act (int64 actions), Box spaces through ActContinuous (float32
  // [episodes, act_dim] rows already inside the Box).
  const bool discrete = env->spec().discrete_actions();
  for (int64_t step = 0; remaining > 0; ++step) {
    GREENRL_CHECK(step <= max_steps, "an evaluation episode outlived its TimeLimit");
    if (discrete) {
      algorithm.Act(env->obs(), episodes, deterministic, env->discrete_actions());
    } else {
      algorithm.ActContinuous(env->obs(), episodes, deterministic, env->continuous_actions());
    }
    env->Step();
    for (int i = 0; i < episodes; ++i) {
      if (!done[i] && (env->terminated()[i] || env->truncated()[i])) {
        done[i] = 1;
        --remaining;
        result.returns[i] = env->episode_return()[i];
        result.lengths[i] = env->episode_length()[i];
      }
    }
  }
  result.non_finite_outputs = env->non_finite_outputs();
  double sum = 0.0;
  for (double r : result.returns) sum += r;
  result.mean_return = sum / episodes;
  double var = 0.0;
  for (double r : result.returns) var += (r - result.mean_return) * (r - result.mean_return);
  result.std_return = std::sqrt(var / episodes);
  return result;
}

}  // namespace greenrl::train
