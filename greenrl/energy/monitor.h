// monitor.h: EnergyMonitor, energy and time in named, possibly overlapping windows ("rollout",
// "update", "eval", ...) over a set of meters, plus per-key totals and totals since start
// (Zeus' begin/end windows: ../shared/STYLE.md point 7, ../shared/DESIGN.md "Energy and carbon").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "greenrl/core/clock.h"
#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// Whether a domain's energy is added into totals (the naming rule for domains that overlap
// others, so meters need no extra interface to say it):
// - "<parent>/<part>" (any name containing '/') is a part of domain <parent> and is not added,
//   e.g. RAPL's "cpu:package-0/core" and "cpu:package-0/uncore";
// - "psys:<K>" is a platform zone that contains the CPU packages (and more) and is not added;
// - every other domain ("cpu:package-0", "dram:0", "gpu:0", "cpu:process") is additive: meters
//   must report additive domains that do not overlap each other.
// Non-additive domains are still read, windowed and reported per domain; only sums skip them.
bool IsAdditiveDomain(const std::string& domain);

// Time and energy of one window (or a sum of windows).
struct Measurement {
  double duration_s = 0.0;                 // wall-clock seconds (Clock::NowS)
  std::map<std::string, double> energy_j;  // joules per domain; every monitored domain present

  // Returns: sum of energy_j over the additive domains (IsAdditiveDomain), J. Parts of a domain
  // and platform zones (psys) are skipped, so the sum counts each joule once when the additive
  // domains do not overlap (the monitor's meters should not measure the same energy twice).
  double total_energy_j() const;
};

// Sum over every closed window of one key.
struct WindowTotals {
  std::int64_t count = 0;        // windows closed
  Measurement sum;               // summed duration_s and energy_j per domain
  std::int64_t short_count = 0;  // of them, shorter than EnergyMonitor::update_period_s()
};

// One monitored domain and what its figures are.
struct DomainInfo {
  std::string domain;  // "cpu:package-0", "gpu:0", "cpu:process"
  std::string meter;   // EnergyMeter::name() of the meter that reports it
  Provenance provenance;
  Scope scope;
  bool additive = true;  // IsAdditiveDomain(domain): whether sums and totals include it
  std::string identity;  // EnergyMeter::domain_identities(): the hardware it reads on its machine
};

// Cumulative energy of every monitored domain at one instant (what the sampler thread records).
struct CumulativeReading {
  double time_s = 0.0;           // the now_s given to SampleAll, s
  std::vector<double> energy_j;  // J since the monitor's construction, domains() order
};

// Energy and time per named window over several meters.
//
// Each BeginWindow/EndWindow/Total call calls the sync hook (if any), then reads the clock and
// every meter once. A window's measurement is the difference between its end and begin readings,
// so windows of different keys may overlap or nest freely; one key has at most one open window.
// A window shorter than update_period_s() (a counter that changes every 1 ms or 100 ms) reads 0 J
// or a whole counter step: it is counted in WindowTotals::short_count, and the first one of each
// key is warned about (../shared/STYLE.md point 7). Sums over many windows stay unbiased when the
// windows do not keep time with the counter, and Total() is exact to the counter's step.
// Thread-safety: all methods are safe to call from several threads (one mutex); the sync hook runs
// outside the mutex.
class EnergyMonitor {
 public:
  // Device synchronisation hook, called before each reading so that queued device work is counted
  // in the window that launched it (e.g. a CUDA synchronize injected by the trainer; energy itself
  // never links torch).
  using SyncFn = std::function<void()>;
  // Where warnings go (one line, no "greenrl warning: " prefix); empty: stderr with that prefix.
  using WarnFn = std::function<void(const std::string& message)>;

  // Args: meters: the meters to read, non-null, with domain names unique across all of them.
  //       clock: time source; must outlive the monitor (SteadyClock::Instance() or a FakeClock).
  //       sync: optional device synchronisation hook.
  //       warn: optional warning sink (the short-window warning).
  // Takes the starting reading that Total() is measured from.
  // Errors: GREENRL_CHECK on a null meter or a domain name repeated across meters.
  EnergyMonitor(std::vector<std::unique_ptr<EnergyMeter>> meters, const Clock& clock,
                SyncFn sync = {}, WarnFn warn = {});

  // Opens window `key`. Errors: GREENRL_CHECK if `key` is already open.
  void BeginWindow(const std::string& key);

  // Closes window `key` and adds it to the totals of `key`; a window shorter than
  // update_period_s() is counted in short_count, and the first of its key is warned about.
  // Returns: its duration_s and energy_j per domain.
  // Errors: GREENRL_CHECK if `key` is not open.
  Measurement EndWindow(const std::string& key);

  // Returns: the longest EnergyMeter::update_period_s() of the meters, s; 0 when every meter
  //   follows each reading.
  double update_period_s() const { return update_period_s_; }

  // Returns: whether window `key` is open.
  bool IsWindowOpen(const std::string& key) const;

  // Returns: the sum over closed windows of `key` (count 0 and zeros if none).
  WindowTotals TotalsFor(const std::string& key) const;

  // Returns: the sums of every key that has had a closed window.
  std::map<std::string, WindowTotals> AllWindowTotals() const;

  // Reads the meters now. Returns: duration_s and energy_j per domain since construction.
  Measurement Total() const;

  // For the sampler thread: calls every meter's Sample(now_s) (power-integrating meters take their
  // sample), then reads every meter once, all under the monitor's mutex. Does not call the sync
  // hook (the sampler must not block on device queues).
  // Args: now_s: the time of the sample on the monitor's clock, s.
  // Returns: now_s and the cumulative energy per domain since construction (domains() order).
  // Thread-safety: safe to call concurrently with windows and Total().
  CumulativeReading SampleAll(double now_s);

  // Returns: every monitored domain, meters in constructor order, domains in meter order.
  const std::vector<DomainInfo>& domains() const { return domains_; }

  // Returns: the meters (for their name() and Details() in energy.json); owned by the monitor.
  std::vector<const EnergyMeter*> meters() const;

 private:
  // Clock time and cumulative energy of every domain (domains_ order) at one instant.
  struct Reading {
    double time_s = 0.0;
    std::vector<double> energy_j;
  };

  // Calls the sync hook (outside the lock).
  void Sync() const;
  // Reads all meters (domains_ order); caller holds mutex_.
  std::vector<double> ReadMetersLocked() const;
  // Reads the clock and all meters; caller holds mutex_.
  Reading ReadLocked() const;
  // end - begin as a Measurement.
  Measurement Diff(const Reading& begin, const Reading& end) const;

  const std::vector<std::unique_ptr<EnergyMeter>> meters_;
  const Clock* clock_;
  const SyncFn sync_;
  const WarnFn warn_;
  double update_period_s_ = 0.0;
  std::string update_period_meter_;  // the meter whose period update_period_s_ is
  std::vector<DomainInfo> domains_;
  mutable std::mutex mutex_;
  Reading start_;                                // guarded by mutex_
  std::map<std::string, Reading> open_windows_;  // guarded by mutex_
  std::map<std::string, WindowTotals> totals_;   // guarded by mutex_
};

}  // namespace greenrl::energy
