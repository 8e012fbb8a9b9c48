// sources.h: what energy sources this machine has, which of them a run would use, and why the
// others are not used, with the fix for each; the library half of `greenrl meters` (issue 3, part
// 8). Probing only reads sysfs and dlopens NVML; nothing is written.
#pragma once

#include <string>
#include <vector>

#include "greenrl/energy/estimator_meter.h"
#include "greenrl/energy/nvml_meter.h"
#include "greenrl/energy/rapl_meter.h"

namespace greenrl::energy {

// Where to look. Containers often mount the host's sysfs elsewhere, so the roots are settings.
struct SourceOptions {
  // energy.powercap_root: the powercap class directory (or a bind mount of
  // /sys/devices/virtual/powercap).
  std::string powercap_root = RaplMeter::kDefaultRoot;
  // energy.hwmon_root: the hwmon class directory, searched for the amd_energy driver.
  std::string hwmon_root = "/sys/class/hwmon";
  // The NVML library passed to dlopen.
  std::string nvml_library = kDefaultNvmlLibrary;
  // energy.watts_per_core, power_w per busy core: what the estimator's row says it would use.
  double watts_per_core = kDefaultWattsPerCore;
  // energy.meter: "auto", "rapl" or "estimator", which decides the rows' would_use (rapl where
  // RAPL is unreadable: none, since a run would not start).
  std::string meter = "auto";
};

// The state of one source.
enum class SourceState {
  kOk,                // readable
  kMissing,           // not present on this machine (or not visible in this container)
  kPermissionDenied,  // present but its counters are not readable by this user
  kUnsupported,       // present but unusable (no package zone, NVML init failed, ...)
};

// Returns "ok", "missing", "permission denied" or "unsupported".
std::string ToString(SourceState state);

// One energy source and what a run would do with it.
struct SourceStatus {
  // "rapl", "nvml", "amd_energy (hwmon)" or "estimator".
  std::string name;
  // Whether the source can be read now.
  bool available = false;
  // Whether a run with SourceOptions::meter would read it. auto: RAPL when available, else the
  // estimator (CPU); rapl: RAPL when available, else none; estimator: the estimator. NVML when
  // available (GPUs, in addition); amd_energy never (not wired as a meter).
  bool would_use = false;
  SourceState state = SourceState::kMissing;
  // One line: what was found or what failed (paths, errno text, NVML return code) and, when not
  // used, why.
  std::string reason;
  // How to make the source usable ("" when nothing needs fixing).
  std::string fix;
  // Domains it reports: RAPL domain names ("cpu:package-0", "psys:0", ...), "gpu:<i>" per NVML
  // device, amd_energy labels ("Esocket0", and "Ecore000..EcoreNNN (N cores)"), "cpu:process".
  std::vector<std::string> domains;
};

// Probes every source this build knows.
// Returns: {rapl, nvml, amd_energy (hwmon), estimator}, in that order; at most one of rapl and
//   estimator has would_use set (none with meter "rapl" where RAPL is unreadable).
// Errors: none thrown for missing or unreadable sources; they are reported in the statuses.
std::vector<SourceStatus> ListEnergySources(const SourceOptions& options = {});

}  // namespace greenrl::energy
