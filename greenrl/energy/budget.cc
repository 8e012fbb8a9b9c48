// budget.cc: the budget state machine (see budget.h).
#include "greenrl/energy/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "greenrl/core/errors.h"
#include "greenrl/energy/units.h"

namespace greenrl::energy {
namespace {

bool AtLeast(BudgetState state, BudgetState rung) {
  return static_cast<int>(state) >= static_cast<int>(rung);
}

void RequireFraction(const char* field, double value, const char* accepted) {
  if (!std::isfinite(value) || value <= 0.0) {
    throw ConfigError(field, fmt::format("{}", value), accepted);
  }
}

void RequireUnitInterval(const char* field, double value, const char* accepted) {
  if (!std::isfinite(value) || value <= 0.0 || value > 1.0) {
    throw ConfigError(field, fmt::format("{}", value), accepted);
  }
}

// "2207 J", "7.2055 J": five significant digits, so that a stop's "used + next > budget" still
// reads true after rounding (one decimal printed 7.1 + 0.1 = 7.2 > 7.2); events keep the exact
// values.
std::string Joules(double energy_j) { return fmt::format("{:.5g} J", energy_j); }

}  // namespace

const char* BudgetStateName(BudgetState state) {
  switch (state) {
    case BudgetState::kNormal:
      return "normal";
    case BudgetState::kReducedPrecision:
      return "reduced_precision";
    case BudgetState::kSkipNonCritical:
      return "skip_non_critical";
    case BudgetState::kThrottle:
      return "throttle";
    case BudgetState::kStopped:
      return "stopped";
  }
  return "unknown";
}

const char* BudgetActionName(BudgetAction action) {
  switch (action) {
    case BudgetAction::kReducePrecision:
      return "reduce_precision";
    case BudgetAction::kSkipNonCritical:
      return "skip_non_critical";
    case BudgetAction::kThrottle:
      return "throttle";
    case BudgetAction::kStop:
      return "stop";
  }
  return "unknown";
}

BudgetState ParseBudgetState(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(BudgetState::kStopped); ++k) {
    const auto state = static_cast<BudgetState>(k);
    if (name == BudgetStateName(state)) return state;
  }
  throw std::invalid_argument("unknown budget state '" + name +
                              "' (normal, reduced_precision, skip_non_critical, throttle or "
                              "stopped)");
}

BudgetAction ParseBudgetAction(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(BudgetAction::kStop); ++k) {
    const auto action = static_cast<BudgetAction>(k);
    if (name == BudgetActionName(action)) return action;
  }
  throw std::invalid_argument("unknown budget action '" + name +
                              "' (reduce_precision, skip_non_critical, throttle or stop)");
}

void ValidateBudgetOptions(const BudgetOptions& options) {
  if (!std::isfinite(options.budget_wh) || options.budget_wh < 0.0) {
    throw ConfigError("energy.budget_wh", fmt::format("{}", options.budget_wh),
                      "a finite energy budget in Wh, >= 0 (0 = no budget)");
  }
  if (options.warmup_steps < 0) {
    throw ConfigError("energy.budget.warmup_steps", fmt::format("{}", options.warmup_steps),
                      "a number of global steps >= 0");
  }
  constexpr const char* kFractionRange =
      "a finite fraction of the budget > 0, with reduced_precision_at <= skip_at <= throttle_at "
      "(defaults 0.6, 0.75, 0.9)";
  RequireFraction("energy.budget.reduced_precision_at", options.reduced_precision_at,
                  kFractionRange);
  RequireFraction("energy.budget.skip_at", options.skip_at, kFractionRange);
  RequireFraction("energy.budget.throttle_at", options.throttle_at, kFractionRange);
  // Two rungs out of order: the error names the one the user set, the upper one when both are
  // set or both at their defaults, and says which value is a default.
  const BudgetOptions defaults;
  const auto check_order = [](const char* lower_key, double lower, double lower_default,
                              const char* upper_key, double upper, double upper_default) {
    if (upper >= lower) return;
    const auto default_note = [](double value, double default_value) {
      return value == default_value ? ", its default" : "";
    };
    if (upper == upper_default && lower != lower_default) {
      throw ConfigError(lower_key, fmt::format("{}", lower),
                        fmt::format("a value <= {} ({}{})", upper_key, upper,
                                    default_note(upper, upper_default)));
    }
    throw ConfigError(
        upper_key, fmt::format("{}", upper),
        fmt::format("a value >= {} ({}{})", lower_key, lower, default_note(lower, lower_default)));
  };
  check_order("energy.budget.reduced_precision_at", options.reduced_precision_at,
              defaults.reduced_precision_at, "energy.budget.skip_at", options.skip_at,
              defaults.skip_at);
  check_order("energy.budget.skip_at", options.skip_at, defaults.skip_at,
              "energy.budget.throttle_at", options.throttle_at, defaults.throttle_at);
  RequireUnitInterval("energy.budget.throttle_duty_cycle", options.throttle_duty_cycle,
                      "a fraction of wall time spent working, in (0, 1] (1 = no idling)");
  RequireUnitInterval("energy.budget.throttle_env_threads_fraction",
                      options.throttle_env_threads_fraction,
                      "a fraction of env threads to keep, in (0, 1]");
  if (!std::isfinite(options.stop_margin) || options.stop_margin < 1.0) {
    throw ConfigError("energy.budget.stop_margin", fmt::format("{}", options.stop_margin),
                      "a finite multiple of the next iteration's energy, >= 1 (default 1)");
  }
}

BudgetController::BudgetController(const BudgetOptions& options, double start_s)
    : options_(options) {
  ValidateBudgetOptions(options_);
  GREENRL_CHECK(std::isfinite(start_s), fmt::format("start_s must be finite, got {}", start_s));
  budget_j_ = options_.budget_wh * kJoulesPerWh;
  last_time_s_ = start_s;
  if (options_.warmup_steps == 0) {
    has_anchor_ = true;  // the start (step 0, 0 J) is the forecast's origin
  }
}

int BudgetController::ActionIndex(BudgetAction action) { return static_cast<int>(action); }

void BudgetController::Fire(BudgetAction action, BudgetState to, const std::string& reason,
                            BudgetDecision& decision) {
  const int index = ActionIndex(action);
  fired_[index] = true;
  state_ = to;
  BudgetEvent event;
  event.global_step = last_step_;
  event.time_s = last_time_s_;
  event.action = action;
  event.taken = supported_[index];
  event.state = to;
  event.energy_used_j = decision.energy_used_j;
  event.budget_j = budget_j_;
  event.forecast_j = decision.forecast_j;
  event.fraction = decision.fraction;
  event.next_iteration_energy_j = decision.next_iteration_energy_j;
  event.reserve_j = decision.reserve_j;
  event.checkpoint_j = decision.checkpoint_j;
  event.reason = reason;
  if (!event.taken) {
    event.reason += fmt::format(" -- not supported ({}); passed over, the ladder moves on",
                                unsupported_reason_[index]);
  } else {
    decision.actions.push_back(action);
  }
  events_.push_back(std::move(event));
}

void BudgetController::FillFlags(double work_s, BudgetDecision& decision) const {
  decision.state = state_;
  decision.stop = state_ == BudgetState::kStopped;
  const auto on = [&](BudgetState rung, BudgetAction action) {
    return AtLeast(state_, rung) && supported_[ActionIndex(action)];
  };
  decision.reduced_precision = on(BudgetState::kReducedPrecision, BudgetAction::kReducePrecision);
  decision.skip_non_critical = on(BudgetState::kSkipNonCritical, BudgetAction::kSkipNonCritical);
  decision.throttle = !decision.stop && on(BudgetState::kThrottle, BudgetAction::kThrottle);
  decision.idle_s = 0.0;
  decision.env_threads_fraction = 1.0;
  if (decision.throttle) {
    const double duty = options_.throttle_duty_cycle;
    decision.idle_s = std::max(0.0, work_s) * (1.0 - duty) / duty;
    decision.env_threads_fraction = options_.throttle_env_threads_fraction;
  }
}

BudgetDecision BudgetController::OnIteration(std::int64_t global_step, std::int64_t total_steps,
                                             double energy_used_j, double now_s, double reserve_j,
                                             double checkpoint_j, const std::string& reserve_what) {
  if (state_ == BudgetState::kStopped) {
    BudgetDecision again = last_decision_;
    again.actions.clear();
    return again;
  }
  called_ = true;
  GREENRL_CHECK(global_step > last_step_,
                fmt::format("global_step must increase: {} after {}", global_step, last_step_));
  GREENRL_CHECK(total_steps >= 0, fmt::format("total_steps must be >= 0, got {}", total_steps));
  GREENRL_CHECK(std::isfinite(reserve_j) && reserve_j >= 0.0,
                fmt::format("reserve_j must be finite and >= 0, got {}", reserve_j));
  GREENRL_CHECK(std::isfinite(checkpoint_j) && checkpoint_j >= 0.0,
                fmt::format("checkpoint_j must be finite and >= 0, got {}", checkpoint_j));
  GREENRL_CHECK(std::isfinite(energy_used_j) && energy_used_j >= last_energy_j_,
                fmt::format("energy_used_j must be finite and non-decreasing: {} after {}",
                            energy_used_j, last_energy_j_));
  GREENRL_CHECK(
      std::isfinite(now_s) && now_s >= last_time_s_,
      fmt::format("now_s must be finite and non-decreasing: {} after {}", now_s, last_time_s_));

  // The iteration just ended: its steps, energy and work time (wall time minus the idle asked
  // for after the previous call).
  const std::int64_t iteration_steps = global_step - last_step_;
  const double iteration_energy_j = energy_used_j - last_energy_j_;
  const double work_s = (now_s - last_time_s_) - last_idle_s_;
  last_step_ = global_step;
  last_energy_j_ = energy_used_j;
  last_time_s_ = now_s;

  BudgetDecision decision;
  decision.energy_used_j = energy_used_j;
  decision.reserve_j = reserve_j;
  decision.checkpoint_j = checkpoint_j;
  if (!enabled()) {
    FillFlags(work_s, decision);
    last_idle_s_ = 0.0;
    last_decision_ = decision;
    return decision;
  }

  // Forecast: used + (energy per step since the anchor) x remaining steps.
  if (!has_anchor_ &&
      global_step >= std::max(origin_step_ + options_.warmup_steps, steady_from_step_)) {
    has_anchor_ = true;
    anchor_step_ = global_step;
    anchor_energy_j_ = energy_used_j;
  }
  std::optional<double> rate_j_per_step;
  if (has_anchor_ && global_step > anchor_step_) {
    rate_j_per_step =
        (energy_used_j - anchor_energy_j_) / static_cast<double>(global_step - anchor_step_);
    if (total_steps > 0) {
      const std::int64_t remaining = std::max<std::int64_t>(0, total_steps - global_step);
      decision.forecast_j = energy_used_j + *rate_j_per_step * static_cast<double>(remaining);
    }
  }
  decision.fraction =
      std::max(decision.forecast_j.value_or(energy_used_j), energy_used_j) / budget_j_;
  decision.next_iteration_energy_j = iteration_energy_j;
  if (rate_j_per_step.has_value()) {
    decision.next_iteration_energy_j =
        std::max(iteration_energy_j, *rate_j_per_step * static_cast<double>(iteration_steps));
  }

  const bool run_complete = total_steps > 0 && global_step >= total_steps;
  if (!run_complete) {
    const double needed_j = energy_used_j +
                            options_.stop_margin * decision.next_iteration_energy_j + checkpoint_j +
                            reserve_j;
    if (needed_j > budget_j_) {
      // Already past the budget (it decides between iterations, and the iterations since the
      // last decision used more than was left: a budget below the first iteration's energy, say).
      const std::string already =
          energy_used_j > budget_j_
              ? fmt::format(
                    " (already past the budget by {}: the iterations since the last "
                    "decision used more than was left)",
                    Joules(energy_used_j - budget_j_))
              : "";
      Fire(BudgetAction::kStop, BudgetState::kStopped,
           fmt::format("step {}: used {} + stop_margin {} x next iteration ~{}{}{} = {} would "
                       "exceed the budget of {} ({} Wh){}; the budget ends the run",
                       global_step, Joules(energy_used_j), options_.stop_margin,
                       Joules(decision.next_iteration_energy_j),
                       checkpoint_j > 0.0 ? " + checkpoint ~" + Joules(checkpoint_j) : "",
                       reserve_j > 0.0 ? " + " + reserve_what + " ~" + Joules(reserve_j) : "",
                       Joules(needed_j), Joules(budget_j_), options_.budget_wh, already),
           decision);
    } else {
      struct Rung {
        BudgetAction action;
        BudgetState state;
        double at;
        const char* key;
        const char* what;
      };
      const Rung rungs[] = {
          {BudgetAction::kReducePrecision, BudgetState::kReducedPrecision,
           options_.reduced_precision_at, "reduced_precision_at",
           "switch the update to reduced precision"},
          {BudgetAction::kSkipNonCritical, BudgetState::kSkipNonCritical, options_.skip_at,
           "skip_at",
           "skip periodic evaluation (kept when eval.reward_threshold is set) and thin "
           "per-iteration logging to every 10th row"},
          {BudgetAction::kThrottle, BudgetState::kThrottle, options_.throttle_at, "throttle_at",
           "throttle (fewer env threads, idle between iterations)"},
      };
      const std::string basis =
          decision.forecast_j.has_value()
              ? fmt::format("forecast {} (used {})", Joules(*decision.forecast_j),
                            Joules(energy_used_j))
              : fmt::format("used {} (no forecast yet)", Joules(energy_used_j));
      for (const Rung& rung : rungs) {
        if (fired_[ActionIndex(rung.action)] || decision.fraction < rung.at) continue;
        Fire(rung.action, rung.state,
             fmt::format("step {}: {} is {:.4f} of the {} budget >= {} {}: {}", global_step, basis,
                         decision.fraction, Joules(budget_j_), rung.key, rung.at, rung.what),
             decision);
      }
    }
  }

  FillFlags(work_s, decision);
  last_idle_s_ = decision.idle_s;
  last_decision_ = decision;
  return decision;
}

void BudgetController::ReportUnsupported(BudgetAction action, const std::string& reason) {
  GREENRL_CHECK(action != BudgetAction::kStop, "stopping is always supported");
  const int index = ActionIndex(action);
  if (!supported_[index]) return;
  supported_[index] = false;
  unsupported_reason_[index] = reason;
  // A throttle the trainer could not apply did not idle either.
  if (action == BudgetAction::kThrottle) last_idle_s_ = 0.0;
  if (!fired_[index] || !enabled()) return;
  BudgetEvent event;
  event.global_step = last_step_;
  event.time_s = last_time_s_;
  event.action = action;
  event.taken = false;
  event.state = state_;
  event.energy_used_j = last_decision_.energy_used_j;
  event.budget_j = budget_j_;
  event.forecast_j = last_decision_.forecast_j;
  event.fraction = last_decision_.fraction;
  event.next_iteration_energy_j = last_decision_.next_iteration_energy_j;
  event.reserve_j = last_decision_.reserve_j;
  event.checkpoint_j = last_decision_.checkpoint_j;
  event.reason = fmt::format("step {}: {} not supported ({}); not applied, the ladder moves on",
                             last_step_, BudgetActionName(action), reason);
  events_.push_back(std::move(event));
}

namespace {
// The last stop event of `events`, or nullptr.
const BudgetEvent* LastStop(const std::vector<BudgetEvent>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (it->action == BudgetAction::kStop) return &*it;
  }
  return nullptr;
}
}  // namespace

std::string BudgetController::stop_reason() const {
  const BudgetEvent* stop = stopped() ? LastStop(events_) : nullptr;
  return stop != nullptr ? stop->reason : "";
}

double BudgetSnapshot::stopped_at_energy_j() const {
  const BudgetEvent* stop = stopped() ? LastStop(events) : nullptr;
  return stop != nullptr ? stop->energy_used_j : 0.0;
}

std::int64_t BudgetSnapshot::stopped_at_step() const {
  const BudgetEvent* stop = stopped() ? LastStop(events) : nullptr;
  return stop != nullptr ? stop->global_step : 0;
}

void BudgetController::Rewind(std::int64_t global_step, double energy_used_j, double now_s) {
  GREENRL_CHECK(global_step >= 0 && global_step <= last_step_,
                fmt::format("Rewind() to step {} after step {}", global_step, last_step_));
  GREENRL_CHECK(std::isfinite(energy_used_j) && energy_used_j >= last_energy_j_ &&
                    std::isfinite(now_s) && now_s >= last_time_s_,
                fmt::format("Rewind() with energy {} J at {} s after {} J at {} s", energy_used_j,
                            now_s, last_energy_j_, last_time_s_));
  last_step_ = global_step;
  last_energy_j_ = energy_used_j;
  last_time_s_ = now_s;
  last_idle_s_ = 0.0;
  if (has_anchor_) {
    anchor_step_ = global_step;
    anchor_energy_j_ = energy_used_j;
  }
}

void BudgetController::SetSteadyFrom(std::int64_t global_step) {
  GREENRL_CHECK(!called_, "SetSteadyFrom() must come before the first OnIteration()");
  GREENRL_CHECK(global_step >= 0,
                fmt::format("SetSteadyFrom() needs a step >= 0, got {}", global_step));
  steady_from_step_ = global_step;
  if (global_step > origin_step_) has_anchor_ = false;  // the anchor at the start is too early
}

BudgetSnapshot BudgetController::Snapshot() const { return {options_.budget_wh, state_, events_}; }

std::vector<BudgetAction> BudgetController::Resume(const BudgetSnapshot& saved,
                                                   std::int64_t global_step, double energy_used_j,
                                                   double now_s) {
  GREENRL_CHECK(!called_, "Resume() must come before the first OnIteration()");
  GREENRL_CHECK(global_step >= 0 && std::isfinite(energy_used_j) && energy_used_j >= 0.0 &&
                    std::isfinite(now_s),
                fmt::format("Resume() needs a step, energy and time >= 0: {}, {}, {}", global_step,
                            energy_used_j, now_s));
  events_ = saved.events;
  last_step_ = origin_step_ = global_step;
  last_energy_j_ = energy_used_j;
  last_time_s_ = now_s;
  last_idle_s_ = 0.0;
  has_anchor_ = options_.warmup_steps == 0;
  anchor_step_ = global_step;
  anchor_energy_j_ = energy_used_j;
  state_ = BudgetState::kNormal;
  std::fill(std::begin(fired_), std::end(fired_), false);
  std::vector<BudgetAction> again;
  if (!enabled() || saved.budget_wh != options_.budget_wh) return again;  // the ladder restarts
  state_ = saved.state;
  // The rungs at or above the saved state fired (passed over or taken) on the way down.
  const BudgetAction rungs[] = {BudgetAction::kReducePrecision, BudgetAction::kSkipNonCritical,
                                BudgetAction::kThrottle, BudgetAction::kStop};
  for (BudgetAction action : rungs) {
    if (static_cast<int>(state_) <= ActionIndex(action)) break;  // rung k enters state k + 1
    fired_[ActionIndex(action)] = true;
    if (action != BudgetAction::kStop && supported_[ActionIndex(action)]) again.push_back(action);
  }
  FillFlags(0.0, last_decision_);
  last_decision_.energy_used_j = energy_used_j;
  return again;
}

}  // namespace greenrl::energy
