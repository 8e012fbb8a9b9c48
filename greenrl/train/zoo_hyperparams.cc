// zoo_hyperparams.cc: rl-zoo hyperparameter files (see zoo_hyperparams.h).
#include "greenrl/train/zoo_hyperparams.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/core/errors.h"
#include "greenrl/core/schedule.h"

namespace greenrl::train {
namespace {

// A Python literal as rl-zoo's files write them.
struct PyValue {
  enum class Kind { kNumber, kString, kBool, kNone, kName, kList, kDict };
  Kind kind = Kind::kNone;
  std::string text;                                    // number, string, name; "true"/"false"
  std::vector<PyValue> items;                          // kList (lists and tuples)
  std::vector<std::pair<std::string, PyValue>> keyed;  // kDict, in order
};

// Recursive descent over the subset above; errors name `field`, the text and the position.
class PyParser {
 public:
  PyParser(std::string field, const std::string& text) : field_(std::move(field)), text_(text) {}

  PyValue ParseAll() {
    PyValue v = Value();
    Skip();
    if (pos_ != text_.size()) Fail("nothing after the value");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw ConfigError(
        field_, text_,
        fmt::format("a Python literal rl-zoo writes (numbers, strings, True/False/"
                    "None, lists, dict(...), {{...}}, names such as nn.ReLU): {} "
                    "{}",
                    what,
                    pos_ >= text_.size() ? std::string("at the end (the text stops there)")
                                         : "at character " + std::to_string(pos_ + 1)));
  }
  void Skip() {  // spaces, newlines and # comments, as Python's eval skips them
    while (pos_ < text_.size()) {
      if (text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else {
        break;
      }
    }
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(fmt::format("'{}' expected", c));
  }
  std::string Identifier() {  // a dotted name: nn.ReLU, th.nn.Tanh
    Skip();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    if (pos_ == start) Fail("a name expected");
    return text_.substr(start, pos_ - start);
  }
  // Items up to `close`, each parsed by `item`; a trailing comma is allowed.
  template <typename F>
  void Items(char close, F item) {
    if (Eat(close)) return;
    do {
      if (Eat(close)) return;  // trailing comma
      item();
    } while (Eat(','));
    Expect(close);
  }
  PyValue Value() {
    Skip();
    if (pos_ >= text_.size()) Fail("a value expected");
    const char c = text_[pos_];
    PyValue v;
    if (c == '[' || c == '(') {
      ++pos_;
      v.kind = PyValue::Kind::kList;
      Items(c == '[' ? ']' : ')', [&] { v.items.push_back(Value()); });
      return v;
    }
    if (c == '{') {
      ++pos_;
      v.kind = PyValue::Kind::kDict;
      Items('}', [&] {
        const PyValue key = Value();
        if (key.kind != PyValue::Kind::kString) Fail("a string key expected");
        Expect(':');
        v.keyed.emplace_back(key.text, Value());
      });
      return v;
    }
    if (c == '\'' || c == '"') {
      const size_t end = text_.find(c, pos_ + 1);
      if (end == std::string::npos) Fail("an unterminated string");
      v.kind = PyValue::Kind::kString;
      v.text = text_.substr(pos_ + 1, end - pos_ - 1);
      pos_ = end + 1;
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') {
      const size_t start = pos_;
      ++pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
              ((text_[pos_] == '-' || text_[pos_] == '+') &&
               (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
        ++pos_;
      }
      v.kind = PyValue::Kind::kNumber;
      v.text = text_.substr(start, pos_ - start);
      return v;
    }
    const size_t name_at = pos_;
    const std::string name = Identifier();
    if (Eat('(')) {
      if (name != "dict") {
        pos_ = name_at;
        Fail("a call of '" + name + "' (only dict(...) is read)");
      }
      v.kind = PyValue::Kind::kDict;
      Items(')', [&] {
        const size_t key_at = pos_;
        const std::string key = Identifier();
        for (const auto& [k, unused] : v.keyed) {
          if (k == key) {
            pos_ = key_at;
            Skip();
            Fail("keyword argument '" + key + "' repeated");
          }
        }
        Expect('=');
        v.keyed.emplace_back(key, Value());
      });
      return v;
    }
    if (name == "True" || name == "False") {
      v.kind = PyValue::Kind::kBool;
      v.text = name == "True" ? "true" : "false";
    } else if (name == "None") {
      v.kind = PyValue::Kind::kNone;
    } else {
      v.kind = PyValue::Kind::kName;
      v.text = name;
    }
    return v;
  }

  std::string field_;
  const std::string& text_;
  size_t pos_ = 0;
};

// A YAML value written as YAML (policy_kwargs: {net_arch: [64, 64]}) read as the literal it
// stands for: maps as dicts, sequences as lists, scalars as numbers, booleans or names.
PyValue FromYaml(const YAML::Node& node) {
  PyValue v;
  if (node.IsMap()) {
    v.kind = PyValue::Kind::kDict;
    for (const auto& e : node) v.keyed.emplace_back(e.first.Scalar(), FromYaml(e.second));
  } else if (node.IsSequence()) {
    v.kind = PyValue::Kind::kList;
    for (const auto& e : node) v.items.push_back(FromYaml(e));
  } else if (node.IsScalar()) {
    const std::string& t = node.Scalar();
    char* end = nullptr;
    std::strtod(t.c_str(), &end);
    if (!t.empty() && end != nullptr && *end == '\0') {
      v.kind = PyValue::Kind::kNumber;
      v.text = t;
    } else if (t == "true" || t == "True" || t == "false" || t == "False") {
      v.kind = PyValue::Kind::kBool;
      v.text = t == "true" || t == "True" ? "true" : "false";
    } else {
      v.kind = PyValue::Kind::kName;
      v.text = t;
    }
  }
  return v;
}

// A literal as YAML text for Config: lists and dicts in flow style, None as YAML null.
std::string Yaml(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::kList: {
      std::string s = "[";
      for (size_t k = 0; k < v.items.size(); ++k) s += (k ? ", " : "") + Yaml(v.items[k]);
      return s + "]";
    }
    case PyValue::Kind::kDict: {
      std::string s = "{";
      for (size_t k = 0; k < v.keyed.size(); ++k) {
        s += (k ? ", " : "") + v.keyed[k].first + ": " + Yaml(v.keyed[k].second);
      }
      return s + "}";
    }
    case PyValue::Kind::kNone:
      return "~";
    default:
      return v.text;
  }
}

// The value of `key` in a dict literal, or nullptr.
const PyValue* Field(const PyValue& dict, const std::string& key) {
  for (const auto& [k, v] : dict.keyed) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool IsIntList(const PyValue& v) {
  if (v.kind != PyValue::Kind::kList) return false;
  for (const PyValue& item : v.items) {
    if (item.kind != PyValue::Kind::kNumber) return false;
  }
  return true;
}

// net_arch in its three SB3 forms (zoo_hyperparams.h) as greenrl overrides.
std::vector<std::string> NetArch(const std::string& algo, const std::string& text,
                                 const PyValue& arch) {
  const auto refuse = [&](const std::string& why) {
    throw ConfigError("policy_kwargs", text,
                      "net_arch as [64, 64], dict(pi=[...], vf=[...]) for ppo or dict(pi=[...], "
                      "qf=[...]) with pi == qf for dqn and sac: " +
                          why);
  };
  if (IsIntList(arch)) {
    if (algo == "ppo") {
      return {"policy_kwargs.net_arch.pi=" + Yaml(arch), "policy_kwargs.net_arch.vf=" + Yaml(arch)};
    }
    return {"policy_kwargs.net_arch=" + Yaml(arch)};
  }
  const PyValue* dict = &arch;  // [dict(pi=..., vf=...)], older SB3: the one dict in a list
  if (arch.kind == PyValue::Kind::kList && arch.items.size() == 1) dict = &arch.items[0];
  if (dict->kind != PyValue::Kind::kDict) refuse("got " + Yaml(arch));
  const PyValue* pi = Field(*dict, "pi");
  const PyValue* second = Field(*dict, algo == "ppo" ? "vf" : "qf");
  if (pi == nullptr || second == nullptr || !IsIntList(*pi) || !IsIntList(*second) ||
      dict->keyed.size() != 2) {
    refuse("got " + Yaml(arch));
  }
  if (algo == "ppo") {
    return {"policy_kwargs.net_arch.pi=" + Yaml(*pi), "policy_kwargs.net_arch.vf=" + Yaml(*second)};
  }
  if (Yaml(*pi) != Yaml(*second))
    refuse("pi " + Yaml(*pi) + " and qf " + Yaml(*second) + " differ");
  return {"policy_kwargs.net_arch=" + Yaml(*pi)};
}

// Whether `key` reads as a Gymnasium env id with a version ("CartPole-v1",
// "ALE/Pong-v5"), as rl-zoo's section keys do.
bool LooksLikeEnvId(const std::string& key) {
  const size_t v = key.rfind("-v");
  if (v == std::string::npos || v == 0 || v + 2 == key.size()) return false;
  for (size_t k = v + 2; k < key.size(); ++k) {
    if (!std::isdigit(static_cast<unsigned char>(key[k]))) return false;
  }
  return true;
}

// The last "<key>=" value of `overrides`, or "".
std::string LastOverride(const std::vector<std::string>& overrides, const std::string& key) {
  std::string value;
  for (const std::string& o : overrides) {
    if (o.rfind(key + "=", 0) == 0) value = o.substr(key.size() + 1);
  }
  return value;
}

// A YAML node as YAML text on one line (flow style), for a `key=value` override.
std::string NodeYaml(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

}  // namespace

const std::vector<std::string>& OtherZooAlgorithms() {
  static const std::vector<std::string> names = {
      "a2c",      "ars",   "cem",       "cmaes",   "crossq", "ddpg", "her", "iqn",
      "ppo_lstm", "qrdqn", "reinforce", "sac_sbx", "td3",    "tqc",  "trpo"};
  return names;
}

std::string AlgoOfFileName(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string ext = p.extension().string(), stem = p.stem().string();
  if (ext != ".yml" && ext != ".yaml") return "";
  if (stem == "ppo" || stem == "dqn" || stem == "sac") return stem;
  // rl-zoo's other hyperparameter files (rl_zoo3/hyperparams/*.yml).
  for (const std::string& other : OtherZooAlgorithms()) {
    if (stem == other) {
      throw ConfigError("algo", stem,
                        "ppo, dqn or sac: the rl-zoo file " + path + " is for " + stem +
                            ", which greenrl does not have (--algo picks one of those for its "
                            "values)");
    }
  }
  return "";
}

namespace {
// A quoted value that spells a bool, None or a number ('False', "-2"): Python keeps it a str, so
// SB3 would not read it as written ("False" is a non-empty str, true where SB3 tests it, e.g.
// ortho_init), and greenrl refuses it rather than guess. Other strings ('future') are left to
// the keys' own checks.
// Errors: ConfigError(field, text, "<key> without quotes ...").
void RefuseQuoted(const std::string& field, const std::string& text, const std::string& key,
                  const PyValue& value) {
  if (value.kind != PyValue::Kind::kString) return;
  const std::string& t = value.text;
  char* end = nullptr;
  std::strtod(t.c_str(), &end);
  const bool number = !t.empty() && end != nullptr && *end == '\0';
  if (!number && t != "True" && t != "False" && t != "None") return;
  throw ConfigError(
      field, text,
      fmt::format("{} without quotes (True, False, None or a number): '{}' is a "
                  "Python str, which SB3 would not read as {}",
                  key, value.text,
                  value.text == "True" || value.text == "False" ? "a bool (a non-empty str is true)"
                                                                : "the value it spells"));
}

// policy_kwargs read as a literal (from Python text or YAML), as greenrl overrides.
std::vector<std::string> PolicyKwargsFrom(const std::string& algo, const std::string& text,
                                          const PyValue& kwargs) {
  if (kwargs.kind != PyValue::Kind::kDict) {
    throw ConfigError("policy_kwargs", text, "dict(...) or {...} of keyword arguments");
  }
  std::vector<std::string> out;
  for (const auto& [key, value] : kwargs.keyed) {
    if (key == "net_arch") {
      for (std::string& o : NetArch(algo, text, value)) out.push_back(std::move(o));
    } else if (key == "activation_fn") {
      if (value.kind != PyValue::Kind::kName) {
        throw ConfigError("policy_kwargs", text, "activation_fn as a class name, e.g. nn.ReLU");
      }
      std::string name = value.text.substr(value.text.rfind('.') + 1);  // npos + 1 == 0
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      // Another torch activation (rl-zoo's CarRacing section has nn.GELU) is no typo of these
      // two: said as such, rather than a "did you mean 'relu'?" for gelu.
      if (name != "tanh" && name != "relu") {
        throw ConfigError("policy_kwargs", text,
                          "activation_fn nn.Tanh or nn.ReLU, the two activations greenrl's "
                          "networks have (" +
                              value.text + " is not one of them)");
      }
      out.push_back("policy_kwargs.activation_fn=" + name);
    } else {
      RefuseQuoted("policy_kwargs", text, key, value);
      out.push_back("policy_kwargs." + key + "=" + Yaml(value));
    }
  }
  return out;
}

// normalize's dict (from Python text or YAML) as greenrl overrides.
std::vector<std::string> NormalizeFrom(const std::string& text, const PyValue& kwargs) {
  if (kwargs.kind == PyValue::Kind::kBool) return {"normalize=" + kwargs.text};
  if (kwargs.kind != PyValue::Kind::kDict) {
    throw ConfigError("normalize", text,
                      "true, false or a dict of VecNormalize arguments, e.g. \"{'norm_obs': "
                      "True, 'norm_reward': False}\"");
  }
  std::vector<std::string> out = {"normalize=true"};
  for (const auto& [key, value] : kwargs.keyed) {
    RefuseQuoted("normalize", text, key, value);
    out.push_back("normalize_kwargs." + key + "=" + Yaml(value));
  }
  return out;
}

// replay_buffer_kwargs's dict (from Python text or YAML) as greenrl overrides.
std::vector<std::string> ReplayBufferKwargsFrom(const std::string& text, const PyValue& kwargs) {
  if (kwargs.kind != PyValue::Kind::kDict) {
    throw ConfigError("replay_buffer_kwargs", text, "dict(...) or {...} of keyword arguments");
  }
  std::vector<std::string> out;
  for (const auto& [key, value] : kwargs.keyed) {
    RefuseQuoted("replay_buffer_kwargs", text, key, value);
    out.push_back("replay_buffer_kwargs." + key + "=" + Yaml(value));
  }
  return out;
}

// SB3's train_freq tuple [n, "step"] is n; the "episode" unit is refused by name.
std::string TrainFreqFrom(const YAML::Node& node) {
  const std::string text = NodeYaml(node);
  if (!node.IsSequence()) return text;
  if (node.size() == 2 && node[1].IsScalar() && node[1].Scalar() == "step" && node[0].IsScalar()) {
    return node[0].Scalar();
  }
  throw ConfigError("train_freq", text,
                    "a number of vec-env steps, or [n, step] as SB3 writes it (greenrl's DQN and "
                    "SAC train every n steps; SB3's \"episode\" unit is not supported)");
}
}  // namespace

std::vector<std::string> ZooPolicyKwargs(const std::string& algo, const std::string& text) {
  return PolicyKwargsFrom(algo, text, PyParser("policy_kwargs", text).ParseAll());
}

std::vector<std::string> ZooReplayBufferKwargs(const std::string& text) {
  return ReplayBufferKwargsFrom(text, PyParser("replay_buffer_kwargs", text).ParseAll());
}

std::optional<std::string> ZooTrainFreqSteps(const std::string& text) {
  try {
    const PyValue v = PyParser("train_freq", text).ParseAll();
    if (v.kind == PyValue::Kind::kList && v.items.size() == 2 &&
        v.items[0].kind == PyValue::Kind::kNumber && v.items[1].kind == PyValue::Kind::kString &&
        v.items[1].text == "step") {
      return v.items[0].text;
    }
  } catch (const ConfigError&) {  // not a Python literal: left to the caller
  }
  return std::nullopt;
}

std::vector<std::string> ZooNormalize(const std::string& text) {
  for (const char* t : {"true", "True", "TRUE"}) {
    if (text == t) return {"normalize=true"};
  }
  for (const char* f : {"false", "False", "FALSE"}) {
    if (text == f) return {"normalize=false"};
  }
  return NormalizeFrom(text, PyParser("normalize", text).ParseAll());
}

namespace {
using Entries = std::vector<std::pair<std::string, YAML::Node>>;

// The maps already resolved, by node identity, so that an anchor merged in many places is resolved
// once (without it a chain of maps each merging the one before twice took exponential time).
using MergeMemo = std::vector<std::pair<YAML::Node, Entries>>;

// The entries of a YAML map with its merge keys (`<<: *defaults`, `<<: [*a, *b]`) resolved as the
// YAML 1.1 merge key type says (yaml.org/type/merge.html) and PyYAML does: the map's own keys win
// over merged ones, an earlier map of a `<<` sequence over a later one, and a merged map's own
// `<<` is resolved the same way first. Merged entries come first, in the order they are met, then
// the map's own.
// Errors: ConfigError("--config", path, ...) for a `<<` whose value is not a map (or a sequence
//   of maps), or merges nested deeper than 64.
Entries ResolveMergeKeys(const YAML::Node& map, const std::string& path, const std::string& section,
                         int depth, MergeMemo* memo) {
  for (const auto& [node, entries] : *memo) {
    if (node.is(map)) return entries;
  }
  if (depth > 64) {
    throw ConfigError("--config", path,
                      "YAML merge keys (<<) nested at most 64 deep (section " + section + ")");
  }
  std::set<std::string> taken;
  for (const auto& entry : map) {
    if (entry.first.Scalar() != "<<") taken.insert(entry.first.Scalar());
  }
  Entries entries;
  const auto add_merged = [&](const YAML::Node& merged) {
    if (!merged.IsMap()) {
      throw ConfigError("--config", path,
                        "a YAML merge key (<<) of a map in the section " + section);
    }
    for (auto& [key, value] : ResolveMergeKeys(merged, path, section, depth + 1, memo)) {
      if (taken.insert(key).second) entries.emplace_back(key, value);
    }
  };
  for (const auto& entry : map) {
    if (entry.first.Scalar() != "<<") continue;
    if (entry.second.IsSequence()) {
      for (const auto& merged : entry.second) add_merged(merged);
    } else {
      add_merged(entry.second);
    }
  }
  for (const auto& entry : map) {
    if (entry.first.Scalar() != "<<") entries.emplace_back(entry.first.Scalar(), entry.second);
  }
  memo->emplace_back(map, entries);
  return entries;
}

// `node` with the merge keys of every map in it resolved (ResolveMergeKeys), as PyYAML resolves
// them at every level (`policy_kwargs: {<<: *pk, ortho_init: false}`), as a new node.
YAML::Node WithMergesResolved(const YAML::Node& node, const std::string& path,
                              const std::string& section, int depth, MergeMemo* memo) {
  if (depth > 64) {
    throw ConfigError("--config", path,
                      "YAML maps nested at most 64 deep (section " + section + ")");
  }
  if (node.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& [key, value] : ResolveMergeKeys(node, path, section, 0, memo)) {
      out[key] = WithMergesResolved(value, path, section, depth + 1, memo);
    }
    return out;
  }
  if (node.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& item : node)
      out.push_back(WithMergesResolved(item, path, section, depth + 1, memo));
    return out;
  }
  return node;
}
}  // namespace

// rl_zoo3/exp_manager.py's _preprocess_schedules splits the text at its '_' and takes
// float(value); see the header.
std::optional<std::string> ZooNoneAsOff(const std::string& key, const std::string& text) {
  if ((key == "target_kl" || key == "clip_range_vf") && (text == "None" || text == "null")) {
    return key + "=0";
  }
  return std::nullopt;
}

std::string ZooScheduleText(const std::string& key, const std::string& text) {
  if (key != "learning_rate" && key != "clip_range" && key != "clip_range_vf") return text;
  const size_t sep = text.find('_');
  if (sep == std::string::npos || text.find('_', sep + 1) != std::string::npos ||
      text.compare(0, sep, "lin") == 0) {
    return text;
  }
  const std::string value = text.substr(sep + 1);
  if (!internal::ParseYamlNumber(value)) return text;  // refused as written
  return "lin_" + value;
}

std::optional<ZooSection> ReadZooSection(const std::string& path,
                                         const std::vector<std::string>& set_overrides,
                                         const std::vector<std::string>& known_env_ids) {
  if (path.empty()) return std::nullopt;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const std::exception&) {  // YAML errors, a directory (basic_filebuf)
    return std::nullopt;  // Config::Load reports an unreadable or malformed file
  }
  if (!root.IsMap() || root.size() == 0 || root["algo"] || root["env_id"]) return std::nullopt;
  // An rl-zoo file has sections keyed by env id; other top-level entries (a stray scalar, an
  // empty section) do not make it a greenrl preset.
  std::vector<std::string> sections;
  bool env_section = false;
  for (const auto& entry : root) {
    if (!entry.second.IsMap()) continue;
    sections.push_back(entry.first.Scalar());
    env_section = env_section || LooksLikeEnvId(entry.first.Scalar());
  }
  if (!env_section) return std::nullopt;
  // The sections greenrl can train, when the caller says which; the other env ids are named
  // after them (the first 8), and sections that are no env id (rl-zoo's "atari") left out.
  std::string listed;
  std::vector<std::string> others;
  for (const std::string& s : sections) {
    if (!known_env_ids.empty() &&
        std::find(known_env_ids.begin(), known_env_ids.end(), s) == known_env_ids.end()) {
      if (LooksLikeEnvId(s)) others.push_back(s);
      continue;
    }
    listed += (listed.empty() ? "" : ", ") + s;
  }
  if (!others.empty()) {
    constexpr size_t kNamed = 8;
    std::string named;
    for (size_t k = 0; k < others.size() && k < kNamed; ++k) {
      named += (k == 0 ? "" : ", ") + others[k];
    }
    if (others.size() > kNamed) named += fmt::format(" and {} more", others.size() - kNamed);
    listed = listed.empty() ? "none that greenrl can train (it has no " + named + ")"
                            : listed + "; greenrl has no " + named;
  }

  ZooSection section;
  section.env_id = LastOverride(set_overrides, "env_id");
  // The file's sections for other versions of the env asked for (Hopper-v4 for Hopper-v5): rl-zoo
  // and greenrl take a section by its exact id.
  auto other_versions = [&]() -> std::string {
    const size_t v = section.env_id.rfind("-v");
    if (!LooksLikeEnvId(section.env_id)) return "";
    std::string found;
    for (const std::string& s : sections) {
      if (s != section.env_id && LooksLikeEnvId(s) && s.rfind("-v") == v &&
          s.compare(0, v, section.env_id, 0, v) == 0) {
        found += (found.empty() ? "" : ", ") + s;
      }
    }
    if (found.empty()) return "";
    const bool several = found.find(',') != std::string::npos;
    const bool known = std::find(known_env_ids.begin(), known_env_ids.end(), section.env_id) !=
                       known_env_ids.end();
    return " (the file's " + found + (several ? " are other versions" : " is another version") +
           " of " + section.env_id + ": a section is taken by its exact id" +
           (known ? "; copy it under " + section.env_id +
                        ", or see configs/ for greenrl's presets, which --env can point at "
                        "another version)"
                  : ")");
  };
  if (section.env_id.empty()) {
    throw ConfigError("--env", "",
                      "the env id of one of the sections of the rl-zoo file " + path + ": " +
                          listed + " (--env ID, or --set env_id=ID)");
  }
  const YAML::Node body = root[section.env_id];
  if (!body || !body.IsMap()) {
    throw ConfigError(
        "--env", section.env_id,
        "an env id with a section of hyperparameters in the rl-zoo file " + path + ": " + listed +
            (body ? " (" + section.env_id + "'s entry holds no map)" : other_versions()));
  }
  section.algo = LastOverride(set_overrides, "algo");
  if (section.algo.empty()) section.algo = AlgoOfFileName(path);
  if (section.algo.empty()) {
    throw ConfigError("algo", "",
                      "the algorithm of the rl-zoo file " + path +
                          ": rl-zoo names its files after it (ppo.yml, dqn.yml, sac.yml); give it "
                          "with --algo ppo|dqn|sac (or --set algo=...)");
  }
  section.overrides = {"algo=" + section.algo, "env_id=" + section.env_id};
  // YAML merge keys (`<<: *pybullet-defaults`, which rl-zoo's files use and yaml-cpp leaves
  // unresolved), resolved as PyYAML (rl-zoo's parser) does.
  MergeMemo memo;
  Entries entries = ResolveMergeKeys(body, path, section.env_id, 0, &memo);
  for (auto& entry : entries) {
    entry.second = WithMergesResolved(entry.second, path, section.env_id, 0, &memo);
  }
  try {  // an error in the section's values names the file and the section
    for (const auto& entry : entries) {
      const std::string key = entry.first;
      const std::string value = NodeYaml(entry.second);
      std::vector<std::string> expanded;
      if (key == "policy_kwargs") {
        expanded = entry.second.IsScalar()
                       ? ZooPolicyKwargs(section.algo, value)
                       : PolicyKwargsFrom(section.algo, value, FromYaml(entry.second));
      } else if (key == "normalize") {
        expanded = entry.second.IsScalar() ? ZooNormalize(value)
                                           : NormalizeFrom(value, FromYaml(entry.second));
      } else if (key == "replay_buffer_kwargs") {
        expanded = entry.second.IsScalar() ? ZooReplayBufferKwargs(value)
                                           : ReplayBufferKwargsFrom(value, FromYaml(entry.second));
      } else if (key == "train_freq") {
        expanded = {key + "=" + TrainFreqFrom(entry.second)};
      } else if (const auto off = ZooNoneAsOff(key, entry.second.IsNull() ? "null" : value)) {
        expanded = {*off};  // SB3's None: no early stop or value clipping, greenrl's 0
      } else if (entry.second.IsScalar()) {
        expanded = {key + "=" + ZooScheduleText(key, value)};
      } else {
        expanded = {key + "=" + value};
      }
      section.overrides.insert(section.overrides.end(), expanded.begin(), expanded.end());
    }
  } catch (const ConfigError& e) {
    throw e.WithSource(path + ", section " + section.env_id);
  }
  return section;
}

}  // namespace greenrl::train
