#include "greenrl/env/mujoco/mujoco_model.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "greenrl/core/install_paths.h"

namespace greenrl::env::mujoco {

void ModelDeleter::operator()(mjModel* model) const {
  if (model != nullptr) mj_deleteModel(model);
}

void DataDeleter::operator()(mjData* data) const {
  if (data != nullptr) mj_deleteData(data);
}

namespace {

std::atomic<int64_t> warning_count{0};
std::atomic<bool> warnings_printed{true};

// mju_user_warning.
void PrintWarning(const char* message) { ReportMessage("warning", message); }

// mju_user_error: MuJoCo calls it from deep inside mj_step and friends and must not continue
// after it returns, so it throws.
[[noreturn]] void ThrowError(const char* message) {
  throw MujocoError("mujoco: " + std::string(message));
}

}  // namespace

void ReportMessage(const char* kind, const std::string& message) {
  // One fprintf per line: glibc locks the stream, so lines from rows stepping on different
  // threads do not interleave.
  const int64_t n = warning_count.fetch_add(1);
  if (!warnings_printed.load()) return;
  if (n < kMaxPrintedWarnings) {
    std::fprintf(stderr, "greenrl: MuJoCo %s: %s\n", kind, message.c_str());
  } else if (n == kMaxPrintedWarnings) {
    std::fprintf(stderr,
                 "greenrl: further MuJoCo warnings are not printed (an env row that hits one is "
                 "reset; the run summary counts them as env faults)\n");
  }
}

void InstallHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (mju_user_warning == nullptr) mju_user_warning = PrintWarning;
    if (mju_user_error == nullptr) mju_user_error = ThrowError;
  });
}

int64_t WarningCount() { return warning_count.load(); }

void SetWarningsPrinted(bool printed) { warnings_printed.store(printed); }

bool WarningsPrinted() { return warnings_printed.load(); }

ModelPtr LoadModel(const std::string& path) {
  InstallHandlers();
  std::array<char, 1000> error{};  // mj_loadXML writes a NUL-terminated message here
  ModelPtr model(
      mj_loadXML(path.c_str(), /*vfs=*/nullptr, error.data(), static_cast<int>(error.size())));
  if (model == nullptr) {
    throw MujocoError("mujoco: cannot load model '" + path + "': " + std::string(error.data()));
  }
  return model;
}

DataPtr MakeData(const mjModel& model) {
  InstallHandlers();
  DataPtr data(mj_makeData(&model));
  if (data == nullptr) throw MujocoError("mujoco: mj_makeData failed (out of memory?)");
  return data;
}

namespace {

bool HasModels(const std::string& dir) { return std::ifstream(dir + "/half_cheetah.xml").good(); }

// The models in the source tree this binary was built from.
std::string SourceAssetDir() { return SourceTreeDir() + "/greenrl/env/mujoco/assets"; }

// A folder AssetDir() may take, and how LoadAsset's error names it.
struct AssetFolder {
  std::string dir, described;
};

// The folders AssetDir() looks in, in its order (mujoco_model.h): GREENRL_MUJOCO_ASSETS alone
// when it is set; else the install tree beside the program (when the program's path is
// known), the source tree, the install tree compiled in.
std::vector<AssetFolder> AssetFolders() {
  const char* override_dir = std::getenv("GREENRL_MUJOCO_ASSETS");
  if (override_dir != nullptr && override_dir[0] != '\0') {
    return {{override_dir,
             "GREENRL_MUJOCO_ASSETS=" + std::string(override_dir) + " (set, so used alone)"}};
  }
  std::vector<AssetFolder> folders;
  auto add = [&](const std::string& dir, const std::string& label) {
    folders.push_back({dir, dir + " (" + label + ")"});
  };
  const std::string share = InstalledShareDir();
  if (!share.empty()) add(share + "/mujoco", "beside the program");
  add(SourceAssetDir(), "the source tree");
  add(GREENRL_MUJOCO_INSTALL_ASSET_DIR, "the install prefix");
  return folders;
}

}  // namespace

std::string AssetDir() {
  const std::vector<AssetFolder> folders = AssetFolders();
  if (folders.size() == 1) return folders[0].dir;  // GREENRL_MUJOCO_ASSETS, used as given
  for (const AssetFolder& folder : folders) {
    if (HasModels(folder.dir)) return folder.dir;
  }
  return SourceAssetDir();
}

std::string AssetPath(const std::string& file_name) { return AssetDir() + "/" + file_name; }

ModelPtr LoadAsset(const std::string& file_name) {
  const std::string path = AssetPath(file_name);
  if (std::ifstream(path).good()) return LoadModel(path);
  const std::vector<AssetFolder> folders = AssetFolders();
  std::string searched = folders.size() == 1 ? "" : "GREENRL_MUJOCO_ASSETS (unset)";
  for (const AssetFolder& folder : folders) {
    searched += (searched.empty() ? "" : ", ") + folder.described;
  }
  throw MujocoError("mujoco: no model file '" + path +
                    "'; greenrl looked for its MuJoCo models in " + searched +
                    "; set GREENRL_MUJOCO_ASSETS to the folder that holds " + file_name +
                    " (greenrl/env/mujoco/assets in a checkout)");
}

}  // namespace greenrl::env::mujoco
