// run_report.h: what a finished run reports (../shared/DESIGN.md, "Run directory"): the summary
// printed at the end of `greenrl train`, energy.json, and metrics.csv rows.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/budget.h"
#include "greenrl/energy/carbon.h"

namespace greenrl::report {

// Energy of one domain over the whole run.
struct DomainEnergy {
  std::string domain;      // "cpu:package-0", "dram:0", "cpu:process"
  std::string meter;       // "rapl", "estimator", ...
  std::string provenance;  // "measured", "integrated" or "estimated"
  std::string scope;       // "device", "package" or "process"
  double energy_j = 0.0;
  std::string shared;  // whether other processes' energy is in it: "yes (...)", "no (...)"
};

// Sum of the additive domains' energy_j, J (energy::IsAdditiveDomain: parts such as
// "cpu:package-0/core" and containers such as "psys:0" are reported, never added).
double AdditiveEnergyJ(const std::vector<DomainEnergy>& domains);

// Accumulated energy of every window with one key ("rollout", "update", "eval").
struct WindowEnergy {
  std::string key;
  int64_t count = 0;                       // windows of this key
  double duration_s = 0.0;                 // summed durations
  std::map<std::string, double> energy_j;  // per domain, summed
  // Windows shorter than the meters' update period (EnergyMonitor::update_period_s()), whose
  // energy alone is 0 J or a whole counter step.
  int64_t short_count = 0;
};

// The energy budget's part of a run (energy.budget_wh).
struct BudgetReport {
  bool enabled = false;
  double budget_wh = 0.0;
  std::string final_state;                  // energy::BudgetStateName
  bool stopped = false;                     // the budget ended the run
  bool interrupted = false;                 // a stop signal ended this segment first
  std::string stop_reason;                  // one line, empty unless stopped
  std::vector<energy::BudgetEvent> events;  // every decision, in order
};

// A run that eval.reward_threshold ended before n_timesteps (SB3's
// StopTrainingOnRewardThreshold): the periodic evaluation that reached the threshold.
struct EarlyStopReport {
  bool stopped = false;           // false: the run was not stopped by its reward threshold
  double reward_threshold = 0.0;  // eval.reward_threshold, resolved (train::RewardThresholdFrom)
  double eval_mean_reward = 0.0;  // mean reward of the periodic evaluation that reached it
  int64_t global_step = 0;        // env steps when it did (the run's last step)
  int64_t n_timesteps = 0;        // env steps the run was configured for
};

// eval.save_best: the evaluation whose policy checkpoints/best.pt holds.
struct BestEvalReport {
  int64_t global_step = -1;  // env steps at that evaluation; -1: none (no best.pt)
  double mean_reward = 0.0;  // its mean reward over its deterministic episodes
  std::string checkpoint;    // <run_dir>/checkpoints/best.pt
};

// trained_agent (rl-zoo's --trained-agent): the agent this run started from.
struct TrainedAgentReport {
  std::string checkpoint;  // the file whose agent was loaded; empty: a new agent
  // What training that agent cost before this run, Wh: its run's energy.json total_energy_wh
  // plus that run's own trained_agent.energy_wh (a chain of runs adds up); NaN when unknown
  // (no readable energy.json there).
  double energy_wh = std::numeric_limits<double>::quiet_NaN();
};

// The sampler thread's part of a run (power.csv).
struct SamplerReport {
  double period_s = 0.0;           // sampling period, s
  double max_safe_period_s = 0.0;  // longest period at which no counter can wrap twice, s
  int64_t rows = 0;                // rows in power.csv
  int64_t missed_ticks = 0;        // ticks late by more than half a period
  double cpu_time_s = 0.0;         // CPU time of the sampler thread, s
};

// Everything the summary and energy.json need.
struct RunReport {
  std::string algo, env_id, run_dir;
  std::string update_path;  // Algorithm::UpdatePath(): "fused", "autograd", ...; empty: not shown
  uint64_t seed = 0;
  int64_t steps = 0;                  // env steps, summed over envs
  double wall_time_s = 0.0;           // training loop wall time (setup excluded)
  // Data-parallel ranks (1: one process); with several, cpu_time_s and the energy are all
  // ranks', the wall time rank 0's.
  int world_size = 1;
  double cpu_time_s = 0.0;            // process CPU seconds over the same span
  // CPU seconds this process spent before its meters started (loading LibTorch and greenrl,
  // reading the config; about 0.8 s on the 2-core VM of 2026-12-06), in no total: no meter saw
  // them. Of the last segment's process for a resumed run.
  double cpu_before_meters_s = 0.0;
  double steps_per_s = 0.0;           // steps / wall_time_s
  // Training env steps reset after a simulator fault, and training env resets and steps whose
  // observation or reward was NaN or infinite (VecEnv::non_finite_outputs: a custom env's bug),
  // counted over the run (every segment; every rank's, summed, when data-parallel).
  int64_t env_non_finite_resets = 0;
  int64_t env_non_finite_outputs = 0;
  int eval_episodes = 0;              // final deterministic evaluation (0: skipped, see eval_note)
  std::string eval_note;              // why the final evaluation was skipped, if it was
  // What ended a failed run (the exception's text; energy.json's "failure"); empty otherwise.
  std::string failure;
  double eval_mean_return = 0.0, eval_std_return = 0.0;
  double monitor_duration_s = 0.0;    // span of the energy totals
  std::vector<DomainEnergy> domains;  // totals per domain
  std::vector<WindowEnergy> windows;  // per window key
  std::string meter_reason;           // why this meter was chosen
  double meter_update_period_s = 0.0;  // EnergyMonitor::update_period_s(), s
  // The summary's meter line when meter_reason was already logged at the run's start: the meters
  // without the why (MeterChoice::brief); "" to print meter_reason there.
  std::string meter_brief;
  std::vector<std::pair<std::string, std::string>> meter_details;
  energy::CarbonResult carbon;
  BudgetReport budget;
  EarlyStopReport early_stop;
  BestEvalReport best_eval;
  TrainedAgentReport trained_agent;
  SamplerReport sampler;
  std::string power_limit_mode;              // energy.power_limit
  std::vector<std::string> power_limit_log;  // plan, profiles, choice, set/would-set lines

  // Sum of the additive domains' energy_j (energy::IsAdditiveDomain: parts such as
  // "cpu:package-0/core" and containers such as "psys:0" are reported, never added).
  double total_energy_j() const;
  // total - sum over windows, per domain: energy spent outside every named window (setup,
  // logging, best.pt, the final writes). Windows of different keys never overlap in the trainer.
  std::map<std::string, double> unattributed_energy_j() const;
};

// `value` with `decimals` digits after the point (fixed notation), and never "-0.00": a value
// that rounds to zero prints without a sign (e.g. an eval return std of -1e-9 from float
// rounding, or a mean of -0.004 at 2 decimals). For the returns printed by the summary,
// `greenrl eval` and `greenrl bench`. No errors.
std::string FixedNoNegativeZero(double value, int decimals);

// How far a run with an energy budget went past it, Wh: its total energy (every additive domain,
// earlier segments' included) minus energy.budget_wh, or 0 within it or without a budget
// (energy.json's budget.over_budget_wh). No errors.
double OverBudgetWh(const RunReport& r);

// The end-of-run summary: steps, wall time, steps/s, a "stopped early" line when
// eval.reward_threshold ended the run, final eval return (mean ± std over N deterministic
// episodes), energy in Wh per domain with provenance and scope, carbon with the region and
// intensity used. Several lines, ending with a newline.
std::string FormatSummary(const RunReport& report);

// The summary's energy lines: "  energy  <Wh> Wh in all" (the additive domains), one line per
// domain (Wh, provenance, meter, scope) and "  meter  <reason>". Ends with a newline. No errors.
std::string FormatEnergyLines(const std::vector<DomainEnergy>& domains,
                              const std::string& meter_reason);
// The summary's line for an env that returned a NaN or infinite observation or reward:
// "  env outputs    <n> resets and steps returned ..." and a newline; "" when n is 0. For the
// training summary and `greenrl eval`. No errors.
std::string FormatNonFiniteOutputsLine(int64_t n);
// The summary's carbon lines: "  carbon  <g> g CO2e = <kWh> kWh x PUE <p> x <g/kWh> g/kWh" and the
// intensity's source (region and dataset, default, or the override). Ends with a newline. No
// errors.
std::string FormatCarbonLines(const energy::CarbonResult& carbon);

// Writes energy.json atomically: totals per domain (J and Wh, provenance, scope), per window
// (count, duration_s, energy_j per domain), "unattributed", meter reason and details, budget,
// early_stop (null unless eval.reward_threshold ended the run: reason, global_step, n_timesteps,
// eval_mean_reward, reward_threshold), carbon.
// Errors: std::runtime_error naming the path when it cannot be written.
void WriteEnergyJson(const std::string& path, const RunReport& report);

// The budget's decisions as JSON text: an array of energy.json's "budget.events" entries
// (global_step, time_s, action, taken, state, energy_used_j, budget_j, forecast_j (null while
// there was no forecast), fraction, next_iteration_energy_j, reserve_j, reason). Resume checkpoints
// keep them in this form too (train/checkpointing.h). Doubles round-trip exactly.
std::string BudgetEventsJson(const std::vector<energy::BudgetEvent>& events);
// Inverse of BudgetEventsJson.
// Errors: std::invalid_argument naming the entry and field that is missing or malformed, or the
//   unknown action or state name.
std::vector<energy::BudgetEvent> ParseBudgetEventsJson(const std::string& text);

// metrics.csv: one row per iteration, columns fixed by the first row (global_step first), a
// cell left empty where a row lacks a column or its value is NaN. Every row is flushed, so a
// failing run keeps what it logged. Not thread-safe.
class MetricsCsv {
 public:
  // Errors: std::runtime_error naming the path when it cannot be created.
  explicit MetricsCsv(const std::string& path);
  // Appends to an existing metrics.csv whose header is `columns` (a resumed run): rows are
  // written in that column order and no header is written.
  // Errors: std::runtime_error naming the path when it cannot be opened.
  MetricsCsv(const std::string& path, std::vector<std::string> columns);
  ~MetricsCsv();
  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  // Appends a row, whole or not at all (AppendWhole: a failed write leaves the file at its last
  // whole row); the first call writes the header from its keys. Keys a later row adds that the
  // header lacks are ignored (callers pass every column from the first row).
  // Errors: std::runtime_error naming the file and the system's reason when it cannot be written.
  void WriteRow(const std::vector<std::pair<std::string, double>>& row);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<std::string> columns_;
};

// Reads metrics.csv back: header and rows (empty cells as NaN). For tests and `greenrl report`.
// Errors: std::runtime_error when the file cannot be read.
std::pair<std::vector<std::string>, std::vector<std::vector<double>>> ReadMetricsCsv(
    const std::string& path);

}  // namespace greenrl::report
