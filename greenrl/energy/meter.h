// meter.h: the EnergyMeter interface that every energy source implements (RAPL, the CPU-time
// estimator, NVML for GPUs, the fake meter for tests), plus the provenance and scope of its
// figures.
//
// A meter reports cumulative energy in joules per domain ("cpu:package-0", "dram:0", "gpu:0",
// "cpu:process") since the meter was created. Callers diff two readings to get a window's energy
// (../shared/DESIGN.md, "Energy and carbon"; Zeus' begin/end windows, ../shared/STYLE.md point 7).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace greenrl::energy {

// Where a meter's joules come from.
enum class Provenance {
  kMeasured,    // a hardware energy counter (RAPL energy_uj, NVML total energy).
  kIntegrated,  // power samples (W) integrated over time (s).
  kEstimated,   // a model (e.g. process CPU seconds x watts per core); no hardware reading.
};

// Returns "measured", "integrated" or "estimated" (the spelling used in energy.json).
std::string ToString(Provenance provenance);

// What a meter's domains cover.
enum class Scope {
  kDevice,   // a whole device (a GPU board), all processes on it.
  kPackage,  // a whole CPU socket / DRAM channel set, all processes on the machine.
  kProcess,  // this process only.
};

// Returns "device", "package" or "process" (the spelling used in energy.json).
std::string ToString(Scope scope);

// A source of cumulative energy per domain.
//
// Contract for implementations:
// - domains() is fixed for the meter's lifetime; ReadEnergyJ() returns one value per domain in the
//   same order.
// - Readings are cumulative joules since the meter was created: they start near 0 and never
//   decrease (counter wraparound is handled inside the meter).
// - Expected failures (a counter that becomes unreadable) never throw from ReadEnergyJ(): the meter
//   keeps its last value and says so in Details().
// Thread-safety: none required; EnergyMonitor serialises all calls to a meter under its mutex.
class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;

  // Short identifier of the implementation: "rapl", "estimator", "fake", "nvml".
  virtual std::string name() const = 0;

  // Domain names, e.g. {"cpu:package-0", "dram:0"}; unique within the meter.
  virtual std::vector<std::string> domains() const = 0;

  // Provenance of every domain of this meter.
  virtual Provenance provenance() const = 0;

  // Scope of every domain of this meter.
  virtual Scope scope() const = 0;

  // Returns: what identifies each domain's hardware on its machine, in domains() order. Two
  // processes on one machine whose package- or device-scope domains have the same identity read
  // the same counter, so a data-parallel job counts it once (job_energy.h). Default: the domain
  // names, which every process on a machine gives the same hardware (RAPL zones by zone name).
  // NvmlMeter: the GPU's UUID, since "gpu:0" is the first *visible* GPU and CUDA_VISIBLE_DEVICES
  // may differ between processes.
  virtual std::vector<std::string> domain_identities() const { return domains(); }

  // Returns: cumulative energy per domain, joules since construction, in domains() order;
  // never decreasing between calls.
  virtual std::vector<double> ReadEnergyJ() = 0;

  // Returns: key/value facts for energy.json, in a stable order (sysfs paths, watts_per_core and
  // its source, read errors, ...). Values are plain text; units are in the keys.
  virtual std::vector<std::pair<std::string, std::string>> Details() const = 0;

  // Called by the sampler thread once per sampling period (through EnergyMonitor, under its
  // mutex) with the monitor clock's time in s, and for meters of provenance kIntegrated also at
  // every monitor reading (a window's start and end, a total), so that their energy reaches the
  // reading's time. Meters that integrate power (e.g. NVML on GPUs without an energy counter)
  // take a power sample here, and ignore a time not after their last sample; counter and model
  // meters ignore it.
  virtual void Sample(double now_s) { (void)now_s; }

  // Returns: about the longest time between two changes of what ReadEnergyJ() returns while the
  //   hardware uses energy, s; 0 when the values follow every reading (a model over CPU time, a
  //   fake). A window shorter than this reads 0 J or a whole counter step, so EnergyMonitor
  //   counts and warns about such windows (../shared/STYLE.md point 7). Default 0.
  virtual double update_period_s() const { return 0.0; }
};

}  // namespace greenrl::energy
