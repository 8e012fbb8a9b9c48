// greenrl report: compares finished runs as a self-contained HTML page (Chart.js inlined) or a
// Markdown table. Reading and rendering live in greenrl/report (compare.h, html_report.h).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "cli/commands.h"
#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/report/compare.h"
#include "greenrl/report/html_report.h"

namespace greenrl::cli {

namespace {
// Whether `path` may be replaced by a report: it does not exist, is empty, or is a report this
// command wrote (an HTML page titled "greenrl report", or a Markdown table whose header starts
// "| run | algo |"). Anything else (a run's energy.json or metrics.csv given by a slip of --out)
// is left alone.
bool ReplaceableByReport(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return true;
  std::ifstream in(path, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.empty()) return std::filesystem::file_size(path, ec) == 0 && !ec;
  return (head.rfind("<!DOCTYPE html>", 0) == 0 &&
          head.find("<title>greenrl report") != std::string::npos) ||
         head.rfind("| run | algo |", 0) == 0;
}

struct ReportArgs {
  std::vector<std::string> run_dirs;
  std::string format = "html";
  std::string out;
  std::optional<double> target_return;
  std::string target_metric = report::kTargetMetric;
  std::string chartjs = report::DefaultChartJsPath();
};
}  // namespace

Runner RegisterReport(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand("report",
                                     "Compare runs (finished, stopped, interrupted, killed or "
                                     "still training): HTML page with plots, "
                                     "or Markdown");
  cmd->add_option("RUN_DIR", args->run_dirs, "run directories written by greenrl train")
      ->required();
  cmd->add_option("--format", args->format,
                  "html (default: a self-contained page) or md (Markdown table on stdout)");
  cmd->add_option("--out", args->out,
                  "output file (html default: RUN_DIR/report.html for one run, report.html "
                  "for several; md default: stdout)");
  CLI::Option* target_return =
      cmd->add_option("--target-return", args->target_return,
                      "adds Wh and steps to reach this value of --target-metric");
  cmd->add_option("--target-metric", args->target_metric,
                  "metrics.csv column that --target-return applies to (default "
                  "rollout/ep_rew_mean; eval/mean_reward: the deterministic evaluations)")
      ->needs(target_return);
  cmd->add_option("--chartjs", args->chartjs,
                  "Chart.js UMD build to inline (default: Debian libjs-chart.js's)");
  return [args]() {
    if (args->format != "html" && args->format != "md") {
      throw ConfigError("--format", args->format, "html or md");
    }
    if (std::filesystem::is_directory(args->out)) {
      throw ConfigError("--out", args->out,
                        "a file path (it is a directory: e.g. --out " +
                            (std::filesystem::path(args->out) /
                             (args->format == "md" ? "report.md" : "report.html"))
                                .string() +
                            ")");
    }
    if (const std::filesystem::path parent = std::filesystem::path(args->out).parent_path();
        !args->out.empty() && !parent.empty() && !std::filesystem::is_directory(parent)) {
      throw ConfigError(
          "--out", args->out,
          "a file in an existing folder (" + parent.string() + " does not exist: create it first)");
    }
    if (!args->out.empty() && !ReplaceableByReport(args->out)) {
      throw ConfigError("--out", args->out,
                        "a new file, or a report greenrl report wrote (replaced); this file is "
                        "something else (a run's metrics.csv or energy.json?) and is left as it "
                        "is: give another path");
    }
    if (args->target_return && !std::isfinite(*args->target_return)) {
      throw ConfigError("--target-return", fmt::format("{}", *args->target_return),
                        "a finite number");
    }
    // Everything is read and checked before anything is written.
    // A run named twice (the same directory by two paths too) would be counted twice.
    std::map<std::string, std::string> seen;  // canonical path -> the path as first given
    for (const auto& dir : args->run_dirs) {
      std::error_code ec;
      const std::string key = std::filesystem::weakly_canonical(dir, ec).string();
      const auto [it, added] = seen.emplace(ec ? dir : key, dir);
      if (!added) {
        throw ConfigError("RUN_DIR", dir,
                          "each run once (" + it->second + " is the same directory)");
      }
    }
    std::vector<report::RunData> runs;
    for (const auto& dir : args->run_dirs) runs.push_back(report::LoadRun(dir));
    report::DistinguishNames(&runs);
    if (args->target_return) report::CheckTargetMetric(runs, args->target_metric);
    if (args->format == "md") {
      const std::string md = report::FormatMarkdown(
          report::CompareRuns(runs, args->target_return, args->target_metric), args->target_return,
          args->target_metric);
      if (args->out.empty()) {
        fmt::print("{}", md);
        std::fflush(stdout);
      } else {
        WriteFileAtomic(args->out, md);
        fmt::print("greenrl report: {} run(s) -> {}\n", runs.size(), args->out);
      }
      return 0;
    }
    const std::string chartjs = report::LoadChartJs(args->chartjs);
    std::string out = args->out;
    if (out.empty()) {
      out = runs.size() == 1
                ? (std::filesystem::path(runs[0].dir) / "report.html").lexically_normal().string()
                : "report.html";
      if (!ReplaceableByReport(out)) {  // the default path, e.g. a page of the user's own
        throw ConfigError("--out", out,
                          "a new file, or a report greenrl report wrote (this default path holds "
                          "a file greenrl report did not write, left as it is: give --out)");
      }
    }
    WriteFileAtomic(out,
                    report::RenderHtml(runs, args->target_return, chartjs, args->target_metric));
    fmt::print("greenrl report: {} run(s) -> {}\n", runs.size(), out);
    return 0;
  };
}

}  // namespace greenrl::cli
