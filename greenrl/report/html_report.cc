#include "greenrl/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "greenrl/core/errors.h"

#ifndef GREENRL_CHARTJS_PATH
#define GREENRL_CHARTJS_PATH ""
#endif

namespace greenrl::report {

namespace {

// Series longer than this are thinned to every k-th point (the last one and the evaluations' rows
// always kept) so the page stays small for long runs: 1e7 CartPole steps log about 20000 rows.
constexpr size_t kMaxPoints = 4000;

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: '<', '>' and '&' as JSON's \u escapes (they occur only inside its strings),
// so that no run name or path ("</script>", "<!--<script>", which turns the HTML parser's script
// state to "double escaped" and the page's own </script> then closes nothing) ends or changes the
// element. The HTML standard's advice for script data ("Restrictions for contents of script
// elements", HTML Living Standard, section 4.12.1.3).
std::string ScriptSafe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Columns of a CSV table as JSON arrays (NaN -> null), thinned to kMaxPoints.
nlohmann::json Columns(const std::vector<std::string>& header,
                       const std::vector<std::vector<double>>& rows,
                       const std::vector<std::string>& wanted) {
  nlohmann::json out = nlohmann::json::object();
  const size_t stride = rows.size() > kMaxPoints ? (rows.size() + kMaxPoints - 1) / kMaxPoints : 1;
  // The rows kept: every stride-th, the last, and every row of an evaluation (its squares would
  // otherwise mostly fall between the strides). All columns keep the same rows, as the charts
  // pair them.
  const auto eval_column = std::find(header.begin(), header.end(), "eval/mean_reward");
  std::vector<bool> kept(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    kept[i] = i % stride == 0 || i + 1 == rows.size() ||
              (eval_column != header.end() &&
               std::isfinite(rows[i][static_cast<size_t>(eval_column - header.begin())]));
  }
  for (size_t c = 0; c < header.size(); ++c) {
    if (!wanted.empty() &&
        std::find(wanted.begin(), wanted.end(), header[c]) == wanted.end()) {
      continue;
    }
    nlohmann::json values = nlohmann::json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!kept[i]) continue;
      const double v = rows[i][c];
      values.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    }
    out[header[c]] = values;
  }
  return out;
}

std::string TableHtml(const std::vector<ComparisonRow>& rows, std::optional<double> target_return,
                      const std::string& target_metric) {
  std::string s =
      "<table id=\"comparison\">\n<tr><th>run</th><th>algo</th><th>env</th>"
      "<th>steps</th><th>wall time (s)</th><th>steps/s</th><th>Wh</th>"
      "<th>Wh metered as</th><th>g CO2e</th><th>g CO2e at</th><th>eval return</th>";
  if (target_return) {
    const std::string label = EscapeHtml(TargetLabel(target_metric));
    s += fmt::format("<th>Wh to {} &ge; {:g}</th><th>steps to {} &ge; {:g}</th>", label,
                     *target_return, label, *target_return);
  }
  s += "</tr>\n";
  for (const auto& r : rows) {
    s += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0f}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        EscapeHtml(r.name), EscapeHtml(r.algo), EscapeHtml(r.env_id), r.steps,
        FormatSeconds(r.wall_time_s), r.steps_per_s, FormatAmount(r.energy_wh),
        EscapeHtml(ProvenanceCell(r)), CarbonCell(r), EscapeHtml(CarbonBasisCell(r)),
        EscapeHtml(EvalReturnCell(r)));
    if (target_return) {
      s += r.wh_to_target
               ? fmt::format("<td>{}</td><td>{}</td>", FormatAmount(*r.wh_to_target),
                             *r.steps_to_target)
               : std::string("<td>not reached</td><td>not reached</td>");
    }
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

// An energy or power unit for the page's axes and budget table, saying when the figures are
// estimates (a run's "Wh metered as" names the CPU-time estimator's `estimated` provenance):
// `unit` ("Wh"), "Wh, estimated" when every run's are, or "Wh, estimated for some runs: see Wh
// metered as".
std::string UnitSayingEstimates(const std::vector<RunData>& runs, const std::string& unit) {
  const auto estimated = std::count_if(runs.begin(), runs.end(), [](const RunData& run) {
    return run.energy_provenance.find("estimated") != std::string::npos;
  });
  if (estimated == 0) return unit;
  return unit + (static_cast<size_t>(estimated) == runs.size()
                     ? ", estimated"
                     : ", estimated for some runs: see Wh metered as");
}

std::string BudgetHtml(const std::vector<RunData>& runs) {
  std::string s;
  for (const auto& run : runs) {
    for (const auto& m : run.budget_marks) {
      // Times as the table's wall times (three significant digits below 1 s: a short run's
      // decisions come within its first tenth of a second).
      s += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td>"
          "<td>{}</td></tr>\n",
          EscapeHtml(run.name), m.global_step, FormatSeconds(m.time_s),
          FormatAmount(m.energy_used_wh), EscapeHtml(m.action),
          m.taken ? "" : " (passed over: unsupported)", EscapeHtml(m.reason));
    }
  }
  if (s.empty()) return "<p>No budget decisions (no energy budget, or none was needed).</p>\n";
  return "<table id=\"budget\">\n<tr><th>run</th><th>step</th><th>time (s)</th><th>" +
         EscapeHtml(UnitSayingEstimates(runs, "Wh")) +
         "</th><th>action</th><th>reason</th></tr>\n" + s + "</table>\n";
}

// The page's own script: builds every chart from DATA with Chart.js, then records what it drew.
constexpr const char* kPageScript = R"JS(
(function () {
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                   '#17becf', '#bcbd22', '#7f7f7f'];
  const color = (i) => palette[i % palette.length];
  const charts = [];
  if (typeof Chart === 'undefined') {
    document.getElementById('status').textContent = 'Chart.js did not load: no charts.';
    return;
  }
  const common = (xTitle, yTitle) => ({
    animation: false, responsive: false, parsing: false,
    // The legend draws each series' point style (a run's curve a line, its evaluations squares,
    // its budget decisions triangles), since one run's series share its colour.
    plugins: {legend: {position: 'bottom', labels: {usePointStyle: true}},
              tooltip: {callbacks: {label: (c) => c.raw.label || (c.dataset.label + ': ' +
                                                                 c.formattedValue)}}},
    scales: {x: {type: 'linear', title: {display: true, text: xTitle}},
             y: {title: {display: true, text: yTitle}}}
  });
  const points = (xs, ys) => {
    const out = [];
    for (let i = 0; i < xs.length; ++i) {
      if (xs[i] !== null && ys[i] !== null) out.push({x: xs[i], y: ys[i]});
    }
    return out;
  };
  // A line needs two points: a series of one (a run shorter than one power sample, or with one
  // metrics row) is drawn as a dot (its legend mark too).
  const radiusFor = (data) => (data.length < 2 ? 3 : 0);
  const styleFor = (data) => (data.length < 2 ? 'circle' : 'line');
  // The return curve's value at a step: the last row at or before it.
  const returnAt = (m, step) => {
    let y = null;
    const steps = m['global_step'], ret = m[DATA.return_metric] || [];
    for (let i = 0; i < steps.length; ++i) {
      if (steps[i] > step) break;
      if (ret[i] !== null) y = ret[i];
    }
    return y;
  };
  const returnChart = (id, xKey, xTitle, budgetX) => {
    const datasets = [];
    let xMax = 0;
    DATA.runs.forEach((run, r) => {
      const m = run.metrics, xs = m[xKey] || [];
      xs.forEach((x) => { if (x !== null) xMax = Math.max(xMax, x); });
      const curve = points(xs, m[DATA.return_metric] || []);
      datasets.push({label: run.name + ' ' + DATA.return_metric, borderColor: color(r),
                     backgroundColor: color(r), pointRadius: radiusFor(curve), borderWidth: 2,
                     pointStyle: styleFor(curve), data: curve});
      if (m['eval/mean_reward']) {
        datasets.push({label: run.name + ' eval/mean_reward', borderColor: color(r),
                       backgroundColor: color(r), showLine: false, pointRadius: 3,
                       pointStyle: 'rect', data: points(xs, m['eval/mean_reward'])});
      }
      if (run.budget.length > 0) {
        datasets.push({label: run.name + ' budget decisions', borderColor: '#000000',
                       backgroundColor: color(r), showLine: false, pointRadius: 8,
                       pointStyle: 'triangle',
                       data: run.budget.map((b) => ({
                         x: budgetX(b), y: returnAt(m, b.global_step),
                         label: run.name + ' step ' + b.global_step + ': ' + b.action +
                                (b.taken ? '' : ' (passed over)')})).filter((p) => p.y !== null)});
      }
    });
    if (DATA.target_return !== null && DATA.target_on_return_charts) {
      datasets.push({label: 'target: ' + DATA.target_metric + ' >= ' + DATA.target_return,
                     borderColor: '#555555',
                     borderDash: [6, 4], pointRadius: 0, borderWidth: 1, pointStyle: 'line',
                     data: [{x: 0, y: DATA.target_return}, {x: xMax, y: DATA.target_return}]});
    }
    charts.push(new Chart(document.getElementById(id),
                          {type: 'line', data: {datasets}, options: common(xTitle, 'return')}));
  };
  returnChart('chart-return-steps', 'global_step', 'env steps', (b) => b.global_step);
  returnChart('chart-return-time', 'time_s', 'wall time (s)', (b) => b.time_s);
  returnChart('chart-return-wh', 'energy/total_wh', 'energy (' + DATA.energy_unit + ')',
              (b) => b.energy_used_wh);

  const power = [];
  let k = 0;
  DATA.runs.forEach((run) => {
    const t = run.power['time_s'] || [];
    Object.keys(run.power).forEach((col) => {
      if (col === 'time_s') return;
      const series = points(t, run.power[col]);
      power.push({label: run.name + ' ' + col.replace(/_w$/, ''), borderColor: color(k),
                  backgroundColor: color(k), pointRadius: radiusFor(series), borderWidth: 2,
                  pointStyle: styleFor(series), data: series});
      ++k;
    });
  });
  if (power.length > 0) {
    charts.push(new Chart(document.getElementById('chart-power'),
                          {type: 'line', data: {datasets: power},
                           options: common('time since start (s)',
                                           'power (' + DATA.power_unit + ')')}));
  } else {
    document.getElementById('chart-power').replaceWith('No power.csv in these runs.');
  }

  const phases = ['rollout', 'update', 'eval', 'checkpoint', 'unattributed'];
  const phaseColors = {rollout: '#1f77b4', update: '#ff7f0e', eval: '#2ca02c',
                       checkpoint: '#9467bd', unattributed: '#7f7f7f'};
  const phaseOptions = {animation: false, responsive: false,
                        plugins: {legend: {position: 'bottom'}},
                        scales: {x: {stacked: true},
                                 y: {stacked: true,
                                     title: {display: true,
                                             text: 'energy (' + DATA.energy_unit + ')'}}}};
  charts.push(new Chart(document.getElementById('chart-phases'), {
    type: 'bar',
    // A run without energy.json's windows (killed before writing it) has no bar: said by name.
    data: {labels: DATA.runs.map((r) => r.phases.length > 0 ? r.name
                                        : r.name + ' (no breakdown: no energy.json)'),
           datasets: phases.map((p) => ({label: p, backgroundColor: phaseColors[p],
                                         data: DATA.runs.map((r) => {
                                           const e = r.phases.find((x) => x.phase === p);
                                           return e ? e.energy_wh : 0;
                                         })}))},
    options: phaseOptions}));

  // What was drawn, for headless checks: painted pixels per canvas.
  let drawn = 0;
  const canvases = document.querySelectorAll('canvas');
  canvases.forEach((c) => {
    const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < img.length; i += 4) painted += img[i] > 0 ? 1 : 0;
    c.dataset.paintedPixels = String(painted);
    if (painted > 0) ++drawn;
  });
  // And each chart's legend marks, in dataset order ("line,rect,triangle"; "boxes: ..." where the
  // legend draws plain colour boxes instead).
  charts.forEach((ch) => {
    const boxes = !ch.options.plugins.legend.labels.usePointStyle;
    ch.canvas.dataset.legendStyles = (boxes ? 'boxes: ' : '') +
        ch.legend.legendItems.map((item) => String(item.pointStyle)).join(',');
  });
  // And the series that have data but draw nothing (no line, no marker): none, for headless
  // checks (bars always draw).
  charts.forEach((ch) => {
    ch.canvas.dataset.invisibleSeries = String(
        ch.config.type === 'bar'
            ? 0
            : ch.data.datasets.filter((d) => d.data.length > 0 &&
                                             !(d.data.length >= 2 && d.showLine !== false) &&
                                             !(d.pointRadius > 0)).length);
  });
  document.body.dataset.chartsDrawn = String(drawn);
  document.body.dataset.chartsTotal = String(canvases.length);
  document.getElementById('status').textContent = drawn + ' of ' + canvases.length +
                                                  ' charts drawn.';
})();
)JS";

}  // namespace

std::string DefaultChartJsPath() { return GREENRL_CHARTJS_PATH; }

std::string LoadChartJs(const std::string& path) {
  const std::string hint =
      "Chart.js's UMD build: install Debian's libjs-chart.js (bash scripts/install-deps.sh, "
      "giving /usr/share/javascript/chart.js/chart.min.js) or pass --chartjs PATH";
  if (path.empty()) throw ConfigError("--chartjs", path, hint);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("--chartjs", path, hint + " (the file cannot be read)");
  std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (code.find("Chart") == std::string::npos) {
    throw ConfigError("--chartjs", path, hint + " (the file does not define Chart)");
  }
  return code;
}

std::string RenderHtml(const std::vector<RunData>& runs, std::optional<double> target_return,
                       const std::string& chartjs_source, const std::string& target_metric) {
  nlohmann::json data;
  data["return_metric"] = kTargetMetric;
  data["target_return"] = target_return ? nlohmann::json(*target_return) : nlohmann::json();
  data["target_metric"] = target_metric;  // the metric the target line applies to
  // The return charts plot the training return and eval/mean_reward: a target on another metric
  // (--target-metric losses/explained_variance) has no line there.
  data["target_on_return_charts"] =
      target_metric == kTargetMetric || target_metric == "eval/mean_reward";
  data["energy_unit"] = UnitSayingEstimates(runs, "Wh");
  data["power_unit"] = UnitSayingEstimates(runs, "W");
  data["runs"] = nlohmann::json::array();
  for (const auto& run : runs) {
    nlohmann::json r;
    r["name"] = run.name;
    r["algo"] = run.algo;
    r["env_id"] = run.env_id;
    r["metrics"] = Columns(run.metrics_header, run.metrics_rows,
                           {"global_step", "time_s", "energy/total_wh", kTargetMetric,
                            "charts/episodic_return", "eval/mean_reward"});
    r["power"] = Columns(run.power_header, run.power_rows, {});
    r["phases"] = nlohmann::json::array();
    for (const auto& p : run.phases) {
      r["phases"].push_back({{"phase", p.phase},
                             {"count", p.count},
                             {"duration_s", p.duration_s},
                             {"energy_wh", p.energy_wh}});
    }
    r["budget"] = nlohmann::json::array();
    for (const auto& m : run.budget_marks) {
      r["budget"].push_back({{"global_step", m.global_step},
                             {"time_s", m.time_s},
                             {"energy_used_wh", m.energy_used_wh},
                             {"action", m.action},
                             {"taken", m.taken}});
    }
    data["runs"].push_back(r);
  }
  std::string title = "greenrl report";
  if (runs.size() == 1) title += ": " + runs[0].name;

  std::string s;
  s += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  s += "<title>" + EscapeHtml(title) + "</title>\n";
  s += "<style>\nbody{font-family:sans-serif;margin:24px;color:#222}"
       "table{border-collapse:collapse;margin:12px 0}"
       "td,th{border:1px solid #bbb;padding:4px 8px;text-align:right}"
       "td:first-child,th:first-child{text-align:left}"
       "canvas{display:block;margin:8px 0 24px;background:#fff}\n</style>\n";
  s += "<script>\n" + chartjs_source + "\n</script>\n</head>\n<body>\n";
  s += "<h1>" + EscapeHtml(title) + "</h1>\n<p id=\"status\">Charts not drawn yet.</p>\n";
  const std::vector<ComparisonRow> rows = CompareRuns(runs, target_return, target_metric);
  s += "<h2>Comparison</h2>\n" + TableHtml(rows, target_return, target_metric);
  // The notes under the table, each kind a list of its own: runs started from a trained agent
  // (what the agent cost before them), data-parallel runs (whose figures the cells are), failed
  // runs (what ended them).
  auto note_list = [&s](const char* id, const std::vector<std::string>& notes) {
    if (notes.empty()) return;
    s += fmt::format("<ul id=\"{}\">\n", id);
    for (const std::string& note : notes) s += "<li>" + EscapeHtml(note) + "</li>\n";
    s += "</ul>\n";
  };
  note_list("trained-agents", TrainedAgentNotes(rows));
  note_list("data-parallel", DataParallelNotes(rows));
  note_list("failed-runs", FailedRunNotes(rows));
  s += fmt::format(
      "<p>Return: {} (mean of the last 100 training episodes); squares: deterministic "
      "evaluations; triangles: budget decisions.</p>\n",
      kTargetMetric);
  s += "<h2>Return against env steps</h2>\n"
       "<canvas id=\"chart-return-steps\" width=\"900\" height=\"360\"></canvas>\n";
  s += "<h2>Return against wall time</h2>\n"
       "<canvas id=\"chart-return-time\" width=\"900\" height=\"360\"></canvas>\n";
  s += "<h2>Return against energy</h2>\n"
       "<canvas id=\"chart-return-wh\" width=\"900\" height=\"360\"></canvas>\n";
  // power.csv is rank 0's alone in a data-parallel run (its sampler meters rank 0's domains).
  const bool data_parallel = std::any_of(rows.begin(), rows.end(),
                                         [](const ComparisonRow& r) { return r.world_size > 1; });
  s += std::string("<h2>Power over time per domain</h2>\n") +
       (data_parallel ? "<p>A data-parallel run's power is its rank 0's (power.csv); its table "
                        "row's Wh are all ranks'.</p>\n"
                      : "") +
       "<canvas id=\"chart-power\" width=\"900\" height=\"360\"></canvas>\n";
  s += "<h2>Energy by phase</h2>\n"
       "<canvas id=\"chart-phases\" width=\"900\" height=\"360\"></canvas>\n";
  s += "<h2>Budget decisions</h2>\n" + BudgetHtml(runs);
  s += "<script>\nconst DATA = " +
       ScriptSafe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
       ";\n</script>\n";
  s += "<script>" + std::string(kPageScript) + "</script>\n</body>\n</html>\n";
  return s;
}

}  // namespace greenrl::report
