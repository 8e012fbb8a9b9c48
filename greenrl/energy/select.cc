// select.cc: RAPL-or-estimator choice with a reason (see select.h).
#include "greenrl/energy/select.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

std::string JoinDomains(const EnergyMeter& meter) {
  std::string joined;
  for (const std::string& domain : meter.domains()) {
    if (!joined.empty()) joined += ", ";
    joined += domain;
  }
  return joined;
}

// "CPU-time estimator (estimate, 12 W per core, Green Algorithms default)"; `why`, when given,
// is added inside the parentheses.
std::string EstimatorLabel(double watts_per_core, const std::string& why = "") {
  return fmt::format("CPU-time estimator (estimate, {} W per core{}{})", watts_per_core,
                     watts_per_core == kDefaultWattsPerCore ? ", Green Algorithms default" : "",
                     why.empty() ? "" : "; " + why);
}

}  // namespace

const std::vector<std::string>& MeterKinds() {
  static const std::vector<std::string> kinds = {"auto", "rapl", "estimator"};
  return kinds;
}

void ValidateMeterOptions(const MeterOptions& options) {
  const std::vector<std::string>& kinds = MeterKinds();
  if (std::find(kinds.begin(), kinds.end(), options.meter) == kinds.end()) {
    throw ConfigError("energy.meter", options.meter, "one of: auto, rapl, estimator");
  }
  if (options.gpu != "auto" && options.gpu != "off") {
    throw ConfigError("energy.gpu", options.gpu, "one of: auto, off");
  }
  if (!std::isfinite(options.watts_per_core) || options.watts_per_core <= 0.0) {
    throw ConfigError("energy.watts_per_core", fmt::format("{}", options.watts_per_core),
                      fmt::format("a finite power per busy core in watts, > 0 (default {})",
                                  kDefaultWattsPerCore));
  }
}

namespace {
// The GPU half of the choice: NVML when it loads and sees a visible GPU.
void SelectGpuMeter(const MeterOptions& options, MeterChoice* choice) {
  if (options.gpu == "off") {
    choice->gpu_reason = "energy.gpu=off: GPUs are not metered";
    choice->gpu_brief = "GPUs not metered (energy.gpu=off)";
    return;
  }
  NvmlOptions nvml;
  nvml.library_path = options.nvml_library;
  std::string why_not;
  std::unique_ptr<NvmlMeter> gpu = NvmlMeter::TryCreate(nvml, &why_not);
  if (gpu == nullptr) {
    choice->gpu_reason = "no GPU meter: " + why_not;
    choice->gpu_brief = "no GPU meter";
    return;
  }
  choice->gpu_reason =
      fmt::format("using NVML ({}) for {}", ToString(gpu->provenance()), JoinDomains(*gpu));
  choice->gpu_brief =
      fmt::format("NVML ({}) for {}", ToString(gpu->provenance()), JoinDomains(*gpu));
  choice->gpu_meter = std::move(gpu);
}
}  // namespace

MeterChoice SelectMeter(const MeterOptions& options) {
  ValidateMeterOptions(options);
  MeterChoice choice;
  SelectGpuMeter(options, &choice);
  if (options.meter == "estimator") {
    choice.meter = std::make_unique<EstimatorMeter>(options.watts_per_core);
    choice.reason = "energy.meter=estimator: using " + EstimatorLabel(options.watts_per_core);
    choice.brief = EstimatorLabel(options.watts_per_core, "energy.meter=estimator");
    return choice;
  }
  std::string why_not;
  std::unique_ptr<RaplMeter> rapl = RaplMeter::TryCreate(options.powercap_root, &why_not);
  if (rapl != nullptr) {
    choice.reason = fmt::format("using RAPL (measured) under {}: {}", options.powercap_root,
                                JoinDomains(*rapl));
    choice.brief = "RAPL (measured): " + JoinDomains(*rapl);
    choice.meter = std::move(rapl);
    return choice;
  }
  if (options.meter == "rapl") {  // asked for measured figures: never an estimate instead
    throw ConfigError("energy.meter", "rapl",
                      "auto or estimator on this machine, where RAPL is unavailable (" + why_not +
                          "); auto falls back to the CPU-time estimator, whose figures are "
                          "labelled estimated (`greenrl meters` lists the sources and fixes)");
  }
  choice.meter = std::make_unique<EstimatorMeter>(options.watts_per_core);
  choice.reason =
      "RAPL unavailable: " + why_not + "; using " + EstimatorLabel(options.watts_per_core);
  choice.brief = EstimatorLabel(options.watts_per_core, "RAPL unavailable");
  return choice;
}

}  // namespace greenrl::energy
