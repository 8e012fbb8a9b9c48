// rapl_meter.cc: powercap zone discovery, counter reads and wraparound (see rapl_meter.h).
#include "greenrl/energy/rapl_meter.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

namespace greenrl::energy {
namespace {

namespace fs = std::filesystem;

// Opens `path` through `open_file` (or ::open when empty).
int OpenForRead(const RaplOptions& options, const std::string& path) {
  if (options.open_file) return options.open_file(path);
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

// Reads a small sysfs file into *text (without trailing whitespace). On failure returns false and
// sets *error_number to errno (EISDIR when a directory stands where the file should be).
bool ReadSmallFile(const RaplOptions& options, const std::string& path, std::string* text,
                   int* error_number) {
  const int fd = OpenForRead(options, path);
  if (fd < 0) {
    *error_number = errno;
    return false;
  }
  char buffer[256];
  text->clear();
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      *error_number = errno;
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    text->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  while (!text->empty() && (text->back() == '\n' || text->back() == ' ' || text->back() == '\t')) {
    text->pop_back();
  }
  return true;
}

// Parses a whole decimal unsigned 64-bit number.
bool ParseUint64(const std::string& text, std::uint64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t result = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (result > (UINT64_MAX - digit) / 10) return false;
    result = result * 10 + digit;
  }
  *value = result;
  return true;
}

// Reads a counter file. On failure sets *why (path, errno text, remedy for permission errors) and
// *failure (kPermissionDenied or kUnreadable).
bool ReadCounterUj(const RaplOptions& options, const std::string& path, std::uint64_t* value,
                   std::string* why, RaplFailure* failure) {
  std::string text;
  int error_number = 0;
  if (!ReadSmallFile(options, path, &text, &error_number)) {
    *why = "cannot read " + path + ": " + std::strerror(error_number);
    *failure = RaplFailure::kUnreadable;
    if (error_number == EACCES || error_number == EPERM) {
      // ../shared/REFERENCES.md: CVE-2020-8694 fix, mainline 5.10.
      *why +=
          " (energy_uj is readable by root only since Linux 5.10, CVE-2020-8694; run as root, add "
          "a udev or sysfs.conf rule making energy_uj mode 0444, or use a privileged helper)";
      *failure = RaplFailure::kPermissionDenied;
    }
    return false;
  }
  if (!ParseUint64(text, value)) {
    *why = "cannot parse " + path + ": '" + text + "' is not a non-negative integer";
    *failure = RaplFailure::kUnreadable;
    return false;
  }
  return true;
}

// The largest readable, non-zero constraint_<i>_max_power_uw of a zone directory, W; 0 if none.
// Sets *source to the file it came from.
double ReadMaxPowerW(const RaplOptions& options, const std::string& dir, std::string* source) {
  double max_power_w = 0.0;
  for (int i = 0; i < 8; ++i) {
    const std::string path = dir + "/constraint_" + std::to_string(i) + "_max_power_uw";
    std::string text;
    int error_number = 0;
    std::uint64_t power_uw = 0;
    if (!ReadSmallFile(options, path, &text, &error_number)) {
      if (error_number == ENOENT) break;  // constraints are numbered without gaps
      continue;
    }
    if (!ParseUint64(text, &power_uw) || power_uw == 0) continue;
    const double power_w = static_cast<double>(power_uw) / 1e6;
    if (power_w > max_power_w) {
      max_power_w = power_w;
      *source = path;
    }
  }
  return max_power_w;
}

// A zone directory found under the root, e.g. "intel-rapl:0:1" -> indices {0, 1}.
struct FoundZone {
  std::string dir;
  std::string base;                 // directory name
  bool mmio = false;                // intel-rapl-mmio control type
  std::vector<std::uint64_t> path;  // indices after the control type
  std::string zone_name;            // contents of the `name` file ("" if unreadable)
};

// Parses "intel-rapl:0:1" / "intel-rapl-mmio:0". Returns false for anything else.
bool ParseZoneDirName(const std::string& base, bool* mmio, std::vector<std::uint64_t>* path) {
  static const std::string kMsr = "intel-rapl:";
  static const std::string kMmio = "intel-rapl-mmio:";
  std::string rest;
  if (base.compare(0, kMmio.size(), kMmio) == 0) {
    *mmio = true;
    rest = base.substr(kMmio.size());
  } else if (base.compare(0, kMsr.size(), kMsr) == 0) {
    *mmio = false;
    rest = base.substr(kMsr.size());
  } else {
    return false;
  }
  path->clear();
  size_t start = 0;
  while (true) {
    const size_t colon = rest.find(':', start);
    const std::string part = rest.substr(start, colon == std::string::npos ? colon : colon - start);
    std::uint64_t index = 0;
    if (!ParseUint64(part, &index)) return false;
    path->push_back(index);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return true;
}

// Walks `dir` for zone directories: the flat /sys/class/powercap layout (all zones side by side,
// as symlinks) and the nested /sys/devices/virtual/powercap/intel-rapl/intel-rapl:0/intel-rapl:0:0
// layout. Only zone and control-type directories are entered, so sysfs back-links (device,
// subsystem) are never followed. Zones are deduplicated by directory name.
void FindZones(const RaplOptions& options, const fs::path& dir, int depth,
               std::set<std::string>* seen, std::vector<FoundZone>* zones) {
  if (depth > 3) return;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return;
  for (const fs::directory_entry& entry : it) {
    const std::string base = entry.path().filename().string();
    std::error_code dir_ec;
    if (!entry.is_directory(dir_ec)) continue;
    FoundZone zone;
    if (ParseZoneDirName(base, &zone.mmio, &zone.path)) {
      if (seen->insert(base).second) {
        zone.dir = entry.path().string();
        zone.base = base;
        int error_number = 0;
        if (!ReadSmallFile(options, zone.dir + "/name", &zone.zone_name, &error_number)) {
          zone.zone_name.clear();
        }
        zones->push_back(zone);
      }
      FindZones(options, entry.path(), depth + 1, seen, zones);
    } else if (base == "intel-rapl" || base == "intel-rapl-mmio") {
      FindZones(options, entry.path(), depth + 1, seen, zones);
    }
  }
}

// Parses "package-N" and "package-N-die-D" (die = 0 when absent).
bool ParsePackageName(const std::string& name, std::uint64_t* package, std::uint64_t* die) {
  static const std::string kPrefix = "package-";
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return false;
  const std::string rest = name.substr(kPrefix.size());
  const size_t die_pos = rest.find("-die-");
  *die = 0;
  if (die_pos == std::string::npos) return ParseUint64(rest, package);
  return ParseUint64(rest.substr(0, die_pos), package) &&
         ParseUint64(rest.substr(die_pos + 5), die);
}

// Sort order of domain kinds: additive first, so totals-only consumers see a stable prefix.
enum Kind { kPackageKind = 0, kDramKind = 1, kPartKind = 2, kPsysKind = 3 };

// A zone chosen for reporting, before its counters are read.
struct Candidate {
  Kind kind;
  std::uint64_t index;  // package number (psys: order among psys zones)
  std::string part;     // "core" / "uncore" for kPartKind, else ""
  std::string domain;
  std::string dir;
  std::string package_dir;  // directory of the zone's package ("" if none)
  std::string base;         // zone directory name, for zones_skipped
  std::string zone_name;
};

// Appends a "base (name): why" entry to zones_skipped (entries separated by "; ").
void AppendSkipped(const std::string& base, const std::string& zone_name, const std::string& why,
                   std::string* skipped) {
  if (!skipped->empty()) *skipped += "; ";
  *skipped += base + " (" + (zone_name.empty() ? "unnamed" : zone_name) + "): " + why;
}

void WarnOnStderr(const std::string& message) {
  std::fprintf(stderr, "greenrl warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

RaplProbe RaplMeter::Probe(const std::string& root, const RaplOptions& options) {
  RaplProbe probe;
  auto fail = [&probe](RaplFailure failure, const std::string& reason) -> RaplProbe {
    probe.failure = failure;
    probe.why_not = reason;
    return std::move(probe);
  };
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    if (fs::exists(root, ec)) {  // a file given as the tree
      return fail(RaplFailure::kMissingRoot,
                  root +
                      " is not a directory (energy.powercap_root names the powercap tree, "
                      "e.g. /sys/class/powercap)");
    }
    return fail(RaplFailure::kMissingRoot,
                root +
                    " does not exist (a kernel without powercap, a VM, or a container that masks "
                    "/sys/devices/virtual/powercap: bind-mount it and set energy.powercap_root to it)");
  }
  std::set<std::string> seen;
  std::vector<FoundZone> found;
  FindZones(options, root, 1, &seen, &found);
  if (found.empty()) return fail(RaplFailure::kNoZones, root + " has no intel-rapl zones");

  // MSR zones first, so that an intel-rapl-mmio zone repeating one of them is skipped.
  std::stable_sort(found.begin(), found.end(), [](const FoundZone& a, const FoundZone& b) {
    return std::tie(a.mmio, a.path) < std::tie(b.mmio, b.path);
  });

  // Package number and directory of each top-level package zone, keyed by (mmio, first index).
  std::map<std::pair<bool, std::uint64_t>, std::pair<std::uint64_t, std::string>> package_of_top;
  for (const FoundZone& zone : found) {
    std::uint64_t package = 0, die = 0;
    if (zone.path.size() == 1 && ParsePackageName(zone.zone_name, &package, &die) && die == 0) {
      package_of_top[{zone.mmio, zone.path[0]}] = {package, zone.dir};
    }
  }

  std::vector<Candidate> candidates;
  std::set<std::string> domains_taken;
  std::string skipped;
  std::uint64_t next_top_dram = 0;
  std::uint64_t next_psys = 0;
  for (const FoundZone& zone : found) {
    std::uint64_t package = 0, die = 0;
    const auto parent = package_of_top.find({zone.mmio, zone.path[0]});
    const bool has_parent = zone.path.size() >= 2 && parent != package_of_top.end();
    Candidate candidate;
    candidate.dir = zone.dir;
    candidate.base = zone.base;
    candidate.zone_name = zone.zone_name;
    if (zone.path.size() == 1 && ParsePackageName(zone.zone_name, &package, &die)) {
      if (die != 0) {
        AppendSkipped(zone.base, zone.zone_name, "mirrors the die-0 zone of the same socket",
                      &skipped);
        continue;
      }
      candidate.kind = kPackageKind;
      candidate.index = package;
      candidate.domain = "cpu:package-" + std::to_string(package);
      candidate.package_dir = zone.dir;
    } else if (zone.zone_name == "dram") {
      candidate.kind = kDramKind;
      candidate.index = has_parent ? parent->second.first : next_top_dram++;
      candidate.domain = "dram:" + std::to_string(candidate.index);
      if (has_parent) candidate.package_dir = parent->second.second;
    } else if (zone.zone_name == "core" || zone.zone_name == "uncore") {
      if (!has_parent) {
        AppendSkipped(zone.base, zone.zone_name, "part of a package that was not found", &skipped);
        continue;
      }
      candidate.kind = kPartKind;
      candidate.index = parent->second.first;
      candidate.part = zone.zone_name;
      candidate.domain = "cpu:package-" + std::to_string(candidate.index) + "/" + zone.zone_name;
      candidate.package_dir = parent->second.second;
    } else if (zone.zone_name == "psys") {
      candidate.kind = kPsysKind;
      candidate.index = next_psys;
      candidate.domain = "psys:" + std::to_string(candidate.index);
    } else {
      AppendSkipped(zone.base, zone.zone_name, "not a package, dram, core, uncore or psys zone",
                    &skipped);
      continue;
    }
    if (!domains_taken.insert(candidate.domain).second) {
      AppendSkipped(zone.base, zone.zone_name, "repeats " + candidate.domain, &skipped);
      continue;
    }
    if (candidate.kind == kPsysKind) ++next_psys;
    candidates.push_back(candidate);
  }
  const bool has_package = std::any_of(candidates.begin(), candidates.end(),
                                       [](const Candidate& c) { return c.kind == kPackageKind; });
  if (!has_package) {
    return fail(RaplFailure::kNoPackage, root + " has intel-rapl zones but none named package-N");
  }

  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.kind, a.index, a.part) < std::tie(b.kind, b.index, b.part);
  });
  std::vector<Zone> zones;
  for (const Candidate& candidate : candidates) {
    Zone zone;
    zone.domain = candidate.domain;
    zone.dir = candidate.dir;
    zone.additive = candidate.kind == kPackageKind || candidate.kind == kDramKind;
    std::string why;
    RaplFailure failure = RaplFailure::kNone;
    if (!ReadCounterUj(options, zone.dir + "/energy_uj", &zone.last_uj, &why, &failure)) {
      // An unreadable package counter fails RAPL (packages are read first, so a tree that is
      // unreadable as a whole names a package). Any other zone is skipped: a dram counter with
      // a warning, since the totals then cover the packages alone, as on machines without dram
      // zones.
      if (candidate.kind == kPackageKind) return fail(failure, why);
      if (candidate.kind == kDramKind) {
        const std::string message = "RAPL: " + candidate.domain + " skipped (" + why +
                                    "): the energy totals cover the CPU packages without DRAM";
        if (options.warn) {
          options.warn(message);
        } else {
          WarnOnStderr(message);
        }
      }
      AppendSkipped(candidate.base, candidate.zone_name, why, &skipped);
      continue;
    }
    std::string range_why;
    zone.range_known = ReadCounterUj(options, zone.dir + "/max_energy_range_uj",
                                     &zone.max_energy_range_uj, &range_why, &failure);
    if (!zone.range_known) zone.range_error = range_why;
    zone.max_power_w = ReadMaxPowerW(options, zone.dir, &zone.max_power_source);
    if (zone.max_power_w == 0.0 && !candidate.package_dir.empty()) {
      zone.max_power_w = ReadMaxPowerW(options, candidate.package_dir, &zone.max_power_source);
    }
    if (zone.max_power_w == 0.0) {
      zone.max_power_w = kDefaultMaxPowerW;
      zone.max_power_source = "default (no readable constraint_<i>_max_power_uw)";
    }
    zones.push_back(zone);
  }
  probe.meter.reset(new RaplMeter(root, std::move(zones), std::move(skipped), options));
  return probe;
}

std::unique_ptr<RaplMeter> RaplMeter::TryCreate(const std::string& root, std::string* why_not) {
  RaplProbe probe = Probe(root);
  if (probe.meter == nullptr && why_not != nullptr) *why_not = probe.why_not;
  return std::move(probe.meter);
}

RaplMeter::RaplMeter(std::string root, std::vector<Zone> zones, std::string zones_skipped,
                     RaplOptions options)
    : root_(std::move(root)),
      zones_(std::move(zones)),
      zones_skipped_(std::move(zones_skipped)),
      options_(std::move(options)) {
  if (!options_.now_s) {
    options_.now_s = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  const double now_s = options_.now_s();
  for (Zone& zone : zones_) zone.last_read_s = now_s;  // the baseline reading was just taken
  max_safe_poll_period_s_ = std::numeric_limits<double>::infinity();
  for (const Zone& zone : zones_) {
    const double range_j = zone.range_known ? static_cast<double>(zone.max_energy_range_uj) / 1e6
                                            : kFallbackEnergyRangeJ;
    max_safe_poll_period_s_ = std::min(max_safe_poll_period_s_, range_j / zone.max_power_w);
  }
}

void RaplMeter::Warn(const std::string& message) const {
  if (options_.warn) {
    options_.warn(message);
  } else {
    WarnOnStderr(message);
  }
}

std::vector<std::string> RaplMeter::domains() const {
  std::vector<std::string> names;
  names.reserve(zones_.size());
  for (const Zone& zone : zones_) names.push_back(zone.domain);
  return names;
}

std::vector<bool> RaplMeter::additive() const {
  std::vector<bool> result;
  result.reserve(zones_.size());
  for (const Zone& zone : zones_) result.push_back(zone.additive);
  return result;
}

std::vector<double> RaplMeter::ReadEnergyJ() {
  std::vector<double> energy_j;
  energy_j.reserve(zones_.size());
  for (Zone& zone : zones_) {
    std::uint64_t current_uj = 0;
    std::string why;
    RaplFailure failure = RaplFailure::kNone;
    if (ReadCounterUj(options_, zone.dir + "/energy_uj", &current_uj, &why, &failure)) {
      const double now_s = options_.now_s();
      std::uint64_t delta_uj = 0;
      if (current_uj >= zone.last_uj) {
        delta_uj = current_uj - zone.last_uj;
      } else if (!zone.range_known) {
        // The wrap point is unknown, so the energy between the previous read and the wrap cannot
        // be known either: drop this read pair rather than guess (the total never decreases).
        if (wraps_dropped_ == 0) {
          Warn("RAPL counter " + zone.dir + "/energy_uj went down (" +
               std::to_string(zone.last_uj) + " -> " + std::to_string(current_uj) +
               " uJ) while max_energy_range_uj is unreadable (" + zone.range_error +
               "); the energy of that read period is dropped, here and at any later wrap");
        }
        ++wraps_dropped_;
      } else if (zone.last_uj <= zone.max_energy_range_uj) {
        // Wrapped once: up to the wrap point, then from 0 (../shared/REFERENCES.md), unless that
        // is more energy than the zone can draw in the time since the last read.
        const std::uint64_t wrap_uj = (zone.max_energy_range_uj - zone.last_uj) + current_uj;
        const double plausible_uj = kMaxPlausiblePowerFactor * zone.max_power_w *
                                    (std::max(now_s - zone.last_read_s, 0.0) + 1.0) * 1e6;
        if (static_cast<double>(wrap_uj) <= plausible_uj) {
          delta_uj = wrap_uj;
          ++counter_wraps_;
        } else {
          if (counter_resets_ == 0) {
            Warn(fmt::format(
                "RAPL counter {}/energy_uj went down ({} -> {} uJ) {:.3f} s after the previous "
                "read; a wrap would mean {:.0f} J, more than {:g} x its {:g} W can draw, so the "
                "counter was reset and only the {} uJ since counts",
                zone.dir, zone.last_uj, current_uj, now_s - zone.last_read_s,
                static_cast<double>(wrap_uj) / 1e6, kMaxPlausiblePowerFactor, zone.max_power_w,
                current_uj));
          }
          delta_uj = current_uj;
          ++counter_resets_;
        }
      } else {
        // Previous value beyond the advertised range: count only what is certain.
        delta_uj = current_uj;
        ++counter_wraps_;
      }
      zone.accumulated_uj += delta_uj;
      zone.last_uj = current_uj;
      zone.last_read_s = now_s;
    } else {
      ++read_errors_;
    }
    // Division (not * 1e-6) so whole-microjoule totals convert exactly where doubles allow.
    energy_j.push_back(static_cast<double>(zone.accumulated_uj) / 1e6);
  }
  return energy_j;
}

std::vector<std::pair<std::string, std::string>> RaplMeter::Details() const {
  std::vector<std::pair<std::string, std::string>> details;
  details.emplace_back("root", root_);
  for (const Zone& zone : zones_) {
    details.emplace_back(zone.domain + ".energy_uj_path", zone.dir + "/energy_uj");
    details.emplace_back(zone.domain + ".max_energy_range_uj",
                         zone.range_known ? std::to_string(zone.max_energy_range_uj)
                                          : "unknown (" + zone.range_error + ")");
    details.emplace_back(zone.domain + ".max_power_w",
                         fmt::format("{} ({})", zone.max_power_w, zone.max_power_source));
    details.emplace_back(zone.domain + ".additive", zone.additive ? "true" : "false");
  }
  details.emplace_back("max_safe_poll_period_s", fmt::format("{}", max_safe_poll_period_s_));
  details.emplace_back("zones_skipped", zones_skipped_.empty() ? "none" : zones_skipped_);
  details.emplace_back("counter_wraps", std::to_string(counter_wraps_));
  details.emplace_back("counter_resets", std::to_string(counter_resets_));
  details.emplace_back("wraps_dropped", std::to_string(wraps_dropped_));
  details.emplace_back("read_errors", std::to_string(read_errors_));
  return details;
}

}  // namespace greenrl::energy
