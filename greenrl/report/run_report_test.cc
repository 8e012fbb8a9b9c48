// Exact report numbers from a hand-made RunReport: energy.json sums, carbon, metrics.csv.
#include "greenrl/report/run_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "greenrl/core/atomic_file.h"

namespace greenrl::report {
namespace {

RunReport MakeReport() {
  RunReport r;
  r.algo = "ppo";
  r.env_id = "CartPole-v1";
  r.run_dir = "runs/x";
  r.seed = 3;
  r.steps = 1000;
  r.wall_time_s = 2.0;
  r.steps_per_s = 500.0;
  r.eval_episodes = 10;
  r.eval_mean_return = 500.0;
  r.domains = {{"cpu:process", "estimator", "estimated", "process", 7200.0, "no"}};
  r.windows = {{"rollout", 4, 1.0, {{"cpu:process", 3600.0}}},
               {"update", 4, 0.5, {{"cpu:process", 1800.0}}}};
  r.meter_reason = "RAPL unavailable; using estimator";
  r.carbon = energy::ComputeCarbon(7200.0, energy::CarbonOptions{"FR", std::nullopt, 1.5});
  return r;
}

TEST(RunReportTest, EnergyJsonWindowsPlusUnattributedEqualTotals) {
  const RunReport r = MakeReport();
  const std::string path = ::testing::TempDir() + "/energy.json";
  WriteEnergyJson(path, r);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_DOUBLE_EQ(j["total_energy_j"].get<double>(), 7200.0);
  EXPECT_DOUBLE_EQ(j["total_energy_wh"].get<double>(), 2.0);
  EXPECT_EQ(j["eval_mean_return"], 500.0);
  EXPECT_EQ(j["eval_std_return"], 0.0);
  EXPECT_EQ(j["domains"]["cpu:process"]["provenance"], "estimated");
  double windows = 0.0;
  for (const auto& [key, w] : j["windows"].items()) windows += w["total_energy_j"].get<double>();
  EXPECT_DOUBLE_EQ(windows, 5400.0);
  EXPECT_DOUBLE_EQ(j["unattributed"]["total_energy_j"].get<double>(), 1800.0);
  EXPECT_DOUBLE_EQ(windows + j["unattributed"]["total_energy_j"].get<double>(),
                   j["total_energy_j"].get<double>());
  // 2 Wh = 0.002 kWh x PUE 1.5 x 56.0 g/kWh (France, OWID 2023) = 0.168 g.
  EXPECT_NEAR(j["carbon"]["kg_co2e"].get<double>(), 0.000168, 1e-15);
  EXPECT_EQ(j["carbon"]["region"], "FR");
}

// A run directory whose name is not UTF-8 (Latin-1 "lat\xe9n"): energy.json is still written, as
// valid JSON with U+FFFD for the stray byte (nlohmann's default threw, losing a finished run's
// energy.json).
TEST(RunReportTest, EnergyJsonOfAPathThatIsNotUtf8) {
  RunReport r = MakeReport();
  r.best_eval.global_step = 1000;
  r.best_eval.mean_reward = 500.0;
  r.best_eval.checkpoint = "runs/lat\xe9n/checkpoints/best.pt";
  const std::string path = ::testing::TempDir() + "/energy_latin1.json";
  WriteEnergyJson(path, r);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["best_eval"]["checkpoint"], "runs/lat\xef\xbf\xbdn/checkpoints/best.pt");
  EXPECT_DOUBLE_EQ(j["total_energy_wh"].get<double>(), 2.0);
}

TEST(RunReportTest, SummaryNamesEverything) {
  const std::string s = FormatSummary(MakeReport());
  EXPECT_EQ(s.find("update path"), std::string::npos) << s;  // none given: no line
  EXPECT_NE(s.find("steps          1000"), std::string::npos) << s;
  EXPECT_NE(s.find("steps/s        500"), std::string::npos) << s;
  EXPECT_NE(s.find("500.00 ± 0.00 (10 deterministic episodes)"), std::string::npos) << s;
  EXPECT_NE(s.find("2.0000 Wh in all (estimated)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("cpu:process    2.0000 Wh  (estimated by estimator, scope process)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("0.1680 g CO2e"), std::string::npos) << s;
  EXPECT_NE(s.find("FR"), std::string::npos) << s;
  EXPECT_EQ(s.find("env faults"), std::string::npos) << s;  // none: no line
}

// A GPU that other processes used gets a `shared` line under its energy; one used by this
// process alone does not; package counters (shared by nature) get one line for them all.
TEST(RunReportTest, SummarySaysWhenOtherProcessesUsedTheGpu) {
  RunReport r = MakeReport();
  r.domains = {{"gpu:0", "nvml", "measured", "device", 3600.0, "yes (pids 77 4242)"},
               {"gpu:1", "nvml", "measured", "device", 3600.0, "no (alone)"},
               {"cpu:package-0", "rapl", "measured", "package", 3600.0, "yes (socket)"}};
  const std::string s = FormatSummary(r);
  EXPECT_NE(s.find("(measured by nvml, scope device)\n      shared       yes (pids 77 4242)\n"
                   "    gpu:1"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("3.0000 Wh in all\n"), std::string::npos) << s;  // all measured
  EXPECT_EQ(s.find("no (alone)"), std::string::npos) << s;
  EXPECT_EQ(s.find("yes (socket)"), std::string::npos) << s;
  EXPECT_NE(s.find("\n  shared         the package counters include every process on the "
                   "socket (runs side by side each count them all)\n  meter"),
            std::string::npos)
      << s;
}

// RAPL's parts of a package and its platform zone are listed as not added to the total, in a
// column as wide as the longest name.
TEST(RunReportTest, SummarySaysWhichDomainsAreNotAdded) {
  RunReport r = MakeReport();
  r.domains = {{"cpu:package-0", "rapl", "measured", "package", 3600.0, ""},
               {"cpu:package-0/uncore", "rapl", "measured", "package", 360.0, ""},
               {"psys:0", "rapl", "measured", "package", 7200.0, ""}};
  const std::string s = FormatSummary(r);
  EXPECT_NE(s.find("1.0000 Wh in all\n"), std::string::npos) << s;
  EXPECT_NE(s.find("    cpu:package-0        1.0000 Wh  (measured by rapl, scope package)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("    cpu:package-0/uncore 0.1000 Wh  (measured by rapl, scope package; part "
                   "of cpu:package-0, not added)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("    psys:0               2.0000 Wh  (measured by rapl, scope package; "
                   "contains the others, not added)\n"),
            std::string::npos)
      << s;
}

// Env faults (a MuJoCo step with a non-finite or unstable state or an engine error): one line
// with their count, and energy.json's env_non_finite_resets; a custom env's NaN or infinite
// outputs likewise (env_non_finite_outputs).
TEST(RunReportTest, EnvFaultsLineCountsThem) {
  RunReport r = MakeReport();
  r.env_non_finite_resets = 3;
  EXPECT_NE(FormatSummary(r).find("  env faults     3 steps hit a simulator fault (a non-finite or "
                                  "unstable state, a full contact buffer, an engine error: "
                                  "MuJoCo's first messages are on stderr); those envs were "
                                  "reset\n"),
            std::string::npos)
      << FormatSummary(r);
  EXPECT_EQ(FormatSummary(r).find("env outputs"), std::string::npos);
  // A custom env's NaN or infinite outputs: their own line, and energy.json's count.
  r.env_non_finite_outputs = 7;
  EXPECT_NE(FormatSummary(r).find("  env outputs    7 resets and steps returned a NaN or infinite "
                                  "observation or reward (check the env's Reset and Step)\n"),
            std::string::npos)
      << FormatSummary(r);
  const std::string path = ::testing::TempDir() + "/energy_env_outputs.json";
  WriteEnergyJson(path, r);
  const nlohmann::json j = nlohmann::json::parse(ReadFile(path));
  EXPECT_EQ(j.at("env_non_finite_outputs").get<int64_t>(), 7);
  EXPECT_EQ(j.at("env_non_finite_resets").get<int64_t>(), 3);
}

// The meter line: the full reason, or, when the run logged it at its start, the meters only
// with a pointer to that line; energy.json keeps the full reason either way.
TEST(RunReportTest, SummaryMeterLineIsBriefWhenTheReasonWasLogged) {
  RunReport r = MakeReport();
  EXPECT_NE(FormatSummary(r).find("  meter          RAPL unavailable; using estimator\n"),
            std::string::npos);
  r.meter_brief = "CPU-time estimator (estimate, 12 W per core; RAPL unavailable); no GPU meter";
  EXPECT_NE(FormatSummary(r).find("  meter          CPU-time estimator (estimate, 12 W per core; "
                                  "RAPL unavailable); no GPU meter (why: the run's 'greenrl: "
                                  "energy meter' line on stderr, and energy.json)\n"),
            std::string::npos)
      << FormatSummary(r);
  const std::string path = ::testing::TempDir() + "/energy_brief.json";
  WriteEnergyJson(path, r);
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in)["meter"]["reason"], "RAPL unavailable; using estimator");
}

// Returns that round to zero print without a minus sign; others keep theirs.
TEST(RunReportTest, FixedNoNegativeZero) {
  EXPECT_EQ(FixedNoNegativeZero(-0.004, 2), "0.00");
  EXPECT_EQ(FixedNoNegativeZero(-0.0, 1), "0.0");
  EXPECT_EQ(FixedNoNegativeZero(-1e-9, 2), "0.00");
  EXPECT_EQ(FixedNoNegativeZero(-0.006, 2), "-0.01");
  EXPECT_EQ(FixedNoNegativeZero(-12.54, 1), "-12.5");
  EXPECT_EQ(FixedNoNegativeZero(3.14159, 2), "3.14");
  EXPECT_EQ(FixedNoNegativeZero(-0.04, 0), "0");
  EXPECT_EQ(FixedNoNegativeZero(-INFINITY, 2), "-inf");
  RunReport r = MakeReport();
  r.eval_mean_return = -0.001;
  r.eval_std_return = -0.0;
  EXPECT_NE(FormatSummary(r).find("eval return    0.00 ± 0.00 (10"), std::string::npos)
      << FormatSummary(r);
}

// The update path the algorithm reports (Algorithm::UpdatePath) is a summary line and an
// energy.json field.
TEST(RunReportTest, UpdatePathInSummaryAndEnergyJson) {
  RunReport r = MakeReport();
  r.update_path = "fused critics, autograd actor";
  const std::string s = FormatSummary(r);
  EXPECT_NE(s.find("  steps/s        500\n  update path    fused critics, autograd actor\n"),
            std::string::npos)
      << s;
  const std::string path = ::testing::TempDir() + "/energy_update_path.json";
  WriteEnergyJson(path, r);
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in)["update_path"], "fused critics, autograd actor");
}

// A short run's carbon, energy and budget keep three significant digits below 0.001 (g, Wh); an
// intensity override is named as such instead of being shown as the region's source.
TEST(RunReportTest, SummaryOfTinyCarbonAndOverride) {
  RunReport r = MakeReport();
  r.carbon.kg_co2e = 4.62e-8;  // 0.0000462 g
  EXPECT_NE(FormatSummary(r).find("  carbon         4.62e-05 g CO2e"), std::string::npos)
      << FormatSummary(r);
  // Energy and budget lines follow the same rule: 0.36 J = 1e-04 Wh, a 1e-07 Wh budget.
  r.domains[0].energy_j = 0.36;
  r.budget.enabled = true;
  r.budget.budget_wh = 1e-7;
  const std::string tiny = FormatSummary(r);
  EXPECT_NE(tiny.find("  energy         0.0001 Wh in all"), std::string::npos) << tiny;
  r.domains[0].energy_j = 0.036;
  const std::string tinier = FormatSummary(r);
  EXPECT_NE(tinier.find("  energy         1e-05 Wh in all"), std::string::npos) << tinier;
  EXPECT_NE(tinier.find("cpu:process    1e-05 Wh  (estimated"), std::string::npos) << tinier;
  EXPECT_NE(tinier.find("  budget         1e-07 Wh: "), std::string::npos) << tinier;
  r.budget.budget_wh = 0.00103;  // as given: not 0.0010, which a 0.001 budget reads as too
  EXPECT_NE(FormatSummary(r).find("  budget         0.00103 Wh: "), std::string::npos)
      << FormatSummary(r);
  r.budget.budget_wh = 1e-7;
  r.carbon.region = "world";
  r.carbon.intensity_source = "override (carbon.intensity_g_per_kwh)";
  r.carbon.intensity_is_default = false;
  EXPECT_NE(FormatSummary(r).find("    intensity    set by carbon.intensity_g_per_kwh (instead of "
                                  "the world average, the default)"),
            std::string::npos)
      << FormatSummary(r);
  r.carbon.region = "FR";  // carbon.region given too: its value is the one replaced
  EXPECT_NE(FormatSummary(r).find("    intensity    set by carbon.intensity_g_per_kwh (instead of "
                                  "FR's table value)"),
            std::string::npos)
      << FormatSummary(r);
}

// The budget line: finished, interrupted, or ended by the budget, within it or over it; a final
// state whose rung was passed over (the CPU's reduced precision) says so. The run used 7200 J =
// 2 Wh.
TEST(RunReportTest, SummaryBudgetLine) {
  RunReport r = MakeReport();
  r.budget.enabled = true;
  r.budget.budget_wh = 2.5;
  r.budget.final_state = "reduced_precision";
  energy::BudgetEvent passed;
  passed.action = energy::BudgetAction::kReducePrecision;
  passed.state = energy::BudgetState::kReducedPrecision;
  passed.taken = false;
  passed.budget_j = 2.5 * 3600.0;
  r.budget.events = {passed};
  EXPECT_NE(FormatSummary(r).find("2.5 Wh: finished within it, final state reduced_precision "
                                  "(its rung passed over) (1 decision, energy.json"),
            std::string::npos)
      << FormatSummary(r);
  EXPECT_EQ(FormatSummary(r).find("over it"), std::string::npos) << FormatSummary(r);
  // energy.json says it too, beside the state's name; a rung taken is not passed over.
  const std::string path = ::testing::TempDir() + "/budget_passed_over.json";
  WriteEnergyJson(path, r);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(path))["budget"]["final_state_passed_over"], true);
  r.budget.events[0].taken = true;
  WriteEnergyJson(path, r);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(path))["budget"]["final_state_passed_over"], false);
  r.budget.events[0].taken = false;
  r.budget.events.push_back(passed);
  EXPECT_NE(FormatSummary(r).find("(2 decisions, energy.json"), std::string::npos)
      << FormatSummary(r);
  r.budget.events.pop_back();
  // Finished past a 0.5 Wh budget (the final evaluation cost more than its estimate): said, with
  // the unrounded figures and what a finished run spends after its last check.
  r.budget.budget_wh = 0.5;
  EXPECT_NE(FormatSummary(r).find("0.5 Wh: finished over it, final state reduced_precision"),
            std::string::npos)
      << FormatSummary(r);
  EXPECT_NE(FormatSummary(r).find("                 1.5 Wh over it: 2 Wh used (what the last "
                                  "iterations, the final evaluation and the reports cost beyond "
                                  "their estimates)"),
            std::string::npos)
      << FormatSummary(r);
  r.budget.budget_wh = 2.5;
  r.budget.interrupted = true;
  EXPECT_NE(FormatSummary(r).find("interrupted within it, state reduced_precision (its rung"),
            std::string::npos)
      << FormatSummary(r);
  r.budget.events[0].taken = true;
  EXPECT_NE(FormatSummary(r).find("interrupted within it, state reduced_precision (1 decision,"),
            std::string::npos)
      << FormatSummary(r);
  r.budget.budget_wh = 0.5;
  r.budget.stopped = true;
  r.budget.stop_reason = "step 7: used 9 J";
  EXPECT_NE(FormatSummary(r).find("the budget ended the run: step 7: used 9 J"), std::string::npos)
      << FormatSummary(r);
  // Past the budget (7200 J against 0.5 Wh = 1800 J): said, with the unrounded figures.
  EXPECT_NE(FormatSummary(r).find("                 1.5 Wh over it: 2 Wh used (the last "
                                  "iteration and what the stop wrote beyond their estimates, and "
                                  "a resumed segment's start before its first iteration, which no "
                                  "estimate covers)"),
            std::string::npos)
      << FormatSummary(r);
  // A stop decided when the run was already past its budget says so instead.
  energy::BudgetEvent stop = passed;
  stop.action = energy::BudgetAction::kStop;
  stop.budget_j = 1800.0, stop.energy_used_j = 1900.0;
  r.budget.events.push_back(stop);
  EXPECT_NE(FormatSummary(r).find("1.5 Wh over it: 2 Wh used (already past it when the stop was "
                                  "decided: the iterations before that decision used more than "
                                  "the budget had left, then what the stop wrote)"),
            std::string::npos)
      << FormatSummary(r);
  r.budget.events.pop_back();
  r.budget.budget_wh = 2.5;  // within it: no such line
  EXPECT_EQ(FormatSummary(r).find("over it"), std::string::npos) << FormatSummary(r);
  // A resumed run's decisions under the budget of an earlier segment (here 0.01 Wh, which
  // stopped it) are counted apart.
  energy::BudgetEvent earlier = passed;
  earlier.budget_j = 36.0;
  r.budget.events.insert(r.budget.events.begin(), {earlier, earlier});
  EXPECT_NE(FormatSummary(r).find("(3 decisions, 2 of them under the earlier budget of 0.01 Wh, "
                                  "energy.json lists them)"),
            std::string::npos)
      << FormatSummary(r);
}

TEST(MetricsCsvTest, HeaderFromFirstRowEmptyCellsAndRoundTrip) {
  const std::string path = ::testing::TempDir() + "/metrics.csv";
  {
    MetricsCsv csv(path);
    csv.WriteRow(
        {{"global_step", 256}, {"charts/episodic_return", 21.5}, {"eval/mean_reward", NAN}});
    csv.WriteRow({{"global_step", 512}, {"eval/mean_reward", 500}});
  }
  auto [header, rows] = ReadMetricsCsv(path);
  ASSERT_EQ(header.size(), 3u);
  EXPECT_EQ(header[1], "charts/episodic_return");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1], 21.5);
  EXPECT_TRUE(std::isnan(rows[0][2]));
  EXPECT_TRUE(std::isnan(rows[1][1]));
  EXPECT_EQ(rows[1][2], 500);
}

// A row whose write fails (GREENRL_FAIL_APPENDS_AFTER: ENOSPC half-way) is cut back: the file
// ends at its last whole row, and the next row goes on from there.
TEST(MetricsCsvTest, AFailedRowLeavesTheFileAtItsLastWholeRow) {
  const std::string path = ::testing::TempDir() + "/greenrl_metrics_full_disk.csv";
  MetricsCsv csv(path);
  ::setenv("GREENRL_FAIL_APPENDS_AFTER", "1", 1);
  csv.WriteRow({{"global_step", 256}, {"charts/SPS", 1000.5}});
  const std::string whole = ReadFile(path);
  EXPECT_EQ(whole, "global_step,charts/SPS\n256,1000.5\n");
  try {
    csv.WriteRow({{"global_step", 512}, {"charts/SPS", 2000.25}});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': No space left on device");
  }
  ::unsetenv("GREENRL_FAIL_APPENDS_AFTER");
  EXPECT_EQ(ReadFile(path), whole);
  csv.WriteRow({{"global_step", 768}, {"charts/SPS", 3000}});
  EXPECT_EQ(ReadFile(path), whole + "768,3000\n");
}

}  // namespace
}  // namespace greenrl::report
