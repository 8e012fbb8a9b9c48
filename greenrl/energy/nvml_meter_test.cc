#include "greenrl/energy/nvml_meter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "greenrl/core/test_paths.h"

namespace greenrl::energy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

// Writes a fake-NVML script (format in testing/fake_nvml.cc) to a temporary file and points
// GREENRL_FAKE_NVML_SCRIPT at it for the object's lifetime.
class FakeNvmlScript {
 public:
  explicit FakeNvmlScript(const std::string& script) {
    char dir[] = "/tmp/greenrl_fake_nvml_XXXXXX";
    dir_ = ::mkdtemp(dir);
    std::ofstream(dir_ + "/script") << script;
    ::setenv("GREENRL_FAKE_NVML_SCRIPT", (dir_ + "/script").c_str(), 1);
  }
  ~FakeNvmlScript() {
    ::unsetenv("GREENRL_FAKE_NVML_SCRIPT");
    std::filesystem::remove_all(dir_);
  }

 private:
  std::string dir_;
};

// Options that load the fake library and see `env` as the whole environment.
NvmlOptions FakeOptions(std::map<std::string, std::string> env = {}) {
  NvmlOptions options;
  options.library_path = test_paths::FakeNvmlLibrary();
  options.get_env = [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return options;
}

std::map<std::string, std::string> DetailsMap(const EnergyMeter& meter) {
  std::map<std::string, std::string> details;
  for (const auto& [key, value] : meter.Details()) details[key] = value;
  return details;
}

// Three GPUs whose NVML order (0, 1, 2) differs from their PCI bus order (1, 2, 0).
const char* const kThreeGpus =
    "device GPU-aaaa1111 00000000:81:00.0 NVIDIA A100-SXM4-40GB\n"
    "device GPU-bbbb2222 00000000:3B:00.0 NVIDIA A100-SXM4-40GB\n"
    "device GPU-cccc3333 00000000:5E:00.0 NVIDIA A100-SXM4-40GB\n"
    "energy_mj 0 1000\nenergy_mj 1 2000\nenergy_mj 2 3000\n";

TEST(NvmlMeterTest, MissingLibraryGivesNullAndReason) {
  NvmlOptions options;
  options.library_path = "/nonexistent/greenrl/libnvidia-ml.so.1";
  std::string why_not;
  EXPECT_EQ(NvmlMeter::TryCreate(options, &why_not), nullptr);
  EXPECT_THAT(why_not, StartsWith("cannot load NVML (/nonexistent/greenrl/libnvidia-ml.so.1): "));
  // A path the user gave is named as the thing to check, not "no NVIDIA GPU: nothing to fix".
  EXPECT_THAT(why_not, HasSubstr("; energy.nvml_library names "
                                 "/nonexistent/greenrl/libnvidia-ml.so.1, which did not load"));
  EXPECT_THAT(why_not, Not(HasSubstr("nothing to fix")));
  // A name for dlopen's search keeps the general advice.
  options.library_path = "libgreenrl-no-such-nvml.so.1";
  EXPECT_EQ(NvmlMeter::TryCreate(options, &why_not), nullptr);
  EXPECT_THAT(why_not, HasSubstr("install the NVIDIA driver"));
}

TEST(NvmlMeterTest, InitErrorReasonCarriesNvmlErrorString) {
  FakeNvmlScript script("init_error 9\ndevice GPU-a 00000000:01:00.0 GPU\n");
  std::string why_not;
  EXPECT_EQ(NvmlMeter::TryCreate(FakeOptions(), &why_not), nullptr);
  EXPECT_THAT(why_not, StartsWith("nvmlInit_v2 failed: Driver Not Loaded (NVML error 9); the "
                                  "NVIDIA kernel driver is not loaded"));
}

TEST(NvmlMeterTest, NoDevicesGivesNull) {
  FakeNvmlScript script("# no device lines\n");
  std::string why_not;
  EXPECT_EQ(NvmlMeter::TryCreate(FakeOptions(), &why_not), nullptr);
  EXPECT_EQ(why_not, "NVML reports no GPU");
}

TEST(NvmlMeterTest, CounterDeltasInJoulesFromMillijoules) {
  // The first value is the baseline read by TryCreate.
  FakeNvmlScript script(
      "device GPU-aaaa1111 00000000:3B:00.0 NVIDIA H100 80GB HBM3\n"
      "energy_mj 0 1000000 5000000 5001500 ERR:15 5002000 100\n"
      "power_mw 0 NOT_SUPPORTED\n");
  std::string why_not;
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(FakeOptions(), &why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  EXPECT_EQ(meter->name(), "nvml");
  EXPECT_THAT(meter->domains(), ElementsAre("gpu:0"));
  EXPECT_EQ(meter->provenance(), Provenance::kMeasured);
  EXPECT_EQ(meter->scope(), Scope::kDevice);
  EXPECT_EQ(meter->update_period_s(), 0.1);  // the driver's 20-100 ms, its upper end
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4000.0));
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4001.5));
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4001.5));  // GPU is lost: last value kept
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4002.0));
  // Went back: a driver reload; the 100 mJ counted since the reload count.
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4002.1));
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4002.1));
  meter->Sample(0.0);  // counter devices ignore samples
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(4002.1));
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["library"], test_paths::FakeNvmlLibrary());
  EXPECT_EQ(details["pci_info_symbol"], "nvmlDeviceGetPciInfo_v3");
  EXPECT_EQ(details["processes_symbol"], "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(details["cuda_visible_devices"], "(unset)");
  EXPECT_EQ(details["gpu:0.name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(details["gpu:0.uuid"], "GPU-aaaa1111");
  EXPECT_EQ(details["gpu:0.pci_bus_id"], "00000000:3B:00.0");
  EXPECT_EQ(details["gpu:0.method"], "counter");
  EXPECT_EQ(details["gpu:0.read_errors"], "1");
  EXPECT_EQ(details["gpu:0.counter_resets"], "1");
  EXPECT_EQ(details.count("gpu:0.method_reason"), 0u);
}

TEST(NvmlMeterTest, CounterNotSupportedIntegratesPowerWithTrapezoid) {
  // Power: the first value is TryCreate's probe; then 100 W at t=0, 200 W at t=1, a failed read
  // at t=2, 200 W at t=3 -> 150 J + 400 J = 550 J.
  FakeNvmlScript script(
      "device GPU-pascal 00000000:02:00.0 Tesla P100-PCIE-16GB\n"
      "energy_mj 0 NOT_SUPPORTED\n"
      "power_mw 0 100000 100000 200000 ERR:15 200000\n");
  std::string why_not;
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(FakeOptions(), &why_not);
  ASSERT_NE(meter, nullptr) << why_not;
  EXPECT_EQ(meter->provenance(), Provenance::kIntegrated);
  EXPECT_EQ(meter->update_period_s(), 0.1);  // the power reading updates as the counter does
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(0.0));
  meter->Sample(0.0);
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(0.0));
  meter->Sample(1.0);
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(150.0));
  meter->Sample(2.0);
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(150.0));
  meter->Sample(3.0);
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(550.0));
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["gpu:0.method"], "integrated power");
  EXPECT_EQ(details["gpu:0.method_reason"],
            "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML error 3) (needs Volta or "
            "newer)");
  EXPECT_EQ(details["gpu:0.power_samples"], "3");
  EXPECT_EQ(details["gpu:0.read_errors"], "1");
}

TEST(NvmlMeterTest, MixedDevicesAreLabelledIntegrated) {
  FakeNvmlScript script(
      "device GPU-volta 00000000:01:00.0 Tesla V100\n"
      "device GPU-pascal 00000000:02:00.0 Tesla P100\n"
      "energy_mj 0 500 2500\n"
      "power_mw 1 50000 50000 70000\n");
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(FakeOptions(), nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_EQ(meter->provenance(), Provenance::kIntegrated);
  meter->Sample(10.0);
  meter->Sample(12.0);
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(2.0, 120.0));
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["gpu:0.method"], "counter");
  EXPECT_EQ(details["gpu:1.method"], "integrated power");
}

TEST(NvmlMeterTest, DeviceWithoutEnergyOrPowerGivesNullWhenAlone) {
  FakeNvmlScript script("device GPU-old 00000000:01:00.0 GeForce GTX 680\n");
  std::string why_not;
  EXPECT_EQ(NvmlMeter::TryCreate(FakeOptions(), &why_not), nullptr);
  EXPECT_EQ(why_not,
            "no visible GPU reports energy or power: gpu:0 (GPU-old): "
            "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML error 3) (needs Volta or "
            "newer); nvmlDeviceGetPowerUsage: Not Supported (NVML error 3)");
}

TEST(NvmlMeterTest, DeviceWhoseHandleFailsIsSkippedWithANote) {
  FakeNvmlScript script(std::string(kThreeGpus) + "handle_error 1 4\n");
  std::unique_ptr<NvmlMeter> meter =
      NvmlMeter::TryCreate(FakeOptions({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}), nullptr);
  ASSERT_NE(meter, nullptr);
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["device_notes"],
            "NVML device 1 skipped: nvmlDeviceGetHandleByIndex_v2 failed: Insufficient "
            "Permissions (NVML error 4)");
  EXPECT_EQ(details["gpu:0.uuid"], "GPU-cccc3333");
  EXPECT_EQ(details["gpu:1.uuid"], "GPU-aaaa1111");
  // A data-parallel job tells GPUs apart by UUID (job_energy.h), not by visible index.
  EXPECT_EQ(meter->domain_identities(), (std::vector<std::string>{"GPU-cccc3333", "GPU-aaaa1111"}));
}

// CUDA_VISIBLE_DEVICES through the fake library: NVML order 0,1,2 is PCI order 2,0,1.
TEST(NvmlMeterTest, UnsetCudaVisibleDevicesMeansAllInPciOrder) {
  FakeNvmlScript script(kThreeGpus);
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(FakeOptions(), nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_THAT(meter->domains(), ElementsAre("gpu:0", "gpu:1", "gpu:2"));
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["gpu:0.uuid"], "GPU-bbbb2222");
  EXPECT_EQ(details["gpu:0.nvml_index"], "1");
  EXPECT_EQ(details["gpu:1.uuid"], "GPU-cccc3333");
  EXPECT_EQ(details["gpu:2.uuid"], "GPU-aaaa1111");
  EXPECT_THAT(details["device_notes"], HasSubstr("CUDA_DEVICE_ORDER is unset (CUDA's default is "
                                                 "FASTEST_FIRST)"));
}

TEST(NvmlMeterTest, IntegerCudaVisibleDevicesMapByPciBusOrder) {
  FakeNvmlScript script(kThreeGpus);
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(
      FakeOptions({{"CUDA_VISIBLE_DEVICES", "1,0"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}), nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_THAT(meter->domains(), ElementsAre("gpu:0", "gpu:1"));
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["cuda_visible_devices"], "1,0");
  EXPECT_EQ(details["gpu:0.uuid"], "GPU-cccc3333");  // second by PCI bus id (5E)
  EXPECT_EQ(details["gpu:0.pci_bus_id"], "00000000:5E:00.0");
  EXPECT_EQ(details["gpu:0.nvml_index"], "2");
  EXPECT_EQ(details["gpu:1.uuid"], "GPU-bbbb2222");  // first by PCI bus id (3B)
  EXPECT_EQ(details["device_notes"], "none");        // PCI_BUS_ID order: exact
  // Counters: baselines 3000 and 2000 mJ, repeated afterwards.
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(0.0, 0.0));
}

TEST(NvmlMeterTest, IntegerEntriesWithoutPciBusIdOrderSaySo) {
  FakeNvmlScript script(kThreeGpus);
  std::unique_ptr<NvmlMeter> meter =
      NvmlMeter::TryCreate(FakeOptions({{"CUDA_VISIBLE_DEVICES", "1,0"}}), nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_THAT(DetailsMap(*meter)["device_notes"],
              HasSubstr("matches CUDA's numbering only with CUDA_DEVICE_ORDER=PCI_BUS_ID"));
}

TEST(NvmlMeterTest, UuidCudaVisibleDevicesMapByUuid) {
  FakeNvmlScript script(kThreeGpus);
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(
      FakeOptions({{"CUDA_VISIBLE_DEVICES", "GPU-aaaa1111,GPU-cccc"}}), nullptr);
  ASSERT_NE(meter, nullptr);
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["gpu:0.uuid"], "GPU-aaaa1111");
  EXPECT_EQ(details["gpu:1.uuid"], "GPU-cccc3333");  // unique prefix, as CUDA accepts
  EXPECT_EQ(details["device_notes"], "none");        // UUIDs need no device order
}

TEST(NvmlMeterTest, MinusOneEndsTheList) {
  FakeNvmlScript script(kThreeGpus);
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(
      FakeOptions({{"CUDA_VISIBLE_DEVICES", "0,-1,1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}),
      nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_THAT(meter->domains(), ElementsAre("gpu:0"));
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["gpu:0.uuid"], "GPU-bbbb2222");
  EXPECT_EQ(details["device_notes"],
            "CUDA_VISIBLE_DEVICES entry '-1' hides the remaining GPUs; it and the entries after "
            "it are ignored, as CUDA does");
}

TEST(NvmlMeterTest, EmptyCudaVisibleDevicesSelectsNone) {
  FakeNvmlScript script(kThreeGpus);
  std::string why_not;
  EXPECT_EQ(NvmlMeter::TryCreate(FakeOptions({{"CUDA_VISIBLE_DEVICES", ""}}), &why_not), nullptr);
  EXPECT_EQ(why_not, "CUDA_VISIBLE_DEVICES='' selects none of the 3 GPU(s) NVML reports");
}

// A counter that keeps failing (a GPU fallen off the bus: NVML error 15) is warned about once,
// at the third failure in a row; single failures are not, and the last value is kept.
TEST(NvmlMeterTest, CounterFailingThreeTimesInARowIsWarnedOnce) {
  FakeNvmlScript script(
      "device GPU-lost 00000000:3B:00.0 GPU\n"
      "energy_mj 0 0 1000 ERR:15 2000 ERR:15 ERR:15 ERR:15 ERR:15\n");
  std::vector<std::string> warnings;
  NvmlOptions options = FakeOptions();
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(options, nullptr);
  ASSERT_NE(meter, nullptr);
  for (int i = 0; i < 4; ++i) meter->ReadEnergyJ();  // 1000, ERR, 2000, ERR: 2 J, no warning
  EXPECT_TRUE(warnings.empty());
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(2.0));
  EXPECT_TRUE(warnings.empty());
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(2.0));  // the third failure in a row
  meter->ReadEnergyJ();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "NVML: gpu:0 (GPU-lost) failed 3 energy-counter reads in a row "
            "(nvmlDeviceGetTotalEnergyConsumption: GPU is lost (NVML error 15)); its energy stops "
            "growing until a read succeeds, so the totals may miss some");
}

// A counter that goes down (a driver reload, after which it counts from 0 again) counts its new
// value, the energy since the reload, and is warned about once per GPU.
TEST(NvmlMeterTest, CounterResetCountsTheEnergySinceAndIsWarnedOnce) {
  FakeNvmlScript script(
      "device GPU-reload 00000000:3B:00.0 GPU\n"
      "energy_mj 0 0 1000 5000 200 300 100\n");
  std::vector<std::string> warnings;
  NvmlOptions options = FakeOptions();
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(options, nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(1.0));
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(5.0));
  EXPECT_TRUE(warnings.empty());
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(5.2));  // reloaded: 200 mJ since
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(5.3));
  EXPECT_THAT(meter->ReadEnergyJ(), ElementsAre(5.4));  // reloaded again: 100 mJ since
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "NVML: gpu:0 (GPU-reload) energy counter went down (5000 -> 200 mJ): the driver was "
            "reloaded, and only the energy since counts (the energy between the previous read "
            "and the reload is missing from the totals)");
  EXPECT_EQ(DetailsMap(*meter)["gpu:0.counter_resets"], "2");
}

TEST(NvmlMeterTest, SharedDeviceDetection) {
  FakeNvmlScript script(
      "device GPU-alone 00000000:01:00.0 GPU\n"
      "device GPU-shared 00000000:02:00.0 GPU\n"
      "device GPU-hidden 00000000:03:00.0 GPU\n"
      "energy_mj 0 0\nenergy_mj 1 0\nenergy_mj 2 0\n"
      "processes 0 SELF\n"
      "processes 1 SELF 4242 77\n"
      "processes 2 ERR:4\n");
  std::unique_ptr<NvmlMeter> meter =
      NvmlMeter::TryCreate(FakeOptions({{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}}), nullptr);
  ASSERT_NE(meter, nullptr);
  meter->Sample(0.0);  // polls again: the answers stay the same
  auto details = DetailsMap(*meter);
  EXPECT_EQ(details["gpu:0.shared_with_other_processes"], "no");
  EXPECT_EQ(details["gpu:0.other_pids"], "none");
  EXPECT_EQ(details["gpu:1.shared_with_other_processes"], "yes");
  EXPECT_EQ(details["gpu:1.other_pids"], "77 4242");
  EXPECT_EQ(details["gpu:2.shared_with_other_processes"],
            "unknown (nvmlDeviceGetComputeRunningProcesses_v3: Insufficient Permissions (NVML "
            "error 4))");
}

// 100 processes (more than the first buffer's 64) in each driver's record size: 16 bytes
// (nvmlProcessInfo_v1_t), 24 (_v2_t) and 32 (R535's _v3_t). Read with a fixed 24-byte record,
// the 32-byte ones gave garbage pids after the first and overran the buffer.
TEST(NvmlMeterTest, ManyProcessesInEveryDriversRecordSize) {
  std::string pids, want;
  for (int pid = 1000; pid < 1100; ++pid) {
    pids += " " + std::to_string(pid);
    want += (want.empty() ? "" : " ") + std::to_string(pid);
  }
  for (const int bytes : {16, 24, 32}) {
    SCOPED_TRACE(bytes);
    FakeNvmlScript script("device GPU-busy 00000000:01:00.0 GPU\nenergy_mj 0 0\nprocesses 0" +
                          pids + " SELF\nprocess_record_bytes 0 " + std::to_string(bytes) + "\n");
    std::unique_ptr<NvmlMeter> meter = NvmlMeter::TryCreate(FakeOptions(), nullptr);
    ASSERT_NE(meter, nullptr);
    auto details = DetailsMap(*meter);
    EXPECT_EQ(details["gpu:0.shared_with_other_processes"], "yes");
    EXPECT_EQ(details["gpu:0.other_pids"], want);
  }
}

// MapCudaVisibleDevices without the library.
std::vector<GpuIdentity> ThreeIdentities() {
  return {{"GPU-aaaa1111", "00000000:81:00.0", 0, 0x81, 0},
          {"GPU-bbbb2222", "00000000:3B:00.0", 0, 0x3B, 0},
          {"GPU-cccc3333", "00000000:5E:00.0", 0, 0x5E, 0}};
}

TEST(MapCudaVisibleDevicesTest, EntriesAndOrder) {
  const std::optional<std::string> pci = "PCI_BUS_ID";
  EXPECT_THAT(MapCudaVisibleDevices(std::nullopt, pci, ThreeIdentities()).nvml_indices,
              ElementsAre(1, 2, 0));
  EXPECT_THAT(MapCudaVisibleDevices("1,0", pci, ThreeIdentities()).nvml_indices, ElementsAre(2, 1));
  EXPECT_THAT(MapCudaVisibleDevices(" 2 , 0 ", pci, ThreeIdentities()).nvml_indices,
              ElementsAre(0, 1));
  EXPECT_THAT(MapCudaVisibleDevices("GPU-bbbb2222,1", pci, ThreeIdentities()).nvml_indices,
              ElementsAre(1, 2));
  EXPECT_THAT(MapCudaVisibleDevices("0,", pci, ThreeIdentities()).notes, IsEmpty());
}

TEST(MapCudaVisibleDevicesTest, InvalidEntriesEndTheList) {
  const std::optional<std::string> pci = "PCI_BUS_ID";
  struct Case {
    std::string value;
    std::vector<std::size_t> indices;
    std::string note;
  };
  const std::vector<Case> cases = {
      {"0,-1,1", {1}, "'-1' hides the remaining GPUs"},
      {"0,,1", {1}, "'' is empty"},
      {"0,3,1", {1}, "'3' is out of range (3 GPUs)"},
      {"0,x,1", {1}, "'x' is not a device index or UUID"},
      {"0,0,1", {1}, "'0' repeats a GPU already listed"},
      {"GPU-dead,0", {}, "'GPU-dead' matches no GPU UUID"},
      {"GPU-,0", {}, "'GPU-' is a prefix of several GPU UUIDs"},
      {"MIG-1234,0", {}, "'MIG-1234' is a MIG instance"},
  };
  for (const Case& c : cases) {
    CudaVisibleMapping mapping = MapCudaVisibleDevices(c.value, pci, ThreeIdentities());
    EXPECT_EQ(mapping.nvml_indices, c.indices) << c.value;
    ASSERT_EQ(mapping.notes.size(), 1u) << c.value;
    EXPECT_THAT(mapping.notes[0], HasSubstr(c.note)) << c.value;
  }
}

}  // namespace
}  // namespace greenrl::energy
