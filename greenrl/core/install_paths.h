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

// The absolute path of the source tree this build was configured from (CMake's
// PROJECT_SOURCE_DIR), e.g. "/home/me/greenrl": where presets (configs/) and MuJoCo models are
// looked for after the install tree beside the program. An installed copy keeps it though the
// checkout may be gone; whether it exists is the caller's to check. It is compiled from a file
// CMake generates (source_tree.cc.in), not passed as a -D flag, so that no other object depends
// on the checkout's folder.
std::string SourceTreeDir();

// The name the running program goes by in the commands greenrl suggests ("greenrl train --resume
// DIR continues it") and in config.yaml: "greenrl", unless a program of the user's own that
// registers envs named itself (cli::Main with register_envs: its argv[0]'s file name), since
// only that program knows its envs. Set it before any thread starts. No errors.
const std::string& ProgramName();
// Sets ProgramName(); an empty name leaves it as it is.
void SetProgramName(const std::string& name);

}  // namespace greenrl
