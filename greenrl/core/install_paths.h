// install_paths.h: where the running program and its installed data are (`cmake --install`
// lays out <prefix>/bin/greenrl and <prefix>/share/greenrl/{configs,mujoco}).
#pragma once

#include <string>

namespace greenrl {

// The absolute path of the running executable (/proc/self/exe's target); "" where it cannot be
// read (no /proc).
std::string ExecutablePath();

// <dir>/../share/greenrl for the executable's directory <dir>, lexically normalised
// ("/opt/greenrl/bin/greenrl_cli" -> "/opt/greenrl/share/greenrl"): an installed program's data
// folder wherever its prefix was put (the prefix given to `cmake --install` may differ from the
// CMAKE_INSTALL_PREFIX compiled in). "" when ExecutablePath() is "". Whether the folder exists
// is the caller's to check (a build tree has none).
std::string InstalledShareDir();

}  // namespace greenrl
