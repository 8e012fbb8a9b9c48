#include "greenrl/env/mujoco/mujoco_model.h"

#include <array>
#include <cstdlib>
#include <fstream>

#include "greenrl/core/install_paths.h"

namespace greenrl::env::mujoco {

void ModelDeleter::operator()(mjModel* model) const {
  if (model != nullptr) mj_deleteModel(model);
}

void DataDeleter::operator()(mjData* data) const {
  if (data != nullptr) mj_deleteData(data);
}

ModelPtr LoadModel(const std::string& path) {
  std::array<char, 1000> error{};  // mj_loadXML writes a NUL-terminated message here
  ModelPtr model(
      mj_loadXML(path.c_str(), /*vfs=*/nullptr, error.data(), static_cast<int>(error.size())));
  if (model == nullptr) {
    throw MujocoError("mujoco: cannot load model '" + path + "': " + std::string(error.data()));
  }
  return model;
}

DataPtr MakeData(const mjModel& model) {
  DataPtr data(mj_makeData(&model));
  if (data == nullptr) throw MujocoError("mujoco: mj_makeData failed (out of memory?)");
  return data;
}

namespace {

bool HasModels(const std::string& dir) { return std::ifstream(dir + "/half_cheetah.xml").good(); }

}  // namespace

std::string AssetDir() {
  const char* override_dir = std::getenv("GREENRL_MUJOCO_ASSETS");
  if (override_dir != nullptr && override_dir[0] != '\0') return override_dir;
  // An installed program reads the models installed beside it, even while the source tree it
  // was built from still exists (and may have changed); a build-tree program has no share dir
  // beside it and reads the source tree's.
  const std::string share = InstalledShareDir();
  if (!share.empty() && HasModels(share + "/mujoco")) return share + "/mujoco";
  const std::string source_dir = GREENRL_MUJOCO_SOURCE_ASSET_DIR;
  if (HasModels(source_dir)) return source_dir;
  const std::string install_dir = GREENRL_MUJOCO_INSTALL_ASSET_DIR;
  if (HasModels(install_dir)) return install_dir;
  return source_dir;
}

std::string AssetPath(const std::string& file_name) { return AssetDir() + "/" + file_name; }

ModelPtr LoadAsset(const std::string& file_name) {
  const std::string path = AssetPath(file_name);
  if (std::ifstream(path).good()) return LoadModel(path);
  const char* override_dir = std::getenv("GREENRL_MUJOCO_ASSETS");
  const bool overridden = override_dir != nullptr && override_dir[0] != '\0';
  std::string searched;
  if (overridden) {
    searched = "GREENRL_MUJOCO_ASSETS=" + std::string(override_dir) + " (set, so used alone)";
  } else {
    const std::string share = InstalledShareDir();
    searched = "GREENRL_MUJOCO_ASSETS (unset), ";
    if (!share.empty()) searched += share + "/mujoco (beside the program), ";
    searched += std::string(GREENRL_MUJOCO_SOURCE_ASSET_DIR) + " (the source tree), " +
                GREENRL_MUJOCO_INSTALL_ASSET_DIR + " (the install prefix)";
  }
  throw MujocoError("mujoco: no model file '" + path +
                    "'; greenrl looked for its MuJoCo models in " + searched +
                    "; set GREENRL_MUJOCO_ASSETS to the folder that holds " + file_name +
                    " (greenrl/env/mujoco/assets in a checkout)");
}

}  // namespace greenrl::env::mujoco
