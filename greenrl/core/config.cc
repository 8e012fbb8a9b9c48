#include "greenrl/core/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "greenrl/core/did_you_mean.h"
#include "greenrl/core/errors.h"

namespace greenrl {
namespace {

// A (dotted key, YAML value) pair found while flattening a file or an override. `given_as` is
// the shorthand the value was written at (ConfigSchema::AddShorthand), empty when it was written
// at `key` itself: an invalid value is reported under the name the user wrote.
struct KeyedNode {
  std::string key;
  YAML::Node node;
  std::string given_as;
};

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::vector<std::string> SplitKey(const std::string& key) {
  std::vector<std::string> segments;
  size_t begin = 0;
  while (true) {
    const size_t dot = key.find('.', begin);
    segments.push_back(
        key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin));
    if (dot == std::string::npos) return segments;
    begin = dot + 1;
  }
}

std::string Trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// The value as the user wrote it, for error messages: scalars verbatim, null as "null",
// sequences and maps in flow style.
std::string NodeText(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return node.Scalar();
    case YAML::NodeType::Sequence: {
      std::vector<std::string> items;
      for (const YAML::Node& item : node) items.push_back(NodeText(item));
      return "[" + Join(items, ", ") + "]";
    }
    case YAML::NodeType::Map: {
      std::vector<std::string> items;
      for (const auto& item : node) {
        items.push_back(NodeText(item.first) + ": " + NodeText(item.second));
      }
      return "{" + Join(items, ", ") + "}";
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "null";
}

// "error at line L, column C: <what>" from a yaml-cpp exception (lines and columns 1-based).
std::string YamlErrorText(const YAML::Exception& error) {
  if (error.mark.is_null()) return error.msg;
  return "error at line " + std::to_string(error.mark.line + 1) + ", column " +
         std::to_string(error.mark.column + 1) + ": " + error.msg;
}

std::string RangeText(const KeySpec& spec) {
  using internal::FormatShortestDouble;
  if (spec.min && spec.max) {
    return std::string(" in ") + (spec.min_exclusive ? "(" : "[") +
           FormatShortestDouble(*spec.min) + ", " + FormatShortestDouble(*spec.max) +
           (spec.max_exclusive ? ")" : "]");
  }
  if (spec.min) return (spec.min_exclusive ? " > " : " >= ") + FormatShortestDouble(*spec.min);
  if (spec.max) return (spec.max_exclusive ? " < " : " <= ") + FormatShortestDouble(*spec.max);
  return "";
}

// What a key accepts, as ConfigError's `accepted` text.
std::string Describe(const KeySpec& spec) {
  switch (spec.type) {
    case ValueType::kInt:
      return "an integer" + RangeText(spec) + (spec.accepted.empty() ? "" : "; " + spec.accepted);
    case ValueType::kFloat:
      return "a number" + RangeText(spec) + (spec.accepted.empty() ? "" : "; " + spec.accepted);
    case ValueType::kBool:
      return "true or false";
    case ValueType::kString:
      if (!spec.accepted.empty()) return spec.accepted;
      return spec.choices.empty() ? "a string" : "one of: " + Join(spec.choices, ", ");
    case ValueType::kSchedule: {
      const std::string range = RangeText(spec);
      return (range.empty()
                  ? internal::kScheduleAccepted
                  : std::string(internal::kScheduleAccepted) + ", with (initial) value" + range) +
             (spec.accepted.empty() ? "" : "; " + spec.accepted);
    }
    case ValueType::kIntList:
      return "a list of integers" + RangeText(spec) + ", e.g. [64, 64], or [] for none";
  }
  return "";
}

bool InRange(const KeySpec& spec, double value) {
  if (spec.min && (spec.min_exclusive ? !(value > *spec.min) : !(value >= *spec.min))) {
    return false;
  }
  return !(spec.max && (spec.max_exclusive ? !(value < *spec.max) : !(value <= *spec.max)));
}

// Whether a key's default is the empty string ('' in YAML): such a key takes it back when given
// quoted, and its empty value's error says how.
bool DefaultIsEmptyString(const KeySpec& spec) {
  return spec.default_yaml && YAML::Load(*spec.default_yaml).Scalar().empty();
}

// Parses and validates one value against its declaration.
// Errors: ConfigError(spec.key, NodeText(node), Describe(spec)); for a null node (no value)
// ConfigError(spec.key, "", Describe(spec) + " (an empty value ...)"); for a non-finite float
// ConfigError(spec.key, text, "a finite number...").
Config::Value ParseValue(const KeySpec& spec, const YAML::Node& node) {
  if (node.IsNull()) {  // `--set key=`, `key:`, `key: null`, `key: ~`
    // A key whose default is the empty string ('' for none, e.g. carbon.region) takes it again
    // as YAML's quoted empty string.
    if (spec.type == ValueType::kString && DefaultIsEmptyString(spec)) {
      throw ConfigError(spec.key, "",
                        "a value, or its default, the empty string, written quoted: '' in a "
                        "file, --set '" +
                            spec.key +
                            "=\"\"' (an empty value, null or ~ is no value for any key)");
    }
    throw ConfigError(spec.key, "",
                      Describe(spec) + " (an empty value, null or ~ is no value for any key)");
  }
  const std::string text = NodeText(node);
  // rl-zoo's Python dict(...) strings are read from its hyperparameter files
  // (zoo_hyperparams.h); elsewhere YAML's flow map is the way to give a section.
  const std::string hint =
      text.rfind("dict(", 0) == 0
          ? " (Python's dict(...) is read as a whole policy_kwargs or normalize value in an "
            "rl-zoo file or --set only; for this key give YAML's map form, e.g. "
            "'policy_kwargs.net_arch={pi: [64], vf: [64]}')"
          : "";
  const auto fail = [&]() { return ConfigError(spec.key, text, Describe(spec) + hint); };
  const bool scalar = node.IsScalar();
  // A quoted scalar is text to YAML ('0.99', "False"): PyYAML, which rl-zoo reads its files
  // with, hands SB3 a string, which SB3 refuses as a number or takes as a bool by Python's
  // truth (the string "False" is true). Refused for number, bool and list keys, and for a
  // schedule written as a plain number; a schedule's "lin_0.001" is text in rl-zoo too.
  // (yaml-cpp tags a quoted scalar "!", a plain one "?".)
  const bool quoted = scalar && node.Tag() == "!";
  const bool quoted_number =
      quoted && (spec.type == ValueType::kInt || spec.type == ValueType::kFloat ||
                 spec.type == ValueType::kBool ||
                 (spec.type == ValueType::kSchedule && internal::ParseYamlNumber(text)));
  if (quoted_number) {
    throw ConfigError(spec.key, text,
                      Describe(spec) +
                          ", written without quotes (a quoted value is a string in YAML, which "
                          "rl-zoo and SB3 would not read as " +
                          (spec.type == ValueType::kBool ? "a bool" : "a number") + ")");
  }
  switch (spec.type) {
    case ValueType::kInt: {
      const std::optional<int64_t> value = scalar ? internal::ParseYamlInt(text) : std::nullopt;
      if (!value || !InRange(spec, static_cast<double>(*value))) throw fail();
      return *value;
    }
    case ValueType::kFloat: {
      const std::optional<double> value = scalar ? internal::ParseYamlNumber(text) : std::nullopt;
      if (!value) throw fail();
      if (!std::isfinite(*value)) {
        throw ConfigError(spec.key, text, "a finite number" + RangeText(spec));
      }
      if (!InRange(spec, *value)) throw fail();
      return *value;
    }
    case ValueType::kBool: {
      // YAML 1.2 core schema: no yes/no/on/off, which YAML 1.1 readers take for bools.
      if (scalar && (text == "true" || text == "True" || text == "TRUE")) return true;
      if (scalar && (text == "false" || text == "False" || text == "FALSE")) return false;
      throw fail();
    }
    case ValueType::kString: {
      if (!scalar) throw fail();
      // A free-text key whose default is not empty (a path, a library name) has no use for the
      // empty string ('' in YAML); a key whose default is '' takes it (the null branch above).
      if (text.empty() && spec.choices.empty() && spec.accepted.empty() && spec.default_yaml &&
          !DefaultIsEmptyString(spec)) {
        throw ConfigError(spec.key, "", "a non-empty string (default " + *spec.default_yaml + ")");
      }
      if (!spec.choices.empty() &&
          std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) {
        throw ConfigError(spec.key, text, DidYouMean(text, spec.choices) + Describe(spec) + hint);
      }
      return text;
    }
    case ValueType::kSchedule: {
      if (!scalar) throw fail();
      Schedule schedule;
      try {
        schedule = Schedule::Parse(spec.key, text);
      } catch (const ConfigError&) {
        throw fail();  // with the range in the accepted text
      }
      if (!InRange(spec, schedule.initial)) throw fail();
      return schedule;
    }
    case ValueType::kIntList: {
      if (!node.IsSequence()) throw fail();
      std::vector<int64_t> values;
      for (const YAML::Node& item : node) {
        if (item.IsScalar() && item.Tag() == "!") {  // as a quoted number above
          throw ConfigError(spec.key, text,
                            Describe(spec) +
                                ", its items written without quotes (a quoted item is a string "
                                "in YAML, which rl-zoo and SB3 would not read as a number)");
        }
        const std::optional<int64_t> value =
            item.IsScalar() ? internal::ParseYamlInt(item.Scalar()) : std::nullopt;
        if (!value || !InRange(spec, static_cast<double>(*value))) throw fail();
        values.push_back(*value);
      }
      return values;
    }
  }
  throw fail();
}

std::string FirstSegment(const std::string& key) { return key.substr(0, key.find('.')); }

std::string LastSegment(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

// The ConfigError for a key the schema does not have: a hint first (a close key, or the keys of
// a section given a scalar), then every known key.
ConfigError UnknownKeyError(const ConfigSchema& schema, const std::string& key,
                            const std::string& value) {
  std::vector<std::string> known;
  std::vector<std::string> section_keys;
  std::vector<std::string> closest;  // the keys at the smallest distance, in schema order
  size_t closest_distance = std::string::npos;
  const std::string given_segment = LastSegment(key);
  for (const KeySpec& spec : schema.keys()) {
    known.push_back(spec.key);
    if (spec.key.rfind(key + ".", 0) == 0) section_keys.push_back(spec.key);
    // A matching last segment ("pue" for "carbon.pue") counts as the closest possible match; a
    // last segment of 3 or more letters that begins a key's last segment ("activation" for
    // "policy_kwargs.activation_fn", "regio" for "carbon.region"), or ends it after a '_' or with
    // 5 letters or more ("lambda" for "gae_lambda", "steps" for "n_timesteps"; not "eps" for
    // "n_timesteps"), as a one-letter typo.
    const std::string segment = LastSegment(spec.key);
    size_t distance = segment == given_segment ? 0 : EditDistance(key, spec.key);
    const size_t n = given_segment.size();
    if (distance > 1 && n >= 3 && segment.size() > n &&
        (segment.rfind(given_segment, 0) == 0 ||
         (segment.compare(segment.size() - n, std::string::npos, given_segment) == 0 &&
          (n >= 5 || segment[segment.size() - n - 1] == '_')))) {
      distance = 1;
    }
    if (distance < closest_distance) {
      closest_distance = distance;
      closest.clear();
    }
    if (distance == closest_distance) closest.push_back(spec.key);
  }
  // Another name that is a guess too: a matching last segment counts as the closest possible
  // match; at the front of the ties or after them.
  auto consider = [&](const std::string& candidate, bool in_front) {
    const size_t distance =
        LastSegment(candidate) == given_segment ? 0 : EditDistance(key, candidate);
    if (distance < closest_distance) {
      closest_distance = distance;
      closest.clear();
    }
    if (distance != closest_distance) return;
    if (in_front) {
      closest.insert(closest.begin(), candidate);
    } else {
      closest.push_back(candidate);
    }
  };
  // A key fixed at SB3's default ("n_step" for DQN's n_steps), after the declared keys when as
  // close.
  for (const std::string& fixed : schema.DefaultOnlyKeys()) consider(fixed, false);
  // A shorthand ("net_arch" for PPO's policy_kwargs.net_arch), ahead of its targets when as
  // close.
  for (const std::string& shorthand : schema.ShorthandKeys()) consider(shorthand, true);
  const std::string* note = schema.UnknownKeyNote(key);
  std::string hint = note != nullptr ? "unknown key " + *note + "; " : "unknown key; ";
  if (!section_keys.empty()) {
    hint += "'" + key + "' is a section, set its keys (" + Join(section_keys, ", ") + "); ";
    if (value.rfind("dict(", 0) == 0) {
      hint +=
          "Python's dict(...) is read as a whole policy_kwargs or normalize value in an "
          "rl-zoo file or --set only; in a preset give YAML's map, e.g. '" +
          key + ": {" + FirstSegment(section_keys.front().substr(key.size() + 1)) + ": ...}'; ";
    }
  } else if (note == nullptr && closest_distance <= std::max<size_t>(2, key.size() / 3)) {
    // (A noted key is known for what it is: a guess at a typo would mislead.)
    if (closest.size() > 3) closest.resize(3);
    std::vector<std::string> quoted;
    for (const std::string& candidate : closest) quoted.push_back("'" + candidate + "'");
    // A top-level key given inside a section (SB3's use_sde as policy_kwargs.use_sde): said as
    // such, where "did you mean 'use_sde'?" read as the same name back.
    const bool top_level =
        closest.size() == 1 && closest[0] == given_segment && key.find('.') != std::string::npos;
    hint += top_level ? "did you mean " + quoted[0] + ", a top-level key (not in " +
                            key.substr(0, key.rfind('.')) + ")? "
            : quoted.size() == 1 ? "did you mean " + quoted[0] + "? "
                                 : "did you mean one of " + Join(quoted, ", ") + "? ";
  }
  if (!schema.key_list_hint().empty()) {
    return ConfigError(key, value, hint + "every key with its default: " + schema.key_list_hint());
  }
  return ConfigError(key, value, hint + "known keys: " + Join(known, ", "));
}

// Flattens `node` given under `prefix` into dotted (key, leaf) pairs; a map is a section unless
// the schema declares `prefix` itself as a key (then the map is that key's, wrong, value).
void Flatten(const ConfigSchema& schema, const std::string& prefix, const YAML::Node& node,
             const std::string& source, std::vector<KeyedNode>* out) {
  if (!node.IsMap() && !prefix.empty()) {
    if (const std::vector<std::string>* targets = schema.ShorthandTargets(prefix)) {
      for (const std::string& target : *targets) out->push_back({target, node, prefix});
      return;
    }
  }
  if (!node.IsMap() || (!prefix.empty() && schema.Find(prefix) != nullptr)) {
    out->push_back({prefix, node, ""});
    return;
  }
  std::unordered_set<std::string> names;  // YAML map keys are unique; yaml-cpp keeps repeats
  for (const auto& item : node) {
    if (!item.first.IsScalar() || item.first.Scalar().empty()) {
      throw ConfigError(prefix.empty() ? source : prefix, NodeText(item.first),
                        "map keys that are plain names, e.g. 'n_steps: 2048'");
    }
    const std::string key =
        prefix.empty() ? item.first.Scalar() : prefix + "." + item.first.Scalar();
    if (!names.insert(item.first.Scalar()).second) {  // a section too: `eval:` twice
      throw ConfigError(key, NodeText(item.second),
                        "one value per key (given twice in " + source + ")");
    }
    Flatten(schema, key, item.second, source, out);
  }
}

// Parses override or Set text as YAML. Errors: ConfigError(key, text, "valid YAML: ...").
YAML::Node LoadYamlValue(const std::string& key, const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw ConfigError(key, text, "valid YAML: " + YamlErrorText(error));
  }
}

YAML::Node LoadYamlFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  std::string problem;
  if (!fs::exists(status)) {
    problem = "no such file";
    // A near name beside it (ant.yml for ant.yaml, cartpol.yaml): the closest YAML file there.
    const fs::path wanted(path);
    const fs::path dir = wanted.has_parent_path() ? wanted.parent_path() : fs::path(".");
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string ext = entry.path().extension().string();
      if (ext == ".yaml" || ext == ".yml") names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    std::string hint = DidYouMean(wanted.filename().string(), names);  // "did you mean 'x'? "
    for (const std::string& name : names) {  // each file named as the user would type it
      const std::string quoted = "'" + name + "'";
      if (const size_t at = hint.find(quoted);
          at != std::string::npos && wanted.has_parent_path()) {
        hint.replace(at, quoted.size(), "'" + (dir / name).string() + "'");
      }
    }
    if (!hint.empty()) problem += "; " + hint.substr(0, hint.size() - 1);
  } else if (fs::is_directory(status)) {
    problem = "it is a directory";
  }
  std::ifstream file(path);
  if (problem.empty() && !file) problem = "cannot open it for reading";
  if (!problem.empty()) {
    throw ConfigError("--config", path, "an existing, readable YAML file (" + problem + ")");
  }
  std::stringstream content;
  content << file.rdbuf();
  try {
    return YAML::Load(content.str());
  } catch (const YAML::Exception& error) {
    throw ConfigError("--config", path, "valid YAML: " + YamlErrorText(error));
  }
}

bool IsReservedPlainWord(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // YAML 1.2 null/bool words, plus YAML 1.1 bools so that PyYAML reads the file the same way.
  for (const char* word : {"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n"}) {
    if (lower == word) return true;
  }
  return false;
}

// A string as YAML text that reads back as the same string: plain when safe ("CartPole-v1",
// "auto"), else double-quoted with escapes.
std::string YamlString(const std::string& text) {
  bool plain =
      !text.empty() && !IsReservedPlainWord(text) &&
      (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_' || text[0] == '/');
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/')) {
      plain = false;
    }
  }
  if (plain) return text;
  YAML::Emitter emitter;
  emitter << YAML::DoubleQuoted << text;
  return emitter.c_str();
}

std::string FormatValue(const Config::Value& value) {
  if (const auto* v = std::get_if<int64_t>(&value)) return std::to_string(*v);
  if (const auto* v = std::get_if<double>(&value)) {
    std::string text = internal::FormatShortestDouble(*v);
    // Mark floats as floats ("1.0", not "1") for the human reader; both load the same.
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    return text;
  }
  if (const auto* v = std::get_if<bool>(&value)) return *v ? "true" : "false";
  if (const auto* v = std::get_if<std::string>(&value)) return YamlString(*v);
  if (const auto* v = std::get_if<Schedule>(&value)) return v->ToString();
  const auto& list = std::get<std::vector<int64_t>>(value);
  std::vector<std::string> items;
  for (int64_t item : list) items.push_back(std::to_string(item));
  return "[" + Join(items, ", ") + "]";
}

bool IsValidSegment(const std::string& segment) {
  if (segment.empty()) return false;
  for (char c : segment) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

// Validates each (key, value) pair and stores it into `values`, marking it in `set`.
// Errors: ConfigError for an unknown key or an invalid value (named as written: a shorthand's
// value under the shorthand); callers pass copies and commit them only when this returns, so a
// failure leaves the Config unchanged.
void Assign(const ConfigSchema& schema, const std::vector<KeyedNode>& pairs,
            std::vector<std::optional<Config::Value>>* values, std::vector<bool>* set) {
  // Several unknown keys (CleanRL's names given together, say) are named in one error: the
  // first with its hint, then the others, each with its note when the schema has one.
  std::vector<const KeyedNode*> unknown;
  for (const KeyedNode& pair : pairs) {
    if (schema.Find(pair.key) == nullptr && schema.DefaultOnlyKey(pair.key) == nullptr &&
        std::none_of(unknown.begin(), unknown.end(),
                     [&](const KeyedNode* u) { return u->key == pair.key; })) {
      unknown.push_back(&pair);
    }
  }
  if (unknown.size() > 1) {
    const std::string value = NodeText(unknown.front()->node);
    const ConfigError first = UnknownKeyError(schema, unknown.front()->key, value);
    std::vector<std::string> others;
    for (size_t k = 1; k < unknown.size(); ++k) {
      // Its own error's hint (the schema's note, or a guess at a typo), without the key list.
      std::string hint =
          UnknownKeyError(schema, unknown[k]->key, NodeText(unknown[k]->node)).accepted();
      for (const char* list : {"every key with its default: ", "known keys: "}) {
        hint = hint.substr(0, hint.find(list));
      }
      hint = hint.substr(std::string("unknown key").size());
      const size_t begin = hint.find_first_not_of("; ");
      const size_t end = hint.find_last_not_of("; ");
      hint = begin == std::string::npos ? "" : hint.substr(begin, end - begin + 1);
      others.push_back(unknown[k]->key + (hint.empty()     ? ""
                                          : hint[0] == '(' ? " " + hint
                                                           : " (" + hint + ")"));
    }
    throw ConfigError(first.field(), value,
                      first.accepted() + "; also unknown: " + Join(others, "; "));
  }
  for (const KeyedNode& pair : pairs) {
    const KeySpec* spec = schema.Find(pair.key);
    if (spec == nullptr) {
      if (const auto* fixed = schema.DefaultOnlyKey(pair.key)) {
        KeySpec as_fixed;
        as_fixed.key = pair.given_as.empty() ? pair.key : pair.given_as;
        as_fixed.type = fixed->type;
        const Config::Value given = ParseValue(as_fixed, pair.node);  // a wrong type: refused
        const bool same = fixed->type == ValueType::kBool
                              ? (std::get<bool>(given) ? "true" : "false") == fixed->value
                              : std::to_string(std::get<int64_t>(given)) == fixed->value;
        if (!same) {
          throw ConfigError(as_fixed.key, NodeText(pair.node),
                            fixed->value + " only: " + fixed->why);
        }
        continue;  // SB3's default written out: nothing to set
      }
      throw UnknownKeyError(schema, pair.key, NodeText(pair.node));
    }
    const size_t index = static_cast<size_t>(spec - schema.keys().data());
    if (pair.given_as.empty()) {
      (*values)[index] = ParseValue(*spec, pair.node);
    } else {
      KeySpec as_written = *spec;  // the same rule, named as the user wrote it
      as_written.key = pair.given_as;
      (*values)[index] = ParseValue(as_written, pair.node);
    }
    (*set)[index] = true;
  }
}

}  // namespace

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kInt:
      return "int";
    case ValueType::kFloat:
      return "float";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kSchedule:
      return "schedule";
    case ValueType::kIntList:
      return "int_list";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// ConfigSchema

void ConfigSchema::Add(KeySpec spec) {
  const std::vector<std::string> segments = SplitKey(spec.key);
  GREENRL_CHECK(std::all_of(segments.begin(), segments.end(), IsValidSegment),
                "config key '" + spec.key + "' must be dot-separated names of [A-Za-z0-9_-]");
  GREENRL_CHECK(index_.count(spec.key) == 0, "config key '" + spec.key + "' declared twice");
  GREENRL_CHECK(shorthands_.count(spec.key) == 0,
                "config key '" + spec.key + "' is also a shorthand");
  for (const KeySpec& other : keys_) {
    GREENRL_CHECK(
        other.key.rfind(spec.key + ".", 0) != 0 && spec.key.rfind(other.key + ".", 0) != 0,
        "config key '" + spec.key + "' and '" + other.key + "': a key cannot also be a section");
  }
  const bool ranged = spec.type == ValueType::kInt || spec.type == ValueType::kFloat ||
                      spec.type == ValueType::kSchedule || spec.type == ValueType::kIntList;
  GREENRL_CHECK(ranged || (!spec.min && !spec.max),
                "config key '" + spec.key + "': min/max on a " + ValueTypeName(spec.type));
  GREENRL_CHECK(spec.type == ValueType::kString || spec.choices.empty(),
                "config key '" + spec.key + "': choices on a " + ValueTypeName(spec.type));
  GREENRL_CHECK(spec.type == ValueType::kString || spec.type == ValueType::kInt ||
                    spec.type == ValueType::kFloat || spec.type == ValueType::kSchedule ||
                    spec.accepted.empty(),
                "config key '" + spec.key + "': an accepted text on a " + ValueTypeName(spec.type));
  if (spec.default_yaml) {
    try {
      ParseValue(spec, YAML::Load(*spec.default_yaml));
    } catch (const std::exception& error) {  // ConfigError or YAML::Exception
      GREENRL_CHECK(false, "config key '" + spec.key + "': invalid default '" + *spec.default_yaml +
                               "': " + error.what());
    }
  }
  index_.emplace(spec.key, keys_.size());
  keys_.push_back(std::move(spec));
}

const KeySpec* ConfigSchema::Find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &keys_[it->second];
}

void ConfigSchema::AddDefaultOnlyKey(const std::string& key, bool value, std::string why) {
  GREENRL_CHECK(Find(key) == nullptr && default_only_.count(key) == 0,
                "AddDefaultOnlyKey: " + key + " is declared or fixed already");
  default_only_[key] = {ValueType::kBool, value ? "true" : "false", std::move(why)};
}

void ConfigSchema::AddDefaultOnlyIntKey(const std::string& key, int64_t value, std::string why) {
  GREENRL_CHECK(Find(key) == nullptr && default_only_.count(key) == 0,
                "AddDefaultOnlyIntKey: " + key + " is declared or fixed already");
  default_only_[key] = {ValueType::kInt, std::to_string(value), std::move(why)};
}

const ConfigSchema::DefaultOnly* ConfigSchema::DefaultOnlyKey(const std::string& key) const {
  const auto it = default_only_.find(key);
  return it == default_only_.end() ? nullptr : &it->second;
}

std::vector<std::string> ConfigSchema::DefaultOnlyKeys() const {
  std::vector<std::string> keys;
  for (const auto& entry : default_only_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

void ConfigSchema::AddUnknownKeyNote(const std::string& key, std::string note) {
  unknown_notes_[key] = std::move(note);
}

const std::string* ConfigSchema::UnknownKeyNote(const std::string& key) const {
  // The key's own note, else its nearest parent's (env_kwargs.x: env_kwargs's).
  for (std::string k = key;; k = k.substr(0, k.rfind('.'))) {
    if (const auto it = unknown_notes_.find(k); it != unknown_notes_.end()) return &it->second;
    if (k.find('.') == std::string::npos) return nullptr;
  }
}

void ConfigSchema::AddShorthand(const std::string& key, std::vector<std::string> targets) {
  const std::vector<std::string> segments = SplitKey(key);
  GREENRL_CHECK(std::all_of(segments.begin(), segments.end(), IsValidSegment),
                "config shorthand '" + key + "' must be dot-separated names of [A-Za-z0-9_-]");
  GREENRL_CHECK(Find(key) == nullptr, "config shorthand '" + key + "' is also a key");
  GREENRL_CHECK(shorthands_.count(key) == 0, "config shorthand '" + key + "' declared twice");
  GREENRL_CHECK(!targets.empty(), "config shorthand '" + key + "' has no target");
  for (const std::string& target : targets) {
    GREENRL_CHECK(Find(target) != nullptr,
                  "config shorthand '" + key + "': target '" + target + "' is not a key");
  }
  shorthands_[key] = std::move(targets);
}

std::vector<std::string> ConfigSchema::ShorthandKeys() const {
  std::vector<std::string> keys;
  for (const auto& [key, targets] : shorthands_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

const std::vector<std::string>* ConfigSchema::ShorthandTargets(const std::string& key) const {
  const auto it = shorthands_.find(key);
  return it == shorthands_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// Config

Config::Config(const ConfigSchema& schema) : schema_(schema), entries_(schema.keys().size()) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    const KeySpec& spec = schema_.keys()[i];
    if (spec.default_yaml) entries_[i].value = ParseValue(spec, YAML::Load(*spec.default_yaml));
  }
}

namespace {

// The (key, value) pairs of one --set text. Errors: ("--set", text, "key=value") without '=' or
// with an empty key; (key, text, "valid YAML: ...") for a value that is not YAML.
std::vector<KeyedNode> OverridePairs(const ConfigSchema& schema, const std::string& override_text) {
  const size_t equals = override_text.find('=');
  const std::string key = equals == std::string::npos ? "" : Trim(override_text.substr(0, equals));
  if (key.empty()) {
    // rl-zoo's -params writes key:value; greenrl's --set takes key=value.
    const size_t colon = override_text.find(':');
    if (equals == std::string::npos && colon != std::string::npos && colon > 0) {
      throw ConfigError("--set", override_text,
                        "key=value (rl-zoo's -params form key:value is written " +
                            Trim(override_text.substr(0, colon)) + "=" +
                            Trim(override_text.substr(colon + 1)) + " here)");
    }
    throw ConfigError("--set", override_text, "key=value");
  }
  const std::string value_text = override_text.substr(equals + 1);
  std::vector<KeyedNode> pairs;
  Flatten(schema, key, LoadYamlValue(key, value_text), "--set", &pairs);
  return pairs;
}

}  // namespace

std::vector<std::string> Config::KeysSetBy(const ConfigSchema& schema,
                                           const std::string& override_text) {
  std::vector<std::string> keys;
  for (const KeyedNode& pair : OverridePairs(schema, override_text)) keys.push_back(pair.key);
  return keys;
}

Config Config::Load(const ConfigSchema& schema, const std::string& yaml_path,
                    const std::vector<std::string>& set_overrides) {
  Config config(schema);
  std::vector<std::optional<Value>> values;
  std::vector<bool> set;
  for (const Entry& entry : config.entries_) {
    values.push_back(entry.value);
    set.push_back(entry.is_set);
  }
  // The overrides' keys first: a file value that an override replaces is not parsed, so a
  // preset's bad value can be replaced with --set without editing the file.
  std::vector<std::vector<KeyedNode>> override_pairs;
  std::unordered_set<std::string> overridden;
  for (const std::string& override_text : set_overrides) {
    override_pairs.push_back(OverridePairs(config.schema_, override_text));
    for (const KeyedNode& pair : override_pairs.back()) overridden.insert(pair.key);
  }

  if (!yaml_path.empty()) {
    const YAML::Node root = LoadYamlFile(yaml_path);
    if (!root.IsNull() && !root.IsMap()) {
      throw ConfigError("--config", yaml_path,
                        std::string("a YAML map of keys, e.g. 'n_steps: 2048' (it holds ") +
                            (root.IsSequence() ? "a sequence" : "a scalar") + ")");
    }
    // A key or value of the file is named with the file, so it is not taken for a --set one.
    try {
      std::vector<KeyedNode> pairs;
      if (root.IsMap()) Flatten(config.schema_, "", root, yaml_path, &pairs);
      std::unordered_map<std::string, std::string> seen;  // key -> the shorthand it came from
      for (const KeyedNode& pair : pairs) {
        const auto [it, first] = seen.emplace(pair.key, pair.given_as);
        if (!first) {
          const std::string& shorthand = pair.given_as.empty() ? it->second : pair.given_as;
          throw ConfigError(
              pair.key, NodeText(pair.node),
              "one value per key (given twice in " + yaml_path +
                  (shorthand.empty() ? "" : ", once through the shorthand " + shorthand) + ")");
        }
      }
      // Copied, not erased in place: assigning a YAML::Node writes into the node it refers to.
      std::vector<KeyedNode> kept;
      for (const KeyedNode& pair : pairs) {
        const bool replaced =
            overridden.count(pair.key) > 0 && config.schema_.Find(pair.key) != nullptr;
        if (!replaced) kept.push_back(pair);
      }
      Assign(config.schema_, kept, &values, &set);
    } catch (const ConfigError& e) {
      throw e.WithSource(yaml_path);
    }
  }

  // All of them at once (in order: a later one wins), so that Assign names every unknown key.
  std::vector<KeyedNode> all_overrides;
  for (const std::vector<KeyedNode>& pairs : override_pairs) {
    for (const KeyedNode& pair : pairs) all_overrides.push_back(pair);
  }
  Assign(config.schema_, all_overrides, &values, &set);

  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) throw ConfigError(config.schema_.keys()[i].key, "", "a value (required)");
    config.entries_[i].value = std::move(values[i]);
    config.entries_[i].is_set = set[i];
  }
  return config;
}

void Config::Set(const std::string& key, const std::string& yaml_text) {
  std::vector<std::optional<Value>> values;
  std::vector<bool> set;
  for (const Entry& entry : entries_) {
    values.push_back(entry.value);
    set.push_back(entry.is_set);
  }
  std::vector<KeyedNode> pairs;
  Flatten(schema_, key, LoadYamlValue(key, yaml_text), "Set", &pairs);
  Assign(schema_, pairs, &values, &set);
  for (size_t i = 0; i < values.size(); ++i) {
    entries_[i].value = std::move(values[i]);
    entries_[i].is_set = set[i];
  }
}

const Config::Value& Config::Get(const std::string& key, ValueType type) const {
  const KeySpec* spec = schema_.Find(key);
  GREENRL_CHECK(spec != nullptr, "config key '" + key + "' is not in the schema");
  GREENRL_CHECK(spec->type == type, "config key '" + key + "' is a " + ValueTypeName(spec->type) +
                                        ", read as a " + ValueTypeName(type));
  const Entry& entry = entries_[static_cast<size_t>(spec - schema_.keys().data())];
  GREENRL_CHECK(entry.value.has_value(), "config key '" + key + "' has no value");
  return *entry.value;
}

int64_t Config::GetInt(const std::string& key) const {
  return std::get<int64_t>(Get(key, ValueType::kInt));
}

double Config::GetFloat(const std::string& key) const {
  return std::get<double>(Get(key, ValueType::kFloat));
}

bool Config::GetBool(const std::string& key) const {
  return std::get<bool>(Get(key, ValueType::kBool));
}

const std::string& Config::GetString(const std::string& key) const {
  return std::get<std::string>(Get(key, ValueType::kString));
}

Schedule Config::GetSchedule(const std::string& key) const {
  return std::get<Schedule>(Get(key, ValueType::kSchedule));
}

std::vector<int64_t> Config::GetIntList(const std::string& key) const {
  return std::get<std::vector<int64_t>>(Get(key, ValueType::kIntList));
}

std::string Config::ValueText(const std::string& key) const {
  const KeySpec* spec = schema_.Find(key);
  GREENRL_CHECK(spec != nullptr, "config key '" + key + "' is not in the schema");
  return FormatValue(Get(key, spec->type));
}

bool Config::IsSet(const std::string& key) const {
  const KeySpec* spec = schema_.Find(key);
  GREENRL_CHECK(spec != nullptr, "config key '" + key + "' is not in the schema");
  return entries_[static_cast<size_t>(spec - schema_.keys().data())].is_set;
}

namespace {

// Writes the keys `indices` (into schema.keys()) that share their first `depth` segments: one
// line per key, a "name:" line per section, sections where their first key is declared.
void EmitYaml(const std::vector<KeySpec>& specs, const std::vector<std::vector<std::string>>& paths,
              const std::vector<std::string>& texts, const std::vector<size_t>& indices,
              size_t depth, std::string* out) {
  std::vector<std::string> order;  // segment names at this depth, first appearance first
  std::unordered_map<std::string, std::vector<size_t>> groups;
  for (size_t index : indices) {
    const std::string& name = paths[index][depth];
    if (groups.find(name) == groups.end()) order.push_back(name);
    groups[name].push_back(index);
  }
  const std::string indent(2 * depth, ' ');
  for (const std::string& name : order) {
    const std::vector<size_t>& group = groups[name];
    if (group.size() == 1 && paths[group[0]].size() == depth + 1) {
      std::string doc = specs[group[0]].doc;
      std::replace(doc.begin(), doc.end(), '\n', ' ');
      *out += indent + name + ": " + texts[group[0]] + (doc.empty() ? "" : "  # " + doc) + "\n";
    } else {
      *out += indent + name + ":\n";
      EmitYaml(specs, paths, texts, group, depth + 1, out);
    }
  }
}

}  // namespace

std::string Config::ToYaml() const {
  const std::vector<KeySpec>& specs = schema_.keys();
  std::vector<std::vector<std::string>> paths;
  std::vector<std::string> texts;
  std::vector<size_t> indices;
  for (size_t i = 0; i < specs.size(); ++i) {
    paths.push_back(SplitKey(specs[i].key));
    GREENRL_CHECK(entries_[i].value.has_value(), "config key '" + specs[i].key + "' unset");
    texts.push_back(FormatValue(*entries_[i].value));
    indices.push_back(i);
  }
  std::string out = "# greenrl resolved config: every key with its effective value\n";
  EmitYaml(specs, paths, texts, indices, /*depth=*/0, &out);
  return out;
}

void AddKey(ConfigSchema* schema, std::string key, ValueType type, std::string default_yaml,
            std::string doc, std::optional<double> min, std::optional<double> max,
            std::vector<std::string> choices, bool min_exclusive, std::string accepted) {
  KeySpec spec;
  spec.key = std::move(key);
  spec.type = type;
  spec.default_yaml = std::move(default_yaml);
  spec.doc = std::move(doc);
  spec.min = min;
  spec.max = max;
  spec.choices = std::move(choices);
  spec.min_exclusive = min_exclusive;
  spec.accepted = std::move(accepted);
  schema->Add(std::move(spec));
}

}  // namespace greenrl
