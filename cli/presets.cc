#include "cli/presets.h"

#include <filesystem>
#include <vector>

#include "greenrl/core/install_paths.h"

namespace greenrl::cli {
namespace {

// The presets folders outside the current directory, in the order both lookups below take
// them: the one installed beside the program (when the program's path is known), then the
// source tree's this binary was built from.
std::vector<std::string> PresetFolders() {
  std::vector<std::string> folders;
  const std::string share = InstalledShareDir();
  if (!share.empty()) folders.push_back(share + "/configs");
  folders.push_back(GREENRL_CONFIGS_SOURCE_DIR);
  return folders;
}

}  // namespace

std::string DefaultConfigDir() {
  if (std::filesystem::is_directory("configs")) return "configs";
  for (const std::string& dir : PresetFolders()) {
    if (std::filesystem::is_directory(dir)) return dir;
  }
  return GREENRL_CONFIGS_SOURCE_DIR;
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

}  // namespace greenrl::cli
