// html_report.h: `greenrl report`'s self-contained HTML page. The page inlines Chart.js (read
// from Debian's libjs-chart.js, or a path given with --chartjs) and the runs' data, so it opens
// without a network: return against steps, wall time and Wh with the budget decisions marked;
// power over time per domain; energy by phase; and the comparison table (compare.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "greenrl/report/compare.h"

namespace greenrl::report {

// Where CMake found Chart.js's UMD build at configure time (Debian's libjs-chart.js:
// /usr/share/javascript/chart.js/chart.min.js); empty when it was not installed then.
std::string DefaultChartJsPath();

// Reads Chart.js's UMD build.
// Errors: greenrl::ConfigError (field "--chartjs") when the path is empty or unreadable, saying
// to install libjs-chart.js (scripts/install-deps.sh) or to pass --chartjs PATH.
std::string LoadChartJs(const std::string& path);

// The whole page. Args: chartjs_source: Chart.js's code, inlined as is; target_return and
// target_metric: as in CompareRuns (a target on the training return or eval/mean_reward is also
// drawn as a horizontal line on the return charts, labelled "target: <target_metric> >=
// <target_return>"; one on another metric is not, as the charts do not plot it).
// After its scripts ran, the page records what it drew for tests and headless checks: each
// canvas gets data-painted-pixels (pixels with non-zero alpha) and <body> gets
// data-charts-drawn (canvases with painted pixels) and data-charts-total.
std::string RenderHtml(const std::vector<RunData>& runs, std::optional<double> target_return,
                       const std::string& chartjs_source,
                       const std::string& target_metric = kTargetMetric);

}  // namespace greenrl::report
