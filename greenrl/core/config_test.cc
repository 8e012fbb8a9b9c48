#include "greenrl/core/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

KeySpec Spec(const std::string& key, ValueType type, std::optional<std::string> default_yaml,
             const std::string& doc) {
  KeySpec spec;
  spec.key = key;
  spec.type = type;
  spec.default_yaml = std::move(default_yaml);
  spec.doc = doc;
  return spec;
}

KeySpec WithRange(KeySpec spec, std::optional<double> min, std::optional<double> max,
                  bool min_exclusive = false) {
  spec.min = min;
  spec.max = max;
  spec.min_exclusive = min_exclusive;
  return spec;
}

// A PPO-like schema with every ValueType, two sections and one required key.
ConfigSchema TestSchema() {
  ConfigSchema schema;
  schema.Add(Spec("env_id", ValueType::kString, std::nullopt, "Gymnasium env id"));
  schema.Add(WithRange(Spec("n_timesteps", ValueType::kInt, "100000", "total env steps"), 1,
                       std::nullopt));
  schema.Add(WithRange(Spec("n_steps", ValueType::kInt, "2048", "steps per env per rollout"), 1,
                       std::nullopt));
  schema.Add(WithRange(Spec("gamma", ValueType::kFloat, "0.99", "discount factor"), 0, 1));
  schema.Add(WithRange(Spec("learning_rate", ValueType::kSchedule, "3e-4", "Adam step size"), 0,
                       std::nullopt, /*min_exclusive=*/true));
  schema.Add(Spec("normalize", ValueType::kBool, "false", "normalize observations"));
  KeySpec device = Spec("device", ValueType::kString, "auto", "torch device");
  device.choices = {"auto", "cpu", "cuda"};
  schema.Add(device);
  schema.Add(WithRange(
      Spec("policy_kwargs.net_arch", ValueType::kIntList, "[64, 64]", "hidden layer widths"), 1,
      std::nullopt));
  schema.Add(WithRange(Spec("carbon.pue", ValueType::kFloat, "1.0", "power usage effectiveness"), 1,
                       std::nullopt));
  schema.Add(Spec("carbon.region", ValueType::kString, "world", "grid region"));
  schema.Add(WithRange(Spec("carbon.intensity_g_per_kwh", ValueType::kFloat, "475",
                            "grid carbon intensity, g CO2e per kWh"),
                       0, std::nullopt, /*min_exclusive=*/true));
  return schema;
}

constexpr char kKnownKeys[] =
    "known keys: env_id, n_timesteps, n_steps, gamma, learning_rate, normalize, device, "
    "policy_kwargs.net_arch, carbon.pue, carbon.region, carbon.intensity_g_per_kwh";

// The process id keeps tests that ctest runs side by side (-j2) off each other's files: two of
// them once wrote "twice.yaml" with different contents at the same moment.
std::string WriteTempFile(const std::string& name, const std::string& content) {
  const std::string path =
      ::testing::TempDir() + "greenrl_config_test_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << content;
  return path;
}

// Loads and expects a ConfigError; returns its what().
std::string LoadError(const std::string& yaml_path, const std::vector<std::string>& overrides) {
  try {
    Config::Load(TestSchema(), yaml_path, overrides);
  } catch (const ConfigError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

std::string OverrideError(const std::string& override_text) {
  return LoadError("", {"env_id=CartPole-v1", override_text});
}

TEST(ConfigTest, DefaultsOnly) {
  const Config config = Config::Load(TestSchema(), "", {"env_id=CartPole-v1"});
  EXPECT_EQ(config.GetString("env_id"), "CartPole-v1");
  EXPECT_EQ(config.GetInt("n_timesteps"), 100000);
  EXPECT_EQ(config.GetInt("n_steps"), 2048);
  EXPECT_EQ(config.GetFloat("gamma"), 0.99);
  EXPECT_EQ(config.GetSchedule("learning_rate"), Schedule::Constant(3e-4));
  EXPECT_FALSE(config.GetBool("normalize"));
  EXPECT_EQ(config.GetString("device"), "auto");
  EXPECT_EQ(config.GetIntList("policy_kwargs.net_arch"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(config.GetFloat("carbon.pue"), 1.0);
  EXPECT_EQ(config.GetFloat("carbon.intensity_g_per_kwh"), 475.0);
  EXPECT_TRUE(config.IsSet("env_id"));
  EXPECT_FALSE(config.IsSet("n_steps"));
}

TEST(ConfigTest, LoadsNestedFileAndOverridesWin) {
  const std::string path = WriteTempFile("nested.yaml",
                                         "# rl-zoo style preset\n"
                                         "env_id: CartPole-v1\n"
                                         "n_timesteps: !!float 1e5\n"
                                         "n_steps: 32\n"
                                         "gamma: 0.98\n"
                                         "learning_rate: lin_0.001\n"
                                         "normalize: true\n"
                                         "policy_kwargs:\n"
                                         "  net_arch: [256, 256]\n"
                                         "carbon:\n"
                                         "  pue: 1.2\n"
                                         "  region: FR\n");
  const Config from_file = Config::Load(TestSchema(), path, {});
  EXPECT_EQ(from_file.GetInt("n_timesteps"), 100000);
  EXPECT_EQ(from_file.GetInt("n_steps"), 32);
  EXPECT_EQ(from_file.GetFloat("gamma"), 0.98);
  EXPECT_EQ(from_file.GetSchedule("learning_rate"), Schedule::Linear(0.001));
  EXPECT_TRUE(from_file.GetBool("normalize"));
  EXPECT_EQ(from_file.GetIntList("policy_kwargs.net_arch"), (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(from_file.GetFloat("carbon.pue"), 1.2);
  EXPECT_EQ(from_file.GetString("carbon.region"), "FR");
  EXPECT_TRUE(from_file.IsSet("carbon.pue"));
  EXPECT_FALSE(from_file.IsSet("carbon.intensity_g_per_kwh"));

  const Config config = Config::Load(
      TestSchema(), path,
      {"n_steps=64", "carbon.pue=1.5", "policy_kwargs.net_arch=[64,64]", "learning_rate=lin_2.5e-4",
       "carbon={region: DE, intensity_g_per_kwh: 380}", "n_steps=128"});
  EXPECT_EQ(config.GetInt("n_steps"), 128);  // the last override wins
  EXPECT_EQ(config.GetFloat("carbon.pue"), 1.5);
  EXPECT_EQ(config.GetIntList("policy_kwargs.net_arch"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(config.GetSchedule("learning_rate"), Schedule::Linear(2.5e-4));
  EXPECT_EQ(config.GetString("carbon.region"), "DE");
  EXPECT_EQ(config.GetFloat("carbon.intensity_g_per_kwh"), 380.0);
  EXPECT_EQ(config.GetFloat("gamma"), 0.98);  // from the file, not overridden
  EXPECT_TRUE(config.IsSet("carbon.intensity_g_per_kwh"));
}

TEST(ConfigTest, IntKeysAcceptIntegralFloatsOnly) {
  const Config config =
      Config::Load(TestSchema(), "", {"env_id=x", "n_timesteps=1e5", "n_steps=2.048e3"});
  EXPECT_EQ(config.GetInt("n_timesteps"), 100000);
  EXPECT_EQ(config.GetInt("n_steps"), 2048);
  EXPECT_EQ(OverrideError("n_steps=1.5"), "n_steps: got '1.5'; an integer >= 1");
  EXPECT_EQ(OverrideError("n_timesteps=1e30"), "n_timesteps: got '1e30'; an integer >= 1");
}

TEST(ConfigTest, UnknownKeyNamesClosestMatchAndKnownKeys) {
  EXPECT_EQ(OverrideError("n_step=64"),
            std::string("n_step: got '64'; unknown key; did you mean 'n_steps'? ") + kKnownKeys);
  const std::string nested = WriteTempFile("unknown.yaml", "env_id: x\ncarbon:\n  puee: 1.3\n");
  // A key of the file is named with the file (not to be taken for a --set one).
  EXPECT_EQ(LoadError(nested, {}), "carbon.puee (in " + nested +
                                       "): got '1.3'; unknown key; did you mean 'carbon.pue'? " +
                                       kKnownKeys);
  EXPECT_EQ(OverrideError("pue=1.3"),
            std::string("pue: got '1.3'; unknown key; did you mean 'carbon.pue'? ") + kKnownKeys);
  // A top-level key given in a section (SB3's use_sde as policy_kwargs.use_sde) is said to be one.
  EXPECT_EQ(OverrideError("carbon.gamma=0.9"),
            std::string("carbon.gamma: got '0.9'; unknown key; did you mean 'gamma', a top-level "
                        "key (not in carbon)? ") +
                kKnownKeys);
  // A last segment that begins or ends a key's last segment; ties are all named, in schema order.
  EXPECT_EQ(
      OverrideError("regio=DE"),
      std::string("regio: got 'DE'; unknown key; did you mean 'carbon.region'? ") + kKnownKeys);
  EXPECT_EQ(OverrideError("intensity=400"),
            std::string("intensity: got '400'; unknown key; did you mean "
                        "'carbon.intensity_g_per_kwh'? ") +
                kKnownKeys);
  EXPECT_EQ(OverrideError("steps=5"),
            std::string("steps: got '5'; unknown key; did you mean one of 'n_timesteps', "
                        "'n_steps'? ") +
                kKnownKeys);
  // A short ending inside a word is no guess (Adam's "eps" is not a typo of "n_timesteps").
  EXPECT_EQ(OverrideError("eps=1e-5"), std::string("eps: got '1e-5'; unknown key; ") + kKnownKeys);
  EXPECT_EQ(OverrideError("lr=0.1"),  // two letters: no guess
            std::string("lr: got '0.1'; unknown key; ") + kKnownKeys);
  EXPECT_EQ(OverrideError("totally_unrelated=1"),
            std::string("totally_unrelated: got '1'; unknown key; ") + kKnownKeys);
  EXPECT_THAT(OverrideError("carbon=1.3"),
              StartsWith("carbon: got '1.3'; unknown key; 'carbon' is a section, set its keys "
                         "(carbon.pue, carbon.region, carbon.intensity_g_per_kwh); known keys:"));
}

TEST(ConfigTest, WrongTypeNamesKeyValueAndType) {
  EXPECT_EQ(OverrideError("n_steps=abc"), "n_steps: got 'abc'; an integer >= 1");
  EXPECT_EQ(OverrideError("n_steps=[1, 2]"), "n_steps: got '[1, 2]'; an integer >= 1");
  EXPECT_EQ(OverrideError("n_steps="),
            "n_steps: got ''; an integer >= 1 (an empty value, null or ~ is no value for any key)");
  EXPECT_EQ(OverrideError("n_steps=~"),
            "n_steps: got ''; an integer >= 1 (an empty value, null or ~ is no value for any key)");
  // A key whose default is the empty string says how that is written, and that form is taken;
  // another string key does not offer it.
  ConfigSchema schema = TestSchema();
  schema.Add(Spec("note", ValueType::kString, "''", "free text, empty by default"));
  try {
    Config::Load(schema, "", {"env_id=CartPole-v1", "note="});
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "note: got ''; a value, or its default, the empty string, written quoted: '' in "
                 "a file, --set 'note=\"\"' (an empty value, null or ~ is no value for any key)");
  }
  EXPECT_EQ(Config::Load(schema, "", {"env_id=CartPole-v1", "note=\"\""}).GetString("note"), "");
  EXPECT_EQ(OverrideError("carbon.region=\"\""),  // a quoted '' where the default is not ''
            "carbon.region: got ''; a non-empty string (default world)");
  EXPECT_EQ(OverrideError("carbon.region="),  // its default is "world"
            "carbon.region: got ''; a string (an empty value, null or ~ is no value for any key)");
  EXPECT_EQ(OverrideError("gamma=abc"), "gamma: got 'abc'; a number in [0, 1]");
  EXPECT_EQ(OverrideError("normalize=yes"), "normalize: got 'yes'; true or false");
  EXPECT_EQ(OverrideError("normalize=1"), "normalize: got '1'; true or false");
  EXPECT_EQ(OverrideError("learning_rate=lin_x"),
            "learning_rate: got 'lin_x'; a number, or lin_<number> or linear_<number> (linear "
            "to 0), e.g. lin_0.001, with (initial) value > 0");
  EXPECT_EQ(OverrideError("policy_kwargs.net_arch=64"),
            "policy_kwargs.net_arch: got '64'; a list of integers >= 1, e.g. [64, 64], or [] for "
            "none");
  EXPECT_EQ(OverrideError("policy_kwargs.net_arch=[64, a]"),
            "policy_kwargs.net_arch: got '[64, a]'; a list of integers >= 1, e.g. [64, 64], or [] "
            "for none");
  EXPECT_EQ(OverrideError("carbon.region=[a]"), "carbon.region: got '[a]'; a string");
  EXPECT_EQ(OverrideError("policy_kwargs.net_arch=dict(pi=[32])"),
            "policy_kwargs.net_arch: got 'dict(pi=[32])'; a list of integers >= 1, e.g. [64, 64], "
            "or [] for none "
            "(Python's dict(...) is read as a whole policy_kwargs or normalize value in an "
            "rl-zoo file or --set only; for this key give YAML's map form, e.g. "
            "'policy_kwargs.net_arch={pi: [64], vf: [64]}')");
  EXPECT_EQ(OverrideError("carbon.pue={a: 1}"), "carbon.pue: got '{a: 1}'; a number >= 1");
  // A quoted number or bool is a string to YAML (and to rl-zoo's PyYAML, then SB3): refused,
  // where a quoted schedule text and a quoted string are taken.
  EXPECT_EQ(OverrideError("gamma=\"0.99\""),
            "gamma: got '0.99'; a number in [0, 1], written without quotes (a quoted value is a "
            "string in YAML, which rl-zoo and SB3 would not read as a number)");
  EXPECT_EQ(OverrideError("normalize='False'"),
            "normalize: got 'False'; true or false, written without quotes (a quoted value is a "
            "string in YAML, which rl-zoo and SB3 would not read as a bool)");
  EXPECT_EQ(OverrideError("n_steps='64'"),
            "n_steps: got '64'; an integer >= 1, written without quotes (a quoted value is a "
            "string in YAML, which rl-zoo and SB3 would not read as a number)");
  EXPECT_EQ(OverrideError("learning_rate='1e-3'").rfind("learning_rate: got '1e-3'; ", 0), 0u);
  EXPECT_EQ(OverrideError("policy_kwargs.net_arch=[64, '64']"),
            "policy_kwargs.net_arch: got '[64, 64]'; a list of integers >= 1, e.g. [64, 64], or "
            "[] for none, its items written without quotes (a quoted item is a string in YAML, "
            "which rl-zoo and SB3 would not read as a number)");
  const Config quoted_texts = Config::Load(
      TestSchema(), "", {"env_id='CartPole-v1'", "learning_rate=\"lin_0.001\"", "gamma=0.99"});
  EXPECT_EQ(quoted_texts.GetString("env_id"), "CartPole-v1");
  EXPECT_EQ(quoted_texts.GetSchedule("learning_rate").ToString(), "lin_0.001");
}

TEST(ConfigTest, OutOfRangeNamesBounds) {
  EXPECT_EQ(OverrideError("n_steps=0"), "n_steps: got '0'; an integer >= 1");
  EXPECT_EQ(OverrideError("gamma=1.5"), "gamma: got '1.5'; a number in [0, 1]");
  EXPECT_EQ(OverrideError("gamma=-0.1"), "gamma: got '-0.1'; a number in [0, 1]");
  EXPECT_EQ(OverrideError("carbon.intensity_g_per_kwh=0"),
            "carbon.intensity_g_per_kwh: got '0'; a number > 0");
  EXPECT_EQ(OverrideError("carbon.pue=0.9"), "carbon.pue: got '0.9'; a number >= 1");
  EXPECT_EQ(OverrideError("learning_rate=lin_-1e-3"),
            "learning_rate: got 'lin_-1e-3'; a number, or lin_<number> or linear_<number> "
            "(linear to 0), e.g. lin_0.001, with (initial) value > 0");
  EXPECT_EQ(OverrideError("policy_kwargs.net_arch=[64, 0]"),
            "policy_kwargs.net_arch: got '[64, 0]'; a list of integers >= 1, e.g. [64, 64], or [] "
            "for none");
  // Bounds are inclusive unless min_exclusive.
  const Config config = Config::Load(TestSchema(), "", {"env_id=x", "gamma=1", "carbon.pue=1"});
  EXPECT_EQ(config.GetFloat("gamma"), 1.0);
}

TEST(ConfigTest, BadChoiceListsChoices) {
  EXPECT_EQ(OverrideError("device=tpu"), "device: got 'tpu'; one of: auto, cpu, cuda");
  EXPECT_EQ(Config::Load(TestSchema(), "", {"env_id=x", "device=cuda"}).GetString("device"),
            "cuda");
}

TEST(ConfigTest, NonFiniteFloatsRejected) {
  EXPECT_EQ(OverrideError("gamma=.nan"), "gamma: got '.nan'; a finite number in [0, 1]");
  EXPECT_EQ(OverrideError("carbon.pue=.inf"), "carbon.pue: got '.inf'; a finite number >= 1");
  EXPECT_EQ(OverrideError("carbon.pue=1e999"), "carbon.pue: got '1e999'; a finite number >= 1");
  const std::string path = WriteTempFile("nan.yaml", "env_id: x\ngamma: .NaN\n");
  EXPECT_EQ(LoadError(path, {}), "gamma (in " + path + "): got '.NaN'; a finite number in [0, 1]");
}

TEST(ConfigTest, FileErrorsNameThePath) {
  const std::string malformed = WriteTempFile("malformed.yaml", "env_id: x\nn_steps: [1, 2\n");
  EXPECT_THAT(LoadError(malformed, {}),
              StartsWith("--config: got '" + malformed + "'; valid YAML: error at line "));
  const std::string bad_indent =
      WriteTempFile("bad_indent.yaml", "carbon:\n  pue: 1.2\n region: FR\n");
  EXPECT_THAT(LoadError(bad_indent, {}),
              StartsWith("--config: got '" + bad_indent + "'; valid YAML: error at line 3"));

  // In a folder of its own: a near YAML name beside a missing file would be suggested (below).
  const std::string folder = ::testing::TempDir() + "greenrl_config_test_missing";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  const std::string missing = folder + "/does_not_exist.yaml";
  EXPECT_EQ(LoadError(missing, {}),
            "--config: got '" + missing + "'; an existing, readable YAML file (no such file)");
  std::ofstream(folder + "/cartpole.yaml") << "algo: ppo\n";
  std::ofstream(folder + "/pendulum.yml") << "algo: ppo\n";
  EXPECT_EQ(LoadError(folder + "/cartpole.yml", {}),
            "--config: got '" + folder +
                "/cartpole.yml'; an existing, readable YAML file (no such " +
                "file; did you mean '" + folder + "/cartpole.yaml'?)");
  EXPECT_EQ(LoadError(folder + "/pendulm.yml", {}),
            "--config: got '" + folder +
                "/pendulm.yml'; an existing, readable YAML file (no such " +
                "file; did you mean '" + folder + "/pendulum.yml'?)");
  std::filesystem::remove_all(folder);
  EXPECT_EQ(LoadError(::testing::TempDir(), {}),
            "--config: got '" + ::testing::TempDir() +
                "'; an existing, readable YAML file (it is a directory)");

  const std::string list = WriteTempFile("list.yaml", "- n_steps: 1\n");
  EXPECT_EQ(LoadError(list, {}),
            "--config: got '" + list +
                "'; a YAML map of keys, e.g. 'n_steps: 2048' (it holds a sequence)");
  const std::string twice = WriteTempFile("twice.yaml", "env_id: x\nn_steps: 1\nn_steps: 2\n");
  EXPECT_EQ(LoadError(twice, {}),
            "n_steps: got '2'; one value per key (given twice in " + twice + ")");
  // A section given twice is refused too (yaml-cpp keeps both maps; PyYAML would keep the last).
  const std::string sections =
      WriteTempFile("sections.yaml", "env_id: x\ncarbon:\n  pue: 1.2\ncarbon:\n  region: FR\n");
  EXPECT_EQ(LoadError(sections, {}),
            "carbon: got '{region: FR}'; one value per key (given twice in " + sections + ")");
  // An empty file is an empty map.
  const std::string empty = WriteTempFile("empty.yaml", "# nothing\n");
  EXPECT_EQ(Config::Load(TestSchema(), empty, {"env_id=x"}).GetInt("n_steps"), 2048);
}

// A file value that --set replaces is not parsed (rl-zoo's --hyperparams replace a file's value
// the same way), so a bad preset value can be fixed from the command line; a file's unknown key
// is still refused, and a bad value nobody replaces still names the file.
TEST(ConfigTest, OverrideReplacesABadFileValueUnparsed) {
  const std::string path = WriteTempFile("bad_value.yaml",
                                         "env_id: CartPole-v1\n"
                                         "n_steps: -5\n"
                                         "carbon:\n"
                                         "  pue: fast\n");
  const Config config = Config::Load(TestSchema(), path, {"n_steps=32", "carbon={pue: 1.3}"});
  EXPECT_EQ(config.GetInt("n_steps"), 32);
  EXPECT_EQ(config.GetFloat("carbon.pue"), 1.3);
  EXPECT_TRUE(config.IsSet("n_steps"));
  EXPECT_EQ(LoadError(path, {"n_steps=32"}).rfind("carbon.pue (in " + path + "): got 'fast'; ", 0),
            0u)
      << LoadError(path, {"n_steps=32"});
  EXPECT_EQ(LoadError(path, {"carbon.pue=1.3"}).rfind("n_steps (in " + path + "): got '-5'; ", 0),
            0u)
      << LoadError(path, {"carbon.pue=1.3"});
  // An override's own bad value is still refused, with no file named.
  EXPECT_EQ(LoadError(path, {"n_steps=0", "carbon.pue=1.3"}).rfind("n_steps: got '0'; ", 0), 0u)
      << LoadError(path, {"n_steps=0", "carbon.pue=1.3"});
  const std::string unknown = WriteTempFile("unknown_key.yaml", "env_id: x\nn_step: 32\n");
  EXPECT_EQ(LoadError(unknown, {"n_step=64"}).rfind("n_step (in " + unknown + "): ", 0), 0u)
      << LoadError(unknown, {"n_step=64"});

  EXPECT_EQ(Config::KeysSetBy(TestSchema(), "carbon={pue: 1.2, region: FR}"),
            (std::vector<std::string>{"carbon.pue", "carbon.region"}));
  EXPECT_EQ(Config::KeysSetBy(TestSchema(), "n_steps=64"), (std::vector<std::string>{"n_steps"}));
  EXPECT_THROW(Config::KeysSetBy(TestSchema(), "n_steps"), ConfigError);
}

TEST(ConfigTest, OverrideSyntaxAndRequiredKeys) {
  EXPECT_EQ(OverrideError("n_steps"), "--set: got 'n_steps'; key=value");
  EXPECT_EQ(OverrideError("=64"), "--set: got '=64'; key=value");
  EXPECT_EQ(OverrideError("n_steps:64"),
            "--set: got 'n_steps:64'; key=value (rl-zoo's -params form key:value is written "
            "n_steps=64 here)");
  EXPECT_THAT(OverrideError("n_steps=[1, 2"),
              StartsWith("n_steps: got '[1, 2'; valid YAML: error at line 1"));
  EXPECT_EQ(LoadError("", {}), "env_id: got ''; a value (required)");
}

TEST(ConfigTest, SetValidatesAndIsAtomic) {
  Config config = Config::Load(TestSchema(), "", {"env_id=x"});
  config.Set("n_steps", "128");
  EXPECT_EQ(config.GetInt("n_steps"), 128);
  EXPECT_TRUE(config.IsSet("n_steps"));
  // The first pair is valid, the second is not: nothing changes.
  EXPECT_THROW(config.Set("carbon", "{pue: 1.4, intensity_g_per_kwh: -1}"), ConfigError);
  EXPECT_EQ(config.GetFloat("carbon.pue"), 1.0);
  EXPECT_FALSE(config.IsSet("carbon.pue"));
  EXPECT_THROW(config.Set("no_such_key", "1"), ConfigError);
}

TEST(ConfigTest, ProgrammingErrorsAreInternalErrors) {
  const Config config = Config::Load(TestSchema(), "", {"env_id=x"});
  EXPECT_THROW(config.GetInt("no_such_key"), InternalError);
  EXPECT_THROW(config.GetFloat("n_steps"), InternalError);
  EXPECT_THROW(config.GetString("normalize"), InternalError);
  EXPECT_THROW(config.IsSet("carbon"), InternalError);

  ConfigSchema schema = TestSchema();
  EXPECT_THROW(schema.Add(Spec("n_steps", ValueType::kInt, "1", "again")), InternalError);
  EXPECT_THROW(schema.Add(Spec("carbon", ValueType::kInt, "1", "a section")), InternalError);
  EXPECT_THROW(schema.Add(Spec("gamma.x", ValueType::kInt, "1", "under a key")), InternalError);
  EXPECT_THROW(schema.Add(Spec("a..b", ValueType::kInt, "1", "empty segment")), InternalError);
  EXPECT_THROW(schema.Add(Spec("batch_size", ValueType::kInt, "1.5", "bad default")),
               InternalError);
  EXPECT_THROW(schema.Add(WithRange(Spec("flag", ValueType::kBool, "true", "ranged bool"), 0, 1)),
               InternalError);
}

// A shorthand assigns a non-map value to each of its targets (from a file, an override or Set),
// a map at it is still a section, and the last value given wins per target.
// A string key whose reader checks the text names what it accepts, not "a string".
TEST(ConfigTest, StringKeyNamesItsAcceptedText) {
  ConfigSchema schema;
  AddKey(&schema, "stop", ValueType::kString, "off", "when to stop", {}, {}, {}, false,
         "off or a number");
  auto error = [&](const std::string& set) {
    try {
      Config::Load(schema, "", {set});
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("stop=[1]"), "stop: got '[1]'; off or a number");
  EXPECT_EQ(error("stop="),
            "stop: got ''; off or a number (an empty value, null or ~ is no value for any key)");
  EXPECT_EQ(Config::Load(schema, "", {"stop=12"}).GetString("stop"), "12");
  KeySpec bad = Spec("flag", ValueType::kBool, "true", "a bool");
  bad.accepted = "a flag";
  EXPECT_THROW(schema.Add(bad), InternalError);
  // An int key's accepted text is a note after its range.
  KeySpec width = Spec("width", ValueType::kInt, "1", "an int");
  width.min = 1;
  width.accepted = "columns (a [n, unit] pair is written n)";
  schema.Add(width);
  EXPECT_EQ(error("width=0"),
            "width: got '0'; an integer >= 1; columns (a [n, unit] pair is written n)");
}

TEST(ConfigTest, ShorthandSetsEveryTarget) {
  ConfigSchema schema;
  schema.Add(Spec("arch.pi", ValueType::kIntList, "[64, 64]", "actor"));
  schema.Add(Spec("arch.vf", ValueType::kIntList, "[64, 64]", "critic"));
  schema.AddShorthand("arch", {"arch.pi", "arch.vf"});
  const std::string path = WriteTempFile("shorthand.yaml", "arch: [32, 16]\n");
  const Config from_file = Config::Load(schema, path, {});
  EXPECT_EQ(from_file.GetIntList("arch.pi"), (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(from_file.GetIntList("arch.vf"), (std::vector<int64_t>{32, 16}));
  EXPECT_TRUE(from_file.IsSet("arch.vf"));
  // A bad file value at the shorthand is replaced unparsed when overrides set both its targets.
  const Config fixed =
      Config::Load(schema, WriteTempFile("bad_shorthand.yaml", "arch: fast\n"), {"arch=[16]"});
  EXPECT_EQ(fixed.GetIntList("arch.vf"), (std::vector<int64_t>{16}));
  const Config overridden = Config::Load(schema, path, {"arch.vf=[8]", "arch={pi: [4]}"});
  EXPECT_EQ(overridden.GetIntList("arch.pi"), (std::vector<int64_t>{4}));
  EXPECT_EQ(overridden.GetIntList("arch.vf"), (std::vector<int64_t>{8}));
  Config set = Config::Load(schema, "", {});
  set.Set("arch", "[128]");
  EXPECT_EQ(set.GetIntList("arch.pi"), (std::vector<int64_t>{128}));
  EXPECT_EQ(set.GetIntList("arch.vf"), (std::vector<int64_t>{128}));
  try {
    Config::Load(schema, "", {"arch=fast"});
    ADD_FAILURE() << "no error for a bad shorthand value";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), StartsWith("arch: got 'fast'; a list of"));
    EXPECT_EQ(error.field(), "arch");
  }
  try {  // a key given twice, once through the shorthand
    Config::Load(schema, WriteTempFile("twice.yaml", "arch: [32]\narch.vf: [8]\n"), {});
    ADD_FAILURE() << "no error for a key given twice";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), StartsWith("arch.vf: got '[8]'; one value per key (given twice in "));
    EXPECT_THAT(error.what(), HasSubstr("twice.yaml, once through the shorthand arch)"));
  }
  try {  // a shorthand is a guess for a near miss
    Config::Load(schema, "", {"arhc=[1]"});
    ADD_FAILURE() << "no error for an unknown key";
  } catch (const ConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("did you mean 'arch'?"));
  }
  EXPECT_THROW(schema.AddShorthand("arch.pi", {"arch.vf"}), InternalError);  // a key
  EXPECT_THROW(schema.AddShorthand("other", {"arch.qf"}), InternalError);    // no such target
  EXPECT_THROW(schema.AddShorthand("none", {}), InternalError);
  EXPECT_THROW(schema.AddShorthand("arch", {"arch.pi"}), InternalError);  // declared twice
  ConfigSchema other;
  other.Add(Spec("width", ValueType::kInt, "1", "a key"));
  other.AddShorthand("both", {"width"});
  EXPECT_THROW(other.Add(Spec("both", ValueType::kInt, "1", "the shorthand's name")),
               InternalError);
}

TEST(ConfigTest, ToYamlNestsInSchemaOrderAndRoundTrips) {
  const Config config = Config::Load(
      TestSchema(), "",
      {"env_id=CartPole-v1", "gamma=0.1", "learning_rate=lin_2.5e-4", "normalize=true",
       "carbon.pue=1.2", "carbon.intensity_g_per_kwh=1e20", "policy_kwargs.net_arch=[]"});
  EXPECT_EQ(config.ToYaml(),
            "# greenrl resolved config: every key with its effective value\n"
            "env_id: CartPole-v1  # Gymnasium env id\n"
            "n_timesteps: 100000  # total env steps\n"
            "n_steps: 2048  # steps per env per rollout\n"
            "gamma: 0.1  # discount factor\n"
            "learning_rate: lin_0.00025  # Adam step size\n"
            "normalize: true  # normalize observations\n"
            "device: auto  # torch device\n"
            "policy_kwargs:\n"
            "  net_arch: []  # hidden layer widths\n"
            "carbon:\n"
            "  pue: 1.2  # power usage effectiveness\n"
            "  region: world  # grid region\n"
            "  intensity_g_per_kwh: 1e+20  # grid carbon intensity, g CO2e per kWh\n");

  // One key's text, as ToYaml gives it.
  EXPECT_EQ(config.ValueText("gamma"), "0.1");
  EXPECT_EQ(config.ValueText("carbon.pue"), "1.2");
  EXPECT_EQ(config.ValueText("n_steps"), "2048");
  EXPECT_EQ(config.ValueText("normalize"), "true");
  EXPECT_EQ(config.ValueText("learning_rate"), "lin_0.00025");
  EXPECT_EQ(config.ValueText("policy_kwargs.net_arch"), "[]");
  EXPECT_THROW(config.ValueText("no_such_key"), InternalError);

  // Values that plain YAML would misread, and doubles with long expansions.
  Config tricky = config;
  tricky.Set("env_id", "'my env: #1 \"quoted\"'");
  tricky.Set("carbon.region", "'true'");
  tricky.Set("gamma", "0.30000000000000004");
  tricky.Set("carbon.pue", "1.0000000000000002");
  tricky.Set("carbon.intensity_g_per_kwh", "475");
  tricky.Set("learning_rate", "0.000123456789012345");
  for (const Config* original : std::vector<const Config*>{&config, &tricky}) {
    const std::string path = WriteTempFile("round_trip.yaml", original->ToYaml());
    const Config loaded = Config::Load(TestSchema(), path, {});
    for (const KeySpec& spec : loaded.schema().keys()) {
      SCOPED_TRACE(spec.key);
      EXPECT_TRUE(loaded.IsSet(spec.key));
      switch (spec.type) {
        case ValueType::kInt:
          EXPECT_EQ(loaded.GetInt(spec.key), original->GetInt(spec.key));
          break;
        case ValueType::kFloat:
          EXPECT_EQ(loaded.GetFloat(spec.key), original->GetFloat(spec.key));
          break;
        case ValueType::kBool:
          EXPECT_EQ(loaded.GetBool(spec.key), original->GetBool(spec.key));
          break;
        case ValueType::kString:
          EXPECT_EQ(loaded.GetString(spec.key), original->GetString(spec.key));
          break;
        case ValueType::kSchedule:
          EXPECT_EQ(loaded.GetSchedule(spec.key), original->GetSchedule(spec.key));
          break;
        case ValueType::kIntList:
          EXPECT_EQ(loaded.GetIntList(spec.key), original->GetIntList(spec.key));
          break;
      }
    }
    EXPECT_EQ(loaded.ToYaml(), original->ToYaml());
  }
  EXPECT_EQ(tricky.GetString("env_id"), "my env: #1 \"quoted\"");
  EXPECT_EQ(tricky.GetString("carbon.region"), "true");
  EXPECT_THAT(tricky.ToYaml(), HasSubstr("  intensity_g_per_kwh: 475.0  #"));
  EXPECT_EQ(tricky.ValueText("carbon.intensity_g_per_kwh"), "475.0");
  EXPECT_EQ(tricky.ValueText("carbon.region"), "\"true\"");
  EXPECT_THAT(tricky.ToYaml(), HasSubstr("  region: \"true\"  #"));
}

}  // namespace
}  // namespace greenrl
