#include "cli/presets.h"

#include <filesystem>

#include "greenrl/core/install_paths.h"

namespace greenrl::cli {

std::string DefaultConfigDir() {
  if (std::filesystem::is_directory("configs")) return "configs";
  const std::string share = InstalledShareDir();
  if (!share.empty() && std::filesystem::is_directory(share + "/configs")) {
    return share + "/configs";
  }
  return GREENRL_CONFIGS_SOURCE_DIR;
}

std::string PresetElsewhere(const std::string& config_path) {
  namespace fs = std::filesystem;
  const std::string prefix = "configs/";
  std::error_code ec;
  if (config_path.rfind(prefix, 0) != 0 || fs::exists(config_path, ec)) return "";
  const std::string rest = config_path.substr(prefix.size());
  const std::string share = InstalledShareDir();
  for (const std::string& dir : {share.empty() ? std::string() : share + "/configs",
                                 std::string(GREENRL_CONFIGS_SOURCE_DIR)}) {
    if (!dir.empty() && fs::is_regular_file(dir + "/" + rest, ec)) return dir + "/" + rest;
  }
  return "";
}

}  // namespace greenrl::cli
