// rl-zoo hyperparameter files read as greenrl overrides: the sections of testdata/rl_zoo/*.yml
// (excerpts of rl-zoo's own files) give the exact overrides, and the Python texts rl-zoo writes
// turn into greenrl keys or clear errors.
#include "greenrl/train/zoo_hyperparams.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"

namespace greenrl::train {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

std::string ZooFile(const std::string& name) {
  return SourceTreeDir() + "/greenrl/train/testdata/rl_zoo/" + name;
}

// The ConfigError `call` throws: its field and message.
template <typename F>
std::pair<std::string, std::string> ErrorOf(F call) {
  try {
    call();
  } catch (const ConfigError& e) {
    return {e.field(), e.what()};
  }
  ADD_FAILURE() << "no ConfigError";
  return {};
}

TEST(ZooHyperparamsTest, SectionOfTheEnvWithTheFileAlgo) {
  const auto cartpole = ReadZooSection(ZooFile("ppo.yml"), {"seed=3", "env_id=CartPole-v1"});
  ASSERT_TRUE(cartpole.has_value());
  EXPECT_EQ(cartpole->algo, "ppo");
  EXPECT_EQ(cartpole->env_id, "CartPole-v1");
  EXPECT_EQ(
      cartpole->overrides,
      (Strings{"algo=ppo", "env_id=CartPole-v1", "n_envs=8", "n_timesteps=1e5", "policy=MlpPolicy",
               "n_steps=32", "batch_size=256", "gae_lambda=0.8", "gamma=0.98", "n_epochs=20",
               "ent_coef=0.0", "learning_rate=lin_0.001", "clip_range=lin_0.2"}));
  // policy_kwargs over several lines, with net_arch=dict(pi=..., vf=...).
  const auto cheetah = ReadZooSection(ZooFile("ppo.yml"), {"env_id=HalfCheetah-v4"});
  ASSERT_TRUE(cheetah.has_value());
  const Strings& o = cheetah->overrides;
  ASSERT_GE(o.size(), 6u);
  EXPECT_EQ(o[2], "normalize=true");
  EXPECT_THAT(
      Strings(o.end() - 5, o.end()),
      ElementsAre("policy_kwargs.log_std_init=-2", "policy_kwargs.ortho_init=false",
                  "policy_kwargs.activation_fn=relu", "policy_kwargs.net_arch.pi=[256, 256]",
                  "policy_kwargs.net_arch.vf=[256, 256]"));
}

TEST(ZooHyperparamsTest, MergeKeysGiveTheAnchorsEntriesUnlessTheSectionSetsThem) {
  const auto swimmer = ReadZooSection(ZooFile("ppo.yml"), {"env_id=Swimmer-v4"});
  ASSERT_TRUE(swimmer.has_value());
  EXPECT_EQ(swimmer->overrides,
            (Strings{"algo=ppo", "env_id=Swimmer-v4", "normalize=true", "n_timesteps=1e6",
                     "policy=MlpPolicy", "gamma=0.9999", "n_envs=4", "n_steps=1024",
                     "batch_size=256", "learning_rate=6e-4", "gae_lambda=0.98"}));
}

// YAML merge keys as PyYAML (rl-zoo's parser) resolves them: in `<<: [*a, *b]` the earlier map
// wins, and a merged map's own `<<` is resolved first (its keys were dropped).
TEST(ZooHyperparamsTest, MergeKeySequencesAndChainsResolveAsPyYaml) {
  const std::string path = ::testing::TempDir() + "/greenrl_zoo_merges/ppo.yml";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  {
    std::ofstream out(path);
    out << "defaults-a: &a\n"
           "  gamma: 0.9\n"
           "  n_steps: 64\n"
           "defaults-b: &b\n"
           "  gamma: 0.8\n"
           "  n_epochs: 5\n"
           "chained: &chain\n"
           "  <<: *a\n"
           "  n_epochs: 3\n"
           "CartPole-v1:\n"
           "  <<: [*a, *b]\n"
           "  n_envs: 2\n"
           "Acrobot-v1:\n"
           "  <<: *chain\n"
           "  n_steps: 32\n";
  }
  EXPECT_EQ(ReadZooSection(path, {"env_id=CartPole-v1"})->overrides,
            (Strings{"algo=ppo", "env_id=CartPole-v1", "gamma=0.9", "n_steps=64", "n_epochs=5",
                     "n_envs=2"}));
  EXPECT_EQ(ReadZooSection(path, {"env_id=Acrobot-v1"})->overrides,
            (Strings{"algo=ppo", "env_id=Acrobot-v1", "gamma=0.9", "n_epochs=3", "n_steps=32"}));
}

// Merge keys inside a section's maps resolve too (PyYAML resolves them at every level), and an
// anchor merged in many places is resolved once: a chain of 26 maps each merging the one before
// twice resolves at once (each level used to expand the one below twice over).
TEST(ZooHyperparamsTest, NestedMergeKeysAndLongMergeChainsResolve) {
  const std::string path = ::testing::TempDir() + "/greenrl_zoo_nested_merges/ppo.yml";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  {
    std::ofstream out(path);
    out << "pk: &pk\n"
           "  net_arch: [64, 64]\n"
           "  log_std_init: -2\n"
           "c0: &c0\n"
           "  gamma: 0.95\n";
    for (int i = 1; i <= 26; ++i) {
      out << "c" << i << ": &c" << i << "\n  <<: [*c" << i - 1 << ", *c" << i - 1 << "]\n";
    }
    out << "CartPole-v1:\n"
           "  policy_kwargs: {<<: *pk, log_std_init: -1}\n"
           "Acrobot-v1:\n"
           "  <<: *c26\n";
  }
  EXPECT_EQ(ReadZooSection(path, {"env_id=CartPole-v1"})->overrides,
            (Strings{"algo=ppo", "env_id=CartPole-v1", "policy_kwargs.net_arch.pi=[64, 64]",
                     "policy_kwargs.net_arch.vf=[64, 64]", "policy_kwargs.log_std_init=-1"}));
  EXPECT_EQ(ReadZooSection(path, {"env_id=Acrobot-v1"})->overrides,
            (Strings{"algo=ppo", "env_id=Acrobot-v1", "gamma=0.95"}));
}

TEST(ZooHyperparamsTest, SacSectionsAndNormalizeDicts) {
  const auto lunar = ReadZooSection(ZooFile("sac.yml"), {"env_id=LunarLanderContinuous-v3"});
  ASSERT_TRUE(lunar.has_value());
  EXPECT_EQ(lunar->algo, "sac");
  EXPECT_EQ(lunar->overrides.back(), "policy_kwargs.net_arch=[400, 300]");
  const auto humanoid = ReadZooSection(ZooFile("sac.yml"), {"env_id=HumanoidBulletEnv-v0"});
  ASSERT_TRUE(humanoid.has_value());
  EXPECT_THAT(Strings(humanoid->overrides.begin() + 2, humanoid->overrides.begin() + 5),
              ElementsAre("normalize=true", "normalize_kwargs.norm_obs=true",
                          "normalize_kwargs.norm_reward=false"));
  // --algo (algo=) wins over the file's name.
  EXPECT_EQ(ReadZooSection(ZooFile("sac.yml"), {"env_id=Pendulum-v1", "algo=ppo"})->algo, "ppo");
}

TEST(ZooHyperparamsTest, GreenrlPresetsAreNotZooFiles) {
  const std::string configs = SourceTreeDir() + "/configs/";
  EXPECT_FALSE(ReadZooSection(configs + "ppo/cartpole.yaml", {"env_id=CartPole-v1"}));
  EXPECT_FALSE(ReadZooSection(configs + "sac/pendulum.yaml", {}));
  EXPECT_FALSE(ReadZooSection("", {}));
  EXPECT_FALSE(ReadZooSection(ZooFile("no_such_file.yml"), {}));  // Config::Load reports it
}

TEST(ZooHyperparamsTest, MissingEnvOrAlgoIsNamed) {
  auto [field, message] = ErrorOf([] { ReadZooSection(ZooFile("ppo.yml"), {}); });
  EXPECT_EQ(field, "--env");
  EXPECT_THAT(message, HasSubstr("atari, Pendulum-v1, CartPole-v1, MountainCar-v0, "
                                 "MountainCarContinuous-v0, Acrobot-v1"));
  std::tie(field, message) =
      ErrorOf([] { ReadZooSection(ZooFile("ppo.yml"), {"env_id=Pusher-v4"}); });
  EXPECT_EQ(field, "--env");
  EXPECT_THAT(message, HasSubstr("--env: got 'Pusher-v4'; an env id with a section of "
                                 "hyperparameters in the rl-zoo file"));
  // A file not named after its algorithm needs --algo.
  const std::string renamed = ::testing::TempDir() + "/greenrl_zoo_hyperparams.yml";
  std::filesystem::copy_file(ZooFile("ppo.yml"), renamed,
                             std::filesystem::copy_options::overwrite_existing);
  std::tie(field, message) = ErrorOf([&] { ReadZooSection(renamed, {"env_id=CartPole-v1"}); });
  EXPECT_EQ(field, "algo");
  EXPECT_THAT(message, HasSubstr("give it with --algo ppo|dqn|sac"));
  EXPECT_EQ(ReadZooSection(renamed, {"env_id=CartPole-v1", "algo=ppo"})->algo, "ppo");
}

TEST(ZooHyperparamsTest, PolicyKwargsForms) {
  EXPECT_THAT(
      ZooPolicyKwargs("ppo", "dict(net_arch=[64, 64], activation_fn=nn.ReLU)"),
      ElementsAre("policy_kwargs.net_arch.pi=[64, 64]", "policy_kwargs.net_arch.vf=[64, 64]",
                  "policy_kwargs.activation_fn=relu"));
  // Older SB3: a list holding one dict; {...} literals; torch.nn names; trailing commas.
  EXPECT_THAT(ZooPolicyKwargs("ppo",
                              "{'net_arch': [dict(pi=[32], vf=[16, 16],)], "
                              "'activation_fn': torch.nn.Tanh}"),
              ElementsAre("policy_kwargs.net_arch.pi=[32]", "policy_kwargs.net_arch.vf=[16, 16]",
                          "policy_kwargs.activation_fn=tanh"));
  EXPECT_THAT(ZooPolicyKwargs("sac", "dict(log_std_init=-3.67, net_arch=[64, 64])"),
              ElementsAre("policy_kwargs.log_std_init=-3.67", "policy_kwargs.net_arch=[64, 64]"));
  EXPECT_THAT(ZooPolicyKwargs("sac", "dict(net_arch=dict(pi=[256, 256], qf=[256, 256]))"),
              ElementsAre("policy_kwargs.net_arch=[256, 256]"));
  EXPECT_THAT(ZooPolicyKwargs("dqn", "dict(net_arch=[256, 256])"),
              ElementsAre("policy_kwargs.net_arch=[256, 256]"));
  EXPECT_THAT(ZooPolicyKwargs("ppo", "dict(activation_fn=nn.Tanh, n_critics=None)"),
              ElementsAre("policy_kwargs.activation_fn=tanh", "policy_kwargs.n_critics=~"));
}

TEST(ZooHyperparamsTest, PolicyKwargsItCannotReadAreNamed) {
  auto [field, message] =
      ErrorOf([] { ZooPolicyKwargs("sac", "dict(net_arch=dict(pi=[64, 64], qf=[400, 300]))"); });
  EXPECT_EQ(field, "policy_kwargs");
  EXPECT_THAT(message, HasSubstr("pi [64, 64] and qf [400, 300] differ"));
  std::tie(field, message) =
      ErrorOf([] { ZooPolicyKwargs("ppo", "dict(optimizer_class=th.optim.RMSprop(eps=1e-5))"); });
  EXPECT_THAT(message, HasSubstr("a call of 'th.optim.RMSprop' (only dict(...) is read) at "
                                 "character 22"));
  // Another torch activation is named as one greenrl does not have, not taken for a typo.
  std::tie(field, message) = ErrorOf([] { ZooPolicyKwargs("ppo", "dict(activation_fn=nn.GELU)"); });
  EXPECT_EQ(field, "policy_kwargs");
  EXPECT_THAT(message, HasSubstr("activation_fn nn.Tanh or nn.ReLU, the two activations greenrl's "
                                 "networks have (nn.GELU is not one of them)"));
  std::tie(field, message) = ErrorOf([] { ZooPolicyKwargs("ppo", "dict(net_arch=[64, 64]"); });
  EXPECT_THAT(message, HasSubstr("')' expected at the end (the text stops there)"));
  std::tie(field, message) = ErrorOf([] { ZooPolicyKwargs("ppo", "[64, 64]"); });
  EXPECT_THAT(message, HasSubstr("dict(...) or {...} of keyword arguments"));
  // A quoted bool or number is a Python str: "False" would be true where SB3 tests it.
  std::tie(field, message) = ErrorOf([] { ZooPolicyKwargs("ppo", "dict(ortho_init=\"False\")"); });
  EXPECT_EQ(field, "policy_kwargs");
  EXPECT_THAT(message, HasSubstr("ortho_init without quotes (True, False, None or a number): "
                                 "'False' is a Python str, which SB3 would not read as a bool"));
  std::tie(field, message) = ErrorOf([] { ZooPolicyKwargs("sac", "dict(log_std_init='-2')"); });
  EXPECT_THAT(message, HasSubstr("log_std_init without quotes"));
  std::tie(field, message) = ErrorOf([] { ZooNormalize("{'norm_obs': 'False'}"); });
  EXPECT_EQ(field, "normalize");
  EXPECT_THAT(message, HasSubstr("norm_obs without quotes"));
  std::tie(field, message) =
      ErrorOf([] { ZooReplayBufferKwargs("dict(handle_timeout_termination='True')"); });
  EXPECT_EQ(field, "replay_buffer_kwargs");
  // Other strings pass to the keys' own checks (HER's, which greenrl's config then names).
  EXPECT_THAT(ZooReplayBufferKwargs("dict(goal_selection_strategy='future')"),
              ElementsAre("replay_buffer_kwargs.goal_selection_strategy=future"));
}

// A zoo file written by hand: comments and odd spacing inside the Python strings, YAML maps
// instead of them, SB3's train_freq tuple, a stray top-level scalar and an empty section.
TEST(ZooHyperparamsTest, HandWrittenVariants) {
  const std::string path = ::testing::TempDir() + "/greenrl_zoo_variants/dqn.yml";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  {
    std::ofstream out(path);
    out << "version: 2\n"
           "Acrobot-v1:\n"
           "Pendulum-v1:\n"
           "  train_freq: [4, \"step\"]\n"
           "  gradient_steps: -1\n"
           "  replay_buffer_kwargs: \"dict(handle_timeout_termination=True)\"\n"
           "  policy_kwargs: \"dict(net_arch=[32,  32],\n"
           "                        activation_fn=nn.Tanh)  # wider later\"\n"
           "CartPole-v1:\n"
           "  target_kl: None\n"
           "  clip_range_vf: null\n"
           "  policy_kwargs: {net_arch: [16], activation_fn: nn.ReLU}\n"
           "  normalize: {norm_obs: true, norm_reward: false}\n"
           "MountainCar-v0:\n"
           "  train_freq: [1, \"episode\"]\n";
  }
  EXPECT_EQ(ReadZooSection(path, {"env_id=Pendulum-v1"})->overrides,
            (Strings{"algo=dqn", "env_id=Pendulum-v1", "train_freq=4", "gradient_steps=-1",
                     "replay_buffer_kwargs.handle_timeout_termination=true",
                     "policy_kwargs.net_arch=[32, 32]", "policy_kwargs.activation_fn=tanh"}));
  EXPECT_EQ(
      ReadZooSection(path, {"env_id=CartPole-v1"})->overrides,
      (Strings{"algo=dqn", "env_id=CartPole-v1", "target_kl=0", "clip_range_vf=0",
               "policy_kwargs.net_arch=[16]", "policy_kwargs.activation_fn=relu", "normalize=true",
               "normalize_kwargs.norm_obs=true", "normalize_kwargs.norm_reward=false"}));
  auto [field, message] = ErrorOf([&] { ReadZooSection(path, {"env_id=MountainCar-v0"}); });
  EXPECT_EQ(field, "train_freq");
  EXPECT_THAT(message, HasSubstr("SB3's \"episode\" unit is not supported"));
  EXPECT_THAT(message, HasSubstr("train_freq (in " + path + ", section MountainCar-v0): got"));
  std::tie(field, message) = ErrorOf([&] { ReadZooSection(path, {"env_id=Acrobot-v1"}); });
  EXPECT_EQ(field, "--env");
  EXPECT_THAT(message, HasSubstr(": Pendulum-v1, CartPole-v1, MountainCar-v0 (Acrobot-v1's entry "
                                 "holds no map)"));
  std::tie(field, message) =
      ErrorOf([] { ZooPolicyKwargs("ppo", "dict(net_arch=[32, 32], net_arch=[64])"); });
  EXPECT_THAT(message, HasSubstr("keyword argument 'net_arch' repeated at character 25"));
  // Another rl-zoo algorithm's file is named as such.
  const std::string a2c = ::testing::TempDir() + "/greenrl_zoo_variants/a2c.yml";
  std::filesystem::copy_file(ZooFile("ppo.yml"), a2c,
                             std::filesystem::copy_options::overwrite_existing);
  std::tie(field, message) = ErrorOf([&] { ReadZooSection(a2c, {"env_id=CartPole-v1"}); });
  EXPECT_EQ(field, "algo");
  EXPECT_THAT(message, HasSubstr("is for a2c, which greenrl does not have"));
}

// rl-zoo reads any "<word>_<value>" of learning_rate, clip_range and clip_range_vf as a linear
// schedule (exp_manager.py's _preprocess_schedules: schedule, initial_value = text.split("_")).
TEST(ZooHyperparamsTest, AnyWordBeforeTheValueIsALinearScheduleAsInRlZoo) {
  const std::string path = ::testing::TempDir() + "/greenrl_zoo_schedules/ppo.yml";
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  {
    std::ofstream out(path);
    out << "CartPole-v1:\n"
           "  learning_rate: linear_3e-4\n"
           "  clip_range: schedule_0.2\n"
           "  clip_range_vf: lin_0.5\n"
           "  ent_coef: cst_0.01\n"  // not a schedule key: left as written
           "Pendulum-v1:\n"
           "  learning_rate: 'lin_1e-3'\n"
           "  clip_range: 0.2\n"
           "Acrobot-v1:\n"
           "  learning_rate: linear_fast\n"  // no number after the word: left as written
           "  clip_range: a_b_0.1\n";        // two '_': rl-zoo's split fails, left as written
  }
  EXPECT_EQ(ReadZooSection(path, {"env_id=CartPole-v1"})->overrides,
            (Strings{"algo=ppo", "env_id=CartPole-v1", "learning_rate=lin_3e-4",
                     "clip_range=lin_0.2", "clip_range_vf=lin_0.5", "ent_coef=cst_0.01"}));
  EXPECT_EQ(
      ReadZooSection(path, {"env_id=Pendulum-v1"})->overrides,
      (Strings{"algo=ppo", "env_id=Pendulum-v1", "learning_rate=lin_1e-3", "clip_range=0.2"}));
  EXPECT_EQ(ReadZooSection(path, {"env_id=Acrobot-v1"})->overrides,
            (Strings{"algo=ppo", "env_id=Acrobot-v1", "learning_rate=linear_fast",
                     "clip_range=a_b_0.1"}));
}

// -params' train_freq tuples: the step unit gives its number; anything else is left to the caller.
TEST(ZooHyperparamsTest, TrainFreqStepsFromPythonTuples) {
  EXPECT_EQ(ZooTrainFreqSteps("(4, 'step')"), "4");
  EXPECT_EQ(ZooTrainFreqSteps("[16, \"step\"]"), "16");
  EXPECT_EQ(ZooTrainFreqSteps("(1, 'episode')"), std::nullopt);
  EXPECT_EQ(ZooTrainFreqSteps("4"), std::nullopt);
  EXPECT_EQ(ZooTrainFreqSteps("(4, 'step'"), std::nullopt);  // not a Python literal
}

TEST(ZooHyperparamsTest, NormalizeForms) {
  EXPECT_THAT(ZooNormalize("true"), ElementsAre("normalize=true"));
  EXPECT_THAT(ZooNormalize("True"), ElementsAre("normalize=true"));
  EXPECT_THAT(ZooNormalize("false"), ElementsAre("normalize=false"));
  EXPECT_THAT(ZooNormalize("{'norm_obs': False, 'norm_reward': True, 'clip_obs': 5.0}"),
              ElementsAre("normalize=true", "normalize_kwargs.norm_obs=false",
                          "normalize_kwargs.norm_reward=true", "normalize_kwargs.clip_obs=5.0"));
  const auto [field, message] = ErrorOf([] { ZooNormalize("yes"); });
  EXPECT_EQ(field, "normalize");
  EXPECT_THAT(message, HasSubstr("true, false or a dict of VecNormalize arguments"));
}

TEST(ZooHyperparamsTest, ReplayBufferKwargsForms) {
  EXPECT_THAT(ZooReplayBufferKwargs("dict(handle_timeout_termination=True)"),
              ElementsAre("replay_buffer_kwargs.handle_timeout_termination=true"));
  EXPECT_THAT(ZooReplayBufferKwargs("{'handle_timeout_termination': False, 'n': 2}"),
              ElementsAre("replay_buffer_kwargs.handle_timeout_termination=false",
                          "replay_buffer_kwargs.n=2"));
  EXPECT_THAT(ZooReplayBufferKwargs("dict()"), ElementsAre());
  const auto [field, message] = ErrorOf([] { ZooReplayBufferKwargs("[1]"); });
  EXPECT_EQ(field, "replay_buffer_kwargs");
  EXPECT_THAT(message, HasSubstr("dict(...) or {...} of keyword arguments"));
}

}  // namespace
}  // namespace greenrl::train
