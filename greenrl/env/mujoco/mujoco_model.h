// mujoco_model.h: RAII ownership of MuJoCo's C handles and where the MJCF assets live.
//
// ../shared/STYLE.md point 3 (constant model, mutable state): one mjModel is loaded per VecEnv and
// shared read-only by every row; each row owns its own mjData. Both are held in std::unique_ptr
// with MuJoCo's deleters (mj_deleteModel, mj_deleteData), so no path leaks them. Torch-free.
// MuJoCo version: Debian 12's libmujoco-dev 2.2.2.
#pragma once

#include <mujoco/mujoco.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace greenrl::env::mujoco {

// Deleter for mjModel (mj_deleteModel); null-safe.
struct ModelDeleter {
  void operator()(mjModel* model) const;
};
// Deleter for mjData (mj_deleteData); null-safe.
struct DataDeleter {
  void operator()(mjData* data) const;
};

using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;  // owns one compiled model
using DataPtr = std::unique_ptr<mjData, DataDeleter>;     // owns one simulation state

// A MuJoCo model that failed to load or that does not match what an env expects. what() carries
// the file path and MuJoCo's own loader message verbatim.
class MujocoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses and compiles the MJCF file at `path` (mj_loadXML), after InstallHandlers().
// Returns: the compiled model (never null).
// Errors: MujocoError("mujoco: cannot load model '<path>': <MuJoCo's message>") when the file is
//   missing, unreadable or invalid.
ModelPtr LoadModel(const std::string& path);

// Installs greenrl's handlers of MuJoCo's warnings and errors, once per process, each only where
// mju_user_warning / mju_user_error is still null (a program embedding greenrl keeps its own).
//  - Warnings (mju_warning: an unstable simulation, a full contact or constraint list) go to
//    stderr as "greenrl: MuJoCo warning: <MuJoCo's message>" lines, the first
//    kMaxPrintedWarnings of them and then one line saying that further ones are not printed.
//    MuJoCo 2.2.2's default prints "WARNING: ..." on stdout (where `greenrl train --dry-run` and
//    `greenrl envs` write their output) and appends to MUJOCO_LOG.TXT in the current directory.
//    The envs handle each warning themselves (locomotion.h: the row is reset and counted, and the
//    run summary's "env faults" line gives the count), so the lines are for information.
//  - Errors (mju_error: "Stack overflow", a singular Hessian, "Could not allocate mjData stack")
//    throw MujocoError("mujoco: <MuJoCo's message>"), unwinding through MuJoCo's frames (its
//    library has unwind tables; the mjData is left mid-computation: reset it before use).
//    MuJoCo 2.2.2's default prints "ERROR: ... Press Enter to exit ..." on stdout, waits for a
//    key and exits the process: a training run in a terminal would hang, and stop without its
//    final checkpoint.
// Thread-safe (rows step on several threads).
void InstallHandlers();
inline constexpr int kMaxPrintedWarnings = 5;

// Whether the handler prints (true at start); off, it only counts. The trainer turns it off for
// a quiet run and on ranks other than 0 (env/registry.h, SetSimulatorWarningsPrinted).
// Thread-safe.
void SetWarningsPrinted(bool printed);
bool WarningsPrinted();

// Prints "greenrl: MuJoCo <kind>: <message>" on stderr as the warning handler does (same cap,
// same switch; counted in WarningCount()). kind: "warning", or "error" for an engine error an env
// handled. Thread-safe; never throws.
void ReportMessage(const char* kind, const std::string& message);

// MuJoCo warnings the handler of InstallHandlers() received in this process (and ReportMessage
// calls), printed or not. Thread-safe.
int64_t WarningCount();

// Allocates the state for `model` (mj_makeData), in its default configuration (qpos = qpos0,
// qvel = 0), after InstallHandlers(). Errors: MujocoError when MuJoCo cannot allocate it.
DataPtr MakeData(const mjModel& model);

// Folder holding greenrl's MJCF files (greenrl/env/mujoco/assets), looked up in this order:
//   1. the environment variable GREENRL_MUJOCO_ASSETS, when set and non-empty (used as given);
//   2. the install tree beside the running program, <dir>/../share/greenrl/mujoco for the
//      program's directory <dir> (core/install_paths.h; `cmake --install --prefix` anywhere), so
//      an installed program reads its own models even while its source tree still exists;
//   3. the source tree this binary was built from (compiled in, so a build tree, which has no
//      share/ beside build/bin, works as is);
//   4. the install tree compiled in, CMAKE_INSTALL_PREFIX/share/greenrl/mujoco.
// The first of 2-4 that holds half_cheetah.xml wins; when none does, 3 is returned and
// LoadModel reports the missing file with its full path.
std::string AssetDir();

// AssetDir() + "/" + file_name.
std::string AssetPath(const std::string& file_name);

// LoadModel(AssetPath(file_name)), e.g. file_name "hopper.xml".
// Errors: MujocoError naming the missing path, the folders AssetDir() looked in and
// GREENRL_MUJOCO_ASSETS when the file does not exist; LoadModel's MujocoError when it does not
// load.
ModelPtr LoadAsset(const std::string& file_name);

}  // namespace greenrl::env::mujoco
