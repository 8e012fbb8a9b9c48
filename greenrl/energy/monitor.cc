// monitor.cc: windows as differences of cumulative readings (see monitor.h).
#include "greenrl/energy/monitor.h"

#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "greenrl/core/errors.h"

namespace greenrl::energy {

bool IsAdditiveDomain(const std::string& domain) {
  static const std::string kPlatformPrefix = "psys:";
  if (domain.find('/') != std::string::npos) return false;
  return domain.compare(0, kPlatformPrefix.size(), kPlatformPrefix) != 0;
}

double Measurement::total_energy_j() const {
  double sum_j = 0.0;
  for (const auto& [domain, energy_j_of_domain] : energy_j) {
    if (IsAdditiveDomain(domain)) sum_j += energy_j_of_domain;
  }
  return sum_j;
}

EnergyMonitor::EnergyMonitor(std::vector<std::unique_ptr<EnergyMeter>> meters, const Clock& clock,
                             SyncFn sync, WarnFn warn)
    : meters_(std::move(meters)), clock_(&clock), sync_(std::move(sync)), warn_(std::move(warn)) {
  std::set<std::string> seen;
  for (const std::unique_ptr<EnergyMeter>& meter : meters_) {
    GREENRL_CHECK(meter != nullptr, "EnergyMonitor got a null meter");
    if (meter->update_period_s() > update_period_s_) {
      update_period_s_ = meter->update_period_s();
      update_period_meter_ = meter->name();
    }
    const std::vector<std::string> names = meter->domains();
    const std::vector<std::string> identities = meter->domain_identities();
    GREENRL_CHECK(identities.size() == names.size(),
                  "meter '" + meter->name() + "' gave " + std::to_string(identities.size()) +
                      " domain identities for " + std::to_string(names.size()) + " domains");
    for (size_t k = 0; k < names.size(); ++k) {
      GREENRL_CHECK(seen.insert(names[k]).second,
                    "domain '" + names[k] + "' is reported by more than one meter");
      domains_.push_back({names[k], meter->name(), meter->provenance(), meter->scope(),
                          IsAdditiveDomain(names[k]), identities[k]});
    }
  }
  Sync();
  std::lock_guard<std::mutex> lock(mutex_);
  start_ = ReadLocked();
}

void EnergyMonitor::Sync() const {
  if (sync_) sync_();
}

std::vector<double> EnergyMonitor::ReadMetersLocked() const {
  std::vector<double> all_j;
  all_j.reserve(domains_.size());
  for (const std::unique_ptr<EnergyMeter>& meter : meters_) {
    const std::vector<double> energy_j = meter->ReadEnergyJ();
    GREENRL_CHECK(energy_j.size() == meter->domains().size(),
                  "meter '" + meter->name() + "' returned the wrong number of domains");
    all_j.insert(all_j.end(), energy_j.begin(), energy_j.end());
  }
  return all_j;
}

EnergyMonitor::Reading EnergyMonitor::ReadLocked() const {
  Reading reading;
  reading.time_s = clock_->NowS();
  // A meter that integrates power samples reads up to its last sample: without one now, a
  // window would end at the sampler's last tick (up to one sampling period earlier) and its
  // energy would go to the next window or to no window.
  for (const std::unique_ptr<EnergyMeter>& meter : meters_) {
    if (meter->provenance() == Provenance::kIntegrated) meter->Sample(reading.time_s);
  }
  reading.energy_j = ReadMetersLocked();
  return reading;
}

Measurement EnergyMonitor::Diff(const Reading& begin, const Reading& end) const {
  Measurement measurement;
  measurement.duration_s = end.time_s - begin.time_s;
  for (size_t i = 0; i < domains_.size(); ++i) {
    measurement.energy_j[domains_[i].domain] = end.energy_j[i] - begin.energy_j[i];
  }
  return measurement;
}

void EnergyMonitor::BeginWindow(const std::string& key) {
  Sync();
  std::lock_guard<std::mutex> lock(mutex_);
  GREENRL_CHECK(open_windows_.count(key) == 0, "window '" + key + "' is already open");
  open_windows_.emplace(key, ReadLocked());
}

Measurement EnergyMonitor::EndWindow(const std::string& key) {
  Sync();
  std::lock_guard<std::mutex> lock(mutex_);
  const auto open = open_windows_.find(key);
  GREENRL_CHECK(open != open_windows_.end(), "window '" + key + "' is not open");
  const Measurement measurement = Diff(open->second, ReadLocked());
  open_windows_.erase(open);
  WindowTotals& totals = totals_[key];
  ++totals.count;
  totals.sum.duration_s += measurement.duration_s;
  for (const auto& [domain, energy_j] : measurement.energy_j)
    totals.sum.energy_j[domain] += energy_j;
  if (measurement.duration_s < update_period_s_ && ++totals.short_count == 1) {
    const std::string message = fmt::format(
        "energy window '{}' lasted {:.3g} ms, less than the {:.3g} ms between updates of meter "
        "'{}': one such window reads what the meter last updated (0 J, a whole step, or a stale "
        "power), so only sums over many windows mean something (the run's total is unaffected); "
        "energy.json counts them as windows.{}.short_windows",
        key, measurement.duration_s * 1e3, update_period_s_ * 1e3, update_period_meter_, key);
    if (warn_) {
      warn_(message);
    } else {
      std::fprintf(stderr, "greenrl warning: %s\n", message.c_str());
      std::fflush(stderr);
    }
  }
  return measurement;
}

bool EnergyMonitor::IsWindowOpen(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_windows_.count(key) != 0;
}

WindowTotals EnergyMonitor::TotalsFor(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = totals_.find(key);
  if (found != totals_.end()) return found->second;
  WindowTotals empty;
  for (const DomainInfo& info : domains_) empty.sum.energy_j[info.domain] = 0.0;
  return empty;
}

std::map<std::string, WindowTotals> EnergyMonitor::AllWindowTotals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return totals_;
}

Measurement EnergyMonitor::Total() const {
  Sync();
  std::lock_guard<std::mutex> lock(mutex_);
  return Diff(start_, ReadLocked());
}

CumulativeReading EnergyMonitor::SampleAll(double now_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::unique_ptr<EnergyMeter>& meter : meters_) meter->Sample(now_s);
  CumulativeReading reading;
  reading.time_s = now_s;
  reading.energy_j = ReadMetersLocked();
  for (size_t i = 0; i < reading.energy_j.size(); ++i) reading.energy_j[i] -= start_.energy_j[i];
  return reading;
}

std::vector<const EnergyMeter*> EnergyMonitor::meters() const {
  std::vector<const EnergyMeter*> result;
  result.reserve(meters_.size());
  for (const std::unique_ptr<EnergyMeter>& meter : meters_) result.push_back(meter.get());
  return result;
}

}  // namespace greenrl::energy
