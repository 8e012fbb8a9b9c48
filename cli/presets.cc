#include "cli/presets.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/train/zoo_hyperparams.h"

namespace greenrl::cli {
namespace {

// The presets folders outside the current directory, in the order both lookups below take
// them: the one installed beside the program (when the program's path is known), then the
// source tree's this binary was built from.
std::vector<std::string> PresetFolders() {
  std::vector<std::string> folders;
  const std::string share = InstalledShareDir();
  if (!share.empty()) folders.push_back(share + "/configs");
  folders.push_back(SourceTreeDir() + "/configs");
  return folders;
}

}  // namespace

std::string DefaultConfigDir() {
  if (std::filesystem::is_directory("configs")) return "configs";
  for (const std::string& dir : PresetFolders()) {
    if (std::filesystem::is_directory(dir)) return dir;
  }
  return SourceTreeDir() + "/configs";
}

std::string PresetElsewhere(const std::string& config_path) {
  namespace fs = std::filesystem;
  const std::string prefix = "configs/";
  std::error_code ec;
  if (config_path.rfind(prefix, 0) != 0 || fs::exists(config_path, ec)) return "";
  const std::string rest = config_path.substr(prefix.size());
  for (const std::string& dir : PresetFolders()) {
    if (fs::is_regular_file(dir + "/" + rest, ec)) return dir + "/" + rest;
  }
  return "";
}

std::string AlgoOfConfigFile(const std::string& config_path) {
  if (config_path.empty()) return "";
  try {
    const YAML::Node algo = YAML::LoadFile(config_path)["algo"];
    if (algo && algo.IsScalar()) return algo.Scalar();
  } catch (const YAML::Exception&) {  // unreadable: the file's name may still say
  }
  try {
    return train::AlgoOfFileName(config_path);
  } catch (const ConfigError&) {  // another rl-zoo algorithm's file: loading it says so
    return "";
  }
}

std::string PresetTimesteps(const std::string& path) {
  try {
    const YAML::Node steps = YAML::LoadFile(path)["n_timesteps"];
    if (!steps || !steps.IsScalar()) return "";
    const double n = steps.as<double>();
    if (!(n >= 0.0 && n < 1e18)) return "";
    return std::to_string(static_cast<int64_t>(n));
  } catch (const YAML::Exception&) {  // unreadable, or not a number
    return "";
  }
}

std::string PresetNote(const std::string& path) {
  std::ifstream in(path);
  const std::string prefix = "# Note: ";
  for (std::string line; std::getline(in, line) && line.rfind('#', 0) == 0;) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

namespace {

// Every YAML preset in DefaultConfigDir()/<algo>/ with a scalar env_id, by file name: (path,
// env_id). Files that do not read as YAML are passed over.
std::vector<std::pair<std::string, std::string>> PresetsOf(const std::string& algo) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(DefaultConfigDir()) / algo;
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml" || it->path().extension() == ".yml") {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, std::string>> presets;
  for (const fs::path& file : files) {
    try {
      const YAML::Node id = YAML::LoadFile(file.string())["env_id"];
      if (id && id.IsScalar()) presets.emplace_back(file.string(), id.Scalar());
    } catch (const YAML::Exception&) {  // not a preset: passed over
    }
  }
  return presets;
}

}  // namespace

std::string WithoutVersion(const std::string& env_id) {
  const size_t v = env_id.rfind("-v");
  if (v == std::string::npos || v + 2 == env_id.size()) return env_id;
  for (size_t k = v + 2; k < env_id.size(); ++k) {
    if (env_id[k] < '0' || env_id[k] > '9') return env_id;
  }
  return env_id.substr(0, v);
}

std::string TunedPreset(const std::string& algo, const std::string& env_id) {
  for (const auto& [path, id] : PresetsOf(algo)) {
    if (id == env_id) return path;
  }
  return "";
}

std::string TunedPresetForAnotherVersion(const std::string& algo, const std::string& env_id,
                                         std::string* tuned_for) {
  const std::string name = WithoutVersion(env_id);
  if (name == env_id) return "";
  std::string found, found_for;  // the first preset of another version, by file name
  for (const auto& [path, id] : PresetsOf(algo)) {
    if (id == env_id) return "";  // TunedPreset has one for env_id itself
    if (found.empty() && WithoutVersion(id) == name) {
      found = path;
      found_for = id;
    }
  }
  if (tuned_for != nullptr && !found.empty()) *tuned_for = found_for;
  return found;
}

}  // namespace greenrl::cli
