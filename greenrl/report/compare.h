// compare.h: `greenrl report`'s data: a finished run directory read back (energy.json,
// metrics.csv, power.csv) and the table that compares runs (steps/s, Wh, g CO2e, Wh to reach a
// target return), as Markdown for papers and PRs and as rows for the HTML page (html_report.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace greenrl::report {

// A budget decision from energy.json ("budget.events"), for marking on the curves.
struct BudgetMark {
  int64_t global_step = 0;     // env steps (all envs) when the controller decided
  double time_s = 0.0;         // the trainer's clock, s since the loop started
  double energy_used_wh = 0.0;  // the run's energy at the decision, Wh
  std::string action;           // energy::BudgetActionName: "reduce_precision", "stop", ...
  bool taken = true;   // false: the rung was passed over (e.g. bf16 where it is not faster)
  std::string reason;  // the controller's one-line why, as energy.json's budget.events say
};

// Energy of one phase (energy.json "windows", plus "unattributed" as phase "other").
struct PhaseEnergy {
  std::string phase;  // "rollout", "update", "eval", "other"
  int64_t count = 0;  // windows of this key (0 for "other")
  double duration_s = 0.0;
  double energy_wh = 0.0;  // additive domains summed
};

// A run directory read back. Errors: see LoadRun.
struct RunData {
  std::string dir;   // as given
  std::string name;  // the directory's own name (its absolute path's last component, also for ".")
  std::string algo, env_id;
  uint64_t seed = 0;
  int64_t steps = 0;  // env steps the run reached (energy.json's steps)
  double wall_time_s = 0.0;
  double steps_per_s = 0.0;  // steps / wall_time_s
  double energy_wh = 0.0;    // total_energy_wh
  // carbon.kg_co2e x 1000; empty when energy.json (or a killed run's last metrics row) has none.
  std::optional<double> g_co2e;
  // What the carbon figure was priced at, from energy.json's carbon section: "481 g/kWh, PUE 1,
  // world default", "381 g/kWh, PUE 1.58, DE", "50 g/kWh, PUE 1, override"
  // (carbon.intensity_g_per_kwh), "500 g/kWh, PUE 1.5, time series" (an intensity series'
  // energy-weighted mean); empty when energy.json does not say.
  std::string carbon_basis;
  std::optional<double> eval_mean_return;  // final deterministic evaluation, if it ran
  std::optional<double> eval_std_return;   // its std over the episodes (energy.json since 12-06)
  // How energy.json's domains were metered, their provenances joined by '+' in name order
  // ("estimated", "measured", "estimated+measured"); empty when energy.json lists none.
  std::string energy_provenance;
  // Why an unfinished run has no final evaluation: "budget stop" (energy.json's
  // budget.stopped_by_budget), "interrupted" (its eval_note), "failed" (energy.json's failure:
  // an exception ended it), "killed" (no energy.json of its last segment: its last metrics.csv
  // row), "running" (a `greenrl train` holds its train.lock now: its figures so far), else empty.
  std::string unfinished;
  // A failed run's energy.json eval_note ("failed at step S: <error> (<resume command> ...)");
  // empty unless unfinished is "failed".
  std::string failed_note;
  // The trained agent the run started from (energy.json's trained_agent, `--trained-agent`): its
  // checkpoint's path; empty for a run trained from scratch, and for a killed run (no
  // energy.json of it).
  std::string trained_agent;
  // What training that agent cost before this run, Wh (energy.json's trained_agent.energy_wh,
  // its run's total and the runs before it); empty when its run had no energy.json.
  std::optional<double> trained_agent_wh;
  // A data-parallel run's ranks and launcher (energy.json's distributed.world_size and launcher;
  // 1 and "" for one process), and rank 0's all-reduce time, s (rank0_allreduce_s).
  int world_size = 1;
  std::string launcher;
  double rank0_allreduce_s = 0.0;
  std::vector<PhaseEnergy> phases;  // rollout, update, eval, checkpoint (those present), other
  std::vector<BudgetMark> budget_marks;
  // metrics.csv, columns as in the file (global_step first); empty cells are NaN.
  std::vector<std::string> metrics_header;
  std::vector<std::vector<double>> metrics_rows;
  // power.csv (the sampler's series): time_s then one power_w column per domain ("<domain>_w").
  // time_s is the run's time: a resumed run's segments (each restarting at 0 in the file) follow
  // each other. Empty when the run has no power.csv.
  std::vector<std::string> power_header;
  std::vector<std::vector<double>> power_rows;

  // Index of a metrics.csv column, or -1.
  int MetricsColumn(const std::string& name) const;
};

// Reads a run directory written by `greenrl train`: energy.json and metrics.csv are required,
// power.csv optional.
// Errors: greenrl::ConfigError (field "RUN_DIR") naming the directory and the missing or
// malformed file.
RunData LoadRun(const std::string& dir);

// Gives runs that share a name (a/x and b/x both named "x") their directory as given, made
// lexically normal, as the name ("a/x", "b/x"), so table rows and chart legends tell them apart.
// Other names are unchanged. No errors.
void DistinguishNames(std::vector<RunData>* runs);

// The default metric whose crossing of --target-return counts: SB3's rollout/ep_rew_mean (mean
// return of the last 100 training episodes), the curve rl-zoo and SB3 compare runs on.
// `greenrl report --target-metric` picks another metrics.csv column (e.g. eval/mean_reward, the
// deterministic evaluations).
inline constexpr const char* kTargetMetric = "rollout/ep_rew_mean";

// What the "to return" columns are called for target_metric: "return" for kTargetMetric, else
// the metric's name (e.g. "eval/mean_reward").
std::string TargetLabel(const std::string& target_metric);

// Checks, before anything is computed or written, that every run's metrics.csv has the column
// target_metric. Errors: greenrl::ConfigError (field "--target-metric") naming the first run
// without it and the columns that run has.
void CheckTargetMetric(const std::vector<RunData>& runs, const std::string& target_metric);

// One row of the comparison table.
struct ComparisonRow {
  std::string name, algo, env_id;
  int64_t steps = 0;
  double wall_time_s = 0.0, steps_per_s = 0.0, energy_wh = 0.0;
  std::optional<double> g_co2e;
  std::string carbon_basis, energy_provenance, unfinished;  // as RunData's
  std::optional<double> eval_mean_return, eval_std_return;
  // First metrics.csv row whose target metric (kTargetMetric unless CompareRuns is given
  // another) is >= the target: its energy/total_wh and global_step. Empty when no target was
  // given or the run never reached it (empty cells, e.g. rows without an evaluation, never do).
  std::optional<double> wh_to_target;
  std::optional<int64_t> steps_to_target;
  std::string trained_agent;               // as RunData's
  std::optional<double> trained_agent_wh;  // as RunData's, Wh
  std::string failed_note;                 // as RunData's
  int world_size = 1;                      // as RunData's
  std::string launcher;                    // as RunData's
  double rank0_allreduce_s = 0.0;          // as RunData's, s
};

// Args: target_return: the value of target_metric to reach (none: the Wh-to-target column is
//   left out); target_metric: a metrics.csv column (CheckTargetMetric).
std::vector<ComparisonRow> CompareRuns(const std::vector<RunData>& runs,
                                       std::optional<double> target_return,
                                       const std::string& target_metric = kTargetMetric);

// Returns: the eval return cell of a comparison table: the final evaluation's mean ("480.50", or
//   "480.50 ± 12.30" with its std where energy.json gives one),
//   else "n/a", with why for an unfinished run ("n/a (budget stop)", "n/a (interrupted)",
//   "n/a (failed)", "n/a (killed)", "n/a (running)").
std::string EvalReturnCell(const ComparisonRow& row);
// Returns: the "Wh metered as" cell: the row's energy_provenance, or "n/a" when unknown.
std::string ProvenanceCell(const ComparisonRow& row);
// Returns: the "g CO2e" cell, FormatAmount of g_co2e, or "n/a" without one.
std::string CarbonCell(const ComparisonRow& row);
// Returns: the "g CO2e at" cell: the row's carbon_basis, or "n/a" when unknown.
std::string CarbonBasisCell(const ComparisonRow& row);

// Returns: one note per row that started from a trained agent, naming the agent and what its
//   training cost before the run, since the row's Wh and Wh-to-target count the run alone
//   ("more: started from the trained agent runs/first/checkpoints/final.pt, whose training cost
//   0.0003171 Wh before it (0.0004764 Wh with this run); the table counts this run alone";
//   "whose training's energy is unknown (its run had not written energy.json, and started from
//   an agent itself or had no metrics.csv row)"); empty when no row did. FormatMarkdown lists
//   them under its table, RenderHtml under the page's.
std::vector<std::string> TrainedAgentNotes(const std::vector<ComparisonRow>& rows);

// Returns: one note per data-parallel row, since the table's wall time is rank 0's while its Wh
//   (and the carbon) are all ranks' ("dp1: trained by 2 data-parallel ranks (greenrl launch); its
//   Wh and g CO2e are all ranks', its wall time rank 0's, 3.3 s of it in all-reduce"); empty when
//   no row is. FormatMarkdown lists them under its table, RenderHtml under the page's.
std::vector<std::string> DataParallelNotes(const std::vector<ComparisonRow>& rows);

// Returns: one note per failed row, its name and failed_note ("a: failed at step 1024:
//   TestFailing-v0: the sensor stopped answering (greenrl train --resume a continues it from
//   ...)"), since the table only says "n/a (failed)"; empty when no row failed. FormatMarkdown
//   lists them under its table, RenderHtml under the page's.
std::vector<std::string> FailedRunNotes(const std::vector<ComparisonRow>& rows);

// Wall time as table text, s: 3 significant digits, as the train summary's, and at least 1
// decimal (2.449 -> "2.45", 24.49 -> "24.5", 1234.56 -> "1234.6", 0.1159 -> "0.116", 0.08 ->
// "0.0800").
std::string FormatSeconds(double seconds);

// Wh and g CO2e as table text: fixed-point with 4 decimals, more below 0.1 so that 4 significant
// digits show (0.5 -> "0.5000", 0.0000812 -> "0.00008120"); 0 -> "0.0000".
std::string FormatAmount(double value);

// The comparison as a GitHub-flavoured Markdown table, one line per run, ending with a newline.
// Numbers: steps as integers, wall time FormatSeconds, steps/s 0 decimals, Wh and g CO2e
// FormatAmount, returns 2 decimals, then what the carbon was priced at (CarbonBasisCell); "n/a"
// where a run has no value, "not reached" where it never reached the target. The target columns are
// headed "Wh to <TargetLabel> >= R". A blank line, TrainedAgentNotes, DataParallelNotes and
// FailedRunNotes follow when a run started from a trained agent, was data-parallel or failed.
std::string FormatMarkdown(const std::vector<ComparisonRow>& rows,
                           std::optional<double> target_return,
                           const std::string& target_metric = kTargetMetric);

}  // namespace greenrl::report
