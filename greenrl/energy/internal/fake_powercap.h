// fake_powercap.h: test-only helper that builds a temporary powercap sysfs tree (zone directories
// with name / energy_uj / max_energy_range_uj files) for RaplMeter, SelectMeter, Sampler and
// ListEnergySources tests; it builds hwmon trees too (WriteFile).
// Not part of the public API; header-only because only tests include it.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace greenrl::energy::internal {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class FakePowercap {
 public:
  FakePowercap() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/greenrl_powercap_XXXXXX";
    root_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~FakePowercap() {
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }
  FakePowercap(const FakePowercap&) = delete;
  FakePowercap& operator=(const FakePowercap&) = delete;

  const std::string& root() const { return root_; }

  // Creates zone directory root/relative_dir with the given `name`, energy_uj and
  // max_energy_range_uj files. Returns: the zone directory.
  std::string AddZone(const std::string& relative_dir, const std::string& zone_name,
                      std::uint64_t energy_uj, std::uint64_t max_energy_range_uj = 262143328850) {
    const std::string dir = root_ + "/" + relative_dir;
    std::filesystem::create_directories(dir);
    Write(dir + "/name", zone_name + "\n");
    SetEnergyUj(relative_dir, energy_uj);
    Write(dir + "/max_energy_range_uj", std::to_string(max_energy_range_uj) + "\n");
    return dir;
  }

  // Rewrites root/relative_dir/energy_uj.
  void SetEnergyUj(const std::string& relative_dir, std::uint64_t energy_uj) {
    Write(root_ + "/" + relative_dir + "/energy_uj", std::to_string(energy_uj) + "\n");
  }

  // Replaces the file root/relative_path by an empty directory, so that reading it fails (EISDIR)
  // even for root, which ignores file modes.
  void MakeUnreadable(const std::string& relative_path) {
    const std::string path = root_ + "/" + relative_path;
    std::filesystem::remove(path);
    std::filesystem::create_directories(path);
  }

  // Writes `text` to root/relative_path (creating parent directories).
  void WriteFile(const std::string& relative_path, const std::string& text) {
    const std::filesystem::path path = root_ + "/" + relative_path;
    std::filesystem::create_directories(path.parent_path());
    Write(path.string(), text);
  }

 private:
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  }

  std::string root_;
};

}  // namespace greenrl::energy::internal
