// nvml_meter.cc: NVML loading, CUDA_VISIBLE_DEVICES mapping and the NVML meter (see nvml_meter.h).
#include "greenrl/energy/nvml_meter.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>

namespace greenrl::energy {
namespace {

// Resolves `symbol` from `handle` into *function (null when absent).
template <typename Function>
void Bind(void* handle, const char* symbol, Function* function) {
  *function = reinterpret_cast<Function>(::dlsym(handle, symbol));
}

// Binds the first of `symbols` the library exports; returns its name, or "" when none.
template <typename Function>
std::string BindFirst(void* handle, std::initializer_list<const char*> symbols,
                      Function* function) {
  for (const char* symbol : symbols) {
    Bind(handle, symbol, function);
    if (*function != nullptr) return symbol;
  }
  return "";
}

std::string Trim(const std::string& text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// A string from a fixed-size C buffer that may lack its terminator.
std::string FromBuffer(const char* buffer, std::size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string joined;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined += separator;
    joined += parts[i];
  }
  return joined;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// NvmlLibrary

void NvmlLibrary::DlCloser::operator()(void* handle) const {
  if (handle != nullptr) ::dlclose(handle);
}

std::shared_ptr<NvmlLibrary> NvmlLibrary::TryLoad(const std::string& path, std::string* why_not) {
  std::string ignored;
  if (why_not == nullptr) why_not = &ignored;
  ::dlerror();  // clear any earlier error
  void* raw = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) {
    const char* error = ::dlerror();
    *why_not = "cannot load NVML (" + path + "): " + (error != nullptr ? error : "unknown error") +
               "; " + NvmlLoadFix(path);
    return nullptr;
  }
  std::shared_ptr<NvmlLibrary> library(new NvmlLibrary());
  library->handle_.reset(raw);
  library->path_ = path;
  nvml_abi::Api& api = library->api_;
  Bind(raw, "nvmlInit_v2", &api.init);
  Bind(raw, "nvmlShutdown", &api.shutdown);
  Bind(raw, "nvmlErrorString", &api.error_string);
  Bind(raw, "nvmlDeviceGetCount_v2", &api.get_count);
  Bind(raw, "nvmlDeviceGetHandleByIndex_v2", &api.get_handle_by_index);
  Bind(raw, "nvmlDeviceGetUUID", &api.get_uuid);
  library->pci_info_symbol_ =
      BindFirst(raw, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, &api.get_pci_info);
  Bind(raw, "nvmlDeviceGetName", &api.get_name);
  Bind(raw, "nvmlDeviceGetTotalEnergyConsumption", &api.get_total_energy_mj);
  Bind(raw, "nvmlDeviceGetPowerUsage", &api.get_power_mw);
  library->processes_symbol_ = BindFirst(
      raw, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
      &api.get_compute_processes);
  Bind(raw, "nvmlDeviceGetPowerManagementLimit", &api.get_power_limit_mw);
  Bind(raw, "nvmlDeviceGetPowerManagementLimitConstraints", &api.get_power_limit_constraints_mw);
  Bind(raw, "nvmlDeviceGetPowerManagementDefaultLimit", &api.get_power_default_limit_mw);
  Bind(raw, "nvmlDeviceSetPowerManagementLimit", &api.set_power_limit_mw);

  std::vector<std::string> missing;
  if (api.init == nullptr) missing.push_back("nvmlInit_v2");
  if (api.shutdown == nullptr) missing.push_back("nvmlShutdown");
  if (api.error_string == nullptr) missing.push_back("nvmlErrorString");
  if (api.get_count == nullptr) missing.push_back("nvmlDeviceGetCount_v2");
  if (api.get_handle_by_index == nullptr) missing.push_back("nvmlDeviceGetHandleByIndex_v2");
  if (api.get_uuid == nullptr) missing.push_back("nvmlDeviceGetUUID");
  if (api.get_pci_info == nullptr) missing.push_back("nvmlDeviceGetPciInfo_v3");
  if (api.get_name == nullptr) missing.push_back("nvmlDeviceGetName");
  if (!missing.empty()) {
    *why_not = "NVML library " + path + " lacks " + Join(missing, ", ") +
               "; the driver is too old or this is not libnvidia-ml";
    return nullptr;
  }
  const nvml_abi::Return rc = api.init();
  if (rc != nvml_abi::kSuccess) {
    *why_not = "nvmlInit_v2 failed: " + library->ErrorText(rc);
    if (rc == nvml_abi::kErrorDriverNotLoaded) {
      *why_not += "; the NVIDIA kernel driver is not loaded (is there a GPU? try nvidia-smi)";
    } else if (rc == nvml_abi::kErrorNoPermission) {
      *why_not += "; no permission to open /dev/nvidia*";
    }
    return nullptr;
  }
  library->initialized_ = true;
  return library;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialized_) api_.shutdown();
}

std::string NvmlLibrary::ErrorText(nvml_abi::Return code) const {
  const char* text = api_.error_string != nullptr ? api_.error_string(code) : nullptr;
  return std::string(text != nullptr ? text : "unknown error") + " (NVML error " +
         std::to_string(code) + ")";
}

// ---------------------------------------------------------------------------------------------
// CUDA_VISIBLE_DEVICES

CudaVisibleMapping MapCudaVisibleDevices(const std::optional<std::string>& cuda_visible_devices,
                                         const std::optional<std::string>& cuda_device_order,
                                         const std::vector<GpuIdentity>& devices) {
  CudaVisibleMapping mapping;
  // Integer entries and the unset case use PCI bus id order.
  std::vector<std::size_t> pci_order(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) pci_order[i] = i;
  std::stable_sort(pci_order.begin(), pci_order.end(), [&](std::size_t a, std::size_t b) {
    const GpuIdentity& x = devices[a];
    const GpuIdentity& y = devices[b];
    return std::tie(x.pci_domain, x.pci_bus, x.pci_device, x.pci_bus_id) <
           std::tie(y.pci_domain, y.pci_bus, y.pci_device, y.pci_bus_id);
  });
  const bool pci_bus_order = cuda_device_order.has_value() && *cuda_device_order == "PCI_BUS_ID";
  const std::string order_note =
      "CUDA_DEVICE_ORDER is " +
      (cuda_device_order.has_value() ? "'" + *cuda_device_order + "'" : std::string("unset")) +
      " (CUDA's default is FASTEST_FIRST): GPUs were ordered by PCI bus id, which matches CUDA's "
      "numbering only with CUDA_DEVICE_ORDER=PCI_BUS_ID or identical GPUs; set it, or list UUIDs "
      "in CUDA_VISIBLE_DEVICES";

  if (!cuda_visible_devices.has_value()) {
    mapping.nvml_indices = pci_order;
    if (!pci_bus_order && devices.size() > 1) mapping.notes.push_back(order_note);
    return mapping;
  }

  bool used_integer = false;
  std::set<std::size_t> seen;
  std::string text = *cuda_visible_devices;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string entry = Trim(text.substr(start, comma - start));
    start = comma + 1;

    auto end_list = [&](const std::string& why) {
      mapping.notes.push_back("CUDA_VISIBLE_DEVICES entry '" + entry + "' " + why +
                              "; it and the entries after it are ignored, as CUDA does");
    };
    if (entry.empty()) {
      if (comma != text.size()) end_list("is empty");  // a trailing comma or "" ends quietly
      break;
    }
    std::optional<std::size_t> index;
    if (StartsWith(entry, "GPU-")) {
      const std::string prefix = Lower(entry);
      std::vector<std::size_t> matches;
      for (std::size_t i = 0; i < devices.size(); ++i) {
        if (StartsWith(Lower(devices[i].uuid), prefix)) matches.push_back(i);
      }
      if (matches.empty()) {
        end_list("matches no GPU UUID");
        break;
      }
      if (matches.size() > 1) {
        end_list("is a prefix of several GPU UUIDs");
        break;
      }
      index = matches[0];
    } else if (StartsWith(entry, "MIG-")) {
      end_list("is a MIG instance (NVML has no per-MIG-slice energy)");
      break;
    } else {
      const bool digits = std::all_of(entry.begin(), entry.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      });
      if (!digits) {
        end_list(entry == "-1" ? "hides the remaining GPUs" : "is not a device index or UUID");
        break;
      }
      if (entry.size() > 9 || std::stoul(entry) >= devices.size()) {
        end_list("is out of range (" + std::to_string(devices.size()) + " GPUs)");
        break;
      }
      index = pci_order[std::stoul(entry)];
      used_integer = true;
    }
    if (!seen.insert(*index).second) {
      end_list("repeats a GPU already listed");
      break;
    }
    mapping.nvml_indices.push_back(*index);
    if (comma == text.size()) break;
  }
  if (used_integer && !pci_bus_order && devices.size() > 1) mapping.notes.push_back(order_note);
  return mapping;
}

// ---------------------------------------------------------------------------------------------
// Opening the visible GPUs

std::optional<NvmlVisibleGpus> OpenNvmlVisibleGpus(const NvmlOptions& options,
                                                   std::string* why_not) {
  std::string ignored;
  if (why_not == nullptr) why_not = &ignored;
  auto get_env = [&](const std::string& name) -> std::optional<std::string> {
    if (options.get_env) return options.get_env(name);
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };

  NvmlVisibleGpus visible;
  visible.library = NvmlLibrary::TryLoad(options.library_path, why_not);
  if (visible.library == nullptr) return std::nullopt;
  const NvmlLibrary& library = *visible.library;
  const nvml_abi::Api& api = library.api();

  unsigned int count = 0;
  const nvml_abi::Return count_rc = api.get_count(&count);
  if (count_rc != nvml_abi::kSuccess) {
    *why_not = "nvmlDeviceGetCount_v2 failed: " + library.ErrorText(count_rc);
    return std::nullopt;
  }
  if (count == 0) {
    *why_not = "NVML reports no GPU";
    return std::nullopt;
  }

  std::vector<NvmlGpu> all;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlGpu gpu;
    gpu.nvml_index = i;
    auto skip = [&](const char* call, nvml_abi::Return rc) {
      visible.notes.push_back("NVML device " + std::to_string(i) + " skipped: " + call +
                              " failed: " + library.ErrorText(rc));
    };
    nvml_abi::Return rc = api.get_handle_by_index(i, &gpu.handle);
    if (rc != nvml_abi::kSuccess) {
      skip("nvmlDeviceGetHandleByIndex_v2", rc);
      continue;
    }
    char uuid[nvml_abi::kUuidBufferSize] = {};
    rc = api.get_uuid(gpu.handle, uuid, sizeof(uuid));
    if (rc != nvml_abi::kSuccess) {
      skip("nvmlDeviceGetUUID", rc);
      continue;
    }
    nvml_abi::PciInfo pci{};
    rc = api.get_pci_info(gpu.handle, &pci);
    if (rc != nvml_abi::kSuccess) {
      skip(library.pci_info_symbol().c_str(), rc);
      continue;
    }
    char name[nvml_abi::kNameBufferSize] = {};
    rc = api.get_name(gpu.handle, name, sizeof(name));
    if (rc != nvml_abi::kSuccess) {
      skip("nvmlDeviceGetName", rc);
      continue;
    }
    gpu.identity.uuid = FromBuffer(uuid, sizeof(uuid));
    gpu.identity.pci_bus_id = FromBuffer(pci.bus_id, sizeof(pci.bus_id));
    gpu.identity.pci_domain = pci.domain;
    gpu.identity.pci_bus = pci.bus;
    gpu.identity.pci_device = pci.device;
    gpu.name = FromBuffer(name, sizeof(name));
    all.push_back(std::move(gpu));
  }
  if (all.empty()) {
    *why_not = "NVML reports " + std::to_string(count) +
               " GPU(s) but none could be opened: " + Join(visible.notes, "; ");
    return std::nullopt;
  }

  std::vector<GpuIdentity> identities;
  for (const NvmlGpu& gpu : all) identities.push_back(gpu.identity);
  const std::optional<std::string> cuda_visible = get_env("CUDA_VISIBLE_DEVICES");
  CudaVisibleMapping mapping =
      MapCudaVisibleDevices(cuda_visible, get_env("CUDA_DEVICE_ORDER"), identities);
  visible.cuda_visible_devices = cuda_visible.has_value() ? *cuda_visible : "(unset)";
  visible.notes.insert(visible.notes.end(), mapping.notes.begin(), mapping.notes.end());
  for (std::size_t k = 0; k < mapping.nvml_indices.size(); ++k) {
    NvmlGpu gpu = all[mapping.nvml_indices[k]];
    gpu.domain = "gpu:" + std::to_string(k);
    visible.gpus.push_back(std::move(gpu));
  }
  if (visible.gpus.empty()) {
    *why_not = "CUDA_VISIBLE_DEVICES='" + visible.cuda_visible_devices + "' selects none of the " +
               std::to_string(all.size()) + " GPU(s) NVML reports";
    if (!mapping.notes.empty()) *why_not += " (" + Join(mapping.notes, "; ") + ")";
    return std::nullopt;
  }
  return visible;
}

// ---------------------------------------------------------------------------------------------
// NvmlMeter

std::unique_ptr<NvmlMeter> NvmlMeter::TryCreate(const NvmlOptions& options, std::string* why_not) {
  std::string ignored;
  if (why_not == nullptr) why_not = &ignored;
  std::optional<NvmlVisibleGpus> visible = OpenNvmlVisibleGpus(options, why_not);
  if (!visible.has_value()) return nullptr;
  const NvmlLibrary& library = *visible->library;
  const nvml_abi::Api& api = library.api();

  std::vector<Gpu> gpus;
  std::vector<std::string> unusable;
  for (const NvmlGpu& info : visible->gpus) {
    Gpu gpu;
    gpu.info = info;
    nvml_abi::Return rc = nvml_abi::kErrorNotSupported;
    if (api.get_total_energy_mj != nullptr) {
      unsigned long long counter_mj = 0;
      rc = api.get_total_energy_mj(info.handle, &counter_mj);
      if (rc == nvml_abi::kSuccess) {
        gpu.has_counter = true;
        gpu.last_counter_mj = counter_mj;
      } else {
        gpu.method_reason = "nvmlDeviceGetTotalEnergyConsumption: " + library.ErrorText(rc) +
                            (rc == nvml_abi::kErrorNotSupported ? " (needs Volta or newer)" : "");
      }
    } else {
      gpu.method_reason = "the library lacks nvmlDeviceGetTotalEnergyConsumption";
    }
    if (!gpu.has_counter) {
      unsigned int power_mw = 0;
      const nvml_abi::Return power_rc = api.get_power_mw != nullptr
                                            ? api.get_power_mw(info.handle, &power_mw)
                                            : nvml_abi::kErrorNotSupported;
      if (power_rc != nvml_abi::kSuccess) {
        unusable.push_back(info.domain + " (" + info.identity.uuid + "): " + gpu.method_reason +
                           "; nvmlDeviceGetPowerUsage: " + library.ErrorText(power_rc));
        continue;
      }
    }
    gpus.push_back(std::move(gpu));
  }
  if (gpus.empty()) {
    *why_not = "no visible GPU reports energy or power: " + Join(unusable, "; ");
    return nullptr;
  }
  for (const std::string& note : unusable) visible->notes.push_back("not metered: " + note);
  std::unique_ptr<NvmlMeter> meter(new NvmlMeter(std::move(*visible), std::move(gpus)));
  meter->warn_ = options.warn;
  for (Gpu& gpu : meter->gpus_) meter->RefreshSharing(&gpu);
  return meter;
}

NvmlMeter::NvmlMeter(NvmlVisibleGpus visible, std::vector<Gpu> gpus)
    : library_(std::move(visible.library)),
      cuda_visible_devices_(std::move(visible.cuda_visible_devices)),
      notes_(std::move(visible.notes)),
      gpus_(std::move(gpus)) {}

std::vector<std::string> NvmlMeter::domains() const {
  std::vector<std::string> names;
  for (const Gpu& gpu : gpus_) names.push_back(gpu.info.domain);
  return names;
}

std::vector<std::string> NvmlMeter::domain_identities() const {
  std::vector<std::string> uuids;
  for (const Gpu& gpu : gpus_) uuids.push_back(gpu.info.identity.uuid);
  return uuids;
}

Provenance NvmlMeter::provenance() const {
  for (const Gpu& gpu : gpus_) {
    if (!gpu.has_counter) return Provenance::kIntegrated;
  }
  return Provenance::kMeasured;
}

std::vector<double> NvmlMeter::ReadEnergyJ() {
  const nvml_abi::Api& api = library_->api();
  std::vector<double> energy_j;
  energy_j.reserve(gpus_.size());
  for (Gpu& gpu : gpus_) {
    if (!gpu.has_counter) {
      energy_j.push_back(gpu.integrator.energy_j());
      continue;
    }
    unsigned long long counter_mj = 0;
    const nvml_abi::Return rc = api.get_total_energy_mj(gpu.info.handle, &counter_mj);
    gpu.read_errors_in_a_row = rc == nvml_abi::kSuccess ? 0 : gpu.read_errors_in_a_row + 1;
    if (rc != nvml_abi::kSuccess) {
      ++gpu.read_errors;  // keep the last value
      if (gpu.read_errors_in_a_row == kReadErrorsToWarn) {
        const std::string message =
            "NVML: " + gpu.info.domain + " (" + gpu.info.identity.uuid + ") failed " +
            std::to_string(kReadErrorsToWarn) +
            " energy-counter reads in a row (nvmlDeviceGetTotalEnergyConsumption: " +
            library_->ErrorText(rc) +
            "); its energy stops growing until a read succeeds, so the totals may miss some";
        if (warn_) {
          warn_(message);
        } else {
          std::fprintf(stderr, "greenrl warning: %s\n", message.c_str());
        }
      }
    } else if (counter_mj < gpu.last_counter_mj) {
      // The counter counts since the driver loaded: a smaller value means a reload, after which
      // the counter is the energy since. Count it (the energy between the last read and the
      // reload is lost) and warn once per GPU, as RaplMeter does for a reset.
      if (gpu.counter_resets == 0) {
        const std::string message =
            "NVML: " + gpu.info.domain + " (" + gpu.info.identity.uuid +
            ") energy counter went down (" + std::to_string(gpu.last_counter_mj) + " -> " +
            std::to_string(counter_mj) +
            " mJ): the driver was reloaded, and only the energy since counts (the energy "
            "between the previous read and the reload is missing from the totals)";
        if (warn_) {
          warn_(message);
        } else {
          std::fprintf(stderr, "greenrl warning: %s\n", message.c_str());
        }
      }
      ++gpu.counter_resets;
      gpu.accumulated_mj += counter_mj;
      gpu.last_counter_mj = counter_mj;
    } else {
      gpu.accumulated_mj += counter_mj - gpu.last_counter_mj;
      gpu.last_counter_mj = counter_mj;
    }
    energy_j.push_back(static_cast<double>(gpu.accumulated_mj) / 1000.0);
  }
  return energy_j;
}

void NvmlMeter::Sample(double now_s) {
  const nvml_abi::Api& api = library_->api();
  for (Gpu& gpu : gpus_) {
    if (gpu.has_counter) continue;
    // Sampled at this time or later already (EnergyMonitor samples at each read too).
    if (gpu.integrator.sample_count() > 0 && now_s <= gpu.integrator.last_time_s()) continue;
    unsigned int power_mw = 0;
    if (api.get_power_mw(gpu.info.handle, &power_mw) != nvml_abi::kSuccess) {
      ++gpu.read_errors;  // the trapezoid spans the gap to the next good sample
      continue;
    }
    gpu.integrator.AddSample(now_s, static_cast<double>(power_mw) / 1000.0);
  }
  if (!polled_processes_ || now_s - last_process_poll_s_ >= kProcessPollPeriodS) {
    polled_processes_ = true;
    last_process_poll_s_ = now_s;
    for (Gpu& gpu : gpus_) RefreshSharing(&gpu);
  }
}

void NvmlMeter::RefreshSharing(Gpu* gpu) {
  const nvml_abi::Api& api = library_->api();
  if (api.get_compute_processes == nullptr) {
    gpu->sharing_error = "the library lacks nvmlDeviceGetComputeRunningProcesses_v3/_v2";
    return;
  }
  // The driver's record size (16, 24 or 32 bytes, nvml_meter.h) is found from what it writes.
  // The list is read twice into a buffer filled first with 0xA5 and then with 0x5A bytes. Bytes
  // the driver wrote hold the same values both times, the others keep the two fillers, so the
  // written extent is the end of the last equal byte, and the record size that extent over the
  // count. The buffer has room for 32-byte records, so no record size overruns it.
  constexpr std::size_t kRecord = nvml_abi::kMaxProcessRecordBytes;
  std::vector<unsigned char> first, second;
  unsigned int capacity = 64, count = 0;
  nvml_abi::Return rc = nvml_abi::kErrorInsufficientSize;
  bool settled = false;
  for (int attempt = 0; attempt < 4 && !settled; ++attempt) {
    first.assign(std::size_t{capacity} * kRecord, 0xA5);
    second.assign(first.size(), 0x5A);
    count = capacity;
    rc = api.get_compute_processes(gpu->info.handle, &count, first.data());
    unsigned int count_again = capacity;
    const nvml_abi::Return rc_again =
        rc == nvml_abi::kSuccess
            ? api.get_compute_processes(gpu->info.handle, &count_again, second.data())
            : rc;
    if (rc == nvml_abi::kErrorInsufficientSize || rc_again == nvml_abi::kErrorInsufficientSize) {
      capacity = std::max({capacity, count, count_again}) + 16;
    } else if (rc != nvml_abi::kSuccess || rc_again != nvml_abi::kSuccess) {
      rc = rc != nvml_abi::kSuccess ? rc : rc_again;  // an error: reported below
      settled = true;
    } else {
      settled = count == count_again;  // else a process started or ended: read again
    }
  }
  if (!settled || rc != nvml_abi::kSuccess) {
    gpu->sharing_error = library_->processes_symbol() + ": " +
                         (settled ? library_->ErrorText(rc)
                                  : std::string("the process list kept changing between reads"));
    return;
  }
  std::size_t written = 0;
  for (std::size_t i = std::size_t{count} * kRecord; i > 0; --i) {
    if (first[i - 1] == second[i - 1]) {
      written = i;
      break;
    }
  }
  // Each layout ends with a field that does not change between two reads (usedGpuMemory's top
  // byte, the instance ids, usedGpuCcProtectedMemory), so the extent is count records exactly.
  std::size_t record = 0;
  for (const std::size_t size : {std::size_t{16}, std::size_t{24}, std::size_t{32}}) {
    if (count > 0 && written == count * size) record = size;
  }
  if (count > 0 && record == 0) {
    gpu->sharing_error = library_->processes_symbol() + ": " + std::to_string(count) +
                         " process records filled " + std::to_string(written) +
                         " bytes, which is no known record size (16, 24 or 32 bytes)";
    return;
  }
  const unsigned int self = static_cast<unsigned int>(::getpid());
  std::set<unsigned int> others;
  for (unsigned int i = 0; i < count; ++i) {
    unsigned int pid = 0;
    std::memcpy(&pid, first.data() + std::size_t{i} * record, sizeof pid);
    if (pid != self) others.insert(pid);
  }
  gpu->sharing_error.clear();
  if (!others.empty()) {
    gpu->sharing = Sharing::kYes;  // sticky: once shared, the run's figures include others
    gpu->other_pids.assign(others.begin(), others.end());
  } else if (gpu->sharing == Sharing::kUnknown) {
    gpu->sharing = Sharing::kNo;
  }
}

std::vector<std::pair<std::string, std::string>> NvmlMeter::Details() const {
  std::vector<std::pair<std::string, std::string>> details = {
      {"library", library_->path()},
      {"pci_info_symbol", library_->pci_info_symbol()},
      {"processes_symbol", library_->processes_symbol()},
      {"cuda_visible_devices", cuda_visible_devices_},
      {"device_notes", notes_.empty() ? "none" : Join(notes_, "; ")},
  };
  for (const Gpu& gpu : gpus_) {
    const std::string& d = gpu.info.domain;
    details.emplace_back(d + ".name", gpu.info.name);
    details.emplace_back(d + ".uuid", gpu.info.identity.uuid);
    details.emplace_back(d + ".pci_bus_id", gpu.info.identity.pci_bus_id);
    details.emplace_back(d + ".nvml_index", std::to_string(gpu.info.nvml_index));
    details.emplace_back(d + ".method", gpu.has_counter ? "counter" : "integrated power");
    if (!gpu.has_counter) {
      details.emplace_back(d + ".method_reason", gpu.method_reason);
      details.emplace_back(d + ".power_samples", std::to_string(gpu.integrator.sample_count()));
    }
    std::string sharing = gpu.sharing == Sharing::kYes  ? "yes"
                          : gpu.sharing == Sharing::kNo ? "no"
                                                        : "unknown";
    if (gpu.sharing == Sharing::kUnknown && !gpu.sharing_error.empty()) {
      sharing += " (" + gpu.sharing_error + ")";
    }
    details.emplace_back(d + ".shared_with_other_processes", sharing);
    std::vector<std::string> pids;
    for (unsigned int pid : gpu.other_pids) pids.push_back(std::to_string(pid));
    details.emplace_back(d + ".other_pids", pids.empty() ? "none" : Join(pids, " "));
    details.emplace_back(d + ".read_errors", std::to_string(gpu.read_errors));
    details.emplace_back(d + ".counter_resets", std::to_string(gpu.counter_resets));
  }
  details.emplace_back(
      "pid_note",
      "NVML reports PIDs in the host PID namespace; inside a container this process's own PID "
      "differs, so a device may show as shared with itself");
  return details;
}

}  // namespace greenrl::energy
