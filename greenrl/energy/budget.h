// budget.h: BudgetController, the energy budget of a training run as a state machine
// (../shared/STYLE.md point 8, ../shared/DESIGN.md "Energy and carbon", issue 3 part 5).
//
// The trainer calls OnIteration() once at the end of every iteration with the global step and the
// energy used so far. The controller forecasts the run's total energy by linear extrapolation of
// the energy per step measured after a warm-up (carbontracker's prediction,
// ../shared/REFERENCES.md: energy of the first epochs x total epochs, here energy per step x
// remaining steps), and steps down a ladder of cheaper regimes as the forecast (or the consumption)
// crosses fractions of the budget:
//
//   kNormal -> kReducedPrecision -> kSkipNonCritical -> kThrottle -> kStopped
//
// Transitions (all one-way; several may happen in one call; any state may go straight to
// kStopped):
// - to kReducedPrecision when fraction >= reduced_precision_at,
// - to kSkipNonCritical  when fraction >= skip_at,
// - to kThrottle         when fraction >= throttle_at,
//   where fraction = max(forecast_j, energy_used_j) / budget_j (energy_used_j alone while there is
//   no forecast yet, i.e. during the warm-up or when total_steps is unknown);
// - to kStopped when energy_used_j + stop_margin x next_iteration_energy_j + checkpoint_j +
//   reserve_j > budget_j,
//   where next_iteration_energy_j = max(energy of the iteration just ended, forecast energy per
//   step x steps of the iteration just ended) and reserve_j is the caller's estimate of what the
//   run spends after its last iteration (the trainer's: the larger of the final evaluation, which
//   a finished run spends, and the resume checkpoint a stop writes) and checkpoint_j its
//   estimate of a periodic checkpoint due before the next iteration. The stop rule applies from
//   the first call, warm-up or not.
// The ladder never climbs back: a cheaper regime lowers the energy per step, so the forecast
// falls once a rung fires, and climbing back up on that would flap between regimes.
//
// The budget guarantee: the controller lets another iteration start only when energy_used_j +
// next_iteration_energy_j + checkpoint_j + reserve_j <= budget_j, so the iteration, the checkpoint
// before it and what comes after the last one fit. The run overshoots its budget only if an
// iteration (or the work after the last one) costs more than its estimate, and then by less than
// that iteration's energy plus the estimate's error: with constant energy per iteration and an
// exact reserve it never exceeds it. The reports after a stop or the final evaluation are not
// forecast; energy.json counts them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace greenrl::energy {

// Where the run stands on the ladder. The order is the ladder's order (each state implies the
// regimes of the states before it, except where the trainer reported an action unsupported).
enum class BudgetState {
  kNormal,            // no budget pressure (or no budget)
  kReducedPrecision,  // the update runs in reduced precision (autocast), where supported
  kSkipNonCritical,   // + periodic evaluation skipped, per-iteration logging thinned
  kThrottle,          // + fewer env threads and an idle time after every iteration
  kStopped,           // no further iteration: final checkpoint, report says the budget ended it
};

// An action the controller takes when it enters a state (one per rung of the ladder).
enum class BudgetAction {
  kReducePrecision,  // enter kReducedPrecision
  kSkipNonCritical,  // enter kSkipNonCritical
  kThrottle,         // enter kThrottle
  kStop,             // enter kStopped
};

// Returns: "normal", "reduced_precision", "skip_non_critical", "throttle" or "stopped" (the names
// written to energy.json).
const char* BudgetStateName(BudgetState state);
// Returns: "reduce_precision", "skip_non_critical", "throttle" or "stop".
const char* BudgetActionName(BudgetAction action);
// The state or action of a name above (energy.json, resume checkpoints).
// Errors: std::invalid_argument naming the unknown name and the accepted ones.
BudgetState ParseBudgetState(const std::string& name);
BudgetAction ParseBudgetAction(const std::string& name);

// The `energy.budget_wh` and `energy.budget.*` config fields. The defaults here are the
// controller's own (a disabled budget, no warm-up); the config keys' defaults, which `greenrl
// keys` lists (warmup_steps 1000), are the run schema's (train/run_config.cc), which
// train::BudgetOptionsFrom reads.
struct BudgetOptions {
  // energy.budget_wh: the run's energy budget, Wh (finite, >= 0). 0 = no budget: the controller
  // is disabled and never acts.
  double budget_wh = 0.0;
  // energy.budget.warmup_steps: global steps (env steps summed over envs) excluded from the energy
  // per step behind the forecast (JIT, allocation, first-touch costs); no forecast before them.
  // >= 0.
  std::int64_t warmup_steps = 0;
  // energy.budget.reduced_precision_at / skip_at / throttle_at: fractions of the budget at which
  // each rung fires, compared with max(forecast, used) / budget. Finite, > 0, and
  // reduced_precision_at <= skip_at <= throttle_at. Values above 1 are allowed (act only when the
  // forecast overshoots the budget by that much). The defaults are greenrl's choice, from no
  // paper: each rung fires while the budget still has room for the next one to act.
  double reduced_precision_at = 0.6;
  double skip_at = 0.75;
  double throttle_at = 0.9;
  // energy.budget.throttle_duty_cycle: when throttled, the fraction of wall time spent working,
  // in (0, 1]; the controller asks for an idle time of work_s x (1 - duty) / duty after each
  // iteration (0.5: idle as long as the iteration worked). 1 = no idling.
  double throttle_duty_cycle = 0.5;
  // energy.budget.throttle_env_threads_fraction: when throttled, the fraction of the env worker
  // threads to keep, in (0, 1] (the trainer keeps max(1, round(n x fraction)) threads).
  double throttle_env_threads_fraction = 0.5;
  // energy.budget.stop_margin: the stop keeps stop_margin x the next iteration's estimated energy
  // in hand (finite, >= 1). 1 stops exactly when one more iteration of the estimated cost would
  // exceed the budget; larger values stop earlier (e.g. to leave room for the final checkpoint).
  double stop_margin = 1.0;
};

// Checks the options; call before training starts.
// Errors: greenrl::ConfigError naming "energy.budget_wh" (negative or not finite),
//   "energy.budget.warmup_steps" (negative), "energy.budget.reduced_precision_at",
//   "energy.budget.skip_at", "energy.budget.throttle_at" (not finite, <= 0, or out of order; of
//   two rungs out of order the error names the one that differs from its default when only one
//   does, else the upper one, with the other's value and whether it is its default),
//   "energy.budget.throttle_duty_cycle", "energy.budget.throttle_env_threads_fraction" (outside
//   (0, 1]) or "energy.budget.stop_margin" (< 1 or not finite), with the value and the range.
void ValidateBudgetOptions(const BudgetOptions& options);

// What the trainer does for the next iteration. Flags hold for as long as the state does;
// `actions` lists only what this call newly took.
struct BudgetDecision {
  BudgetState state = BudgetState::kNormal;
  // Actions newly taken by this call, in ladder order; usually empty, several when the forecast
  // jumps past several thresholds. An action the trainer reported unsupported beforehand is not
  // listed (it is recorded in the events).
  std::vector<BudgetAction> actions;
  bool reduced_precision = false;  // run the update in reduced precision
  bool skip_non_critical = false;  // skip periodic eval, thin per-iteration logging
  bool throttle = false;           // apply env_threads_fraction and idle_s
  bool stop = false;               // start no further iteration; final checkpoint and report
  // Seconds to idle (sleep) right after this call, before the next iteration; 0 unless throttled.
  // Computed from the work time of the iteration just ended (its wall time minus the idle asked
  // for after the previous call) and throttle_duty_cycle.
  double idle_s = 0.0;
  // Fraction of env worker threads to keep (1 unless throttled).
  double env_threads_fraction = 1.0;
  double energy_used_j = 0.0;        // as passed in, J
  std::optional<double> forecast_j;  // forecast of the run's total, J; none during the warm-up
  double fraction = 0.0;             // max(forecast_j, energy_used_j) / budget_j (0 if no budget)
  double next_iteration_energy_j = 0.0;  // the stop rule's estimate of the next iteration, J
  double reserve_j = 0.0;                // as passed in: kept for the work after the last one, J
  double checkpoint_j = 0.0;  // as passed in: the periodic checkpoint due next, J (0: none due)
};

// One decision, for energy.json and the final report.
struct BudgetEvent {
  std::int64_t global_step = 0;  // global step of the OnIteration() call it was taken at
  double time_s = 0.0;           // now_s of that call, s (the trainer's clock)
  BudgetAction action = BudgetAction::kReducePrecision;
  // false: the trainer reported the action unsupported (before it fired: the rung was passed
  // over; after: it is no longer applied). The state moves down the ladder either way.
  bool taken = true;
  BudgetState state = BudgetState::kNormal;  // state after the event
  double energy_used_j = 0.0;                // J used at that call
  double budget_j = 0.0;                     // the budget, J
  std::optional<double> forecast_j;          // forecast of the run's total at that call, J
  double fraction = 0.0;                     // max(forecast_j, energy_used_j) / budget_j
  double next_iteration_energy_j = 0.0;      // the stop rule's estimate at that call, J
  double reserve_j = 0.0;  // the energy kept for after the last iteration at that call, J
  double checkpoint_j = 0.0;  // the periodic checkpoint due at that call, J (0: none due)
  std::string reason;                        // one human-readable line with the figures
};

// The controller's part of a resume checkpoint (train/checkpointing.h saves it with the
// trainer's state), so that a resumed run goes on down the ladder it was on.
struct BudgetSnapshot {
  double budget_wh = 0.0;                    // the budget the run was under, Wh (0: none)
  BudgetState state = BudgetState::kNormal;  // where it stood on the ladder
  std::vector<BudgetEvent> events;           // every decision so far, earlier segments' too
  // Returns: whether the budget stopped the run (state kStopped).
  bool stopped() const { return state == BudgetState::kStopped; }
  // Returns: the energy used when the budget stopped the run (the stop event's
  //   energy_used_j), J; 0 when it did not stop.
  double stopped_at_energy_j() const;
  // Returns: the global step the budget stopped the run at; 0 when it did not stop.
  std::int64_t stopped_at_step() const;
};

// The budget state machine. Driven by the trainer's loop thread; not thread-safe.
//
// Usage, per iteration: decision = controller.OnIteration(step, total_steps, used_j, clock.NowS());
// apply decision's flags (for an action it cannot do, call ReportUnsupported()); sleep
// decision.idle_s; stop with a final checkpoint when decision.stop. energy_used_j is the run's
// cumulative energy counted from the same origin as start_s (e.g. EnergyMonitor::Total() summed
// over domains), so the first iteration's energy is energy_used_j itself.
class BudgetController {
 public:
  // Args: options: validated here; start_s: the trainer's clock (Clock::NowS) when the training
  //   loop starts, s (the start of the first iteration, for its work time).
  // Errors: greenrl::ConfigError as ValidateBudgetOptions; greenrl::InternalError
  //   (GREENRL_CHECK) for a non-finite start_s.
  BudgetController(const BudgetOptions& options, double start_s);

  // Returns: whether a budget is set (budget_wh > 0). A disabled controller returns kNormal with
  //   no actions from every call and records no events.
  bool enabled() const { return budget_j_ > 0.0; }

  // Steps the state machine at the end of an iteration.
  // Args: global_step: env steps done so far, summed over envs (> the previous call's);
  //   total_steps: the run's planned total steps (>= 0; 0 = unknown: no forecast, fractions from
  //   energy_used_j only); energy_used_j: cumulative energy used so far, J (finite, >= 0,
  //   non-decreasing); now_s: the trainer's clock, s (non-decreasing, >= start_s).
  // Returns: the state, what to apply, and the actions newly taken. When global_step >=
  //   total_steps (> 0) the run is complete and no new action is taken. After kStopped every call
  //   returns the stopped decision again with no actions.
  //   reserve_j: energy the run spends after its last iteration, J (finite, >= 0; the trainer's
  //   larger estimate of the final evaluation and of the resume checkpoint a stop writes), kept
  //   out of what the iterations may use; reserve_what names it in the stop's reason ("final
  //   evaluation", "stop checkpoint").
  //   checkpoint_j: energy of the periodic checkpoint the caller writes after this call and before
  //   the next iteration, J (finite, >= 0; 0 when none is due; the trainer's estimate is its last
  //   checkpoint's energy): the next iteration may start only if it fits too.
  // Errors: GREENRL_CHECK on arguments that break the rules above (steps or energy going back).
  BudgetDecision OnIteration(std::int64_t global_step, std::int64_t total_steps,
                             double energy_used_j, double now_s, double reserve_j = 0.0,
                             double checkpoint_j = 0.0,
                             const std::string& reserve_what = "final evaluation");

  // The trainer says it cannot carry out `action` (e.g. no reduced precision on this device);
  // `reason` says why ("float16 autocast unsupported on cpu"). Callable before the rung fires (it
  // will then be passed over, recorded with taken = false, and never listed in decisions) or after
  // (recorded now, at the last call's step, with taken = false; flags of later decisions drop it).
  // The ladder moves on: later rungs fire at their own thresholds. A repeated report is ignored.
  // Errors: GREENRL_CHECK for kStop (stopping is always possible).
  void ReportUnsupported(BudgetAction action, const std::string& reason);

  // Returns: what a resume checkpoint keeps of the controller.
  BudgetSnapshot Snapshot() const;

  // Continues the run of a resume checkpoint, before the first OnIteration() call.
  // Args: saved: the checkpoint's snapshot (a default one for a checkpoint without it);
  //   global_step: the checkpoint's global step; energy_used_j: the energy used so far, J,
  //   counted as OnIteration() will count it (the earlier segments' energy included); now_s: the
  //   clock as OnIteration() will read it, s. The three are the origin of the first iteration's
  //   energy, steps and work time, and the forecast is anchored again once warmup_steps more
  //   steps have passed (the new process warms up again).
  // Returns: the actions the trainer applies again, in ladder order: the taken rungs of the
  //   restored state (kReducePrecision, kSkipNonCritical, kThrottle), none when the ladder
  //   starts again. An action reported unsupported before this call is not listed.
  // The saved events are kept (energy.json lists them before this segment's). With the budget
  // the snapshot was taken under (the same budget_wh), the state and the rungs that fired are
  // restored: a run throttled before the checkpoint is throttled after it. With another budget
  // (raised after a budget stop, lowered, or none) the ladder starts again from kNormal.
  // Errors: GREENRL_CHECK when called after OnIteration(), or with a negative step, energy or a
  //   non-finite value.
  std::vector<BudgetAction> Resume(const BudgetSnapshot& saved, std::int64_t global_step,
                                   double energy_used_j, double now_s);

  // The global step from which a step costs what later ones do: the forecast's rate is measured
  // from the first call at or after max(this, the warm-up's end), not from the warm-up's end
  // alone. The trainer gives an off-policy algorithm's Algorithm::updates_wait_until(): before
  // learning_starts no gradient step is taken, and such a step costs about 1% of a later one
  // (SAC's Hopper-v4 preset on the 2-core VM, 2026-12-07: about 1 mJ against 90 mJ per step by
  // the CPU-time estimator), so a rate taken across it forecast less than half the run.
  // Call before the first OnIteration() (after Resume()); 0, the default, changes nothing.
  // Errors: GREENRL_CHECK for a negative step or a call after OnIteration().
  void SetSteadyFrom(std::int64_t global_step);

  // The numerical guard went back to a resume checkpoint at `global_step` (at or before the last
  // OnIteration() call's step) within this process: the steps after it are done again.
  // energy_used_j and now_s are the energy used and the clock at the restore (as OnIteration()
  // takes them): energy goes on (the discarded iterations' energy was used, and counts against
  // the budget), the state and the rungs that fired stay, and the next iteration's energy and
  // the forecast's rate count from the restore (energy since it over the steps since it), so
  // neither the redone steps nor the discarded work inflate them.
  // Errors: GREENRL_CHECK when global_step is negative or past the last call's step, or energy
  // or time go back.
  void Rewind(std::int64_t global_step, double energy_used_j, double now_s);

  // Returns: the current state.
  BudgetState state() const { return state_; }
  // Returns: whether the budget stopped the run.
  bool stopped() const { return state_ == BudgetState::kStopped; }
  // Returns: the reason line of this run's stop event ("" while not stopped; an earlier
  //   segment's stop, resumed with a larger budget, is not this run's), for the final report.
  std::string stop_reason() const;
  // Returns: every decision so far, in order (for energy.json).
  const std::vector<BudgetEvent>& events() const { return events_; }
  // Returns: the budget, J (budget_wh x 3600).
  double budget_j() const { return budget_j_; }
  // Returns: the options in use.
  const BudgetOptions& options() const { return options_; }

 private:
  // Index of `action` in supported_/unsupported_reason_.
  static int ActionIndex(BudgetAction action);
  // Moves to the rung of `action`, records its event, appends it to `decision` if supported.
  void Fire(BudgetAction action, BudgetState to, const std::string& reason,
            BudgetDecision& decision);
  // Fills decision's flags, idle_s and env_threads_fraction from state_ and supported_.
  void FillFlags(double work_s, BudgetDecision& decision) const;

  BudgetOptions options_;
  double budget_j_ = 0.0;  // options_.budget_wh x 3600
  BudgetState state_ = BudgetState::kNormal;
  std::vector<BudgetEvent> events_;
  bool supported_[4] = {true, true, true, true};  // per BudgetAction
  std::string unsupported_reason_[4];             // per BudgetAction
  bool fired_[4] = {false, false, false, false};  // per BudgetAction

  // The previous call (or the start): global step, cumulative energy (J), clock (s), idle (s).
  std::int64_t last_step_ = 0;
  double last_energy_j_ = 0.0;
  double last_time_s_ = 0.0;
  double last_idle_s_ = 0.0;
  BudgetDecision last_decision_;
  bool called_ = false;  // OnIteration() has been called
  // The forecast's origin: the first point (start included) at or after origin_step_ +
  // warmup_steps, where origin_step_ is 0, or the global step of a resumed checkpoint.
  std::int64_t origin_step_ = 0;
  std::int64_t steady_from_step_ = 0;  // SetSteadyFrom's step: no anchor before it
  bool has_anchor_ = false;
  std::int64_t anchor_step_ = 0;
  double anchor_energy_j_ = 0.0;
};

}  // namespace greenrl::energy
