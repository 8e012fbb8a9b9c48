// estimator_meter.cc: process CPU seconds x watts per core (see estimator_meter.h).
#include "greenrl/energy/estimator_meter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "greenrl/core/clock.h"
#include "greenrl/core/errors.h"

namespace greenrl::energy {

EstimatorMeter::EstimatorMeter(double watts_per_core, std::function<double()> cpu_seconds,
                               std::string watts_per_core_source)
    : watts_per_core_(watts_per_core),
      cpu_seconds_(cpu_seconds ? std::move(cpu_seconds)
                               : std::function<double()>(ProcessCpuSeconds)),
      watts_per_core_source_(std::move(watts_per_core_source)) {
  if (!std::isfinite(watts_per_core) || watts_per_core <= 0.0) {
    throw ConfigError("energy.watts_per_core", fmt::format("{}", watts_per_core),
                      fmt::format("a finite power per busy core in watts, > 0 (default {})",
                                  kDefaultWattsPerCore));
  }
  if (watts_per_core_source_.empty()) {
    watts_per_core_source_ = watts_per_core == kDefaultWattsPerCore
                                 ? kDefaultWattsPerCoreSource
                                 : "configured (energy.watts_per_core)";
  }
  start_cpu_s_ = cpu_seconds_();
}

std::vector<double> EstimatorMeter::ReadEnergyJ() {
  last_cpu_s_since_start_ = std::max(last_cpu_s_since_start_, cpu_seconds_() - start_cpu_s_);
  return {last_cpu_s_since_start_ * watts_per_core_};
}

std::vector<std::pair<std::string, std::string>> EstimatorMeter::Details() const {
  return {
      {"model", "energy_j = process CPU seconds x watts_per_core"},
      {"watts_per_core", fmt::format("{}", watts_per_core_)},
      {"watts_per_core_source", watts_per_core_source_},
      {"cpu_seconds_since_start_s", fmt::format("{}", last_cpu_s_since_start_)},
  };
}

}  // namespace greenrl::energy
