// rapl_meter.h: an EnergyMeter over Linux powercap RAPL counters (intel-rapl; also AMD Zen since
// Linux 5.8, in practice 5.11, as ../shared/REFERENCES.md says), read from sysfs: cumulative CPU
// package and DRAM energy, provenance "measured", plus the core / uncore parts of each package and
// the psys platform zone as informational domains.
//
// Facts used here (../shared/REFERENCES.md, "Linux powercap (RAPL)", from the kernel's
// Documentation/power/powercap/powercap.rst):
// - zones are directories "intel-rapl:<i>" (depth 1) and "intel-rapl:<i>:<j>" (subzones) under
//   /sys/class/powercap; "intel-rapl-mmio:<i>" zones repeat MSR zones on some Intel parts;
// - the zone index is not the socket id: the `name` file is (package-N, package-N-die-D, core,
//   uncore, dram, psys);
// - package contains core and uncore; dram is NOT part of the package value; psys contains the
//   packages. So only package and dram zones are additive (summed into totals), each once; core,
//   uncore and psys are reported under names that EnergyMonitor never adds (IsAdditiveDomain in
//   monitor.h): "cpu:package-N/core", "cpu:package-N/uncore", "psys:K";
// - package-N-die-D zones (Zen1/Zen2) mirror one socket counter: only die 0 is counted;
// - energy_uj is cumulative microjoules and wraps at max_energy_range_uj:
//   delta = (max - prev) + cur across a wrap. One read pair detects at most one wrap, so read more
//   often than max_energy_range_uj / max power (about 1,540 s for Intel at 170 W, 274 s for AMD at
//   240 W): MaxSafePollPeriodS();
// - energy_uj is root-only since the CVE-2020-8694 fix (Linux 5.10, backported to 4.4+ stable);
//   max_energy_range_uj is root-only on some systems too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// Why RaplMeter::Probe returned no meter.
enum class RaplFailure {
  kNone,              // a meter was created
  kMissingRoot,       // the powercap root directory does not exist
  kNoZones,           // the root holds no intel-rapl / intel-rapl-mmio zone
  kNoPackage,         // zones exist but none is named package-N
  kPermissionDenied,  // energy_uj of a package zone: EACCES / EPERM
  kUnreadable,        // energy_uj of a package zone: another read or parse error
};

// Test seams and the warning sink of a RaplMeter.
struct RaplOptions {
  // Opens a sysfs file for reading. Returns: a file descriptor, or -1 with errno set. Empty means
  // ::open(path, O_RDONLY | O_CLOEXEC). Tests inject failures (EACCES) that root cannot see.
  std::function<int(const std::string& path)> open_file;
  // Receives each warning (one line, no newline). Empty means "greenrl warning: <text>" on stderr.
  std::function<void(const std::string& message)> warn;
  // Seconds on a monotonic clock, for the time between reads (the wrap check of ReadEnergyJ).
  // Empty means std::chrono::steady_clock.
  std::function<double()> now_s;
};

class RaplMeter;

// What RaplMeter::Probe found.
struct RaplProbe {
  std::unique_ptr<RaplMeter> meter;          // null on failure
  RaplFailure failure = RaplFailure::kNone;  // kNone iff meter is non-null
  std::string why_not;                       // on failure: what failed and how to fix it
};

// Cumulative RAPL energy per CPU package ("cpu:package-N") and DRAM ("dram:N", N = the package the
// dram zone belongs to), additive; and, not additive, "cpu:package-N/core", "cpu:package-N/uncore"
// (parts of package N) and "psys:K" (the K-th platform zone, which contains the packages).
// Domain order: packages, dram, package parts (by package, core before uncore), psys.
// Provenance kMeasured, scope kPackage (whole sockets, all processes).
// Thread-safety: not thread-safe; EnergyMonitor serialises calls.
class RaplMeter final : public EnergyMeter {
 public:
  // The sysfs class directory where powercap zones appear.
  static constexpr const char* kDefaultRoot = "/sys/class/powercap";

  // Maximum power assumed for a zone whose constraint_<i>_max_power_uw files are all unreadable or
  // 0, W: the highest socket power in ../shared/REFERENCES.md (AMD, 240 W). Sockets drawing more
  // exist (up to ~500 W); their zones normally publish constraint_1_max_power_uw.
  static constexpr double kDefaultMaxPowerW = 240.0;

  // Counter range assumed while max_energy_range_uj is unreadable, J: 2^32 x 2^-16 J = 65,536 J,
  // the shortest wrap in ../shared/REFERENCES.md (AMD's finer unit: about 274 s at 240 W).
  static constexpr double kFallbackEnergyRangeJ = 65536.0;

  // A wrap implying more than this multiple of a zone's max power is taken as a counter reset.
  // greenrl's margin, from no datasheet: a zone's max_power_uw is its limit, so a real wrap
  // implies at most about 1x; 4x leaves room for a short interval's timing error.
  static constexpr double kMaxPlausiblePowerFactor = 4.0;
  // How often the hardware updates energy_uj, s: about every 1 ms (Haehnel, Doebel, Voelp and
  // Haertig, SIGMETRICS Performance Evaluation Review 40(3), 2012, measured on Sandy Bridge).
  static constexpr double kCounterUpdatePeriodS = 1e-3;

  // Finds the zones under `root` and takes a baseline reading.
  // Args: root: a powercap directory: /sys/class/powercap (flat symlinks), or a copy / bind mount
  //         of /sys/devices/virtual/powercap (nested zone directories); both layouts are walked.
  //       options: file-open seam and warning sink.
  // Returns: the meter, or a failure kind and reason when `root` does not exist, holds no
  //   intel-rapl zone, holds no package zone, or energy_uj of a package zone cannot be read
  //   (permission errors name the remedy: run as root, a udev / sysfs.conf rule making energy_uj
  //   0444, or a privileged helper). Never throws for these.
  //   Not failures: an unreadable max_energy_range_uj (the range is then unknown: see
  //   ReadEnergyJ()); an unreadable dram / core / uncore / psys counter (that zone is skipped
  //   and listed in Details() "zones_skipped"; a dram zone with a warning through options.warn,
  //   as the totals then leave DRAM out).
  static RaplProbe Probe(const std::string& root, const RaplOptions& options = {});

  // Probe() with default options. Returns: the meter, or null with the reason in *why_not (if
  // non-null).
  static std::unique_ptr<RaplMeter> TryCreate(const std::string& root, std::string* why_not);

  std::string name() const override { return "rapl"; }
  std::vector<std::string> domains() const override;
  Provenance provenance() const override { return Provenance::kMeasured; }
  Scope scope() const override { return Scope::kPackage; }
  // Returns: kCounterUpdatePeriodS.
  double update_period_s() const override { return kCounterUpdatePeriodS; }

  // Returns: joules per domain since construction, never decreasing. A counter that fails to read
  // keeps its last value (counted as "read_errors" in Details()). A value below the previous one
  // is a wrap: with max_energy_range_uj known, (max - prev) + cur is added; with it unreadable the
  // read pair adds nothing (the energy of that one period is lost, counted as "wraps_dropped") and
  // the first such drop is warned about once. A drop whose wrap would mean more than
  // kMaxPlausiblePowerFactor x the zone's max power over the time since the previous read (plus
  // one second) cannot be a wrap: the counter was reset (a driver reload, a restored VM), so only
  // the current value is added (counted as "counter_resets", the first one warned about).
  std::vector<double> ReadEnergyJ() override;

  // Returns: whether each domain (domains() order) is additive: package and dram true; core,
  // uncore and psys false. Always equals IsAdditiveDomain(domain) of monitor.h.
  std::vector<bool> additive() const;

  // The longest read period that still detects every wrap of every counter, s: the minimum over
  // zones of range / max power, where range is max_energy_range_uj (kFallbackEnergyRangeJ while
  // unreadable) and max power is the largest readable constraint_<i>_max_power_uw of the zone,
  // else of its package, else kDefaultMaxPowerW. Poll (sample) at least this often; the Sampler
  // warns when its period is longer.
  double MaxSafePollPeriodS() const { return max_safe_poll_period_s_; }

  // Returns: "root", per domain "<domain>.energy_uj_path", "<domain>.max_energy_range_uj" (or
  // "unknown (<why>)"), "<domain>.max_power_w" (and where it came from), "<domain>.additive";
  // "max_safe_poll_period_s", "zones_skipped" (zone, its name and why it is not reported),
  // "counter_wraps", "counter_resets", "wraps_dropped", "read_errors".
  std::vector<std::pair<std::string, std::string>> Details() const override;

 private:
  // One reported zone.
  struct Zone {
    std::string domain;                     // "cpu:package-0", "dram:0", "psys:0", ...
    std::string dir;                        // zone directory holding energy_uj
    bool additive = true;                   // summed into totals
    bool range_known = false;               // max_energy_range_uj was readable
    std::string range_error;                // why it was not
    std::uint64_t max_energy_range_uj = 0;  // wrap point of energy_uj, microjoules
    double max_power_w = 0.0;               // power used for the poll-period bound, W
    std::string max_power_source;           // file it came from, or "default"
    std::uint64_t last_uj = 0;              // last energy_uj read, microjoules
    double last_read_s = 0.0;               // when last_uj was read (options.now_s), s
    std::uint64_t accumulated_uj = 0;       // energy since construction, microjoules
  };

  RaplMeter(std::string root, std::vector<Zone> zones, std::string zones_skipped,
            RaplOptions options);

  // Emits `message` through options_.warn or on stderr.
  void Warn(const std::string& message) const;

  std::string root_;
  std::vector<Zone> zones_;
  std::string zones_skipped_;
  RaplOptions options_;
  double max_safe_poll_period_s_ = 0.0;
  std::int64_t counter_wraps_ = 0;
  std::int64_t counter_resets_ = 0;
  std::int64_t wraps_dropped_ = 0;
  std::int64_t read_errors_ = 0;
};

}  // namespace greenrl::energy
