// nvml_meter.h: an EnergyMeter for NVIDIA GPUs over NVML, loaded with dlopen at run time (no
// link-time dependency, ../shared/DESIGN.md), plus the pieces power_limit.h shares with it: the
// loaded library, the NVML declarations greenrl uses and the CUDA_VISIBLE_DEVICES mapping.
//
// Facts used here (../shared/REFERENCES.md, "NVML"; NVIDIA's NVML API reference):
// - load "libnvidia-ml.so.1"; init, device count and handle-by-index carry _v2 suffixes;
// - nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded, Volta and newer;
//   NOT_SUPPORTED (3) on older parts. This meter then integrates nvmlDeviceGetPowerUsage
//   (milliwatts, whole board) sampled by the sampler thread, and labels the figures `integrated`;
// - NVML device indices ignore CUDA_VISIBLE_DEVICES: visible devices are mapped by UUID or PCI
//   bus id (MapCudaVisibleDevices below);
// - nvmlDeviceGetPciInfo is exported as nvmlDeviceGetPciInfo_v3 (nvml.h maps the plain name to it;
//   _v2 is the fallback, same struct); the process list is nvmlDeviceGetComputeRunningProcesses_v3
//   (fallback _v2), whose entries are {pid, usedGpuMemory, gpuInstanceId, computeInstanceId};
// - no per-MIG-slice energy: MIG entries in CUDA_VISIBLE_DEVICES are not metered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "greenrl/energy/integrated_meter.h"
#include "greenrl/energy/meter.h"

namespace greenrl::energy {

// What to do when NVML cannot be loaded, as `greenrl meters` and a run's meter line both say it.
inline constexpr const char* kNvmlLoadFix =
    "no NVIDIA GPU: nothing to fix; otherwise install the NVIDIA driver (it ships "
    "libnvidia-ml.so.1), or in a container run with the NVIDIA Container Toolkit (--gpus), or set "
    "energy.nvml_library to its path";

// The fix for a library that did not load from `path` (energy.nvml_library): kNvmlLoadFix for a
// name dlopen searches for (no '/'); for a path the user gave, to check that path, as no GPU's
// absence explains it. No errors.
inline std::string NvmlLoadFix(const std::string& path) {
  if (path.find('/') == std::string::npos) return kNvmlLoadFix;
  return "energy.nvml_library names " + path +
         ", which did not load: give the driver's libnvidia-ml.so.1 (its path, or the name alone "
         "for the system's search)";
}

// The subset of nvml.h that greenrl calls, declared from NVIDIA's API reference (no nvml.h is
// needed to build). Shared with the fake library in testing/fake_nvml.cc.
namespace nvml_abi {

using Return = int;                    // nvmlReturn_t (a C enum)
using Device = struct nvmlDevice_st*;  // nvmlDevice_t (opaque handle)

inline constexpr Return kSuccess = 0;                // NVML_SUCCESS
inline constexpr Return kErrorUninitialized = 1;     // NVML_ERROR_UNINITIALIZED
inline constexpr Return kErrorInvalidArgument = 2;   // NVML_ERROR_INVALID_ARGUMENT
inline constexpr Return kErrorNotSupported = 3;      // NVML_ERROR_NOT_SUPPORTED
inline constexpr Return kErrorNoPermission = 4;      // NVML_ERROR_NO_PERMISSION
inline constexpr Return kErrorNotFound = 6;          // NVML_ERROR_NOT_FOUND
inline constexpr Return kErrorInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
inline constexpr Return kErrorDriverNotLoaded = 9;   // NVML_ERROR_DRIVER_NOT_LOADED
inline constexpr Return kErrorGpuIsLost = 15;        // NVML_ERROR_GPU_IS_LOST
inline constexpr Return kErrorUnknown = 999;         // NVML_ERROR_UNKNOWN

inline constexpr unsigned kUuidBufferSize = 96;      // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kNameBufferSize = 96;      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kPciBusIdBufferSize = 32;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
inline constexpr unsigned kPciBusIdLegacySize = 16;  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE

// nvmlPciInfo_t (filled by nvmlDeviceGetPciInfo_v3 / _v2).
struct PciInfo {
  char bus_id_legacy[kPciBusIdLegacySize];  // "domain:bus:device.function", 4-digit domain
  unsigned int domain;                      // PCI domain
  unsigned int bus;                         // PCI bus, 0..255
  unsigned int device;                      // PCI device (slot), 0..31
  unsigned int pci_device_id;               // combined device and vendor id
  unsigned int pci_sub_system_id;           // subsystem id
  char bus_id[kPciBusIdBufferSize];         // "00000000:3B:00.0", 8-digit domain
};

// The process records nvmlDeviceGetComputeRunningProcesses_v3 / _v2 fill: an array whose
// record size depends on the driver, not on the symbol's version. nvmlProcessInfo_v1_t {pid,
// usedGpuMemory} is 16 bytes, _v2_t (+ gpuInstanceId, computeInstanceId) 24, and R535-era
// drivers' _v3_t (+ usedGpuCcProtectedMemory) 32; later drivers fill _v3 with the 24-byte
// record again (nvitop PRs #79 and #226, go-nvml issue #75). Every layout starts with the
// unsigned int pid (host PID namespace), so callers size the buffer for kMaxProcessRecordBytes
// per record and find the record size the driver used (NvmlMeter::RefreshSharing).
inline constexpr std::size_t kMaxProcessRecordBytes = 32;

// Entry points, with the symbol each is resolved from. Required ones are never null in a loaded
// NvmlLibrary; optional ones are null when the library does not export them.
struct Api {
  Return (*init)();                                            // nvmlInit_v2 (required)
  Return (*shutdown)();                                        // nvmlShutdown (required)
  const char* (*error_string)(Return);                         // nvmlErrorString (required)
  Return (*get_count)(unsigned int*);                          // nvmlDeviceGetCount_v2 (req.)
  Return (*get_handle_by_index)(unsigned int, Device*);        // ..HandleByIndex_v2 (required)
  Return (*get_uuid)(Device, char*, unsigned int);             // nvmlDeviceGetUUID (required)
  Return (*get_pci_info)(Device, PciInfo*);                    // ..GetPciInfo_v3|_v2 (required)
  Return (*get_name)(Device, char*, unsigned int);             // nvmlDeviceGetName (required)
  Return (*get_total_energy_mj)(Device, unsigned long long*);  // ..TotalEnergyConsumption
  Return (*get_power_mw)(Device, unsigned int*);               // nvmlDeviceGetPowerUsage
  // ..Processes_v3|_v2, into records of 16, 24 or 32 bytes (kMaxProcessRecordBytes).
  Return (*get_compute_processes)(Device, unsigned int*, void*);
  Return (*get_power_limit_mw)(Device, unsigned int*);                   // ..PowerManagementLimit
  Return (*get_power_limit_constraints_mw)(Device, unsigned int*, unsigned int*);  // min, max
  Return (*get_power_default_limit_mw)(Device, unsigned int*);  // ..PowerManagementDefaultLimit
  Return (*set_power_limit_mw)(Device, unsigned int);           // ..SetPowerManagementLimit
};

}  // namespace nvml_abi

// The default library name, resolved by the dynamic loader's search path.
inline constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";

// How to find NVML and the environment that selects devices.
struct NvmlOptions {
  // Path or soname passed to dlopen (energy.nvml_library); tests pass the fake library's path.
  std::string library_path = kDefaultNvmlLibrary;
  // Reads an environment variable (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER): std::nullopt when
  // unset. Null means the process environment (std::getenv). Tests inject their own.
  std::function<std::optional<std::string>(const std::string& name)> get_env;
  // Receives each warning (one line, no newline). Empty means "greenrl warning: <text>" on stderr.
  std::function<void(const std::string& message)> warn;
};

// A loaded (dlopen) and initialised (nvmlInit_v2) NVML. Destruction calls nvmlShutdown and then
// dlclose; NVML counts init/shutdown pairs, so several NvmlLibrary objects may coexist.
// Thread-safety: NVML itself is thread-safe; this object is immutable after TryLoad.
class NvmlLibrary {
 public:
  // Loads `path`, resolves the entry points (nvml_abi::Api) and calls nvmlInit_v2.
  // Returns: the library, or null with *why_not (if non-null) set when dlopen fails (the loader's
  //   message and a hint), a required entry point is missing, or nvmlInit_v2 fails (its code and
  //   nvmlErrorString text). Never throws for these.
  static std::shared_ptr<NvmlLibrary> TryLoad(const std::string& path, std::string* why_not);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // The resolved entry points.
  const nvml_abi::Api& api() const { return api_; }
  // Returns: "<nvmlErrorString(code)> (NVML error <code>)", e.g. "Not Supported (NVML error 3)".
  std::string ErrorText(nvml_abi::Return code) const;
  // The path given to dlopen.
  const std::string& path() const { return path_; }
  // Which symbols were bound where NVML exports several versions, e.g. "nvmlDeviceGetPciInfo_v3".
  const std::string& pci_info_symbol() const { return pci_info_symbol_; }
  const std::string& processes_symbol() const { return processes_symbol_; }

 private:
  struct DlCloser {
    void operator()(void* handle) const;
  };
  NvmlLibrary() = default;

  std::unique_ptr<void, DlCloser> handle_;
  nvml_abi::Api api_{};
  bool initialized_ = false;
  std::string path_;
  std::string pci_info_symbol_;
  std::string processes_symbol_;
};

// Identity of one GPU as NVML enumerates it (NVML index order).
struct GpuIdentity {
  std::string uuid;        // "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"
  std::string pci_bus_id;  // "00000000:3B:00.0"
  unsigned int pci_domain = 0;
  unsigned int pci_bus = 0;
  unsigned int pci_device = 0;
};

// Result of mapping CUDA_VISIBLE_DEVICES onto NVML devices.
struct CudaVisibleMapping {
  // NVML indices (into the `devices` argument) in CUDA visible order: visible device k is
  // devices[nvml_indices[k]] and is metered as domain "gpu:<k>".
  std::vector<std::size_t> nvml_indices;
  // Human-readable remarks: why the list ended early, and whether integer entries are exact.
  std::vector<std::string> notes;
};

// Maps CUDA_VISIBLE_DEVICES onto NVML devices, as the CUDA runtime would.
//
// NVML indices ignore CUDA_VISIBLE_DEVICES (../shared/REFERENCES.md), so:
// - unset: every device, in PCI bus id order;
// - "GPU-..." entries match a UUID, or a unique UUID prefix as CUDA accepts;
// - integer entries index the devices in PCI bus id order. CUDA's default order is FASTEST_FIRST,
//   so this is exact only with CUDA_DEVICE_ORDER=PCI_BUS_ID (or identical GPUs); otherwise a note
//   says so;
// - an empty, "-1", malformed, out-of-range, unknown or ambiguous UUID, MIG ("MIG-...") or
//   repeated entry ends the list, as CUDA ignores everything from the first invalid entry on
//   (repeats: greenrl's choice); a note names the entry;
// - set but empty: no device is visible.
// Args: cuda_visible_devices, cuda_device_order: the variables' values, nullopt when unset;
//       devices: identities in NVML index order.
// Returns: the mapping; never throws.
CudaVisibleMapping MapCudaVisibleDevices(const std::optional<std::string>& cuda_visible_devices,
                                         const std::optional<std::string>& cuda_device_order,
                                         const std::vector<GpuIdentity>& devices);

// One GPU this process can see, opened through NVML.
struct NvmlGpu {
  std::string domain;           // "gpu:<visible index>"
  unsigned int nvml_index = 0;  // NVML's own index (ignores CUDA_VISIBLE_DEVICES)
  nvml_abi::Device handle = nullptr;
  GpuIdentity identity;
  std::string name;  // "NVIDIA H100 80GB HBM3"
};

// The GPUs this process can see, in CUDA visible order, with the library that opened them.
struct NvmlVisibleGpus {
  std::shared_ptr<NvmlLibrary> library;  // keeps the handles valid
  std::vector<NvmlGpu> gpus;             // at least one
  std::string cuda_visible_devices;      // the variable's value, or "(unset)"
  std::vector<std::string> notes;        // mapping notes and devices NVML could not open
};

// Loads NVML (options.library_path) and opens the GPUs selected by CUDA_VISIBLE_DEVICES
// (options.get_env; MapCudaVisibleDevices).
// Returns: the GPUs, or nullopt with *why_not set (if non-null) when loading fails, NVML reports
//   no device, or CUDA_VISIBLE_DEVICES selects none. A device whose handle, UUID, PCI info or name
//   cannot be read is skipped with a note. Never throws for these.
std::optional<NvmlVisibleGpus> OpenNvmlVisibleGpus(const NvmlOptions& options,
                                                   std::string* why_not);

// Cumulative energy per visible GPU ("gpu:0", "gpu:1", ... in CUDA visible order), scope kDevice
// (whole boards, every process on them).
//
// Per device: the total-energy counter (mJ) when it is supported, else power (mW) sampled in
// Sample(now_s) and integrated with the trapezoid rule (PowerIntegrator). provenance() is
// kMeasured when every device has the counter, else kIntegrated (the weaker label covers all);
// Details() says which method each device uses.
// Counter reads that fail keep the last value; a counter that goes backwards (driver reload) is
// re-based, its new value (the energy since the reload) counted and the first reset per device
// warned of; neither throws. Integrated figures cover the span from the first to the last sample.
// Sharing: the compute process list is checked at creation and at most every
// kProcessPollPeriodS in Sample(); any PID other than this process's marks the device shared.
// Thread-safety: not thread-safe; EnergyMonitor serialises calls.
class NvmlMeter final : public EnergyMeter {
 public:
  // Least time between two process-list checks in Sample(), s.
  static constexpr double kProcessPollPeriodS = 10.0;
  // How often the driver updates a GPU's energy counter and power reading, s: the upper end of
  // "every 20-100 ms" (PETSc's PetscLogGpuEnergyMeter manual page, on
  // nvmlDeviceGetTotalEnergyConsumption; Zeus 0.6.1's release notes report windows that read 0 J).
  static constexpr double kUpdatePeriodS = 0.1;

  // Opens the visible GPUs (OpenNvmlVisibleGpus), probes each counter and takes a baseline.
  // Returns: the meter, or null with *why_not set (if non-null) when the library is missing,
  //   nvmlInit_v2 fails (with nvmlErrorString's text), there are no devices, CUDA_VISIBLE_DEVICES
  //   selects none, or no selected device reports energy or power. Never throws for these.
  static std::unique_ptr<NvmlMeter> TryCreate(const NvmlOptions& options, std::string* why_not);

  std::string name() const override { return "nvml"; }
  std::vector<std::string> domains() const override;
  Provenance provenance() const override;
  Scope scope() const override { return Scope::kDevice; }
  // Returns: kUpdatePeriodS (counter and integrated devices alike).
  double update_period_s() const override { return kUpdatePeriodS; }
  // Returns: each GPU's UUID ("GPU-..."), domains() order.
  std::vector<std::string> domain_identities() const override;

  // Returns: J per domain since creation (counter devices) or integrated over the samples so far
  //   (power devices). Never throws; failed reads keep the last value and are counted.
  std::vector<double> ReadEnergyJ() override;

  // Returns: "library", "pci_info_symbol", "processes_symbol", "cuda_visible_devices",
  //   "device_notes", then per domain "<domain>.name", ".uuid", ".pci_bus_id", ".nvml_index",
  //   ".method" ("counter" | "integrated power"), ".method_reason" (why not the counter),
  //   ".shared_with_other_processes" ("yes" | "no" | "unknown"), ".other_pids",
  //   ".power_samples" (integrated only), ".read_errors", ".counter_resets", and "pid_note".
  std::vector<std::pair<std::string, std::string>> Details() const override;

  // Samples power of integrated devices at now_s (s, monitor clock) and, at most every
  // kProcessPollPeriodS, refreshes the process lists.
  void Sample(double now_s) override;

 private:
  enum class Sharing { kUnknown, kNo, kYes };

  struct Gpu {
    NvmlGpu info;
    bool has_counter = false;
    std::string method_reason;               // why power is integrated instead of the counter
    unsigned long long last_counter_mj = 0;  // last raw counter value, mJ
    unsigned long long accumulated_mj = 0;   // energy since creation, mJ
    PowerIntegrator integrator;              // integrated devices
    Sharing sharing = Sharing::kUnknown;
    std::string sharing_error;             // why the list could not be read
    std::vector<unsigned int> other_pids;  // last seen, sorted
    std::int64_t read_errors = 0;
    std::int64_t read_errors_in_a_row = 0;  // warned about once, at kReadErrorsToWarn
    std::int64_t counter_resets = 0;
  };
  // Counter reads that fail this many times in a row are warned about (once per GPU): the
  // domain's energy stops growing until a read succeeds (e.g. NVML_ERROR_GPU_IS_LOST).
  static constexpr std::int64_t kReadErrorsToWarn = 3;

  NvmlMeter(NvmlVisibleGpus visible, std::vector<Gpu> gpus);
  void RefreshSharing(Gpu* gpu);

  std::shared_ptr<NvmlLibrary> library_;
  std::function<void(const std::string& message)> warn_;
  std::string cuda_visible_devices_;
  std::vector<std::string> notes_;
  std::vector<Gpu> gpus_;
  bool polled_processes_ = false;
  double last_process_poll_s_ = 0.0;
};

}  // namespace greenrl::energy
