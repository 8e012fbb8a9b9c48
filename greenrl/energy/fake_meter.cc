// fake_meter.cc: settable and scripted readings (see fake_meter.h).
#include "greenrl/energy/fake_meter.h"

#include <set>

#include "greenrl/core/errors.h"

namespace greenrl::energy {

FakeMeter::FakeMeter(std::vector<std::string> domains, Provenance provenance, Scope scope,
                     std::string name)
    : domains_(std::move(domains)),
      provenance_(provenance),
      scope_(scope),
      name_(std::move(name)),
      current_j_(domains_.size(), 0.0) {
  GREENRL_CHECK(!domains_.empty(), "a FakeMeter needs at least one domain");
  const std::set<std::string> unique(domains_.begin(), domains_.end());
  GREENRL_CHECK(unique.size() == domains_.size(), "FakeMeter domain names must be unique");
}

void FakeMeter::CheckReading(const std::vector<double>& previous_j,
                             const std::vector<double>& next_j) const {
  GREENRL_CHECK(next_j.size() == domains_.size(), "one value per domain expected");
  for (std::size_t i = 0; i < next_j.size(); ++i) {
    GREENRL_CHECK(next_j[i] >= previous_j[i],
                  "cumulative energy of " + domains_[i] + " must not decrease");
  }
}

std::vector<double> FakeMeter::ReadEnergyJ() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++read_count_;
  if (!scripted_j_.empty()) {
    current_j_ = scripted_j_.front();
    scripted_j_.pop_front();
  }
  return current_j_;
}

std::vector<std::pair<std::string, std::string>> FakeMeter::Details() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, std::string>> details = {
      {"scripted_readings_left", std::to_string(scripted_j_.size())},
      {"reads", std::to_string(read_count_)}};
  details.insert(details.end(), extra_details_.begin(), extra_details_.end());
  return details;
}

void FakeMeter::SetExtraDetails(std::vector<std::pair<std::string, std::string>> details) {
  std::lock_guard<std::mutex> lock(mutex_);
  extra_details_ = std::move(details);
}

void FakeMeter::SetEnergyJ(std::size_t index, double energy_j) {
  std::lock_guard<std::mutex> lock(mutex_);
  GREENRL_CHECK(index < current_j_.size(), "FakeMeter domain index out of range");
  std::vector<double> next_j = current_j_;
  next_j[index] = energy_j;
  CheckReading(current_j_, next_j);
  current_j_ = std::move(next_j);
}

void FakeMeter::SetEnergyJ(const std::vector<double>& energy_j) {
  std::lock_guard<std::mutex> lock(mutex_);
  CheckReading(current_j_, energy_j);
  current_j_ = energy_j;
}

void FakeMeter::AddEnergyJ(std::size_t index, double energy_j) {
  std::lock_guard<std::mutex> lock(mutex_);
  GREENRL_CHECK(index < current_j_.size(), "FakeMeter domain index out of range");
  GREENRL_CHECK(energy_j >= 0.0, "AddEnergyJ takes a non-negative amount");
  current_j_[index] += energy_j;
}

void FakeMeter::Script(const std::vector<std::vector<double>>& readings_j) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<double> previous_j = scripted_j_.empty() ? current_j_ : scripted_j_.back();
  for (const std::vector<double>& reading_j : readings_j) {
    CheckReading(previous_j, reading_j);
    scripted_j_.push_back(reading_j);
    previous_j = reading_j;
  }
}

void FakeMeter::SetUpdatePeriodS(double update_period_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  update_period_s_ = update_period_s;
}

double FakeMeter::update_period_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return update_period_s_;
}

std::size_t FakeMeter::read_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_count_;
}

}  // namespace greenrl::energy
