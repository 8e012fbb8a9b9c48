// rapl_meter.h: an EnergyMeter over Linux powercap RAPL counters (intel-rapl; also AMD Zen since
// Linux 5.8), read from sysfs: cumulative CPU package and DRAM energy, provenance "measured".
//
// Facts used here (../shared/REFERENCES.md, "Linux powercap (RAPL)", from the kernel's
// Documentation/power/powercap/powercap.rst):
// - zones are directories "intel-rapl:<i>" (depth 1) and "intel-rapl:<i>:<j>" (subzones) under
//   /sys/class/powercap; "intel-rapl-mmio:<i>" zones repeat MSR zones on some Intel parts;
// - the zone index is not the socket id: the `name` file is (package-N, package-N-die-D, core,
//   uncore, dram, psys);
// - package contains core and uncore; dram is NOT part of the package value; psys contains the
//   packages. So this meter counts package and dram zones only, each once;
// - package-N-die-D zones (Zen1/Zen2) mirror one socket counter: only die 0 is counted;
// - energy_uj is cumulative microjoules and wraps at max_energy_range_uj:
//   delta = (max - prev) + cur across a wrap. One read pair detects at most one wrap, so read more
//   often than max_energy_range_uj / max power (about 1,540 s for Intel at 170 W, 274 s for AMD);
// - energy_uj is root-only since the CVE-2020-8694 fix (Linux 5.10, backported to 4.4+ stable).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// Cumulative RAPL energy per CPU package ("cpu:package-N") and DRAM ("dram:N", N = the package the
// dram zone belongs to). Provenance kMeasured, scope kPackage (whole sockets, all processes).
// Thread-safety: not thread-safe; EnergyMonitor serialises calls.
class RaplMeter final : public EnergyMeter {
 public:
  // The sysfs class directory where powercap zones appear.
  static constexpr const char* kDefaultRoot = "/sys/class/powercap";

  // Finds the package and dram zones under `root` and takes a baseline reading.
  // Args: root: a powercap directory: /sys/class/powercap (flat symlinks), or a copy / bind mount
  //         of /sys/devices/virtual/powercap (nested zone directories); both layouts are walked.
  //       why_not: if non-null, receives the reason when null is returned.
  // Returns: the meter, or null when `root` does not exist, holds no intel-rapl zone, holds no
  //   package zone, or a counter (energy_uj, max_energy_range_uj) of a counted zone cannot be read;
  //   *why_not then says which, and for permission errors how to fix them. Never throws for these.
  static std::unique_ptr<RaplMeter> TryCreate(const std::string& root, std::string* why_not);

  std::string name() const override { return "rapl"; }
  std::vector<std::string> domains() const override;
  Provenance provenance() const override { return Provenance::kMeasured; }
  Scope scope() const override { return Scope::kPackage; }

  // Returns: joules per domain since construction. A counter that fails to read keeps its last
  // value (counted as "read_errors" in Details()); a value below the previous one is a wrap.
  std::vector<double> ReadEnergyJ() override;

  // Returns: "root", "<domain>.energy_uj_path", "<domain>.max_energy_range_uj", "zones_skipped"
  // (zone, its name and why it is not added), "counter_wraps", "read_errors".
  std::vector<std::pair<std::string, std::string>> Details() const override;

 private:
  // One counted zone.
  struct Zone {
    std::string domain;                 // "cpu:package-0", "dram:0"
    std::string dir;                    // zone directory holding energy_uj
    std::uint64_t max_energy_range_uj;  // wrap point of energy_uj, microjoules
    std::uint64_t last_uj;              // last energy_uj read, microjoules
    std::uint64_t accumulated_uj;       // energy since construction, microjoules
  };

  RaplMeter(std::string root, std::vector<Zone> zones, std::string zones_skipped);

  std::string root_;
  std::vector<Zone> zones_;
  std::string zones_skipped_;
  std::int64_t counter_wraps_ = 0;
  std::int64_t read_errors_ = 0;
};

}  // namespace greenrl::energy
