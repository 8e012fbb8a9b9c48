// integrated_meter.cc: trapezoid integration of power samples (see integrated_meter.h).
#include "greenrl/energy/integrated_meter.h"

#include <cmath>
#include <set>

#include "greenrl/core/errors.h"

namespace greenrl::energy {

bool PowerIntegrator::AddSample(double time_s, double power_w) {
  if (!std::isfinite(time_s) || !std::isfinite(power_w) || power_w < 0.0 ||
      (sample_count_ > 0 && !(time_s > last_time_s_))) {
    ++rejected_count_;
    return false;
  }
  if (sample_count_ > 0) {
    energy_j_ += 0.5 * (last_power_w_ + power_w) * (time_s - last_time_s_);
  }
  last_time_s_ = time_s;
  last_power_w_ = power_w;
  ++sample_count_;
  return true;
}

IntegratedMeter::IntegratedMeter(std::string name, std::vector<std::string> domains, Scope scope,
                                 PowerReader read_power_w)
    : name_(std::move(name)),
      domains_(std::move(domains)),
      scope_(scope),
      read_power_w_(std::move(read_power_w)),
      integrators_(domains_.size()) {
  GREENRL_CHECK(!domains_.empty(), "IntegratedMeter needs at least one domain");
  GREENRL_CHECK(std::set<std::string>(domains_.begin(), domains_.end()).size() == domains_.size(),
                "IntegratedMeter domains must be unique");
  GREENRL_CHECK(static_cast<bool>(read_power_w_), "IntegratedMeter needs a power reader");
}

std::vector<double> IntegratedMeter::ReadEnergyJ() {
  std::vector<double> energy_j;
  energy_j.reserve(integrators_.size());
  for (const PowerIntegrator& integrator : integrators_) energy_j.push_back(integrator.energy_j());
  return energy_j;
}

std::vector<std::pair<std::string, std::string>> IntegratedMeter::Details() const {
  std::int64_t rejected = 0;
  for (const PowerIntegrator& integrator : integrators_) rejected += integrator.rejected_count();
  return {{"method", "trapezoid over power samples"},
          {"samples", std::to_string(samples_)},
          {"failed_reads", std::to_string(failed_reads_)},
          {"rejected_samples", std::to_string(rejected)}};
}

void IntegratedMeter::Sample(double now_s) {
  // Already sampled at this time or later (a window read came between the sampler's clock read
  // and its call): nothing to add, and not a rejected sample.
  if (integrators_.front().sample_count() > 0 && now_s <= integrators_.front().last_time_s()) {
    return;
  }
  std::vector<double> power_w;
  if (!read_power_w_(&power_w) || power_w.size() != integrators_.size()) {
    ++failed_reads_;
    return;
  }
  for (std::size_t i = 0; i < integrators_.size(); ++i) {
    integrators_[i].AddSample(now_s, power_w[i]);
  }
  ++samples_;
}

}  // namespace greenrl::energy
