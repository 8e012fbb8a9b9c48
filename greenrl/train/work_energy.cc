#include "greenrl/train/work_energy.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "greenrl/core/clock.h"
#include "greenrl/energy/select.h"
#include "greenrl/train/run_config.h"

namespace greenrl::train {

double WorkEnergy::total_energy_j() const { return report::AdditiveEnergyJ(domains); }

std::string SharedNote(energy::Scope scope) {
  switch (scope) {
    case energy::Scope::kProcess:
      return "no (this process's own CPU time)";
    case energy::Scope::kPackage:
      return "yes (a package counter covers every process on the socket)";
    case energy::Scope::kDevice:
      return "possibly (the whole device; see the meter details)";
  }
  return "unknown";
}

std::string SharedNote(const std::string& domain, energy::Scope scope,
                       const std::vector<const energy::EnergyMeter*>& meters) {
  if (scope == energy::Scope::kDevice) {
    for (const energy::EnergyMeter* meter : meters) {
      std::string shared, pids;
      for (const auto& [key, value] : meter->Details()) {
        if (key == domain + ".shared_with_other_processes") shared = value;
        if (key == domain + ".other_pids") pids = value;
      }
      if (shared == "yes") {
        return "yes (other processes computed on the device: pids " + pids +
               "; its energy includes theirs)";
      }
      if (shared == "no") {
        return "no (no other process computed on the device at any poll, every 10 s)";
      }
      if (!shared.empty()) return "possibly (the whole device; " + shared + ")";
    }
  }
  return SharedNote(scope);
}

energy::CarbonResult CarbonOfSampledSpan(const energy::Measurement& total,
                                         const energy::Sampler& sampler,
                                         const std::optional<energy::IntensitySeries>& series,
                                         const energy::CarbonOptions& options, double start_unix_s,
                                         double wall_time_s) {
  if (!series) return energy::ComputeCarbon(total.total_energy_j(), options);
  // The sampler's rows cover the span up to its last tick; the rest is one more interval.
  std::vector<energy::EnergyInterval> intervals;
  double covered_j = 0.0, last_unix_s = start_unix_s;
  const auto& names = sampler.domain_names();
  for (const auto& p : sampler.rows()) {
    double e = 0.0;
    for (size_t k = 0; k < names.size(); ++k) {
      if (energy::IsAdditiveDomain(names[k])) e += p.energy_j[k];
    }
    intervals.push_back({p.unix_time_s - p.duration_s, p.unix_time_s, e});
    covered_j += e;
    last_unix_s = p.unix_time_s;
  }
  intervals.push_back({last_unix_s, std::max(last_unix_s, start_unix_s + wall_time_s),
                       std::max(0.0, total.total_energy_j() - covered_j)});
  return energy::ComputeCarbonSeries(intervals, *series, options.pue);
}

std::vector<std::unique_ptr<energy::EnergyMeter>> RunMeters(
    const Config& config, std::unique_ptr<energy::EnergyMeter> meter_override, std::string* reason,
    std::string* brief) {
  std::vector<std::unique_ptr<energy::EnergyMeter>> meters;
  if (meter_override) {
    *reason = "meter given by the caller (" + meter_override->name() + ")";
    if (brief != nullptr) *brief = *reason;
    meters.push_back(std::move(meter_override));
    return meters;
  }
  energy::MeterChoice choice = energy::SelectMeter(MeterOptionsFrom(config));
  meters.push_back(std::move(choice.meter));
  if (choice.gpu_meter) meters.push_back(std::move(choice.gpu_meter));
  *reason = choice.reason + "; " + choice.gpu_reason;
  if (brief != nullptr) *brief = choice.brief + "; " + choice.gpu_brief;
  return meters;
}

WorkEnergy MeasureWork(const Config& config, const std::function<void()>& work,
                       std::unique_ptr<energy::EnergyMeter> meter_override) {
  const energy::CarbonOptions carbon_options = CarbonOptionsFrom(config);
  energy::ValidateCarbonOptions(carbon_options);
  std::optional<energy::IntensitySeries> series;
  if (!config.GetString("carbon.intensity_csv").empty()) {
    series = energy::IntensitySeries::LoadCsv(config.GetString("carbon.intensity_csv"));
  }
  WorkEnergy out;
  std::vector<std::unique_ptr<energy::EnergyMeter>> meters =
      RunMeters(config, std::move(meter_override), &out.meter_reason, &out.meter_brief);
  const Clock& clock = SteadyClock::Instance();
  energy::EnergyMonitor monitor(std::move(meters), clock);
  energy::SamplerOptions sampler_options;  // no power.csv
  energy::Sampler sampler(monitor, clock, config.GetFloat("energy.sample_period_s"),
                          std::move(sampler_options));
  const double start_unix_s = UnixNowS();
  const double t0 = clock.NowS();
  const double cpu0 = ProcessCpuSeconds();
  sampler.Start();
  work();
  sampler.Stop();
  const energy::Measurement total = monitor.Total();
  out.duration_s = clock.NowS() - t0;
  out.cpu_time_s = ProcessCpuSeconds() - cpu0;
  for (const auto& d : monitor.domains()) {
    const auto it = total.energy_j.find(d.domain);
    out.domains.push_back({d.domain, d.meter, energy::ToString(d.provenance),
                           energy::ToString(d.scope), it == total.energy_j.end() ? 0.0 : it->second,
                           SharedNote(d.domain, d.scope, monitor.meters())});
  }
  out.carbon =
      CarbonOfSampledSpan(total, sampler, series, carbon_options, start_unix_s, out.duration_s);
  return out;
}

}  // namespace greenrl::train
