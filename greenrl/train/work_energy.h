// work_energy.h: the energy and carbon of work outside a training run (`greenrl eval`), measured
// as a run measures its own: the meters its energy.* keys choose, the sampler thread (which
// power-integrating meters such as NVML without an energy counter need, and which splits the
// energy over time for a carbon-intensity series), and its carbon.* keys. Torch-free.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "greenrl/core/config.h"
#include "greenrl/energy/carbon.h"
#include "greenrl/energy/meter.h"
#include "greenrl/energy/monitor.h"
#include "greenrl/energy/sampler.h"
#include "greenrl/report/run_report.h"

namespace greenrl::train {

// What some work cost.
struct WorkEnergy {
  double duration_s = 0.0;                    // wall-clock seconds of the work
  double cpu_time_s = 0.0;                    // this process's CPU seconds over the same span
  std::vector<report::DomainEnergy> domains;  // energy_j per monitored domain, monitor order
  std::string meter_reason;                   // the meters chosen and why (one line)
  std::string meter_brief;  // the same without the why and the how-to-fix (RunMeters' *brief)
  energy::CarbonResult carbon;                // emissions of the additive domains' energy

  // Sum of the additive domains' energy_j (energy::IsAdditiveDomain), J.
  double total_energy_j() const;
};

// The meters a run's energy.* keys choose (energy::SelectMeter: RAPL or the CPU-time estimator,
// and NVML beside it when it sees a GPU), or meter_override alone when non-null (tests).
// *reason: one line saying which and why ("meter given by the caller (<name>)" for an override).
// *brief (when non-null): the same without the why and the how-to-fix (MeterChoice::brief and
// gpu_brief; an override's is its reason).
// Errors: greenrl::ConfigError from the energy.* keys (energy::SelectMeter).
std::vector<std::unique_ptr<energy::EnergyMeter>> RunMeters(
    const Config& config, std::unique_ptr<energy::EnergyMeter> meter_override, std::string* reason,
    std::string* brief = nullptr);

// Runs work() once between two readings of the meters that `config`'s energy.* keys choose
// (energy.meter, energy.gpu, ...; the CPU-time estimator where no counter is readable, labelled
// an estimate), with the sampler thread every energy.sample_period_s (no power.csv), and prices
// the energy with its carbon.* keys (carbon.intensity_csv, when set, hour by hour).
// Args: config: a run's config (train::LoadRunConfig), whose energy.* and carbon.* keys are read.
//       meter_override: tests: this meter instead of the one energy.* chooses (no GPU meter).
// Returns: the work's wall time, energy per domain, the meter line and the carbon.
// Errors: greenrl::ConfigError from the energy.* and carbon.* keys (before work runs: an
//   unknown carbon.region, an unreadable carbon.intensity_csv, ...); whatever work() throws.
WorkEnergy MeasureWork(const Config& config, const std::function<void()>& work,
                       std::unique_ptr<energy::EnergyMeter> meter_override = nullptr);

// The carbon of energy measured by a monitor that `sampler` sampled from start_unix_s for
// wall_time_s seconds: without a series, ComputeCarbon(total, options); with one, each sampler
// row's energy (additive domains) at the intensity of its time span, and the energy after the
// last row over the span up to the end (energy::ComputeCarbonSeries, options.pue).
// Args: total: the monitor's Total() at the end (J per domain); sampler: stopped (its rows
//       final); series: carbon.intensity_csv's series, or nullopt for options' fixed intensity;
//       options: region, intensity override and PUE; start_unix_s: when the span began, Unix
//       seconds (UTC); wall_time_s: its length, s.
// Errors: as energy::ComputeCarbon and energy::ComputeCarbonSeries.
energy::CarbonResult CarbonOfSampledSpan(const energy::Measurement& total,
                                         const energy::Sampler& sampler,
                                         const std::optional<energy::IntensitySeries>& series,
                                         const energy::CarbonOptions& options, double start_unix_s,
                                         double wall_time_s);

// Whether a domain of `scope` holds other processes' energy too, in words for energy.json and
// the summary: "no (this process's own CPU time)", "yes (...)", "possibly (...)".
std::string SharedNote(energy::Scope scope);
// SharedNote for `domain`, with what its meter observed when it says so: a device domain whose
// meter lists "<domain>.shared_with_other_processes" in Details() (NvmlMeter polls the GPU's
// compute processes every 10 s) reads "yes (other processes on the device: pids ...)", "no
// (...)" or "possibly (... unknown: why)"; any other domain reads SharedNote(scope).
std::string SharedNote(const std::string& domain, energy::Scope scope,
                       const std::vector<const energy::EnergyMeter*>& meters);

}  // namespace greenrl::train
