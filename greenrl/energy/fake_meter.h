// fake_meter.h: a scripted EnergyMeter for tests (../shared/STYLE.md point 8): exact joules per
// domain, set by the test or played from a script, so monitor and budget logic can be checked to
// the joule together with greenrl::FakeClock.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// A meter whose cumulative readings are whatever the test says.
//
// Two ways to drive it (they combine):
// - settable: SetEnergyJ / AddEnergyJ change the current cumulative value; every ReadEnergyJ()
//   returns it;
// - scripted: Script() queues readings; each ReadEnergyJ() pops the next one and makes it current;
//   when the queue is empty the current value is returned again.
// Values are cumulative joules and must never decrease (checked).
// Thread-safety: all methods may be called from several threads (internal mutex), so a test can
// set values while a sampler thread reads.
class FakeMeter final : public EnergyMeter {
 public:
  // Args: domains: domain names, unique, at least one ("gpu:0", "cpu:package-0", ...).
  //       provenance, scope: what provenance() and scope() report.
  //       name: what name() reports.
  // Errors: GREENRL_CHECK on empty or duplicate domain names. All domains start at 0 J.
  explicit FakeMeter(std::vector<std::string> domains,
                     Provenance provenance = Provenance::kMeasured, Scope scope = Scope::kDevice,
                     std::string name = "fake");

  std::string name() const override { return name_; }
  std::vector<std::string> domains() const override { return domains_; }
  Provenance provenance() const override { return provenance_; }
  Scope scope() const override { return scope_; }
  std::vector<double> ReadEnergyJ() override;
  // Returns: {"scripted_readings_left", n}, {"reads", n}, then what SetExtraDetails gave.
  std::vector<std::pair<std::string, std::string>> Details() const override;
  // Details() entries to report after the two above (e.g. a GPU meter's sharing verdict).
  void SetExtraDetails(std::vector<std::pair<std::string, std::string>> details);

  // Sets the cumulative energy of domain `index`, J. Errors: GREENRL_CHECK on a bad index or a
  // value below the current one.
  void SetEnergyJ(std::size_t index, double energy_j);
  // Sets the cumulative energy of every domain, J (one value per domain, domains() order).
  void SetEnergyJ(const std::vector<double>& energy_j);
  // Adds energy_j (>= 0) joules to domain `index`. Errors: greenrl::InternalError
  // (GREENRL_CHECK) for an index out of range or a negative energy_j.
  void AddEnergyJ(std::size_t index, double energy_j);
  // Queues readings, each one value per domain (J, cumulative, non-decreasing along the queue).
  void Script(const std::vector<std::vector<double>>& readings_j);
  // Number of ReadEnergyJ() calls so far.
  std::size_t read_count() const;
  // Sets what update_period_s() returns, s (default 0).
  void SetUpdatePeriodS(double update_period_s);
  double update_period_s() const override;

 private:
  void CheckReading(const std::vector<double>& previous_j, const std::vector<double>& next_j) const;

  std::vector<std::pair<std::string, std::string>> extra_details_;
  const std::vector<std::string> domains_;
  const Provenance provenance_;
  const Scope scope_;
  const std::string name_;
  mutable std::mutex mutex_;
  double update_period_s_ = 0.0;                // guarded by mutex_
  std::vector<double> current_j_;               // guarded by mutex_
  std::deque<std::vector<double>> scripted_j_;  // guarded by mutex_
  std::size_t read_count_ = 0;                  // guarded by mutex_
};

}  // namespace greenrl::energy
