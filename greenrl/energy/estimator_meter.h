// estimator_meter.h: the fallback EnergyMeter when no hardware counter is readable: estimates this
// process's CPU energy as process CPU seconds x watts per core (provenance "estimated").
//
// Model: energy_j = (CPU seconds of this process since construction, all threads, user + system)
//                   x watts_per_core.
// One CPU second is one core busy for one second, so watts per core converts it to joules. The
// model ignores idle/baseline power, DRAM, GPUs and other processes; its figures are estimates and
// are labelled so in energy.json.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// Default power draw of one busy core, W. Source: the Green Algorithms calculator (Lannelongue,
// Grealey and Inouye, "Green Algorithms: Quantifying the Carbon Footprint of Computation",
// Advanced Science 8(12), 2021, www.green-algorithms.org): its CPU table
// (GreenAlgorithms/green-algorithms-tool, data/latest/TDP_cpu.csv) gives 12.0 W per core for the
// model "Any", the value it uses when the CPU model is unknown (TDP / cores of typical parts).
// For comparison, CodeCarbon uses 4 W per thread for a known model missing from its TDP table
// (../shared/REFERENCES.md). Configurable as energy.watts_per_core.
inline constexpr double kDefaultWattsPerCore = 12.0;

// Human-readable source of kDefaultWattsPerCore, written to energy.json.
inline constexpr const char* kDefaultWattsPerCoreSource =
    "Green Algorithms calculator (Lannelongue et al., Advanced Science 2021), TDP per core of "
    "CPU model 'Any' (data/latest/TDP_cpu.csv)";

// Estimated energy of this process's CPU time. One domain, "cpu:process"; provenance kEstimated;
// scope kProcess. Thread-safety: not thread-safe; EnergyMonitor serialises calls.
class EstimatorMeter final : public EnergyMeter {
 public:
  // Args: watts_per_core: power of one busy core, W; finite and > 0.
  //       cpu_seconds: returns this process's cumulative CPU seconds (s); injectable so tests are
  //         exact. Default: greenrl::ProcessCpuSeconds (CLOCK_PROCESS_CPUTIME_ID).
  //       watts_per_core_source: where watts_per_core comes from (for Details()); defaults to
  //         kDefaultWattsPerCoreSource when watts_per_core == kDefaultWattsPerCore, else
  //         "configured (energy.watts_per_core)".
  // Errors: greenrl::ConfigError on field "energy.watts_per_core" when watts_per_core is not
  //   finite or <= 0.
  explicit EstimatorMeter(double watts_per_core = kDefaultWattsPerCore,
                          std::function<double()> cpu_seconds = {},
                          std::string watts_per_core_source = "");

  std::string name() const override { return "estimator"; }
  std::vector<std::string> domains() const override { return {"cpu:process"}; }
  Provenance provenance() const override { return Provenance::kEstimated; }
  Scope scope() const override { return Scope::kProcess; }

  // Returns: {(cpu_seconds() - cpu_seconds at construction) x watts_per_core}, J; never below a
  // previous reading even if the CPU-seconds source steps back.
  std::vector<double> ReadEnergyJ() override;

  // Returns: "model", "watts_per_core", "watts_per_core_source", "cpu_seconds_since_start_s".
  std::vector<std::pair<std::string, std::string>> Details() const override;

  double watts_per_core() const { return watts_per_core_; }

 private:
  double watts_per_core_;
  std::function<double()> cpu_seconds_;
  std::string watts_per_core_source_;
  double start_cpu_s_;
  double last_cpu_s_since_start_ = 0.0;
};

}  // namespace greenrl::energy
