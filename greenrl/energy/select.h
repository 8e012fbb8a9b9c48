// select.h: chooses the CPU energy meter for a run from the `energy.*` config (auto | rapl |
// estimator), falling back from RAPL to the CPU-time estimator with one human-readable reason
// instead of failing (../shared/DESIGN.md: "A missing or unreadable source falls back with one
// logged reason, never a crash").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "greenrl/energy/estimator_meter.h"
#include "greenrl/energy/meter.h"
#include "greenrl/energy/nvml_meter.h"
#include "greenrl/energy/rapl_meter.h"

namespace greenrl::energy {

// The `energy.*` config fields that pick the CPU meter.
struct MeterOptions {
  // energy.meter: "auto" (RAPL when readable, else the estimator), "rapl" (RAPL, or a
  // ConfigError where it is unreadable: measured figures or none), or "estimator".
  std::string meter = "auto";
  // energy.powercap_root: powercap sysfs directory (a bind mount of /sys/devices/virtual/powercap
  // in containers).
  std::string powercap_root = RaplMeter::kDefaultRoot;
  // energy.watts_per_core: W per busy core for the estimator; default and source in
  // estimator_meter.h (Green Algorithms, 12 W).
  double watts_per_core = kDefaultWattsPerCore;
  // energy.gpu: "auto" (an NVML meter beside the CPU meter when NVML sees a GPU) or "off".
  std::string gpu = "auto";
  // energy.nvml_library: the NVML library loaded with dlopen at run time.
  std::string nvml_library = kDefaultNvmlLibrary;
};

// The meter chosen and why.
struct MeterChoice {
  std::unique_ptr<EnergyMeter> meter;      // never null
  std::string reason;                      // one line for the log and energy.json
  std::unique_ptr<EnergyMeter> gpu_meter;  // NVML, or null when there is none (see gpu_reason)
  std::string gpu_reason;                  // one line: which GPUs are metered, or why none
  // reason and gpu_reason without the why and the how-to-fix, for a run's closing summary when
  // the full line was logged at its start: "CPU-time estimator (estimate, 12 W per core, Green
  // Algorithms default; RAPL unavailable)", "RAPL (measured): cpu:package-0"; "no GPU meter",
  // "GPUs not metered (energy.gpu=off)", "NVML (measured) for gpu:0".
  std::string brief;
  std::string gpu_brief;
};

// Accepted values of MeterOptions::meter, in documentation order: {"auto", "rapl", "estimator"}.
const std::vector<std::string>& MeterKinds();

// Checks option values without touching hardware; call before training starts.
// Errors: greenrl::ConfigError naming "energy.meter" (not one of MeterKinds()), "energy.gpu"
//   (not auto or off) or
//   "energy.watts_per_core" (not finite, or <= 0).
void ValidateMeterOptions(const MeterOptions& options);

// Builds the meter `options` asks for.
// Returns: a RaplMeter when meter is "auto" or "rapl" and RAPL is readable under powercap_root,
//   otherwise (meter "auto" or "estimator") an EstimatorMeter (watts_per_core); `reason` says
//   which and, on fallback, why RAPL was not used, e.g. "RAPL unavailable: /sys/class/powercap
//   has no intel-rapl zones; using CPU-time estimator (estimate, 12 W per core)". Beside it, with
//   gpu "auto", an NvmlMeter for the GPUs CUDA_VISIBLE_DEVICES makes visible (gpu_meter), or null
//   with gpu_reason saying why.
// Errors: as ValidateMeterOptions (checked first); greenrl::ConfigError naming "energy.meter"
//   for meter "rapl" where RAPL is unreadable (why, and the values that would run). With meter
//   "auto" an unreadable RAPL never throws.
MeterChoice SelectMeter(const MeterOptions& options);

}  // namespace greenrl::energy
