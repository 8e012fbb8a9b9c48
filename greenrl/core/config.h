// config.h: a validated, typed config tree for YAML presets in rl-baselines3-zoo style with
// `--set key=value` overrides.
//
// A ConfigSchema declares every key once: its dotted name ("n_steps", "carbon.pue"), type, default,
// one line of doc and the accepted range or choices (STYLE.md point 1, specs before dynamics).
// It does not replace STYLE.md point 6: each algorithm keeps its flat, documented config struct;
// its schema lists the struct's fields 1:1 as keys, and the struct is filled from a loaded Config
// with the typed getters below, so YAML keys and --set overrides map onto its fields.
// Config::Load reads a preset, applies overrides and validates every value against the schema
// before returning, so that a bad value is a ConfigError naming the key, the value given and what
// is accepted (STYLE.md "Errors") before any training starts. Config::ToYaml writes the resolved
// config for the run directory; loading that file gives the same values back.
//
// YAML rules, in short:
// - files are nested maps (`carbon: {pue: 1.2}`), flattened to dotted keys; a dotted key written
//   literally at any level (`carbon.pue: 1.2`) is the same key;
// - scalars are read with the YAML 1.2 core schema whatever their tag or quoting: ints
//   `[-+]?[0-9]+`, floats incl. `1e5` (rl-zoo also writes `!!float 1e5`), bools `true`/`false`
//   only (no YAML 1.1 `yes`/`on`), `.nan`/`.inf` recognised and rejected;
// - an int key accepts a float that is integral (`1e5` -> 100000), never a fractional one;
// - a YAML null (`key:` or `key: ~`) is not a value for any type;
// - a non-map value at a shorthand (ConfigSchema::AddShorthand, e.g. PPO's
//   `policy_kwargs: {net_arch: [64, 64]}`) is given to each of its keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "greenrl/core/schedule.h"

namespace greenrl {

// The type of a config value, which decides parsing, validation and the getter to use.
enum class ValueType {
  kInt,       // int64_t; GetInt
  kFloat,     // finite double; GetFloat
  kBool,      // true or false; GetBool
  kString,    // any scalar text, or one of `choices`; GetString
  kSchedule,  // a number or lin_<number> (schedule.h); GetSchedule
  kIntList,   // a sequence of ints, e.g. [64, 64]; GetIntList
};

// Returns: the lower-case name of a type ("int", "float", "bool", "string", "schedule",
// "int_list"), for docs and messages.
const char* ValueTypeName(ValueType type);

// The declaration of one config key.
struct KeySpec {
  // Dotted key, e.g. "n_steps", "carbon.pue". Segments are non-empty; a key is never also the
  // section of another key ("carbon" and "carbon.pue" cannot both exist).
  std::string key;
  ValueType type = ValueType::kString;
  // The default as YAML text ("2048", "lin_3e-4", "[64, 64]", "auto"); nullopt: the key is
  // required and Load fails when neither the file nor an override gives it.
  std::optional<std::string> default_yaml;
  // One line saying what the key means, with its unit.
  std::string doc;
  // Inclusive bounds for kInt, kFloat, kIntList (each element) and kSchedule (its initial
  // value); min_exclusive makes the lower bound strict ("a number > 0"), max_exclusive the upper
  // one ("a number in (0, 1)").
  std::optional<double> min;
  std::optional<double> max;
  bool min_exclusive = false;
  bool max_exclusive = false;
  // For kString only: the accepted values; empty = any text.
  std::vector<std::string> choices;
  // For kString: what the key accepts, in words, for a text that its reader checks (e.g.
  // "off, env or a finite number"); an error at Load names it instead of "a string" (empty:
  // "a string", or the choices). For kInt, kFloat and kSchedule: a note an error at Load adds
  // after the range (e.g. how SB3's other spellings of the value are written: "0 is off (SB3's
  // None)").
  std::string accepted;
};

// The set of keys a Config accepts, in declaration order. Build it once, then read it from any
// number of threads.
class ConfigSchema {
 public:
  // Declares a key.
  // Args: spec: the key's declaration; its default, if any, must itself be valid.
  // Errors: InternalError (GREENRL_CHECK) on a programming bug: empty or malformed key, a key
  //   declared twice, a key that is also a section of another, bounds or choices on a type that
  //   has none, or an invalid default.
  void Add(KeySpec spec);

  // Returns: the declaration of `key`, or nullptr when the schema has no such key.
  const KeySpec* Find(const std::string& key) const;

  // Returns: every declaration, in the order they were added.
  const std::vector<KeySpec>& keys() const { return keys_; }

  // Says why `key`, which this schema does not declare, is still a key the user may know (e.g.
  // "for algo ppo (a key of dqn, sac)"): the unknown-key error then reads "unknown key <note>; ",
  // without a did-you-mean guess.
  void AddUnknownKeyNote(const std::string& key, std::string note);
  // Returns: the note for `key`, else for its nearest parent key that has one (the note of
  // "env_kwargs" answers "env_kwargs.use_contact_forces"), or nullptr when none has.
  const std::string* UnknownKeyNote(const std::string& key) const;

  // Declares `key`, which this schema does not declare, a bool option of SB3's that greenrl has
  // at its SB3 default `value` only (gSDE's policy_kwargs.full_std: True): a file or override
  // that writes it out at that value is read, and the value has no effect (the Config does not
  // hold it, so config.yaml leaves it out); another value is refused with `why` (e.g. "greenrl's
  // gSDE has SB3's full [features, actions] std only").
  // Errors: InternalError (GREENRL_CHECK) when `key` is declared, or already fixed.
  void AddDefaultOnlyKey(const std::string& key, bool value, std::string why);
  // The same for an int option of SB3's (SAC's policy_kwargs.n_critics: 2).
  void AddDefaultOnlyIntKey(const std::string& key, int64_t value, std::string why);
  // A key fixed at SB3's default: its type (kBool or kInt), the value as YAML text ("true", "2")
  // and why no other value is taken.
  struct DefaultOnly {
    ValueType type = ValueType::kBool;
    std::string value;
    std::string why;
  };
  // Returns: what `key` was fixed at, or nullptr when it is none.
  const DefaultOnly* DefaultOnlyKey(const std::string& key) const;
  // Returns: every key fixed at SB3's default, sorted (for `greenrl keys` and "did you mean"
  // guesses).
  std::vector<std::string> DefaultOnlyKeys() const;

  // Where every key is listed (e.g. "`greenrl keys --algo ppo`"): the unknown-key error then
  // ends "every key with its default: <where>" instead of listing them all. Empty (the
  // default): the error lists the keys.
  void set_key_list_hint(std::string where) { key_list_hint_ = std::move(where); }
  const std::string& key_list_hint() const { return key_list_hint_; }

  // Declares `key` a shorthand for several keys: a value that is not a map, given at `key` in a
  // YAML file, an override or Set, is assigned to each of `targets` as if given at each (an
  // invalid one is reported under `key`, with the first target's rule); a map at `key` is still
  // a section.
  // PPO's policy_kwargs.net_arch is one: SB3 (>= 1.8) reads net_arch=[64, 64] as the same sizes
  // for the actor and the critic.
  // Errors: InternalError (GREENRL_CHECK) when `key` is malformed, declared as a key or as a
  //   shorthand already, has no target, or a target is not declared. Add() refuses a key that is
  //   a shorthand.
  void AddShorthand(const std::string& key, std::vector<std::string> targets);
  // Returns: the targets of shorthand `key`, or nullptr when `key` is none.
  const std::vector<std::string>* ShorthandTargets(const std::string& key) const;
  // Returns: every shorthand, sorted (for "did you mean" guesses).
  std::vector<std::string> ShorthandKeys() const;

 private:
  std::vector<KeySpec> keys_;
  std::unordered_map<std::string, size_t> index_;               // key -> position in keys_
  std::unordered_map<std::string, std::string> unknown_notes_;  // AddUnknownKeyNote
  std::unordered_map<std::string, DefaultOnly> default_only_;   // AddDefaultOnlyKey, ...IntKey
  std::string key_list_hint_;                                   // set_key_list_hint
  std::unordered_map<std::string, std::vector<std::string>> shorthands_;  // AddShorthand
};

// Shorthand for schema->Add(KeySpec{...}) for a key with a default.
// Errors: as ConfigSchema::Add.
void AddKey(ConfigSchema* schema, std::string key, ValueType type, std::string default_yaml,
            std::string doc, std::optional<double> min = std::nullopt,
            std::optional<double> max = std::nullopt, std::vector<std::string> choices = {},
            bool min_exclusive = false, std::string accepted = {});

// A resolved config: every key of its schema with a validated value. Const methods are safe to
// call from any number of threads; Set is not.
class Config {
 public:
  // Loads and validates a config.
  // Args: schema: the accepted keys (copied into the Config);
  //       yaml_path: a YAML preset (a map, possibly nested); empty: defaults and overrides only;
  //       set_overrides: "key=value" texts from --set, applied in order after the file (the last
  //       one wins); the value is YAML ("64", "lin_0.001", "[64, 64]", "{pue: 1.2}" for a section).
  //       A file value whose key an override sets is replaced unparsed, so it may be invalid (the
  //       file's key must still be a known one).
  // Returns: the config, with every key of the schema given a value.
  // Errors: ConfigError, before returning, for:
  //   a missing or unreadable file: ("--config", yaml_path, "an existing, readable YAML file
  //     (<reason>)");
  //   malformed YAML: ("--config", yaml_path, "valid YAML: error at line L, column C: <what>");
  //   a file that is not a map: ("--config", yaml_path, "a YAML map of keys, e.g. 'n_steps:
  //     2048' (it holds a <kind>)");
  //   the same key twice in the file: (key, value, "one value per key (given twice in <path>)");
  //   an override without '=' or with an empty key: ("--set", text, "key=value");
  //   a key fixed at SB3's default (AddDefaultOnlyKey) given another value: (key, value,
  //     "true only: <why>");
  //   an unknown key: (key, value, "unknown key; did you mean '<closest>'? known keys: ..."; with
  //   a key_list_hint, "... every key with its default: <hint>"), or
  //     "did you mean one of 'a', 'b', 'c'?" for ties, or no guess when nothing is close (keys of
  //     one or two letters get none unless they match a key's last segment);
  //   a value of the wrong type or out of range: (key, value, "an integer >= 1"), ("a number in
  //     [0, 1]"), ("a finite number > 0" for .nan/.inf), ("true or false"), ("one of: a, b"), ...;
  //   a required key nobody gave: (key, "", "a value (required)").
  static Config Load(const ConfigSchema& schema, const std::string& yaml_path,
                     const std::vector<std::string>& set_overrides);

  // The keys one "key=value" override text sets: the key itself, a section's keys for a map
  // value ("carbon={pue: 1.2}" -> carbon.pue), or a shorthand's targets. Nothing is validated
  // against the schema beyond that expansion (unknown keys come back as given).
  // Errors: as Load's for an override without '=' or with an empty key, or a value that is not
  //   YAML.
  static std::vector<std::string> KeysSetBy(const ConfigSchema& schema,
                                            const std::string& override_text);

  // Sets one key (or a section's keys, when yaml_text is a map) with the same parsing and
  // validation as a --set override; the key counts as explicitly set.
  // Args: key: dotted key, a section name when yaml_text is a map, or a shorthand (its value goes
  //   to each of its keys); yaml_text: YAML value.
  // Errors: ConfigError as for Load's overrides; the config is unchanged when it throws.
  void Set(const std::string& key, const std::string& yaml_text);

  // Typed getters.
  // Args: key: a key of the schema declared with the matching ValueType.
  // Returns: its effective value (file or override, else default).
  // Errors: InternalError (GREENRL_CHECK) when the key is not in the schema or has another
  //   type: a programming bug, never a user error.
  int64_t GetInt(const std::string& key) const;
  double GetFloat(const std::string& key) const;
  bool GetBool(const std::string& key) const;
  const std::string& GetString(const std::string& key) const;
  Schedule GetSchedule(const std::string& key) const;
  std::vector<int64_t> GetIntList(const std::string& key) const;

  // Returns: `key`'s effective value as ToYaml writes it ("64", "0.0", "true", "lin_0.001",
  //   "[64, 64]", a string quoted only where plain YAML would misread it).
  // Errors: InternalError when the key is not in the schema.
  std::string ValueText(const std::string& key) const;

  // Returns: true when the file, an override or Set gave `key`; false when it has its default.
  // Errors: InternalError when the key is not in the schema.
  bool IsSet(const std::string& key) const;

  // Returns: the resolved config as YAML: a comment line, then every key of the schema with its
  //   effective value, nested back into maps (`carbon:\n  pue: 1.2`) in schema order (a section
  //   sits where its first key is declared). Floats use the shortest text that parses back to the
  //   same double, schedules "lin_0.001", strings are quoted when plain YAML would misread them.
  //   Load(ToYaml()) gives equal values.
  std::string ToYaml() const;

  // Returns: the schema this config was loaded with.
  const ConfigSchema& schema() const { return schema_; }

  // One typed value; the alternative is fixed by the key's ValueType.
  using Value = std::variant<int64_t, double, bool, std::string, Schedule, std::vector<int64_t>>;

 private:
  struct Entry {
    std::optional<Value> value;  // nullopt only while loading a required key
    bool is_set = false;
  };

  explicit Config(const ConfigSchema& schema);
  const Value& Get(const std::string& key, ValueType type) const;

  ConfigSchema schema_;
  std::vector<Entry> entries_;  // parallel to schema_.keys()
};

}  // namespace greenrl
