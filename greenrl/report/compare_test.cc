// `greenrl report`'s data on hand-written run directories: the comparison table's numbers
// (exact), the Markdown output (exact), the HTML page's data, and the page rendered in headless
// Chromium (skipped only where chromium is not installed).
#include "greenrl/report/compare.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "greenrl/core/errors.h"
#include "greenrl/report/html_report.h"

namespace greenrl::report {
namespace {

namespace fs = std::filesystem;

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// run_a: PPO, 4096 steps in 8 s, 0.5 Wh (1800 J), 0.24 g; rollout_ep_rew_mean first >= 195 at
// step 3072 (0.375 Wh); one budget decision at step 2048.
std::string MakeRunA(const std::string& root) {
  const std::string dir = root + "/run_a";
  fs::create_directories(dir);
  WriteText(dir + "/energy.json", R"({
  "schema_version": 1, "algo": "ppo", "env_id": "CartPole-v1", "seed": 1, "steps": 4096,
  "wall_time_s": 8.0, "eval_episodes": 10, "eval_mean_return": 480.5, "total_energy_j": 1800.0,
  "total_energy_wh": 0.5,
  "windows": {"rollout": {"count": 4, "duration_s": 4.0, "total_energy_j": 900.0},
              "update": {"count": 4, "duration_s": 2.0, "total_energy_j": 360.0},
              "eval": {"count": 2, "duration_s": 1.0, "total_energy_j": 180.0},
              "checkpoint": {"count": 1, "duration_s": 0.5, "total_energy_j": 72.0}},
  "unattributed": {"total_energy_j": 288.0},
  "domains": {"cpu:process": {"energy_j": 1800.0, "provenance": "estimated"}},
  "budget": {"enabled": true, "events": [
    {"global_step": 2048, "time_s": 4.0, "action": "skip_non_critical", "taken": true,
     "energy_used_j": 900.0, "reason": "forecast 0.9 of the budget"}]},
  "carbon": {"energy_kwh": 0.0005, "pue": 1.5, "intensity_g_per_kwh": 320.0, "region": "FR",
             "intensity_source": "Our World in Data, France, 2023", "intensity_is_default": false,
             "kg_co2e": 0.00024}
})");
  WriteText(dir + "/metrics.csv",
            "global_step,time_s,rollout/ep_rew_mean,eval/mean_reward,energy/total_wh\n"
            "1024,2,20,,0.125\n"
            "2048,4,150,200,0.25\n"
            "3072,6,210,,0.375\n"
            "4096,8,300,480.5,0.5\n");
  WriteText(dir + "/power.csv", "time_s,cpu:process_w\n0.5,10\n1,12.5\n");
  return dir;
}

// run_b: DQN, 2048 steps in 1 s, 0.2 Wh (RAPL's package measured, its DRAM integrated), 0.1 g,
// stopped by its energy budget (no final eval), never reaches 195.
std::string MakeRunB(const std::string& root) {
  const std::string dir = root + "/run_b";
  fs::create_directories(dir);
  WriteText(dir + "/energy.json", R"({
  "algo": "dqn", "env_id": "CartPole-v1", "seed": 2, "steps": 2048, "wall_time_s": 1.0,
  "eval_mean_return": null, "total_energy_wh": 0.2, "carbon": {"kg_co2e": 0.0001},
  "domains": {"cpu:package-0": {"provenance": "measured"}, "dram:0": {"provenance": "integrated"},
              "cpu:package-1": {"provenance": "measured"}},
  "budget": {"enabled": true, "stopped_by_budget": true, "events": []}
})");
  WriteText(dir + "/metrics.csv",
            "global_step,time_s,rollout/ep_rew_mean,energy/total_wh\n"
            "1024,0.5,50,0.1\n"
            "2048,1,100,0.2\n");
  return dir;
}

std::string Root(const std::string& name) {
  const std::string root = ::testing::TempDir() + "/compare_" + name;
  fs::remove_all(root);
  fs::create_directories(root);
  return root;
}

TEST(CompareTest, TableNumbersAreExact) {
  const std::string root = Root("table");
  const std::vector<RunData> runs = {LoadRun(MakeRunA(root)), LoadRun(MakeRunB(root) + "/")};
  const auto rows = CompareRuns(runs, 195.0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "run_a");
  EXPECT_EQ(rows[0].steps, 4096);
  EXPECT_DOUBLE_EQ(rows[0].steps_per_s, 512.0);
  EXPECT_DOUBLE_EQ(rows[0].energy_wh, 0.5);
  EXPECT_DOUBLE_EQ(rows[0].g_co2e.value_or(-1.0), 0.24);
  EXPECT_EQ(CarbonBasisCell(rows[0]), "320 g/kWh, PUE 1.5, FR");
  ASSERT_TRUE(rows[0].eval_mean_return.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].eval_mean_return, 480.5);
  ASSERT_TRUE(rows[0].wh_to_target.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].wh_to_target, 0.375);
  EXPECT_EQ(*rows[0].steps_to_target, 3072);
  EXPECT_EQ(rows[1].name, "run_b");  // trailing slash dropped
  EXPECT_DOUBLE_EQ(rows[1].steps_per_s, 2048.0);
  EXPECT_DOUBLE_EQ(rows[1].g_co2e.value_or(-1.0), 0.1);
  EXPECT_EQ(CarbonBasisCell(rows[1]), "n/a");  // energy.json gives the figure alone
  // An override and a time series say so, not the region the run names (or "world", "series").
  for (const auto& [source, region, basis] : std::vector<std::array<std::string, 3>>{
           {"override (carbon.intensity_g_per_kwh)", "world", "50 g/kWh, PUE 1.5, override"},
           {"time series x.csv (2 points, energy-weighted mean)", "series",
            "50 g/kWh, PUE 1.5, time series"},
           {"Ember world average, 2023", "world", "50 g/kWh, PUE 1.5, world"}}) {
    const std::string dir = root + "/basis";
    fs::create_directories(dir);
    WriteText(dir + "/metrics.csv", "global_step,time_s\n1,0.5\n");
    WriteText(dir + "/energy.json",
              R"({"algo": "ppo", "env_id": "CartPole-v1", "steps": 1, "total_energy_wh": 0.1,
                  "carbon": {"kg_co2e": 0.0, "pue": 1.5, "intensity_g_per_kwh": 50.0,
                  "intensity_is_default": false, "region": ")" +
                  region + R"(", "intensity_source": ")" + source + R"("}})");
    EXPECT_EQ(LoadRun(dir).carbon_basis, basis);
  }
  EXPECT_FALSE(rows[1].eval_mean_return.has_value());
  EXPECT_FALSE(rows[1].wh_to_target.has_value());
  // Without a target nothing is searched.
  EXPECT_FALSE(CompareRuns(runs, std::nullopt)[0].wh_to_target.has_value());

  // Energy by phase: windows in J -> Wh, then energy.json's unattributed.
  ASSERT_EQ(runs[0].phases.size(), 5u);
  EXPECT_EQ(runs[0].phases[0].phase, "rollout");
  EXPECT_DOUBLE_EQ(runs[0].phases[0].energy_wh, 0.25);
  EXPECT_DOUBLE_EQ(runs[0].phases[1].energy_wh, 0.1);
  EXPECT_DOUBLE_EQ(runs[0].phases[2].energy_wh, 0.05);
  EXPECT_EQ(runs[0].phases[3].phase, "checkpoint");
  EXPECT_DOUBLE_EQ(runs[0].phases[3].energy_wh, 0.02);
  EXPECT_EQ(runs[0].phases[4].phase, "unattributed");
  EXPECT_DOUBLE_EQ(runs[0].phases[4].energy_wh, 0.08);
  ASSERT_EQ(runs[0].budget_marks.size(), 1u);
  EXPECT_EQ(runs[0].budget_marks[0].global_step, 2048);
  EXPECT_DOUBLE_EQ(runs[0].budget_marks[0].energy_used_wh, 0.25);
  EXPECT_EQ(runs[0].budget_marks[0].action, "skip_non_critical");
  EXPECT_EQ(runs[0].power_header, (std::vector<std::string>{"time_s", "cpu:process_w"}));
  EXPECT_EQ(runs[0].power_rows.size(), 2u);
  EXPECT_TRUE(runs[1].power_rows.empty());
}

// --target-metric eval/mean_reward: run_a's evaluations read 200 at step 2048 (0.25 Wh) and
// 480.5 at 4096; rows without an evaluation (empty cells) never count. run_b has no such column,
// which is refused naming the run and its columns.
TEST(CompareTest, TargetMetricPicksTheColumn) {
  const std::string root = Root("target_metric");
  const RunData a = LoadRun(MakeRunA(root));
  const RunData b = LoadRun(MakeRunB(root));
  const auto rows = CompareRuns({a}, 195.0, "eval/mean_reward");
  ASSERT_TRUE(rows[0].wh_to_target.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].wh_to_target, 0.25);
  EXPECT_EQ(*rows[0].steps_to_target, 2048);
  const auto high = CompareRuns({a}, 400.0, "eval/mean_reward");
  EXPECT_DOUBLE_EQ(*high[0].wh_to_target, 0.5);
  EXPECT_EQ(*high[0].steps_to_target, 4096);
  EXPECT_FALSE(CompareRuns({a}, 500.0, "eval/mean_reward")[0].wh_to_target.has_value());
  const std::string md = FormatMarkdown(rows, 195.0, "eval/mean_reward");
  EXPECT_EQ(md.substr(0, md.find('\n')),
            "| run | algo | env | steps | wall time (s) | steps/s | Wh | Wh metered as | g CO2e | "
            "g CO2e at | eval return | Wh to eval/mean_reward >= 195 | steps to eval/mean_reward "
            ">= 195 |");
  EXPECT_NO_THROW(CheckTargetMetric({a, b}, "rollout/ep_rew_mean"));
  try {
    CheckTargetMetric({a, b}, "eval/mean_reward");
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "--target-metric");
    const std::string what = e.what();
    EXPECT_NE(what.find("run_b/metrics.csv has: global_step, time_s, rollout/ep_rew_mean, "
                        "energy/total_wh"),
              std::string::npos)
        << what;
  }
}

TEST(CompareTest, MarkdownIsExact) {
  const std::string root = Root("md");
  const std::vector<RunData> runs = {LoadRun(MakeRunA(root)), LoadRun(MakeRunB(root))};
  EXPECT_EQ(
      FormatMarkdown(CompareRuns(runs, 195.0), 195.0),
      "| run | algo | env | steps | wall time (s) | steps/s | Wh | Wh metered as | g CO2e | "
      "g CO2e at | eval return | Wh to training return >= 195 | steps to training return >= 195 |\n"
      "|---|---|---|---:|---:|---:|---:|---|---:|---|---:|---:|---:|\n"
      "| run_a | ppo | CartPole-v1 | 4096 | 8.00 | 512 | 0.5000 | estimated | 0.2400 | 320 g/kWh, "
      "PUE 1.5, FR | 480.50 | 0.3750 | 3072 |\n"
      "| run_b | dqn | CartPole-v1 | 2048 | 1.00 | 2048 | 0.2000 | integrated+measured | "
      "0.1000 | n/a | n/a (budget stop) | not reached | not reached |\n");
  EXPECT_EQ(
      FormatMarkdown(CompareRuns(runs, std::nullopt), std::nullopt),
      "| run | algo | env | steps | wall time (s) | steps/s | Wh | Wh metered as | g CO2e | "
      "g CO2e at | eval return |\n"
      "|---|---|---|---:|---:|---:|---:|---|---:|---|---:|\n"
      "| run_a | ppo | CartPole-v1 | 4096 | 8.00 | 512 | 0.5000 | estimated | 0.2400 | 320 g/kWh, "
      "PUE 1.5, FR | 480.50 |\n"
      "| run_b | dqn | CartPole-v1 | 2048 | 1.00 | 2048 | 0.2000 | integrated+measured | "
      "0.1000 | n/a | n/a (budget stop) |\n");
}

// A data-parallel run (energy.json's distributed section) gets a note under the table: its wall
// time is rank 0's while its Wh and g CO2e are all ranks'; the HTML page lists it too; a run of
// one process gets none.
TEST(CompareTest, DataParallelRunsSayWhoseFiguresTheyAre) {
  const std::string root = Root("data_parallel");
  const std::string a = MakeRunA(root), b = MakeRunB(root);
  nlohmann::json j = nlohmann::json::parse(std::ifstream(a + "/energy.json"));
  j["distributed"] = {
      {"world_size", 2}, {"launcher", "greenrl launch"}, {"rank0_allreduce_s", 3.2603}};
  WriteText(a + "/energy.json", j.dump());
  const std::vector<RunData> runs = {LoadRun(a), LoadRun(b)};
  const std::string md = FormatMarkdown(CompareRuns(runs, std::nullopt), std::nullopt);
  const std::string note =
      "\n\n- run_a: trained by 2 data-parallel ranks (greenrl launch); its Wh and g CO2e are all "
      "ranks', its wall time rank 0's, 3.26 s of it in all-reduce (waiting for the other ranks "
      "included)\n";
  ASSERT_GE(md.size(), note.size());
  EXPECT_EQ(md.substr(md.size() - note.size()), note) << md;
  const std::string html = RenderHtml(runs, std::nullopt, "var Chart;");
  EXPECT_NE(html.find("<ul id=\"data-parallel\">\n<li>run_a: trained by 2 data-parallel ranks "
                      "(greenrl launch); its Wh and g CO2e are all ranks', its wall time rank "
                      "0's, 3.26 s of it in all-reduce (waiting for the other ranks "
                      "included)</li>\n</ul>\n"),
            std::string::npos)
      << html;
  // The power chart, power.csv's, is rank 0's for a data-parallel run: said above it.
  EXPECT_NE(html.find("<h2>Power over time per domain</h2>\n<p>A data-parallel run's power is "
                      "its rank 0's (power.csv); its table row's Wh are all ranks'.</p>\n"),
            std::string::npos)
      << html;
  EXPECT_EQ(RenderHtml({LoadRun(b)}, std::nullopt, "var Chart;").find("data-parallel run's power"),
            std::string::npos);
  EXPECT_EQ(md.find("run_b: trained by"), std::string::npos) << md;
}

// A failed run (energy.json's failure) shows "n/a (failed)" in the table and, under it, what
// ended it and how to resume (its eval_note); the HTML page lists it too.
TEST(CompareTest, FailedRunsSayWhatEndedThem) {
  const std::string root = Root("failed");
  const std::string a = MakeRunA(root), b = MakeRunB(root);
  nlohmann::json j = nlohmann::json::parse(std::ifstream(a + "/energy.json"));
  j["failure"] = "Corridor-v0: sensor <3> lost";
  j["eval_note"] =
      "failed at step 4096: Corridor-v0: sensor <3> lost (greenrl train --resume a "
      "continues it from a/checkpoints/step_000000002048.pt)";
  j["eval_episodes"] = 0;
  j.erase("eval_mean_return");
  WriteText(a + "/energy.json", j.dump());
  const std::vector<RunData> runs = {LoadRun(a), LoadRun(b)};
  EXPECT_EQ(runs[0].unfinished, "failed");
  const std::string md = FormatMarkdown(CompareRuns(runs, std::nullopt), std::nullopt);
  EXPECT_NE(md.find(" | n/a (failed) |\n"), std::string::npos) << md;
  const std::string note =
      "\n\n- run_a: failed at step 4096: Corridor-v0: sensor <3> lost (greenrl train --resume a "
      "continues it from a/checkpoints/step_000000002048.pt)\n";
  ASSERT_GE(md.size(), note.size());
  EXPECT_EQ(md.substr(md.size() - note.size()), note) << md;
  const std::string html = RenderHtml(runs, std::nullopt, "var Chart;");
  EXPECT_NE(html.find("<ul id=\"failed-runs\">\n<li>run_a: failed at step 4096: Corridor-v0: "
                      "sensor &lt;3&gt; lost (greenrl train"),
            std::string::npos)
      << html;
}

// A run started from a trained agent (energy.json's trained_agent) is compared on its own
// energy, and a note under the table names the agent and what it cost before the run, or that
// its cost is unknown; the HTML page lists the same notes.
TEST(CompareTest, RunsFromATrainedAgentSayWhatTheAgentCost) {
  const std::string root = Root("trained_agent");
  const std::string a = MakeRunA(root), b = MakeRunB(root);
  auto with_agent = [](const std::string& dir, const std::string& agent) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(dir + "/energy.json"));
    j["trained_agent"] = nlohmann::json::parse(agent);
    WriteText(dir + "/energy.json", j.dump());
  };
  with_agent(a, R"({"checkpoint": "/runs/first/checkpoints/final.pt", "energy_wh": 0.25,
                    "energy_wh_with_this_run": 0.75})");
  with_agent(b, R"({"checkpoint": "/runs/killed/checkpoints/step_000000002048.pt",
                    "energy_wh": null, "energy_wh_with_this_run": null})");
  const std::vector<RunData> runs = {LoadRun(a), LoadRun(b)};
  const std::string md = FormatMarkdown(CompareRuns(runs, std::nullopt), std::nullopt);
  const std::string notes =
      "- run_a: started from the trained agent /runs/first/checkpoints/final.pt, whose training "
      "cost 0.2500 Wh before it (0.7500 Wh with this run); the table counts this run alone\n"
      "- run_b: started from the trained agent /runs/killed/checkpoints/step_000000002048.pt, "
      "whose training's energy is unknown (its run had not written energy.json, and started "
      "from an agent itself or had no metrics.csv row); the table counts this "
      "run alone\n";
  EXPECT_NE(md.find("| run_a | ppo | CartPole-v1 | 4096 | 8.00 | 512 | 0.5000 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.substr(md.size() - notes.size() - 2), "\n\n" + notes);
  const std::string html = RenderHtml(runs, std::nullopt, "var Chart;");
  EXPECT_NE(html.find("<ul id=\"trained-agents\">\n<li>run_a: started from the trained agent "
                      "/runs/first/checkpoints/final.pt, whose training cost 0.2500 Wh before "
                      "it (0.7500 Wh with this run); the table counts this run alone</li>\n<li>"),
            std::string::npos);
  // A run from scratch has no note.
  EXPECT_TRUE(
      TrainedAgentNotes(CompareRuns({LoadRun(MakeRunA(Root("no_agent")))}, std::nullopt)).empty());
}

// A run whose energy.json has no carbon section (or a killed run's metrics without
// carbon/g_co2e) shows n/a for its carbon, not 0; sub-second wall times keep 3 digits.
TEST(CompareTest, MissingCarbonIsNotZero) {
  const std::string root = Root("no_carbon");
  const std::string dir = MakeRunB(root);
  WriteText(dir + "/energy.json", R"({
  "algo": "dqn", "env_id": "CartPole-v1", "seed": 2, "steps": 2048, "wall_time_s": 0.1159,
  "eval_mean_return": 9.5, "total_energy_wh": 0.2
})");
  const auto rows = CompareRuns({LoadRun(dir)}, std::nullopt);
  EXPECT_FALSE(rows[0].g_co2e.has_value());
  const std::string md = FormatMarkdown(rows, std::nullopt);
  EXPECT_NE(md.find("| run_b | dqn | CartPole-v1 | 2048 | 0.116 | 17670 | 0.2000 | n/a | n/a | n/a "
                    "| 9.50 |"),
            std::string::npos)
      << md;
  EXPECT_EQ(FormatSeconds(0.1159), "0.116");
  EXPECT_EQ(FormatSeconds(0.08), "0.0800");
  EXPECT_EQ(FormatSeconds(8.0), "8.00");  // as the train summary's 2.45 s
  EXPECT_EQ(FormatSeconds(2.449), "2.45");
  EXPECT_EQ(FormatSeconds(24.49), "24.5");
  EXPECT_EQ(FormatSeconds(1234.56), "1234.6");
  EXPECT_EQ(FormatSeconds(0.0), "0.0");
}

TEST(CompareTest, AmountsKeepFourSignificantDigits) {
  EXPECT_EQ(FormatAmount(0.5), "0.5000");
  EXPECT_EQ(FormatAmount(0.099), "0.09900");
  EXPECT_EQ(FormatAmount(0.0000812), "0.00008120");
  EXPECT_EQ(FormatAmount(1234.5), "1234.5000");
  EXPECT_EQ(FormatAmount(0.0), "0.0000");
}

// A run killed before writing energy.json (SIGKILL) is reported from its last metrics.csv row
// and config.yaml: its steps, time, Wh and g CO2e so far, "n/a (killed)" as its eval return.
TEST(CompareTest, KilledRunIsReadFromItsLastMetricsRow) {
  const std::string dir = Root("killed") + "/run_k";
  fs::create_directories(dir);
  WriteText(dir + "/config.yaml",
            "# greenrl resolved config\nalgo: sac  # algorithm\nenv_id: Pendulum-v1  # id\n"
            "seed: 4  # seed\n");
  WriteText(dir + "/metrics.csv",
            "global_step,time_s,rollout/ep_rew_mean,energy/total_wh,carbon/g_co2e\n"
            "1000,10,-1200,0.04,0.02\n"
            "2000,20,-900,0.08,0.04\n"
            "3000,30");  // torn by the kill: not a row
  const RunData run = LoadRun(dir);
  EXPECT_EQ(run.algo, "sac");
  EXPECT_EQ(run.env_id, "Pendulum-v1");
  EXPECT_EQ(run.seed, 4u);
  EXPECT_EQ(run.steps, 2000);
  EXPECT_EQ(run.wall_time_s, 20.0);
  EXPECT_EQ(run.energy_wh, 0.08);
  EXPECT_EQ(run.g_co2e, 0.04);
  EXPECT_EQ(run.carbon_basis, "");  // config.yaml names no carbon keys: unsaid
  EXPECT_EQ(run.unfinished, "killed");
  EXPECT_EQ(FormatMarkdown(CompareRuns({run}, std::nullopt), std::nullopt),
            "| run | algo | env | steps | wall time (s) | steps/s | Wh | Wh metered as | g CO2e | "
            "g CO2e at | eval return |\n"
            "|---|---|---|---:|---:|---:|---:|---|---:|---|---:|\n"
            "| run_k | sac | Pendulum-v1 | 2000 | 20.0 | 100 | 0.08000 | n/a | 0.04000 | n/a | n/a "
            "(killed) |\n");
  // A resolved config.yaml names its carbon keys: the price is said from them.
  WriteText(dir + "/config.yaml",
            "# greenrl resolved config\nalgo: sac\nenv_id: Pendulum-v1\nseed: 4\ncarbon:\n"
            "  region: DE\n  intensity_g_per_kwh: auto\n  intensity_csv: ''\n  pue: 1.2\n");
  EXPECT_EQ(LoadRun(dir).carbon_basis, "381 g/kWh, PUE 1.2, DE");
  WriteText(dir + "/config.yaml",
            "algo: sac\nenv_id: Pendulum-v1\nseed: 4\ncarbon:\n  region: ''\n"
            "  intensity_g_per_kwh: 50\n  intensity_csv: ''\n  pue: 1\n");
  EXPECT_EQ(LoadRun(dir).carbon_basis, "50 g/kWh, PUE 1, override");
}

// A resumed run killed before it wrote its own energy.json leaves the earlier segment's (here at
// step 1000) while its metrics.csv goes on (to 2000): the rows are read, as for a killed run.
TEST(CompareTest, EnergyJsonOfAnEarlierSegmentGivesWayToLaterRows) {
  const std::string dir = Root("stale") + "/run_s";
  fs::create_directories(dir);
  WriteText(dir + "/config.yaml", "algo: ppo\nenv_id: CartPole-v1\nseed: 1\n");
  WriteText(dir + "/energy.json",
            R"({"algo": "ppo", "env_id": "CartPole-v1", "seed": 1, "steps": 1000,
                "wall_time_s": 10.0, "total_energy_wh": 0.04,
                "eval_note": "interrupted by signal 2 at step 1000"})");
  WriteText(dir + "/metrics.csv",
            "global_step,time_s,energy/total_wh,carbon/g_co2e\n"
            "1000,10,0.04,0.02\n"
            "2000,21,0.085,0.043\n");
  RunData run = LoadRun(dir);
  EXPECT_EQ(run.steps, 2000);
  EXPECT_EQ(run.wall_time_s, 21.0);
  EXPECT_EQ(run.energy_wh, 0.085);
  EXPECT_EQ(run.unfinished, "killed");
  // Rows up to energy.json's step: energy.json is the run's word.
  WriteText(dir + "/metrics.csv",
            "global_step,time_s,energy/total_wh,carbon/g_co2e\n1000,10,0.04,0.02\n");
  run = LoadRun(dir);
  EXPECT_EQ(run.steps, 1000);
  EXPECT_EQ(run.unfinished, "interrupted");
}

TEST(CompareTest, BadRunDirsNameTheProblem) {
  const std::string root = Root("bad");
  auto message = [](const std::string& dir) {
    try {
      LoadRun(dir);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(root + "/missing").find("not a directory"), std::string::npos);
  fs::create_directories(root + "/empty");
  EXPECT_NE(message(root + "/empty").find("energy.json and metrics.csv are missing"),
            std::string::npos);
  // No energy.json, and no metrics.csv row to read a killed run's figures from.
  WriteText(root + "/empty/metrics.csv", "");
  EXPECT_NE(message(root + "/empty")
                .find("metrics.csv has no row with global_step, time_s and "
                      "energy/total_wh: did the run start?"),
            std::string::npos)
      << message(root + "/empty");
  const std::string broken = MakeRunB(root);
  WriteText(broken + "/energy.json", "{\"steps\": ");
  EXPECT_NE(message(broken).find("energy.json is not valid JSON"), std::string::npos);
  // energy.json or metrics.csv that is not a file is named as such (a directory read as empty).
  fs::remove(broken + "/energy.json");
  fs::create_directories(broken + "/energy.json");
  EXPECT_NE(message(broken).find("energy.json is not a file"), std::string::npos)
      << message(broken);
  fs::remove(broken + "/energy.json");
  MakeRunB(root);
  WriteText(broken + "/metrics.csv", "global_step,time_s\n1,abc\n");
  EXPECT_NE(message(broken).find("malformed"), std::string::npos);
  EXPECT_NE(message(broken).find("metrics.csv line 2: 'abc' is not a number"), std::string::npos)
      << message(broken);
  // A row missing a field is malformed; a torn last line (no newline: a killed run's) is not
  // a row yet.
  WriteText(broken + "/metrics.csv", "global_step,time_s\n1,2\n2\n3,4\n");
  EXPECT_NE(message(broken).find("metrics.csv line 3: 1 fields, the header has 2"),
            std::string::npos)
      << message(broken);
  WriteText(broken + "/metrics.csv", "global_step,time_s\n1,2\n2,3\n3");
  EXPECT_EQ(LoadRun(broken).metrics_rows.size(), 2u);
}

// A run stopped before its first metrics row (log_interval) has an empty metrics.csv: it is
// still compared (its energy.json figures), with nothing to reach a target with.
TEST(CompareTest, RunWithoutMetricsRowsIsStillCompared) {
  const std::string root = Root("no_rows");
  const std::string dir = MakeRunB(root);
  WriteText(dir + "/metrics.csv", "");
  const std::vector<RunData> runs = {LoadRun(MakeRunA(root)), LoadRun(dir)};
  CheckTargetMetric(runs, "rollout/ep_rew_mean");
  const auto rows = CompareRuns(runs, 195.0, "rollout/ep_rew_mean");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].steps, 2048);
  EXPECT_DOUBLE_EQ(rows[1].energy_wh, 0.2);
  EXPECT_FALSE(rows[1].steps_to_target.has_value());
  EXPECT_EQ(rows[0].steps_to_target, 3072);
}

// A resumed run's power.csv restarts time_s at each segment; the report reads it as run time.
TEST(CompareTest, ResumedSegmentsOfPowerCsvFollowEachOther) {
  const std::string root = Root("power_segments");
  const std::string dir = MakeRunA(root);
  WriteText(dir + "/power.csv", "time_s,cpu:process_w\n1,10\n1.5,11\n1,12\n2,13\n0.25,14\n");
  const RunData run = LoadRun(dir);
  std::vector<double> times;
  for (const auto& row : run.power_rows) times.push_back(row[0]);
  EXPECT_EQ(times, (std::vector<double>{1, 1.5, 2.5, 3.5, 3.75}));
}

// energy.json's eval_std_return (written since 2026-12-06) joins the mean in the table, as the
// train summary and rl-zoo's evaluations print it; an older energy.json gives the mean alone.
TEST(CompareTest, EvalReturnCellHasTheStdWhereEnergyJsonGivesIt) {
  const std::string dir = MakeRunA(Root("eval_std"));
  std::ifstream in(dir + "/energy.json");
  nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(EvalReturnCell(CompareRuns({LoadRun(dir)}, std::nullopt)[0]), "480.50");
  j["eval_std_return"] = 12.3;
  WriteText(dir + "/energy.json", j.dump());
  EXPECT_EQ(EvalReturnCell(CompareRuns({LoadRun(dir)}, std::nullopt)[0]), "480.50 ± 12.30");
}

// A run given as "." (or "./") is named by its directory, not ".".
TEST(CompareTest, RunGivenAsDotIsNamedByItsDirectory) {
  const std::string dir = MakeRunA(Root("dot"));
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  const RunData run = LoadRun(".");
  const RunData slash = LoadRun("./");
  fs::current_path(before);
  EXPECT_EQ(run.name, "run_a");
  EXPECT_EQ(slash.name, "run_a");
}

// A run that a `greenrl train` holds the train.lock of is still training: "n/a (running)", not
// a killed run's "n/a (killed)" (train/checkpointing.h RunDirLock holds it so).
TEST(CompareTest, RunStillTrainingIsSaidToBeRunning) {
  const std::string dir = MakeRunB(Root("running"));
  fs::remove(dir + "/energy.json");  // a first segment still running has written none yet
  WriteText(dir + "/config.yaml", "algo: dqn\nenv_id: CartPole-v1\nseed: 2\n");
  EXPECT_EQ(LoadRun(dir).unfinished, "killed");
  const int fd = ::open((dir + "/train.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const RunData run = LoadRun(dir);
  // Before its first metrics.csv row: said to be starting, not "did the run start?".
  std::ifstream metrics_in(dir + "/metrics.csv");
  const std::string metrics((std::istreambuf_iterator<char>(metrics_in)),
                            std::istreambuf_iterator<char>());
  WriteText(dir + "/metrics.csv", metrics.substr(0, metrics.find('\n') + 1));
  std::string starting;
  try {
    LoadRun(dir);
  } catch (const ConfigError& e) {
    starting = e.what();
  }
  WriteText(dir + "/metrics.csv", metrics);
  ::close(fd);
  EXPECT_NE(starting.find("it is still starting: a `greenrl train` holds its train.lock"),
            std::string::npos)
      << starting;
  EXPECT_EQ(run.unfinished, "running");
  EXPECT_EQ(run.steps, 2048);
  EXPECT_EQ(EvalReturnCell(CompareRuns({run}, std::nullopt)[0]), "n/a (running)");
  EXPECT_EQ(LoadRun(dir).unfinished, "killed");  // the lock released: the holder has ended
}

// Markdown cells: '|' escaped, line breaks as spaces, '<' and '&' as entities (GitHub renders
// HTML in Markdown).
TEST(CompareTest, MarkdownCellsEscapeNamesThatBreakTheTable) {
  std::vector<RunData> runs = {LoadRun(MakeRunB(Root("md_names")))};
  runs[0].name = "a|b\nc<d>&e";
  const std::string md = FormatMarkdown(CompareRuns(runs, std::nullopt), std::nullopt);
  EXPECT_NE(md.find("\n| a\\|b c&lt;d>&amp;e | dqn |"), std::string::npos) << md;
}

// Two runs named alike (a/x and b/x/) get their paths as names; a unique name stays as it was.
TEST(CompareTest, RunsSharingANameAreNamedByTheirPaths) {
  std::vector<RunData> runs(3);
  runs[0].dir = "runs/a/x", runs[0].name = "x";
  runs[1].dir = "runs/b/./x/", runs[1].name = "x";
  runs[2].dir = "runs/y", runs[2].name = "y";
  DistinguishNames(&runs);
  EXPECT_EQ(runs[0].name, "runs/a/x");
  EXPECT_EQ(runs[1].name, "runs/b/x");
  EXPECT_EQ(runs[2].name, "y");
}

TEST(HtmlReportTest, PageInlinesChartJsAndTheRunsData) {
  const std::string root = Root("html");
  const std::vector<RunData> runs = {LoadRun(MakeRunA(root)), LoadRun(MakeRunB(root))};
  const std::string html = RenderHtml(runs, 195.0, "/* fake Chart.js */ var Chart;");
  EXPECT_NE(html.find("<script>\n/* fake Chart.js */ var Chart;\n</script>"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);  // nothing fetched
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_NE(html.find("\"rollout/ep_rew_mean\":[20.0,150.0,210.0,300.0]"), std::string::npos);
  EXPECT_NE(html.find("\"global_step\":[1024.0,2048.0,3072.0,4096.0]"), std::string::npos);
  EXPECT_NE(html.find("\"eval/mean_reward\":[null,200.0,null,480.5]"), std::string::npos);
  EXPECT_NE(html.find("\"cpu:process_w\":[10.0,12.5]"), std::string::npos);
  EXPECT_NE(html.find("\"action\":\"skip_non_critical\""), std::string::npos);
  // The budget table's row (its time as the wall times), and a passed-over decision's mark says
  // so in its label.
  // Run a's energy is the estimator's, run b's measured: the energy axes and the budget table's
  // column say that some figures are estimates; with run a alone, that all are.
  EXPECT_NE(html.find("\"energy_unit\":\"Wh, estimated for some runs: see Wh metered as\""),
            std::string::npos);
  EXPECT_NE(html.find("\"power_unit\":\"W, estimated for some runs: see Wh metered as\""),
            std::string::npos);
  EXPECT_NE(html.find("text: 'energy (' + DATA.energy_unit + ')'"), std::string::npos);
  EXPECT_NE(html.find("<th>time (s)</th><th>Wh, estimated for some runs: see Wh metered as</th>"),
            std::string::npos);
  const std::string html_a = RenderHtml({runs[0]}, std::nullopt, "var Chart;");
  EXPECT_NE(html_a.find("\"energy_unit\":\"Wh, estimated\""), std::string::npos);
  EXPECT_NE(html_a.find("<th>time (s)</th><th>Wh, estimated</th>"), std::string::npos);
  EXPECT_NE(RenderHtml({runs[1]}, std::nullopt, "var Chart;").find("\"energy_unit\":\"Wh\""),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>run_a</td><td>2048</td><td>4.00</td><td>0.2500</td>"
                      "<td>skip_non_critical</td><td>forecast 0.9 of the budget</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("(b.taken ? '' : ' (passed over)')"), std::string::npos);
  EXPECT_NE(html.find("r.name + ' (no breakdown: no energy.json)'"), std::string::npos);
  EXPECT_NE(html.find("{\"count\":4,\"duration_s\":4.0,\"energy_wh\":0.25,\"phase\":\"rollout\"}"),
            std::string::npos);
  EXPECT_NE(html.find("\"target_return\":195.0"), std::string::npos);
  EXPECT_NE(html.find("\"target_metric\":\"rollout/ep_rew_mean\""), std::string::npos);
  // The target line's legend names the metric it applies to.
  EXPECT_NE(html.find("label: 'target: ' + DATA.target_metric + ' >= ' + DATA.target_return"),
            std::string::npos);
  const std::string eval_html =
      RenderHtml(runs, 195.0, "/* fake Chart.js */ var Chart;", "eval/mean_reward");
  EXPECT_NE(eval_html.find("\"target_metric\":\"eval/mean_reward\""), std::string::npos);
  EXPECT_NE(html.find("\"target_on_return_charts\":true"), std::string::npos);
  EXPECT_NE(eval_html.find("\"target_on_return_charts\":true"), std::string::npos);
  // A target on a metric the return charts do not plot has no line there.
  const std::string loss_html =
      RenderHtml(runs, 0.5, "/* fake Chart.js */ var Chart;", "losses/explained_variance");
  EXPECT_NE(loss_html.find("\"target_on_return_charts\":false"), std::string::npos);
  EXPECT_NE(loss_html.find("if (DATA.target_return !== null && DATA.target_on_return_charts)"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>run_a</td><td>ppo</td><td>CartPole-v1</td><td>4096</td>"
                      "<td>8.00</td><td>512</td><td>0.5000</td><td>estimated</td><td>0.2400</td>"
                      "<td>320 g/kWh, PUE 1.5, FR</td><td>480.50</td>"
                      "<td>0.3750</td><td>3072</td></tr>"),
            std::string::npos);
  for (const char* id : {"chart-return-steps", "chart-return-time", "chart-return-wh",
                         "chart-power", "chart-phases"}) {
    EXPECT_NE(html.find(std::string("<canvas id=\"") + id + "\""), std::string::npos) << id;
  }
}

// Run names reach the page's data script as JSON with '<', '>' and '&' escaped, so none ends the
// script or turns the HTML parser's script state ("<!--<script>" would make the page's own
// </script> close nothing, and no chart was drawn).
TEST(HtmlReportTest, RunNamesCannotEndOrChangeTheDataScript) {
  const std::string root = Root("html_names");
  std::vector<RunData> runs = {LoadRun(MakeRunA(root))};
  runs[0].name = "a<!--<script></script>&b";
  const std::string html = RenderHtml(runs, std::nullopt, "var Chart;");
  const size_t begin = html.find("const DATA = ");
  ASSERT_NE(begin, std::string::npos);
  const std::string data = html.substr(begin, html.find(";\n</script>", begin) - begin);
  EXPECT_EQ(data.find_first_of("<>&"), std::string::npos) << data;
  EXPECT_NE(data.find(R"("a\u003c!--\u003cscript\u003e\u003c/script\u003e\u0026b")"),
            std::string::npos)
      << data;
  // The table's cell is the name escaped as HTML text.
  EXPECT_NE(html.find("<td>a&lt;!--&lt;script&gt;&lt;/script&gt;&amp;b</td>"), std::string::npos);
}

// A long run's series are thinned to about 4000 points, but every evaluation's row is kept: its
// squares mostly fell between the strides (1 in 10 kept for 40000 rows).
TEST(HtmlReportTest, ThinningKeepsEveryEvaluation) {
  const std::string root = Root("html_thin");
  std::vector<RunData> runs = {LoadRun(MakeRunA(root))};
  RunData& run = runs[0];
  run.metrics_header = {"global_step", "time_s", "rollout/ep_rew_mean", "eval/mean_reward",
                        "energy/total_wh"};
  run.metrics_rows.clear();
  for (int i = 0; i < 8001; ++i) {  // stride 3; an evaluation every 7th row (none at 0)
    const double eval = i % 7 == 6 ? static_cast<double>(i) : NAN;
    run.metrics_rows.push_back({i * 10.0, i * 0.1, 1.0, eval, i * 1e-3});
  }
  const std::string html = RenderHtml(runs, std::nullopt, "var Chart;");
  const size_t begin = html.find("\"eval/mean_reward\":[");
  ASSERT_NE(begin, std::string::npos);
  const size_t open = html.find('[', begin);
  const nlohmann::json evals =
      nlohmann::json::parse(html.substr(open, html.find(']', open) - open + 1));
  int values = 0;
  for (const auto& v : evals) values += v.is_number();
  EXPECT_EQ(values, 1143);  // rows 6, 13, ..., 8000: every evaluation
  // 2667 rows on the stride (0, 3, ..., 7998), the last (8000, an evaluation's), and the 761
  // other evaluations off the stride (1143 less the 381 at rows 6 + 21k, less row 8000).
  EXPECT_EQ(evals.size(), 2667u + 1u + 761u);
  EXPECT_EQ(evals[2], 6.0);   // rows 0, 3, 6 (on the stride)
  EXPECT_EQ(evals[5], 13.0);  // rows 9, 12, 13 (off it)
}

TEST(HtmlReportTest, MissingChartJsIsAClearError) {
  try {
    LoadChartJs("/nonexistent/chart.min.js");
    FAIL() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("libjs-chart.js"), std::string::npos);
  }
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The real page in headless Chromium: every chart paints pixels (the page's own getImageData
// count, read from the DOM after its scripts ran), no series with data draws nothing (run B's
// power.csv has one row, a run shorter than one sample: a dot, where a line of one point drew
// nothing), and a screenshot is written beside it.
TEST(HtmlReportTest, ChromiumRendersEveryChart) {
  if (std::system("command -v chromium > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs Debian's "
                    "chromium): the headless rendering check is skipped";
  }
  const std::string root = Root("chromium");
  const std::string run_b = MakeRunB(root);
  WriteText(run_b + "/power.csv", "time_s,cpu:package-0_w\n0.8,30\n");
  const std::vector<RunData> runs = {LoadRun(MakeRunA(root)), LoadRun(run_b)};
  const std::string page = root + "/report.html";
  WriteText(page, RenderHtml(runs, 195.0, LoadChartJs(DefaultChartJsPath())));
  const std::string flags = "--headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                            "--no-first-run --user-data-dir=" + root + "/profile " +
                            "--virtual-time-budget=10000 ";
  const std::string dom = root + "/dom.html";
  ASSERT_EQ(std::system(("chromium " + flags + "--dump-dom file://" + page + " > " + dom +
                         " 2> " + root + "/chromium.log").c_str()),
            0)
      << ReadAll(root + "/chromium.log");
  const std::string after = ReadAll(dom);
  EXPECT_NE(after.find("data-charts-drawn=\"5\" data-charts-total=\"5\""), std::string::npos)
      << after.substr(0, 2000);
  // Each canvas painted more than a frame's worth of pixels (axes alone paint a few thousand).
  const std::regex painted("data-painted-pixels=\"([0-9]+)\"");
  int canvases = 0;
  for (std::sregex_iterator it(after.begin(), after.end(), painted), end; it != end; ++it) {
    ++canvases;
    EXPECT_GT(std::stol((*it)[1]), 5000) << "canvas " << canvases;
  }
  EXPECT_EQ(canvases, 5);
  const std::regex invisible("data-invisible-series=\"([0-9]+)\"");
  int checked = 0;
  for (std::sregex_iterator it(after.begin(), after.end(), invisible), end; it != end; ++it) {
    ++checked;
    EXPECT_EQ((*it)[1].str(), "0") << "canvas " << checked;
  }
  EXPECT_EQ(checked, 5);
  // The first return chart's legend tells a run's curve (a line) from its evaluations (squares)
  // and budget decisions (triangles), which share the run's colour: run A's three, run B's
  // curve, the target line.
  std::smatch legend;
  ASSERT_TRUE(std::regex_search(after, legend, std::regex("data-legend-styles=\"([a-z,]*)\"")))
      << after.substr(0, 2000);
  EXPECT_EQ(legend[1].str(), "line,rect,triangle,line,line");
  const std::string png = root + "/report.png";
  ASSERT_EQ(std::system(("chromium " + flags + "--window-size=1000,2600 --screenshot=" + png +
                         " file://" + page + " > /dev/null 2>&1").c_str()),
            0);
  ASSERT_TRUE(fs::exists(png));
  EXPECT_EQ(ReadAll(png).substr(1, 3), "PNG");
}

}  // namespace
}  // namespace greenrl::report
