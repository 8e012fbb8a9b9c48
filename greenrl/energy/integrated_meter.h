// integrated_meter.h: energy from power samples, integrated over time with the trapezoid rule.
//
// Used where a device has no energy counter but reports power: NVML on GPUs older than Volta
// (nvmlDeviceGetTotalEnergyConsumption returns NOT_SUPPORTED there; ../shared/REFERENCES.md,
// "NVML"). Figures obtained this way carry provenance `integrated` (meter.h). The sampler thread
// drives the samples through EnergyMeter::Sample(now_s) once per sampling period.
//
// Accuracy note: NVML power on Ampere and newer (except GA100) is a 1 s average, older parts give
// an instantaneous value, and A100/H100 sensors sample only part of the time (Yang et al.,
// arXiv 2312.02741). Integrating samples is therefore an approximation; prefer counters.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// Exact trapezoid integral of a piecewise-linear power curve through uneven samples:
// energy_j = sum over consecutive samples (t0, p0), (t1, p1) of (p0 + p1) / 2 * (t1 - t0).
// Example: 100 W at t=0 s, 200 W at t=1 s, 200 W at t=3 s -> 150 J + 400 J = 550 J.
// Thread-safety: not thread-safe.
class PowerIntegrator {
 public:
  // Adds the sample (time_s, power_w).
  // Args: time_s: sample time in s on any monotonic clock; must exceed the previous sample's time.
  //       power_w: power in W; finite and >= 0.
  // Returns: true when the sample was used; false (and the integral unchanged) when time_s does
  //   not exceed the last sample's time or a value is not finite or power_w < 0. Never throws.
  bool AddSample(double time_s, double power_w);

  // Returns: J integrated from the first to the last accepted sample (0 before two samples).
  double energy_j() const { return energy_j_; }
  // Returns: the number of accepted samples.
  std::int64_t sample_count() const { return sample_count_; }
  // Returns: the number of rejected samples (time not increasing, non-finite or negative power).
  std::int64_t rejected_count() const { return rejected_count_; }
  // Returns: time in s of the last accepted sample; meaningful only when sample_count() > 0.
  double last_time_s() const { return last_time_s_; }
  // Returns: power in W of the last accepted sample; meaningful only when sample_count() > 0.
  double last_power_w() const { return last_power_w_; }

 private:
  double energy_j_ = 0.0;
  double last_time_s_ = 0.0;
  double last_power_w_ = 0.0;
  std::int64_t sample_count_ = 0;
  std::int64_t rejected_count_ = 0;
};

// An EnergyMeter over any power source: Sample(now_s) reads power for every domain and integrates
// it (PowerIntegrator); ReadEnergyJ() returns the integral up to the last sample. Provenance
// kIntegrated. Useful for power-only sources and as the reference for NvmlMeter's integrated mode.
// Thread-safety: not thread-safe; EnergyMonitor serialises calls.
class IntegratedMeter final : public EnergyMeter {
 public:
  // Reads the current power of every domain, W, in domains() order, into *power_w (resized by the
  // reader). Returns false when the reading failed; the sample is then skipped and counted.
  using PowerReader = std::function<bool(std::vector<double>* power_w)>;

  // Args: name: what name() reports; domains: unique names, at least one; scope: what the power
  //       covers; read_power_w: called once per Sample().
  // Errors: GREENRL_CHECK on empty or duplicate domains or a null reader.
  IntegratedMeter(std::string name, std::vector<std::string> domains, Scope scope,
                  PowerReader read_power_w);

  std::string name() const override { return name_; }
  std::vector<std::string> domains() const override { return domains_; }
  Provenance provenance() const override { return Provenance::kIntegrated; }
  Scope scope() const override { return scope_; }
  // Returns: J per domain, the trapezoid integral from the first to the last sample.
  std::vector<double> ReadEnergyJ() override;
  // Returns: "method" ("trapezoid over power samples"), "samples", "failed_reads",
  //   "rejected_samples".
  std::vector<std::pair<std::string, std::string>> Details() const override;
  // Reads power (read_power_w) and adds one sample per domain at now_s.
  void Sample(double now_s) override;

 private:
  std::string name_;
  std::vector<std::string> domains_;
  Scope scope_;
  PowerReader read_power_w_;
  std::vector<PowerIntegrator> integrators_;  // one per domain
  std::int64_t samples_ = 0;
  std::int64_t failed_reads_ = 0;
};

}  // namespace greenrl::energy
