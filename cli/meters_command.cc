// greenrl meters: every energy source on this machine, which one a run would use, why the
// others are not used and how to fix that; --watch N prints the chosen meters' readings every
// second for N seconds so a user can see the counters move.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cli/commands.h"
#include "greenrl/core/clock.h"
#include "greenrl/core/errors.h"
#include "greenrl/energy/select.h"
#include "greenrl/energy/sources.h"
#include "greenrl/train/run_config.h"

namespace greenrl::cli {

namespace {
struct MetersArgs {
  std::vector<std::string> sets;
  int watch_s = 0;
};

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "-" : s;
}
}  // namespace

Runner RegisterMeters(CLI::App& app) {
  auto args = std::make_shared<MetersArgs>();
  CLI::App* cmd = app.add_subcommand("meters", "List energy sources and the one a run would use");
  cmd->add_option("--set", args->sets,
                  "energy.* settings, e.g. --set energy.powercap_root=DIR (repeatable)");
  cmd->add_option("--watch", args->watch_s, "print readings every second for N seconds");
  return [args]() {
    if (args->watch_s < 0) {
      throw ConfigError("--watch", std::to_string(args->watch_s), "a number of seconds >= 0");
    }
    const Config config = train::LoadRunConfig("", args->sets, std::nullopt);  // typos, values
    // Any other key is valid for a run but has no effect here; accepting it would mislead.
    static const std::vector<std::string> kRead = {
        "energy.meter",      "energy.powercap_root", "energy.watts_per_core",
        "energy.hwmon_root", "energy.gpu",           "energy.nvml_library"};
    for (const std::string& set : args->sets) {
      const std::string key = set.substr(0, set.find('='));
      if (std::find(kRead.begin(), kRead.end(), key) == kRead.end()) {
        throw ConfigError("--set", set, "a key that meters reads: " + Join(kRead));
      }
    }
    energy::SourceOptions options;
    options.powercap_root = config.GetString("energy.powercap_root");
    options.hwmon_root = config.GetString("energy.hwmon_root");
    options.nvml_library = config.GetString("energy.nvml_library");
    options.watts_per_core = config.GetFloat("energy.watts_per_core");
    options.meter = config.GetString("energy.meter");
    fmt::print("greenrl meters: energy sources on this machine\n");
    for (const energy::SourceStatus& s : energy::ListEnergySources(options)) {
      fmt::print("  {:<20} {:<18} {}\n", s.name, s.would_use ? "USED" : energy::ToString(s.state),
                 Join(s.domains));
      fmt::print("      {}\n", s.reason);
      if (!s.fix.empty() && !s.would_use) fmt::print("      fix: {}\n", s.fix);
    }
    energy::MeterChoice choice;
    try {
      choice = energy::SelectMeter(train::MeterOptionsFrom(config));
    } catch (const ConfigError& e) {  // energy.meter rapl where RAPL is unreadable
      std::fflush(stdout);            // the sources listed above first
      fmt::print(stderr, "greenrl: error: {} (a run would not start)\n", e.what());
      return 2;
    }
    fmt::print("a run would use: {}\n                 {}\n", choice.reason, choice.gpu_reason);
    if (args->watch_s == 0) return 0;

    std::vector<std::unique_ptr<energy::EnergyMeter>> meters;
    meters.push_back(std::move(choice.meter));
    if (choice.gpu_meter) meters.push_back(std::move(choice.gpu_meter));
    const Clock& clock = SteadyClock::Instance();
    std::vector<std::vector<double>> last;
    double last_s = clock.NowS();
    for (auto& m : meters) {
      m->Sample(last_s);
      last.push_back(m->ReadEnergyJ());
    }
    for (int tick = 1; tick <= args->watch_s; ++tick) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const double now_s = clock.NowS();
      std::string line = fmt::format("t={:>4}s", tick);
      for (size_t k = 0; k < meters.size(); ++k) {
        meters[k]->Sample(now_s);
        const std::vector<double> e = meters[k]->ReadEnergyJ();
        const std::vector<std::string> domains = meters[k]->domains();
        for (size_t d = 0; d < e.size(); ++d) {
          line += fmt::format("  {} {:.3f} J ({:.2f} W, {})", domains[d], e[d],
                              (e[d] - last[k][d]) / (now_s - last_s),
                              energy::ToString(meters[k]->provenance()));
        }
        last[k] = e;
      }
      last_s = now_s;
      fmt::print("{}\n", line);
      std::fflush(stdout);
    }
    return 0;
  };
}

}  // namespace greenrl::cli
