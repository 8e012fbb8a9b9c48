// rapl_meter.cc: powercap zone discovery, counter reads and wraparound (see rapl_meter.h).
#include "greenrl/energy/rapl_meter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

namespace greenrl::energy {
namespace {

namespace fs = std::filesystem;

// Reads a small sysfs file into *text (without trailing whitespace). On failure returns false and
// sets *error_number to errno (EISDIR when a directory stands where the file should be).
bool ReadSmallFile(const std::string& path, std::string* text, int* error_number) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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

// Reads a counter file. On failure sets *why (path, errno text, remedy for permission errors).
bool ReadCounterUj(const std::string& path, std::uint64_t* value, std::string* why) {
  std::string text;
  int error_number = 0;
  if (!ReadSmallFile(path, &text, &error_number)) {
    *why = "cannot read " + path + ": " + std::strerror(error_number);
    if (error_number == EACCES || error_number == EPERM) {
      // ../shared/REFERENCES.md: CVE-2020-8694 fix, mainline 5.10.
      *why +=
          " (energy_uj is readable by root only since Linux 5.10, CVE-2020-8694; run as root, add "
          "a udev or sysfs.conf rule making energy_uj mode 0444, or use a privileged helper)";
    }
    return false;
  }
  if (!ParseUint64(text, value)) {
    *why = "cannot parse " + path + ": '" + text + "' is not a non-negative integer";
    return false;
  }
  return true;
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
void FindZones(const fs::path& dir, int depth, std::set<std::string>* seen,
               std::vector<FoundZone>* zones) {
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
        if (!ReadSmallFile(zone.dir + "/name", &zone.zone_name, &error_number)) {
          zone.zone_name.clear();
        }
        zones->push_back(zone);
      }
      FindZones(entry.path(), depth + 1, seen, zones);
    } else if (base == "intel-rapl" || base == "intel-rapl-mmio") {
      FindZones(entry.path(), depth + 1, seen, zones);
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

// A zone chosen for counting, before its counters are read.
struct Candidate {
  int kind;             // 0 = package, 1 = dram (sort order of domains)
  std::uint64_t index;  // package number
  std::string domain;
  std::string dir;
};

}  // namespace

std::unique_ptr<RaplMeter> RaplMeter::TryCreate(const std::string& root, std::string* why_not) {
  auto fail = [why_not](const std::string& reason) -> std::unique_ptr<RaplMeter> {
    if (why_not != nullptr) *why_not = reason;
    return nullptr;
  };
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return fail(root +
                " does not exist (a kernel without powercap, a VM, or a container that masks "
                "/sys/devices/virtual/powercap: bind-mount it and set energy.rapl_root to it)");
  }
  std::set<std::string> seen;
  std::vector<FoundZone> found;
  FindZones(root, 1, &seen, &found);
  if (found.empty()) return fail(root + " has no intel-rapl zones");

  // MSR zones first, so that an intel-rapl-mmio zone repeating one of them is skipped.
  std::stable_sort(found.begin(), found.end(), [](const FoundZone& a, const FoundZone& b) {
    return std::tie(a.mmio, a.path) < std::tie(b.mmio, b.path);
  });

  // Package number of each top-level package zone, keyed by (mmio, first index).
  std::map<std::pair<bool, std::uint64_t>, std::uint64_t> package_of_top;
  for (const FoundZone& zone : found) {
    std::uint64_t package = 0, die = 0;
    if (zone.path.size() == 1 && ParsePackageName(zone.zone_name, &package, &die)) {
      package_of_top[{zone.mmio, zone.path[0]}] = package;
    }
  }

  std::vector<Candidate> candidates;
  std::set<std::string> domains_taken;
  std::string skipped;
  auto skip = [&skipped](const FoundZone& zone, const std::string& why) {
    if (!skipped.empty()) skipped += "; ";
    skipped +=
        zone.base + " (" + (zone.zone_name.empty() ? "unnamed" : zone.zone_name) + "): " + why;
  };
  std::uint64_t next_top_dram = 0;
  for (const FoundZone& zone : found) {
    std::uint64_t package = 0, die = 0;
    Candidate candidate;
    if (zone.path.size() == 1 && ParsePackageName(zone.zone_name, &package, &die)) {
      if (die != 0) {
        skip(zone, "mirrors the die-0 zone of the same socket");
        continue;
      }
      candidate = {0, package, "cpu:package-" + std::to_string(package), zone.dir};
    } else if (zone.zone_name == "dram") {
      const auto parent = package_of_top.find({zone.mmio, zone.path[0]});
      const std::uint64_t index = (zone.path.size() >= 2 && parent != package_of_top.end())
                                      ? parent->second
                                      : next_top_dram++;
      candidate = {1, index, "dram:" + std::to_string(index), zone.dir};
    } else if (zone.zone_name == "core" || zone.zone_name == "uncore") {
      skip(zone, "part of its package");
      continue;
    } else if (zone.zone_name == "psys") {
      skip(zone, "platform zone containing the packages");
      continue;
    } else {
      skip(zone, "not a package or dram zone");
      continue;
    }
    if (!domains_taken.insert(candidate.domain).second) {
      skip(zone, "repeats " + candidate.domain);
      continue;
    }
    candidates.push_back(candidate);
  }
  const bool has_package = std::any_of(candidates.begin(), candidates.end(),
                                       [](const Candidate& c) { return c.kind == 0; });
  if (!has_package) return fail(root + " has intel-rapl zones but none named package-N");

  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.kind, a.index) < std::tie(b.kind, b.index);
  });
  std::vector<Zone> zones;
  for (const Candidate& candidate : candidates) {
    Zone zone{candidate.domain, candidate.dir, 0, 0, 0};
    std::string why;
    if (!ReadCounterUj(zone.dir + "/energy_uj", &zone.last_uj, &why)) return fail(why);
    if (!ReadCounterUj(zone.dir + "/max_energy_range_uj", &zone.max_energy_range_uj, &why)) {
      return fail(why);
    }
    zones.push_back(zone);
  }
  return std::unique_ptr<RaplMeter>(new RaplMeter(root, std::move(zones), std::move(skipped)));
}

RaplMeter::RaplMeter(std::string root, std::vector<Zone> zones, std::string zones_skipped)
    : root_(std::move(root)), zones_(std::move(zones)), zones_skipped_(std::move(zones_skipped)) {}

std::vector<std::string> RaplMeter::domains() const {
  std::vector<std::string> names;
  names.reserve(zones_.size());
  for (const Zone& zone : zones_) names.push_back(zone.domain);
  return names;
}

std::vector<double> RaplMeter::ReadEnergyJ() {
  std::vector<double> energy_j;
  energy_j.reserve(zones_.size());
  for (Zone& zone : zones_) {
    std::uint64_t current_uj = 0;
    std::string why;
    if (ReadCounterUj(zone.dir + "/energy_uj", &current_uj, &why)) {
      std::uint64_t delta_uj = 0;
      if (current_uj >= zone.last_uj) {
        delta_uj = current_uj - zone.last_uj;
      } else if (zone.last_uj <= zone.max_energy_range_uj) {
        // Wrapped once: up to the wrap point, then from 0 (../shared/REFERENCES.md).
        delta_uj = (zone.max_energy_range_uj - zone.last_uj) + current_uj;
        ++counter_wraps_;
      } else {
        // Previous value beyond the advertised range: count only what is certain.
        delta_uj = current_uj;
        ++counter_wraps_;
      }
      zone.accumulated_uj += delta_uj;
      zone.last_uj = current_uj;
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
                         std::to_string(zone.max_energy_range_uj));
  }
  details.emplace_back("zones_skipped", zones_skipped_.empty() ? "none" : zones_skipped_);
  details.emplace_back("counter_wraps", std::to_string(counter_wraps_));
  details.emplace_back("read_errors", std::to_string(read_errors_));
  return details;
}

}  // namespace greenrl::energy
