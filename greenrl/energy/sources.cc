// sources.cc: probes of RAPL, NVML, amd_energy and the estimator (see sources.h).
#include "greenrl/energy/sources.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "greenrl/energy/estimator_meter.h"
#include "greenrl/energy/nvml_meter.h"

namespace greenrl::energy {
namespace {

namespace fs = std::filesystem;

// Reads a small sysfs file into *text without trailing whitespace. Returns: 0, or the errno of
// the failed open / read.
int ReadSysfsFile(const std::string& path, std::string* text) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  text->clear();
  char buffer[256];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error_number = errno;
      ::close(fd);
      return error_number;
    }
    if (n == 0) break;
    text->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  while (!text->empty() && std::isspace(static_cast<unsigned char>(text->back()))) {
    text->pop_back();
  }
  return 0;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// ---- RAPL -------------------------------------------------------------------------------------

// What a readable RAPL tree leaves to guesses, and the zones it skips, as a "; ..." tail for the
// source's reason (from RaplMeter::Details): the safe poll period rests on the guesses.
std::string RaplGuessesAndSkips(const EnergyMeter& meter) {
  std::vector<std::string> no_range;
  std::vector<std::string> no_power;
  std::string skipped = "none";
  for (const auto& [key, value] : meter.Details()) {
    const std::string domain = key.substr(0, key.rfind('.'));
    if (key == domain + ".max_energy_range_uj" && StartsWith(value, "unknown")) {
      no_range.push_back(domain);
    } else if (key == domain + ".max_power_w" && value.find("(default") != std::string::npos) {
      no_power.push_back(domain);
    } else if (key == "zones_skipped") {
      skipped = value;
    }
  }
  auto join = [](const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  std::vector<std::string> guesses;
  if (!no_range.empty()) {
    guesses.push_back(fmt::format("a {:g} J counter range for {} (max_energy_range_uj unreadable)",
                                  RaplMeter::kFallbackEnergyRangeJ, join(no_range)));
  }
  if (!no_power.empty()) {
    guesses.push_back(fmt::format("{:g} W at most for {} (no readable constraint_<i>_max_power_uw)",
                                  RaplMeter::kDefaultMaxPowerW, join(no_power)));
  }
  std::string tail;
  if (!guesses.empty()) tail += "; the period assumes " + join(guesses);
  if (skipped != "none") tail += "; skipped: " + skipped;
  return tail;
}

SourceStatus ProbeRapl(const std::string& root) {
  SourceStatus status;
  status.name = "rapl";
  RaplOptions options;
  options.warn = [](const std::string&) {};  // one read only: no wrap can be seen
  RaplProbe probe = RaplMeter::Probe(root, options);
  status.reason = probe.why_not;
  switch (probe.failure) {
    case RaplFailure::kNone:
      status.available = true;
      status.state = SourceState::kOk;
      status.domains = probe.meter->domains();
      {  // whole seconds; below 1 s (a tiny range, or a test's tree) two digits, not "0 s"
        const double period = probe.meter->MaxSafePollPeriodS();
        status.reason = fmt::format(
            "{} domain(s) readable under {} (measured, whole sockets; psys, core and uncore are "
            "reported but not added); poll at least every {} s so no counter wraps twice{}",
            status.domains.size(), root,
            period >= 1.0 ? fmt::format("{:.0f}", period) : fmt::format("{:.2g}", period),
            RaplGuessesAndSkips(*probe.meter));
      }
      break;
    case RaplFailure::kMissingRoot:
      status.state = SourceState::kMissing;
      status.fix =
          "on bare metal, use a kernel with powercap and the intel_rapl_msr module (Intel; AMD "
          "Zen since Linux 5.11); in a container, bind-mount the host's "
          "/sys/devices/virtual/powercap (e.g. -v /sys/devices/virtual/powercap:/host/powercap:ro) "
          "and set energy.powercap_root=/host/powercap";
      break;
    case RaplFailure::kNoZones:
      status.state = SourceState::kMissing;
      status.fix =
          "load the intel_rapl_msr module (modprobe intel_rapl_msr); AMD Zen needs Linux 5.11+; "
          "VMs usually expose no RAPL";
      break;
    case RaplFailure::kNoPackage:
      status.state = SourceState::kUnsupported;
      status.fix = "none: this machine exposes no package-level RAPL zone (the estimator is used)";
      break;
    case RaplFailure::kPermissionDenied:
      status.state = SourceState::kPermissionDenied;
      status.fix =
          "run as root, or make energy_uj world-readable with a udev rule (e.g. ACTION==\"add\", "
          "SUBSYSTEM==\"powercap\", RUN+=\"/bin/chmod 0444 /sys%p/energy_uj\") or a sysfs.conf "
          "line (mode class/powercap/intel-rapl:0/energy_uj = 0444), or use a privileged helper";
      break;
    case RaplFailure::kUnreadable:
      status.state = SourceState::kUnsupported;
      status.fix = "check the zone files named above (a broken bind mount or a copied tree)";
      break;
  }
  return status;
}

// ---- NVML -------------------------------------------------------------------------------------

struct DlCloser {
  void operator()(void* handle) const {
    if (handle != nullptr) ::dlclose(handle);
  }
};
using LibraryHandle = std::unique_ptr<void, DlCloser>;

// nvml.h signatures, called by name (no headers): nvmlReturn_t is a C enum (int).
using NvmlInitFn = int (*)();
using NvmlShutdownFn = int (*)();
using NvmlErrorStringFn = const char* (*)(int);
using NvmlDeviceGetCountFn = int (*)(unsigned int*);

constexpr int kNvmlErrorNoPermission = 4;     // NVML_ERROR_NO_PERMISSION
constexpr int kNvmlErrorDriverNotLoaded = 9;  // NVML_ERROR_DRIVER_NOT_LOADED

template <typename Fn>
Fn LookUp(void* handle, const char* symbol) {
  return reinterpret_cast<Fn>(::dlsym(handle, symbol));
}

SourceStatus ProbeNvml(const std::string& library) {
  SourceStatus status;
  status.name = "nvml";
  ::dlerror();
  LibraryHandle handle(::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (handle == nullptr) {
    const char* error = ::dlerror();
    status.state = SourceState::kMissing;
    status.reason = "cannot load " + library + ": " + (error != nullptr ? error : "unknown error");
    status.fix = NvmlLoadFix(library);
    return status;
  }
  const auto init = LookUp<NvmlInitFn>(handle.get(), "nvmlInit_v2");
  if (init == nullptr) {
    status.state = SourceState::kUnsupported;
    status.reason = library + " has no nvmlInit_v2 (not NVML, or a very old driver)";
    status.fix = "install a current NVIDIA driver";
    return status;
  }
  const int init_result = init();
  if (init_result != 0) {
    const auto error_string = LookUp<NvmlErrorStringFn>(handle.get(), "nvmlErrorString");
    const char* text = error_string != nullptr ? error_string(init_result) : nullptr;
    status.reason = fmt::format("nvmlInit_v2 returned {} ({})", init_result,
                                text != nullptr ? text : "no nvmlErrorString");
    if (init_result == kNvmlErrorNoPermission) {
      status.state = SourceState::kPermissionDenied;
      status.fix = "give this user access to the /dev/nvidia* device files (or run as root)";
    } else {
      status.state = SourceState::kUnsupported;
      status.fix = init_result == kNvmlErrorDriverNotLoaded
                       ? "load the NVIDIA kernel driver (nvidia-smi must work)"
                       : "check that nvidia-smi works (driver and library versions must match)";
    }
    return status;
  }
  unsigned int count = 0;
  const auto get_count = LookUp<NvmlDeviceGetCountFn>(handle.get(), "nvmlDeviceGetCount_v2");
  const bool counted = get_count != nullptr && get_count(&count) == 0;
  if (const auto shutdown = LookUp<NvmlShutdownFn>(handle.get(), "nvmlShutdown")) shutdown();
  if (counted && count == 0) {
    status.state = SourceState::kMissing;
    status.reason = "NVML initialised but reports no GPU";
    status.fix = "none needed without a GPU";
    return status;
  }
  for (unsigned int i = 0; i < count; ++i) status.domains.push_back("gpu:" + std::to_string(i));
  status.available = true;
  status.would_use = true;
  status.state = SourceState::kOk;
  status.reason = counted ? fmt::format(
                                "NVML initialised: {} GPU(s), NVML indices (which ignore "
                                "CUDA_VISIBLE_DEVICES)",
                                count)
                          : "NVML initialised (device count unavailable)";
  return status;
}

// ---- amd_energy (hwmon) -----------------------------------------------------------------------

SourceStatus ProbeAmdEnergy(const std::string& hwmon_root) {
  SourceStatus status;
  status.name = "amd_energy (hwmon)";
  status.state = SourceState::kMissing;
  // ../shared/REFERENCES.md: removed from mainline in 2021, shipped out of tree.
  const std::string not_present_fix =
      "none needed: amd_energy is an out-of-tree driver (removed from mainline in 2021); RAPL "
      "reads AMD Zen sockets since Linux 5.11";
  std::error_code ec;
  if (!fs::is_directory(hwmon_root, ec)) {
    status.reason = hwmon_root + " does not exist";
    status.fix = not_present_fix;
    return status;
  }
  std::vector<fs::path> devices;
  for (const fs::directory_entry& entry : fs::directory_iterator(hwmon_root, ec)) {
    std::error_code dir_ec;
    if (entry.is_directory(dir_ec)) devices.push_back(entry.path());
  }
  std::sort(devices.begin(), devices.end());

  std::vector<std::string> sockets, cores;
  std::string device_dir, denied_path, error_text;
  for (const fs::path& device : devices) {
    std::vector<std::string> device_sockets, device_cores;
    for (int n = 1; n < 4096; ++n) {
      const std::string prefix = device.string() + "/energy" + std::to_string(n);
      std::string label;
      if (ReadSysfsFile(prefix + "_label", &label) != 0) break;
      const bool is_socket = StartsWith(label, "Esocket");
      if (!is_socket && !StartsWith(label, "Ecore")) continue;
      std::string value;
      const int error_number = ReadSysfsFile(prefix + "_input", &value);
      if (error_number == EACCES || error_number == EPERM) {
        denied_path = prefix + "_input";
        continue;
      }
      if (error_number != 0) {
        error_text = "cannot read " + prefix + "_input: " + std::strerror(error_number);
        continue;
      }
      (is_socket ? device_sockets : device_cores).push_back(label);
    }
    if (!device_sockets.empty() || !device_cores.empty()) {
      device_dir = device.string();
      sockets = std::move(device_sockets);
      cores = std::move(device_cores);
      break;
    }
  }
  if (sockets.empty() && cores.empty()) {
    if (!denied_path.empty()) {
      status.state = SourceState::kPermissionDenied;
      status.reason = "cannot read " + denied_path + ": " + std::strerror(EACCES);
      status.fix = "run as root, or a udev rule making the energyN_input files mode 0444";
    } else if (!error_text.empty()) {
      status.state = SourceState::kUnsupported;
      status.reason = error_text;
      status.fix = "check the amd_energy module (lsmod | grep amd_energy)";
    } else {
      status.reason = "no hwmon device under " + hwmon_root +
                      " has energyN_input counters labelled Esocket* / Ecore*";
      status.fix = not_present_fix;
    }
    return status;
  }
  std::sort(sockets.begin(), sockets.end());
  std::sort(cores.begin(), cores.end());
  status.domains = sockets;
  if (!cores.empty()) {
    status.domains.push_back(
        fmt::format("{}..{} ({} cores)", cores.front(), cores.back(), cores.size()));
  }
  status.available = true;
  status.would_use = false;
  status.state = SourceState::kOk;
  status.reason = fmt::format(
      "{} socket and {} core counter(s) readable under {}; not used: greenrl has no amd_energy "
      "meter, and RAPL reads the same sockets on AMD Zen (Linux 5.11+)",
      sockets.size(), cores.size(), device_dir);
  return status;
}

// ---- estimator --------------------------------------------------------------------------------

SourceStatus EstimatorStatus(bool rapl_available, double watts_per_core, const std::string& meter) {
  SourceStatus status;
  status.name = "estimator";
  status.available = true;
  status.would_use = meter == "estimator" || (meter == "auto" && !rapl_available);
  status.state = SourceState::kOk;
  status.domains = {"cpu:process"};
  const char* why = meter == "estimator" ? "; used: energy.meter=estimator"
                    : meter == "rapl"    ? "; not used: energy.meter=rapl asks for RAPL"
                    : rapl_available     ? "; not used: RAPL measures the CPU packages"
                                         : "; used: RAPL is not readable";
  status.reason = fmt::format(
      "always available: this process's CPU time x {} W per busy core ({}energy.watts_per_core), "
      "an estimate{}",
      watts_per_core, watts_per_core == kDefaultWattsPerCore ? "Green Algorithms default; " : "",
      why);
  return status;
}

}  // namespace

std::string ToString(SourceState state) {
  switch (state) {
    case SourceState::kOk:
      return "ok";
    case SourceState::kMissing:
      return "missing";
    case SourceState::kPermissionDenied:
      return "permission denied";
    case SourceState::kUnsupported:
      return "unsupported";
  }
  return "unknown";
}

std::vector<SourceStatus> ListEnergySources(const SourceOptions& options) {
  std::vector<SourceStatus> statuses;
  statuses.push_back(ProbeRapl(options.powercap_root));
  SourceStatus& rapl = statuses.back();
  rapl.would_use = rapl.available && options.meter != "estimator";
  if (rapl.available && options.meter == "estimator") {
    rapl.reason += "; not used: energy.meter=estimator";
  }
  const bool rapl_available = rapl.available;
  statuses.push_back(ProbeNvml(options.nvml_library));
  statuses.push_back(ProbeAmdEnergy(options.hwmon_root));
  statuses.push_back(EstimatorStatus(rapl_available, options.watts_per_core, options.meter));
  return statuses;
}

}  // namespace greenrl::energy
