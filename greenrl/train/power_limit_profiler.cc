#include "greenrl/train/power_limit_profiler.h"

#include <fmt/format.h>

#include <algorithm>

#include "greenrl/core/errors.h"

namespace greenrl::train {

PowerLimitProfiler::PowerLimitProfiler(std::unique_ptr<energy::PowerLimitControl> control,
                                       std::string mode, double eta, int iterations_per_limit,
                                       const std::string& why_no_control)
    : control_(std::move(control)),
      mode_(std::move(mode)),
      eta_(eta),
      iterations_per_limit_(iterations_per_limit) {
  GREENRL_CHECK(iterations_per_limit_ >= 1, "iterations_per_limit must be >= 1");
  if (mode_ == "off") return;
  if (control_ == nullptr) {
    log_.push_back("energy.power_limit=" + mode_ + ": no GPU power-limit control (" +
                   why_no_control + ")");
    return;
  }
  // One plan for all GPUs: from the lowest common maximum down to the highest common minimum.
  double min_w = 0.0, max_w = 1e12;
  for (const std::string& domain : control_->domains()) {
    std::string error;
    const auto info = control_->Read(domain, &error);
    if (!info) {
      log_.push_back(domain + ": cannot read its power limits (" + error + ")");
      continue;
    }
    min_w = std::max(min_w, info->min_limit_w);
    max_w = std::min(max_w, info->max_limit_w);
    log_.push_back(energy::DescribePowerLimitPlan(
        *info, energy::PowerLimitPlanW(info->min_limit_w, info->max_limit_w)));
  }
  if (max_w >= 1e12 || min_w <= 0.0 || min_w > max_w) {
    log_.push_back("no power-limit range common to every GPU: nothing to profile");
    return;
  }
  plan_w_ = energy::PowerLimitPlanW(min_w, max_w);
  max_power_w_ = max_w;
  profiling_ = mode_ == "auto";
  if (!profiling_) {
    log_.push_back(
        fmt::format("dry-run: would profile {} limits x {} iterations each and keep the "
                    "one minimising {} x energy + {} x {} W x time",
                    plan_w_.size(), iterations_per_limit_, eta_, 1.0 - eta_, max_w));
  }
}

PowerLimitProfiler::~PowerLimitProfiler() { Restore(); }

void PowerLimitProfiler::SetAll(double limit_w) {
  for (const std::string& domain : control_->domains()) {
    log_.push_back(control_->Set(domain, limit_w).line);
  }
}

void PowerLimitProfiler::BeforeIteration() {
  if (!profiling_ || iterations_done_ != 0) return;
  SetAll(plan_w_[current_]);
}

void PowerLimitProfiler::AfterIteration(double energy_j, double duration_s) {
  if (!profiling_) return;
  energy_j_ += energy_j;
  time_s_ += duration_s;
  if (++iterations_done_ < iterations_per_limit_) return;
  profiles_.push_back({plan_w_[current_], energy_j_, time_s_});
  log_.push_back(fmt::format("profiled {} W: {:.3f} J, {:.4f} s over {} iterations",
                             plan_w_[current_], energy_j_, time_s_, iterations_per_limit_));
  energy_j_ = time_s_ = 0.0;
  iterations_done_ = 0;
  if (++current_ < plan_w_.size()) return;
  profiling_ = false;
  const energy::PowerLimitChoice choice = energy::ChoosePowerLimit(profiles_, max_power_w_, eta_);
  chosen_limit_w_ = choice.limit_w;
  log_.push_back(fmt::format("chose {} W (cost {:.3f} J-equivalent, eta {})", choice.limit_w,
                             choice.cost_j[choice.index], eta_));
  SetAll(choice.limit_w);
}

void PowerLimitProfiler::Throttle() {
  if (control_ == nullptr) return;
  for (const std::string& domain : control_->domains()) {
    std::string error;
    const auto info = control_->Read(domain, &error);
    if (!info) continue;
    const double target = std::max(info->min_limit_w, info->current_limit_w - 25.0);
    log_.push_back("budget throttle: " + control_->Set(domain, target).line);
  }
}

void PowerLimitProfiler::Restore() {
  if (restored_ || control_ == nullptr || mode_ == "off") return;
  restored_ = true;
  for (const auto& r : control_->RestoreAll()) log_.push_back(r.line);
}

}  // namespace greenrl::train
