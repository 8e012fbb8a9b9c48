#include "greenrl/report/run_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "greenrl/core/atomic_file.h"
#include "greenrl/energy/monitor.h"
#include "greenrl/energy/units.h"

namespace greenrl::report {

namespace {
using energy::kJoulesPerWh;

// Four decimals, or three significant digits below 0.001 (a short run's "0.0000 Wh" or
// "0.0000 g" said nothing).
std::string Amount(double value) {
  return std::fabs(value) >= 0.001 || value == 0.0 ? fmt::format("{:.4f}", value)
                                                   : fmt::format("{:.3g}", value);
}

// A budget as the user gives it, to 6 significant digits (0.00103, not Amount's 0.0010, which
// would read the same as a budget of 0.001).
std::string BudgetAmount(double wh) { return fmt::format("{:.6g}", wh); }

nlohmann::ordered_json BudgetEventsOrderedJson(const std::vector<energy::BudgetEvent>& events) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : events) {
    nlohmann::ordered_json ev;
    ev["global_step"] = e.global_step;
    ev["time_s"] = e.time_s;
    ev["action"] = energy::BudgetActionName(e.action);
    ev["taken"] = e.taken;
    ev["state"] = energy::BudgetStateName(e.state);
    ev["energy_used_j"] = e.energy_used_j;
    ev["budget_j"] = e.budget_j;
    ev["forecast_j"] =
        e.forecast_j ? nlohmann::ordered_json(*e.forecast_j) : nlohmann::ordered_json();
    ev["fraction"] = e.fraction;
    ev["next_iteration_energy_j"] = e.next_iteration_energy_j;
    ev["reserve_j"] = e.reserve_j;
    ev["checkpoint_j"] = e.checkpoint_j;
    ev["reason"] = e.reason;
    out.push_back(ev);
  }
  return out;
}

// Whether the budget's final state is a rung that was passed over (the CPU's reduced precision:
// the state advanced, its measure not taken), from its last decision into that state.
bool FinalRungPassedOver(const BudgetReport& budget) {
  for (auto it = budget.events.rbegin(); it != budget.events.rend(); ++it) {
    if (energy::BudgetStateName(it->state) == budget.final_state) return !it->taken;
  }
  return false;
}

}  // namespace

std::string BudgetEventsJson(const std::vector<energy::BudgetEvent>& events) {
  return BudgetEventsOrderedJson(events).dump();
}

std::vector<energy::BudgetEvent> ParseBudgetEventsJson(const std::string& text) {
  std::vector<energy::BudgetEvent> events;
  size_t index = 0;
  try {
    for (const auto& ej : nlohmann::json::parse(text)) {
      energy::BudgetEvent e;
      e.global_step = ej.at("global_step").get<int64_t>();
      e.time_s = ej.at("time_s").get<double>();
      e.action = energy::ParseBudgetAction(ej.at("action").get<std::string>());
      e.taken = ej.at("taken").get<bool>();
      e.state = energy::ParseBudgetState(ej.at("state").get<std::string>());
      e.energy_used_j = ej.at("energy_used_j").get<double>();
      e.budget_j = ej.at("budget_j").get<double>();
      if (!ej.at("forecast_j").is_null()) e.forecast_j = ej.at("forecast_j").get<double>();
      e.fraction = ej.at("fraction").get<double>();
      e.next_iteration_energy_j = ej.at("next_iteration_energy_j").get<double>();
      e.reserve_j = ej.value("reserve_j", 0.0);  // 0 in checkpoints before 2026-12-06
      e.checkpoint_j = ej.value("checkpoint_j", 0.0);  // 0 in checkpoints before 2026-12-07
      e.reason = ej.at("reason").get<std::string>();
      events.push_back(std::move(e));
      ++index;
    }
  } catch (const std::exception& e) {  // nlohmann's parse and type errors, unknown names
    throw std::invalid_argument(fmt::format("budget event {}: {}", index, e.what()));
  }
  return events;
}

double AdditiveEnergyJ(const std::vector<DomainEnergy>& domains) {
  double sum = 0.0;
  for (const auto& d : domains) {
    if (energy::IsAdditiveDomain(d.domain)) sum += d.energy_j;
  }
  return sum;
}

double RunReport::total_energy_j() const { return AdditiveEnergyJ(domains); }

std::map<std::string, double> RunReport::unattributed_energy_j() const {
  std::map<std::string, double> out;
  for (const auto& d : domains) out[d.domain] = d.energy_j;
  for (const auto& w : windows) {
    for (const auto& [domain, e] : w.energy_j) out[domain] -= e;
  }
  return out;
}

double OverBudgetWh(const RunReport& r) {
  if (!r.budget.enabled || r.budget.budget_wh <= 0.0) return 0.0;
  return std::max(0.0, r.total_energy_j() / kJoulesPerWh - r.budget.budget_wh);
}

std::string FixedNoNegativeZero(double value, int decimals) {
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.size() > 1 && text[0] == '-' && text.find_first_not_of("0.", 1) == std::string::npos) {
    text.erase(0, 1);  // "-0.00" -> "0.00"
  }
  return text;
}

std::string FormatEnergyLines(const std::vector<DomainEnergy>& domains,
                              const std::string& meter_reason) {
  // The total's provenance: estimated parts make it (partly) an estimate, said on the line.
  int estimated = 0, additive = 0;
  for (const auto& d : domains) {
    if (!energy::IsAdditiveDomain(d.domain)) continue;
    ++additive;
    estimated += d.provenance == "estimated";
  }
  const char* label = estimated == 0          ? ""
                      : estimated == additive ? " (estimated)"
                                              : " (partly estimated: see the domains)";
  std::string s = fmt::format("  energy         {} Wh in all{}\n",
                              Amount(AdditiveEnergyJ(domains) / kJoulesPerWh), label);
  size_t width = 14;  // the names' column (RAPL's "cpu:package-0/uncore" is longer)
  for (const auto& d : domains) width = std::max(width, d.domain.size());
  bool package_shared = false;
  for (const auto& d : domains) {
    // A part of another domain, or a container of them (monitor.h), is not in the total.
    const std::string not_added =
        energy::IsAdditiveDomain(d.domain) ? ""
        : d.domain.find('/') != std::string::npos
            ? "; part of " + d.domain.substr(0, d.domain.find('/')) + ", not added"
            : "; contains the others, not added";
    s += fmt::format("    {:<{}} {} Wh  ({} by {}, scope {}{})\n", d.domain, width,
                     Amount(d.energy_j / kJoulesPerWh), d.provenance, d.meter, d.scope, not_added);
    // A device that other processes used (the meter saw them): its energy includes theirs.
    if (d.scope == "device" && d.shared.rfind("yes", 0) == 0) {
      s += fmt::format("      shared       {}\n", d.shared);
    }
    package_shared = package_shared || (d.scope == "package" && d.shared.rfind("yes", 0) == 0);
  }
  // A package counter (RAPL) counts every process on the socket: said once.
  if (package_shared) {
    s += "  shared         the package counters include every process on the socket (runs side "
         "by side each count them all)\n";
  }
  s += fmt::format("  meter          {}\n", meter_reason);
  return s;
}

std::string FormatNonFiniteOutputsLine(int64_t n) {
  if (n <= 0) return "";
  return fmt::format(
      "  env outputs    {} resets and steps returned a NaN or infinite observation or reward "
      "(check the env's Reset and Step)\n",
      n);
}

std::string FormatCarbonLines(const energy::CarbonResult& c) {
  std::string s;
  const std::string grams_text = Amount(c.kg_co2e * 1000.0);
  s += fmt::format("  carbon         {} g CO2e = {:.3e} kWh x PUE {:g} x {:g} g/kWh\n", grams_text,
                   c.energy_kwh, c.pue, c.intensity_g_per_kwh);
  if (c.intensity_source.rfind("override", 0) == 0) {
    // What it replaced: the region's table value, or with no region the world average.
    s += fmt::format("    intensity    set by carbon.intensity_g_per_kwh (instead of {})\n",
                     c.region == "world" ? std::string("the world average, the default")
                                         : c.region + "'s table value");
  } else {
    s += fmt::format("    intensity    {} ({}{})\n", c.region, c.intensity_source,
                     c.intensity_is_default ? ", default: set carbon.region or "
                                              "carbon.intensity_g_per_kwh"
                                            : "");
  }
  return s;
}

std::string FormatSummary(const RunReport& r) {
  std::string s;
  s += fmt::format("greenrl train: {} on {}, seed {} -> {}\n", r.algo, r.env_id, r.seed, r.run_dir);
  s += fmt::format("  steps          {}\n", r.steps);
  s += fmt::format("  wall time      {:.2f} s (CPU {:.2f} s{})\n", r.wall_time_s, r.cpu_time_s,
                   r.world_size > 1 ? fmt::format(", all {} ranks", r.world_size) : "");
  s += fmt::format("  steps/s        {:.0f}\n", r.steps_per_s);
  if (!r.update_path.empty()) s += fmt::format("  update path    {}\n", r.update_path);
  if (r.env_non_finite_resets > 0) {
    s += fmt::format(
        "  env faults     {} steps hit a simulator fault (a non-finite or unstable state, a full "
        "contact buffer, an engine error: MuJoCo's first messages are on stderr); those envs "
        "were reset\n",
        r.env_non_finite_resets);
  }
  s += FormatNonFiniteOutputsLine(r.env_non_finite_outputs);
  if (r.early_stop.stopped) {
    // Both in full (fmt's shortest round-trip form): a 2-decimal mean could read as below a
    // finer threshold ("0.00 >= 0.001").
    s += fmt::format(
        "  stopped early  at step {} of {}: a periodic eval's mean reward {} >= "
        "eval.reward_threshold {}\n",
        r.early_stop.global_step, r.early_stop.n_timesteps, r.early_stop.eval_mean_reward,
        r.early_stop.reward_threshold);
  }
  if (r.eval_episodes > 0) {
    s += fmt::format("  eval return    {} ± {} ({} deterministic episode{})\n",
                     FixedNoNegativeZero(r.eval_mean_return, 2),
                     FixedNoNegativeZero(r.eval_std_return, 2), r.eval_episodes,
                     r.eval_episodes == 1 ? "" : "s");
  } else {
    s += fmt::format("  eval return    skipped: {}\n", r.eval_note);
  }
  if (r.best_eval.global_step >= 0) {
    s += fmt::format("  best eval      {} at step {} ({})\n",
                     FixedNoNegativeZero(r.best_eval.mean_reward, 2), r.best_eval.global_step,
                     r.best_eval.checkpoint);
  }
  if (!r.trained_agent.checkpoint.empty()) {
    const double wh = r.trained_agent.energy_wh;
    s += fmt::format("  trained agent  {} ({})\n", r.trained_agent.checkpoint,
                     std::isfinite(wh)
                         ? fmt::format("its training used {:.4g} Wh; with this run {:.4g} Wh", wh,
                                       wh + r.total_energy_j() / kJoulesPerWh)
                         : std::string("its training's energy unknown: its run has not written "
                                       "energy.json, and started from an agent itself or has "
                                       "no metrics.csv row"));
  }
  s += FormatEnergyLines(
      r.domains,
      r.meter_brief.empty()
          ? r.meter_reason
          : r.meter_brief +
                " (why: the run's 'greenrl: energy meter' line on stderr, and energy.json)");
  if (r.budget.enabled) {
    // A state whose rung was passed over (the CPU's reduced precision) is named as such.
    std::string state = r.budget.final_state;
    if (FinalRungPassedOver(r.budget)) state += " (its rung passed over)";
    const double over_wh = OverBudgetWh(r);
    const std::string within = over_wh > 0.0 ? "over it" : "within it";
    // A resumed run's events include those of its earlier segments, under the budget each had
    // (a resume after a budget stop needs a larger one): said apart.
    std::vector<double> earlier_wh;
    size_t earlier = 0;
    for (const energy::BudgetEvent& e : r.budget.events) {
      const double wh = e.budget_j / kJoulesPerWh;
      if (std::abs(wh - r.budget.budget_wh) <= 1e-9 * std::abs(r.budget.budget_wh)) continue;
      ++earlier;
      if (std::find(earlier_wh.begin(), earlier_wh.end(), wh) == earlier_wh.end()) {
        earlier_wh.push_back(wh);
      }
    }
    std::string earlier_text;
    if (earlier > 0) {
      std::vector<std::string> amounts;
      for (const double wh : earlier_wh) amounts.push_back(BudgetAmount(wh) + " Wh");
      earlier_text = fmt::format(", {} of them under the earlier budget{} of {}", earlier,
                                 earlier_wh.size() == 1 ? "" : "s", fmt::join(amounts, ", "));
    }
    s += fmt::format("  budget         {} Wh: {} ({} decision{}{}, energy.json lists them)\n",
                     BudgetAmount(r.budget.budget_wh),
                     r.budget.stopped       ? "the budget ended the run: " + r.budget.stop_reason
                     : r.budget.interrupted ? "interrupted " + within + ", state " + state
                                            : "finished " + within + ", final state " + state,
                     r.budget.events.size(), r.budget.events.size() == 1 ? "" : "s", earlier_text);
    // A run may pass its budget by what its estimates missed; the rounded figures above would
    // hide it.
    if (over_wh > 0.0) {
      // A stop that found the budget already used up (a budget below the first iterations'
      // energy) went over before any estimate could act.
      const auto stop = std::find_if(
          r.budget.events.rbegin(), r.budget.events.rend(),
          [](const energy::BudgetEvent& e) { return e.action == energy::BudgetAction::kStop; });
      const bool past_at_stop =
          stop != r.budget.events.rend() && stop->energy_used_j > stop->budget_j;
      s += fmt::format(
          "                 {:.4g} Wh over it: {:.6g} Wh used ({})\n", over_wh,
          r.total_energy_j() / kJoulesPerWh,
          r.budget.stopped && past_at_stop
              ? "already past it when the stop was decided: the iterations before that decision "
                "used more than the budget had left, then what the stop wrote"
          : r.budget.stopped
              ? "the last iteration and what the stop wrote beyond their estimates, and a resumed "
                "segment's start before its first iteration, which no estimate covers"
          : r.budget.interrupted
              ? "the last iteration and what the interruption's checkpoint and reports cost"
              : "what the last iterations, the final evaluation and the reports cost beyond "
                "their estimates");
    }
  }
  s += FormatCarbonLines(r.carbon);
  return s;
}

void WriteEnergyJson(const std::string& path, const RunReport& r) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["algo"] = r.algo;
  j["env_id"] = r.env_id;
  if (!r.update_path.empty()) j["update_path"] = r.update_path;
  j["seed"] = r.seed;
  j["steps"] = r.steps;
  j["wall_time_s"] = r.wall_time_s;
  j["cpu_time_s"] = r.cpu_time_s;
  j["cpu_before_meters_s"] = r.cpu_before_meters_s;
  j["env_non_finite_resets"] = r.env_non_finite_resets;
  j["env_non_finite_outputs"] = r.env_non_finite_outputs;
  j["eval_episodes"] = r.eval_episodes;
  j["eval_mean_return"] =
      r.eval_episodes > 0 ? nlohmann::ordered_json(r.eval_mean_return) : nlohmann::ordered_json();
  j["eval_std_return"] =  // population std over the episodes, as SB3's evaluate_policy
      r.eval_episodes > 0 ? nlohmann::ordered_json(r.eval_std_return) : nlohmann::ordered_json();
  if (!r.eval_note.empty()) j["eval_note"] = r.eval_note;
  if (!r.failure.empty()) j["failure"] = r.failure;
  j["duration_s"] = r.monitor_duration_s;
  j["total_energy_j"] = r.total_energy_j();
  j["total_energy_wh"] = r.total_energy_j() / kJoulesPerWh;
  nlohmann::ordered_json domains = nlohmann::ordered_json::object();
  for (const auto& d : r.domains) {
    domains[d.domain] = {{"energy_j", d.energy_j},
                         {"energy_wh", d.energy_j / kJoulesPerWh},
                         {"additive", energy::IsAdditiveDomain(d.domain)},
                         {"meter", d.meter},
                         {"provenance", d.provenance},
                         {"scope", d.scope},
                         {"shared_with_other_processes", d.shared}};
  }
  j["domains"] = domains;
  nlohmann::ordered_json windows = nlohmann::ordered_json::object();
  for (const auto& w : r.windows) {
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    double total = 0.0;
    for (const auto& [domain, v] : w.energy_j) {
      e[domain] = v;
      if (energy::IsAdditiveDomain(domain)) total += v;
    }
    windows[w.key] = {{"count", w.count},
                      {"duration_s", w.duration_s},
                      {"energy_j", e},
                      {"total_energy_j", total},
                      {"short_windows", w.short_count}};
  }
  j["windows"] = windows;
  nlohmann::ordered_json other = nlohmann::ordered_json::object();
  double other_total = 0.0;
  for (const auto& [domain, v] : r.unattributed_energy_j()) {
    other[domain] = v;
    if (energy::IsAdditiveDomain(domain)) other_total += v;
  }
  j["unattributed"] = {{"energy_j", other}, {"total_energy_j", other_total}};
  nlohmann::ordered_json meter;
  meter["reason"] = r.meter_reason;
  // How often the meters' readings change, s (0: at every reading); windows shorter than this
  // are counted in windows.<key>.short_windows.
  meter["update_period_s"] = r.meter_update_period_s;
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.meter_details) details[k] = v;
  meter["details"] = details;
  j["meter"] = meter;
  nlohmann::ordered_json budget;
  budget["enabled"] = r.budget.enabled;
  budget["budget_wh"] = r.budget.budget_wh;
  budget["final_state"] = r.budget.final_state;
  budget["final_state_passed_over"] = FinalRungPassedOver(r.budget);
  budget["stopped_by_budget"] = r.budget.stopped;
  budget["over_budget_wh"] = OverBudgetWh(r);
  budget["stop_reason"] = r.budget.stop_reason;
  budget["events"] = BudgetEventsOrderedJson(r.budget.events);
  j["budget"] = budget;
  j["early_stop"] =
      r.early_stop.stopped
          ? nlohmann::ordered_json{{"reason", "reward_threshold"},
                                   {"global_step", r.early_stop.global_step},
                                   {"n_timesteps", r.early_stop.n_timesteps},
                                   {"eval_mean_reward", r.early_stop.eval_mean_reward},
                                   {"reward_threshold", r.early_stop.reward_threshold}}
          : nlohmann::ordered_json();
  j["best_eval"] = r.best_eval.global_step >= 0
                       ? nlohmann::ordered_json{{"global_step", r.best_eval.global_step},
                                                {"mean_reward", r.best_eval.mean_reward},
                                                {"checkpoint", r.best_eval.checkpoint}}
                       : nlohmann::ordered_json();
  if (r.trained_agent.checkpoint.empty()) {
    j["trained_agent"] = nlohmann::ordered_json();
  } else {
    const double wh = r.trained_agent.energy_wh;
    auto number_or_null = [](double v) {
      return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
    };
    j["trained_agent"] = {
        {"checkpoint", r.trained_agent.checkpoint},
        {"energy_wh", number_or_null(wh)},
        {"energy_wh_with_this_run", number_or_null(wh + r.total_energy_j() / kJoulesPerWh)}};
  }
  j["sampler"] = {
      {"period_s", r.sampler.period_s},
      {"max_safe_period_s", r.sampler.max_safe_period_s},
      {"rows", r.sampler.rows},
      {"missed_ticks", r.sampler.missed_ticks},
      {"cpu_time_s", r.sampler.cpu_time_s},
      {"cpu_fraction_of_run", r.cpu_time_s > 0 ? r.sampler.cpu_time_s / r.cpu_time_s : 0.0}};
  j["power_limit"] = {{"mode", r.power_limit_mode}, {"log", r.power_limit_log}};
  const auto& c = r.carbon;
  j["carbon"] = {{"energy_kwh", c.energy_kwh},
                 {"pue", c.pue},
                 {"intensity_g_per_kwh", c.intensity_g_per_kwh},
                 {"region", c.region},
                 {"intensity_source", c.intensity_source},
                 {"intensity_is_default", c.intensity_is_default},
                 {"kg_co2e", c.kg_co2e},
                 {"formula", "kg CO2e = kWh x PUE x intensity_g_per_kwh / 1000"}};
  // A path's bytes that are not UTF-8 (a Latin-1 directory name) are written as U+FFFD: JSON is
  // UTF-8 (RFC 8259), and nlohmann's default, throwing, lost a finished run's energy.json.
  WriteFileAtomic(path,
                  j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

MetricsCsv::MetricsCsv(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) {
    throw std::runtime_error("cannot create '" + path + "': " + std::strerror(errno));
  }
}

MetricsCsv::MetricsCsv(const std::string& path, std::vector<std::string> columns)
    : path_(path), columns_(std::move(columns)) {
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr) {
    throw std::runtime_error("cannot open '" + path + "': " + std::strerror(errno));
  }
}

MetricsCsv::~MetricsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsCsv::WriteRow(const std::vector<std::pair<std::string, double>>& row) {
  std::string line;
  if (columns_.empty()) {
    for (const auto& [key, value] : row) {
      columns_.push_back(key);
      line += (line.empty() ? "" : ",") + key;
    }
    line += "\n";
  }
  std::string cells;
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) cells += ",";
    for (const auto& [key, value] : row) {
      if (key == columns_[c]) {
        if (std::isfinite(value)) cells += fmt::format("{}", value);
        break;
      }
    }
  }
  line += cells + "\n";
  AppendWhole(fileno(file_), path_, line);  // whole or not at all: no torn row on a full disk
}

std::pair<std::vector<std::string>, std::vector<std::vector<double>>> ReadMetricsCsv(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read '" + path + "': " + std::strerror(errno));
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  std::string line;
  bool first = true;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    if (first) {
      header = cells;
      first = false;
      continue;
    }
    if (cells.size() != header.size()) {
      if (in.eof()) break;  // a torn last line (no newline) of a killed run: not a row yet
      throw std::runtime_error(fmt::format("{} line {}: {} fields, the header has {}", path,
                                           line_no, cells.size(), header.size()));
    }
    std::vector<double> row;
    for (const auto& c : cells) {
      if (c.empty()) {
        row.push_back(std::nan(""));
        continue;
      }
      size_t used = 0;
      double v = 0.0;
      try {
        v = std::stod(c, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != c.size()) {
        throw std::runtime_error(fmt::format("{} line {}: '{}' is not a number", path, line_no, c));
      }
      row.push_back(v);
    }
    rows.push_back(std::move(row));
  }
  return {header, rows};
}

}  // namespace greenrl::report
