#include "greenrl/core/install_paths.h"

#include <unistd.h>

#include <climits>
#include <filesystem>

namespace greenrl {

std::string ExecutablePath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string InstalledShareDir() {
  const std::string exe = ExecutablePath();
  if (exe.empty()) return "";
  const std::filesystem::path dir = std::filesystem::path(exe).parent_path();
  return (dir / ".." / "share" / "greenrl").lexically_normal().string();
}

namespace {
std::string& ProgramNameStorage() {
  static std::string name = "greenrl";
  return name;
}
}  // namespace

const std::string& ProgramName() { return ProgramNameStorage(); }

void SetProgramName(const std::string& name) {
  if (!name.empty()) ProgramNameStorage() = name;
}

}  // namespace greenrl
