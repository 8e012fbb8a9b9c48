// fake_nvml.cc: a fake libnvidia-ml for tests (built as the shared library greenrl_fake_nvml and
// dlopened by path), so NvmlMeter and NvmlPowerLimitControl are tested without a GPU. It exports
// the NVML entry points greenrl binds (nvml_meter.h, nvml_abi::Api) and replays a script.
//
// The script is the file named by GREENRL_FAKE_NVML_SCRIPT, read by nvmlInit_v2 whenever the
// init count goes from 0 to 1 (so every test starts from its own script). One directive per line;
// '#' starts a comment; tokens are separated by blanks; <i> is the NVML device index; a <value> is
// a number, NOT_SUPPORTED or ERR:<code> (returned as the call's result):
//   init_error <code>                         nvmlInit_v2 returns <code>
//   count_error <code>                        nvmlDeviceGetCount_v2 returns <code>
//   device <uuid> <pci_bus_id> <name...>      adds device <i> = 0, 1, ... (bus id like
//                                             00000000:3B:00.0)
//   handle_error <i> <code>                   nvmlDeviceGetHandleByIndex_v2(<i>) returns <code>
//   energy_mj <i> <value>...                  successive nvmlDeviceGetTotalEnergyConsumption
//                                             results, mJ; the last one repeats (default:
//                                             NOT_SUPPORTED)
//   power_mw <i> <value>...                   successive nvmlDeviceGetPowerUsage results, mW
//                                             (default: NOT_SUPPORTED)
//   processes <i> <pid|SELF>... | ERR:<code>  compute processes (SELF = the calling process;
//                                             default: none)
//   process_record_bytes <i> <16|24|32>       the size of the process records the _v3 call
//                                             writes (nvml_meter.h: drivers differ; default 24)
//   power_limits <i> <min> <max> <default> <current>   mW (default: NOT_SUPPORTED)
//   set_limit_error <i> <code>                nvmlDeviceSetPowerManagementLimit returns <code>
// Every nvmlDeviceSetPowerManagementLimit call, whatever its result, appends "<uuid> <mW>" to the
// file named by GREENRL_FAKE_NVML_SET_LOG (when set), so tests can assert how many happened.
// Not thread-safe (tests call it from one thread).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "greenrl/energy/nvml_meter.h"

namespace {

namespace abi = greenrl::energy::nvml_abi;

// One scripted result: a return code and, on success, a value.
struct Value {
  abi::Return rc = abi::kErrorNotSupported;
  unsigned long long value = 0;
};

// Successive results of one query; the last repeats.
struct Sequence {
  std::vector<Value> values;
  std::size_t next = 0;

  Value Next() {
    if (values.empty()) return Value{};
    const Value value = values[next < values.size() ? next : values.size() - 1];
    if (next < values.size()) ++next;
    return value;
  }
};

struct FakeDevice {
  std::string uuid;
  std::string bus_id;
  std::string name;
  abi::Return handle_rc = abi::kSuccess;
  Sequence energy_mj;
  Sequence power_mw;
  abi::Return processes_rc = abi::kSuccess;
  std::vector<unsigned int> pids;
  unsigned int process_record_bytes = 24;
  abi::Return limits_rc = abi::kErrorNotSupported;
  unsigned int min_mw = 0, max_mw = 0, default_mw = 0, current_mw = 0;
  abi::Return set_rc = abi::kSuccess;
};

struct State {
  int init_count = 0;
  abi::Return init_rc = abi::kSuccess;
  abi::Return count_rc = abi::kSuccess;
  std::deque<FakeDevice> devices;  // deque: handles (addresses) stay valid
};

State& GetState() {
  static State state;
  return state;
}

Value ParseValue(const std::string& token) {
  Value value;
  if (token == "NOT_SUPPORTED") return value;
  if (token.rfind("ERR:", 0) == 0) {
    value.rc = std::atoi(token.c_str() + 4);
    return value;
  }
  value.rc = abi::kSuccess;
  value.value = std::strtoull(token.c_str(), nullptr, 10);
  return value;
}

// Reads the script; returns false when it cannot be read or a line names an unknown device.
bool LoadScript(State* state) {
  *state = State{};
  const char* path = std::getenv("GREENRL_FAKE_NVML_SCRIPT");
  if (path == nullptr) return false;
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string directive;
    if (!(words >> directive)) continue;
    if (directive == "init_error") {
      words >> state->init_rc;
      continue;
    }
    if (directive == "count_error") {
      words >> state->count_rc;
      continue;
    }
    if (directive == "device") {
      FakeDevice device;
      words >> device.uuid >> device.bus_id;
      std::getline(words >> std::ws, device.name);
      state->devices.push_back(device);
      continue;
    }
    std::size_t index = 0;
    if (!(words >> index) || index >= state->devices.size()) return false;
    FakeDevice& device = state->devices[index];
    std::string token;
    if (directive == "handle_error") {
      words >> device.handle_rc;
    } else if (directive == "energy_mj" || directive == "power_mw") {
      Sequence& sequence = directive == "energy_mj" ? device.energy_mj : device.power_mw;
      while (words >> token) sequence.values.push_back(ParseValue(token));
    } else if (directive == "processes") {
      while (words >> token) {
        if (token.rfind("ERR:", 0) == 0) {
          device.processes_rc = std::atoi(token.c_str() + 4);
        } else {
          device.pids.push_back(token == "SELF" ? static_cast<unsigned int>(::getpid())
                                                : static_cast<unsigned int>(std::stoul(token)));
        }
      }
    } else if (directive == "process_record_bytes") {
      words >> device.process_record_bytes;
    } else if (directive == "power_limits") {
      words >> device.min_mw >> device.max_mw >> device.default_mw >> device.current_mw;
      device.limits_rc = abi::kSuccess;
    } else if (directive == "set_limit_error") {
      words >> device.set_rc;
    } else {
      return false;
    }
  }
  return true;
}

FakeDevice* FromHandle(abi::Device handle) { return reinterpret_cast<FakeDevice*>(handle); }

void CopyString(const std::string& text, char* buffer, unsigned int length) {
  std::snprintf(buffer, length, "%s", text.c_str());
}

}  // namespace

extern "C" {

abi::Return nvmlInit_v2() {
  State& state = GetState();
  if (state.init_count == 0) {
    if (!LoadScript(&state)) return abi::kErrorUnknown;
    if (state.init_rc != abi::kSuccess) return state.init_rc;
  }
  ++state.init_count;
  return abi::kSuccess;
}

abi::Return nvmlShutdown() {
  State& state = GetState();
  if (state.init_count == 0) return abi::kErrorUninitialized;
  --state.init_count;
  return abi::kSuccess;
}

const char* nvmlErrorString(abi::Return rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 6:
      return "Not Found";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 15:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

abi::Return nvmlDeviceGetCount_v2(unsigned int* count) {
  State& state = GetState();
  if (state.init_count == 0) return abi::kErrorUninitialized;
  if (state.count_rc != abi::kSuccess) return state.count_rc;
  *count = static_cast<unsigned int>(state.devices.size());
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, abi::Device* handle) {
  State& state = GetState();
  if (state.init_count == 0) return abi::kErrorUninitialized;
  if (index >= state.devices.size()) return abi::kErrorInvalidArgument;
  FakeDevice& device = state.devices[index];
  if (device.handle_rc != abi::kSuccess) return device.handle_rc;
  *handle = reinterpret_cast<abi::Device>(&device);
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetUUID(abi::Device handle, char* uuid, unsigned int length) {
  CopyString(FromHandle(handle)->uuid, uuid, length);
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetName(abi::Device handle, char* name, unsigned int length) {
  CopyString(FromHandle(handle)->name, name, length);
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetPciInfo_v3(abi::Device handle, abi::PciInfo* pci) {
  const FakeDevice& device = *FromHandle(handle);
  *pci = abi::PciInfo{};
  unsigned int function = 0;
  std::sscanf(device.bus_id.c_str(), "%x:%x:%x.%x", &pci->domain, &pci->bus, &pci->device,
              &function);
  CopyString(device.bus_id, pci->bus_id, sizeof(pci->bus_id));
  std::snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "%04x:%02x:%02x.%x",
                pci->domain & 0xffffu, pci->bus & 0xffu, pci->device & 0xffu, function & 0xfu);
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetTotalEnergyConsumption(abi::Device handle, unsigned long long* mj) {
  const Value value = FromHandle(handle)->energy_mj.Next();
  if (value.rc == abi::kSuccess) *mj = value.value;
  return value.rc;
}

abi::Return nvmlDeviceGetPowerUsage(abi::Device handle, unsigned int* mw) {
  const Value value = FromHandle(handle)->power_mw.Next();
  if (value.rc == abi::kSuccess) *mw = static_cast<unsigned int>(value.value);
  return value.rc;
}

// Writes records as a driver does: pid, 4 bytes of padding, usedGpuMemory (16 bytes so far),
// then gpuInstanceId and computeInstanceId (0xFFFFFFFF: no MIG; 24), then
// usedGpuCcProtectedMemory (0; 32), up to the scripted record size.
abi::Return nvmlDeviceGetComputeRunningProcesses_v3(abi::Device handle, unsigned int* count,
                                                    void* infos) {
  const FakeDevice& device = *FromHandle(handle);
  if (device.processes_rc != abi::kSuccess) return device.processes_rc;
  const auto needed = static_cast<unsigned int>(device.pids.size());
  if (*count < needed) {
    *count = needed;
    return abi::kErrorInsufficientSize;
  }
  auto* out = static_cast<unsigned char*>(infos);
  for (unsigned int i = 0; i < needed; ++i) {
    unsigned char record[32] = {};
    const unsigned long long used_memory = 256ull << 20;
    const unsigned int no_instance = 0xFFFFFFFFu;
    std::memcpy(record, &device.pids[i], 4);
    std::memcpy(record + 8, &used_memory, 8);
    std::memcpy(record + 16, &no_instance, 4);
    std::memcpy(record + 20, &no_instance, 4);
    std::memcpy(out + std::size_t{i} * device.process_record_bytes, record,
                device.process_record_bytes);
  }
  *count = needed;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetPowerManagementLimit(abi::Device handle, unsigned int* limit_mw) {
  const FakeDevice& device = *FromHandle(handle);
  if (device.limits_rc == abi::kSuccess) *limit_mw = device.current_mw;
  return device.limits_rc;
}

abi::Return nvmlDeviceGetPowerManagementLimitConstraints(abi::Device handle, unsigned int* min_mw,
                                                         unsigned int* max_mw) {
  const FakeDevice& device = *FromHandle(handle);
  if (device.limits_rc == abi::kSuccess) {
    *min_mw = device.min_mw;
    *max_mw = device.max_mw;
  }
  return device.limits_rc;
}

abi::Return nvmlDeviceGetPowerManagementDefaultLimit(abi::Device handle, unsigned int* default_mw) {
  const FakeDevice& device = *FromHandle(handle);
  if (device.limits_rc == abi::kSuccess) *default_mw = device.default_mw;
  return device.limits_rc;
}

abi::Return nvmlDeviceSetPowerManagementLimit(abi::Device handle, unsigned int limit_mw) {
  FakeDevice& device = *FromHandle(handle);
  if (const char* log_path = std::getenv("GREENRL_FAKE_NVML_SET_LOG")) {
    std::ofstream(log_path, std::ios::app) << device.uuid << ' ' << limit_mw << '\n';
  }
  if (device.set_rc != abi::kSuccess) return device.set_rc;
  if (device.limits_rc != abi::kSuccess) return device.limits_rc;
  if (limit_mw < device.min_mw || limit_mw > device.max_mw) return abi::kErrorInvalidArgument;
  device.current_mw = limit_mw;
  return abi::kSuccess;
}

}  // extern "C"
