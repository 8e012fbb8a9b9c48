#include "greenrl/energy/sources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "greenrl/energy/internal/fake_powercap.h"

namespace greenrl::energy {
namespace {

using internal::FakePowercap;
using ::testing::HasSubstr;

constexpr const char* kNoSuchNvml = "libgreenrl-test-no-such-nvml.so.1";

SourceOptions Options(const std::string& powercap_root, const std::string& hwmon_root,
                      const std::string& nvml_library = kNoSuchNvml) {
  SourceOptions options;
  options.powercap_root = powercap_root;
  options.hwmon_root = hwmon_root;
  options.nvml_library = nvml_library;
  return options;
}

TEST(SourcesTest, DefaultsAreTheSystemPaths) {
  const SourceOptions options;
  EXPECT_EQ(options.powercap_root, "/sys/class/powercap");
  EXPECT_EQ(options.hwmon_root, "/sys/class/hwmon");
  EXPECT_EQ(options.nvml_library, "libnvidia-ml.so.1");
  EXPECT_EQ(ToString(SourceState::kOk), "ok");
  EXPECT_EQ(ToString(SourceState::kMissing), "missing");
  EXPECT_EQ(ToString(SourceState::kPermissionDenied), "permission denied");
  EXPECT_EQ(ToString(SourceState::kUnsupported), "unsupported");
}

// Nothing present (a container without the host's sysfs, no driver): the estimator is used and
// every other source says how to get it.
TEST(SourcesTest, NothingPresentFallsBackToEstimator) {
  const std::vector<SourceStatus> sources =
      ListEnergySources(Options("/nonexistent/greenrl/powercap", "/nonexistent/greenrl/hwmon"));
  ASSERT_EQ(sources.size(), 4u);
  EXPECT_EQ(sources[0].name, "rapl");
  EXPECT_EQ(sources[1].name, "nvml");
  EXPECT_EQ(sources[2].name, "amd_energy (hwmon)");
  EXPECT_EQ(sources[3].name, "estimator");

  EXPECT_FALSE(sources[0].available);
  EXPECT_FALSE(sources[0].would_use);
  EXPECT_EQ(sources[0].state, SourceState::kMissing);
  EXPECT_THAT(sources[0].reason, HasSubstr("/nonexistent/greenrl/powercap does not exist"));
  EXPECT_THAT(sources[0].fix, HasSubstr("bind-mount the host's /sys/devices/virtual/powercap"));
  EXPECT_THAT(sources[0].fix, HasSubstr("energy.powercap_root"));

  EXPECT_FALSE(sources[1].available);
  EXPECT_FALSE(sources[1].would_use);
  EXPECT_EQ(sources[1].state, SourceState::kMissing);
  EXPECT_THAT(sources[1].reason, HasSubstr(std::string("cannot load ") + kNoSuchNvml));
  EXPECT_THAT(sources[1].fix, HasSubstr("install the NVIDIA driver"));

  EXPECT_FALSE(sources[2].available);
  EXPECT_EQ(sources[2].state, SourceState::kMissing);
  EXPECT_EQ(sources[2].reason, "/nonexistent/greenrl/hwmon does not exist");

  EXPECT_TRUE(sources[3].available);
  EXPECT_TRUE(sources[3].would_use);
  EXPECT_EQ(sources[3].state, SourceState::kOk);
  EXPECT_EQ(sources[3].domains, (std::vector<std::string>{"cpu:process"}));
  EXPECT_THAT(sources[3].reason, HasSubstr("used: RAPL is not readable"));
  EXPECT_THAT(sources[3].reason,
              HasSubstr("CPU time x 12 W per busy core (Green Algorithms default; "
                        "energy.watts_per_core)"));

  // The estimator's row gives the watts a run would use (energy.watts_per_core).
  SourceOptions set = Options("/nonexistent/greenrl/powercap", "/nonexistent/greenrl/hwmon");
  set.watts_per_core = 20.5;
  EXPECT_THAT(ListEnergySources(set)[3].reason,
              HasSubstr("CPU time x 20.5 W per busy core (energy.watts_per_core), an estimate"));
}

TEST(SourcesTest, ReadableRaplIsUsedWithItsDomains) {
  FakePowercap powercap;
  powercap.AddZone("intel-rapl:0", "package-0", 1'000'000);
  powercap.AddZone("intel-rapl:0:0", "core", 1'000'000);
  powercap.AddZone("intel-rapl:1", "package-1", 1'000'000);
  powercap.AddZone("intel-rapl:2", "psys", 1'000'000);
  FakePowercap hwmon;
  const std::vector<SourceStatus> sources =
      ListEnergySources(Options(powercap.root(), hwmon.root()));
  ASSERT_EQ(sources.size(), 4u);
  EXPECT_TRUE(sources[0].available);
  EXPECT_TRUE(sources[0].would_use);
  EXPECT_EQ(sources[0].state, SourceState::kOk);
  EXPECT_EQ(sources[0].fix, "");
  EXPECT_EQ(sources[0].domains, (std::vector<std::string>{"cpu:package-0", "cpu:package-1",
                                                          "cpu:package-0/core", "psys:0"}));
  // 262143.32885 J / 240 W (no constraint files) = 1092 s, which the reason says it assumes.
  EXPECT_THAT(sources[0].reason,
              HasSubstr("poll at least every 1092 s so no counter wraps twice; the period "
                        "assumes 240 W at most for cpu:package-0, cpu:package-1, "
                        "cpu:package-0/core, psys:0 (no readable constraint_<i>_max_power_uw)"));
  EXPECT_FALSE(sources[3].would_use);
  EXPECT_THAT(sources[3].reason, HasSubstr("not used: RAPL measures the CPU packages"));
  EXPECT_EQ(sources[2].state, SourceState::kMissing);
  EXPECT_THAT(sources[2].reason, HasSubstr("no hwmon device under " + hwmon.root()));
}

// A zone skipped (an unreadable dram counter) and a counter range the tree does not give are
// named in the reason, beside the poll period that rests on them.
TEST(SourcesTest, RaplReasonNamesSkippedZonesAndGuessedRanges) {
  FakePowercap powercap;
  powercap.AddZone("intel-rapl:0", "package-0", 1'000'000);
  powercap.AddZone("intel-rapl:0:0", "dram", 1'000'000);
  powercap.WriteFile("intel-rapl:0/constraint_0_max_power_uw", "100000000");
  powercap.MakeUnreadable("intel-rapl:0/max_energy_range_uj");
  powercap.MakeUnreadable("intel-rapl:0:0/energy_uj");
  FakePowercap hwmon;
  const std::vector<SourceStatus> sources =
      ListEnergySources(Options(powercap.root(), hwmon.root()));
  ASSERT_TRUE(sources[0].would_use) << sources[0].reason;
  EXPECT_EQ(sources[0].domains, (std::vector<std::string>{"cpu:package-0"}));
  // 65536 J / 100 W = 655 s.
  EXPECT_THAT(sources[0].reason,
              HasSubstr("poll at least every 655 s so no counter wraps twice; the period assumes "
                        "a 65536 J counter range for cpu:package-0 (max_energy_range_uj "
                        "unreadable); skipped: intel-rapl:0:0 (dram): cannot read " +
                        powercap.root() + "/intel-rapl:0:0/energy_uj: Is a directory"));
}

// energy.meter decides which row a run would use: estimator over a readable RAPL, and rapl
// where RAPL is unreadable none (a run would not start).
TEST(SourcesTest, MeterSettingDecidesTheRowUsed) {
  FakePowercap powercap;
  powercap.AddZone("intel-rapl:0", "package-0", 1'000'000);
  FakePowercap hwmon;
  SourceOptions estimator = Options(powercap.root(), hwmon.root());
  estimator.meter = "estimator";
  std::vector<SourceStatus> sources = ListEnergySources(estimator);
  EXPECT_FALSE(sources[0].would_use);
  EXPECT_THAT(sources[0].reason, HasSubstr("; not used: energy.meter=estimator"));
  EXPECT_TRUE(sources[3].would_use);
  EXPECT_THAT(sources[3].reason, HasSubstr("; used: energy.meter=estimator"));

  SourceOptions rapl = Options("/nonexistent/greenrl/powercap", hwmon.root());
  rapl.meter = "rapl";
  sources = ListEnergySources(rapl);
  for (const SourceStatus& s : sources) EXPECT_FALSE(s.would_use) << s.name;
  EXPECT_THAT(sources[3].reason, HasSubstr("; not used: energy.meter=rapl asks for RAPL"));
}

TEST(SourcesTest, RaplWithoutPackageIsUnsupported) {
  FakePowercap powercap;
  powercap.AddZone("intel-rapl:0", "psys", 1'000'000);
  const std::vector<SourceStatus> sources =
      ListEnergySources(Options(powercap.root(), "/nonexistent/greenrl/hwmon"));
  EXPECT_EQ(sources[0].state, SourceState::kUnsupported);
  EXPECT_EQ(sources[0].reason, powercap.root() + " has intel-rapl zones but none named package-N");
  EXPECT_TRUE(sources[3].would_use);

  FakePowercap empty;
  EXPECT_EQ(ListEnergySources(Options(empty.root(), "/nonexistent"))[0].state,
            SourceState::kMissing);
}

// Restores the effective uid on scope exit.
class EffectiveUidGuard {
 public:
  explicit EffectiveUidGuard(uid_t uid) : saved_(::geteuid()), ok_(::seteuid(uid) == 0) {}
  ~EffectiveUidGuard() {
    if (ok_) (void)::seteuid(saved_);
  }
  bool ok() const { return ok_; }

 private:
  uid_t saved_;
  bool ok_;
};

// Root-only energy_uj (Linux 5.10+): permission denied with the udev / root remedy. As root the
// test drops to "nobody" so that mode 0000 is enforced; RaplMeterTest.InjectedPermissionDenied
// covers the same path where that is impossible.
TEST(SourcesTest, RaplPermissionDeniedNamesTheFix) {
  FakePowercap powercap;
  const std::string dir = powercap.AddZone("intel-rapl:0", "package-0", 1'000'000);
  ASSERT_EQ(::chmod(powercap.root().c_str(), 0755), 0);
  ASSERT_EQ(::chmod((dir + "/energy_uj").c_str(), 0000), 0);
  std::vector<SourceStatus> sources;
  const SourceOptions options = Options(powercap.root(), "/nonexistent/greenrl/hwmon");
  if (::geteuid() == 0) {
    EffectiveUidGuard nobody(65534);
    if (!nobody.ok()) GTEST_SKIP() << "cannot drop privileges to test EACCES";
    sources = ListEnergySources(options);
  } else {
    sources = ListEnergySources(options);
  }
  EXPECT_FALSE(sources[0].available);
  EXPECT_EQ(sources[0].state, SourceState::kPermissionDenied);
  EXPECT_THAT(sources[0].reason, HasSubstr("Permission denied"));
  EXPECT_THAT(sources[0].fix, HasSubstr("run as root"));
  EXPECT_THAT(sources[0].fix, HasSubstr("0444"));
  EXPECT_TRUE(sources[3].would_use);
}

// A library that loads but is not NVML (no nvmlInit_v2) is unsupported.
TEST(SourcesTest, LibraryWithoutNvmlInitIsUnsupported) {
  const std::vector<SourceStatus> sources =
      ListEnergySources(Options("/nonexistent", "/nonexistent", "libm.so.6"));
  EXPECT_FALSE(sources[1].available);
  EXPECT_FALSE(sources[1].would_use);
  EXPECT_EQ(sources[1].state, SourceState::kUnsupported);
  EXPECT_EQ(sources[1].reason, "libm.so.6 has no nvmlInit_v2 (not NVML, or a very old driver)");
}

// amd_energy (out-of-tree hwmon driver): energyN_input in microjoules labelled EcoreNNN and
// EsocketN; detected, reported as available, not used.
TEST(SourcesTest, AmdEnergyHwmonDetectedButNotUsed) {
  FakePowercap hwmon;
  hwmon.WriteFile("hwmon0/name", "k10temp\n");
  hwmon.WriteFile("hwmon0/temp1_input", "45000\n");
  hwmon.WriteFile("hwmon2/name", "amd_energy\n");
  hwmon.WriteFile("hwmon2/energy1_label", "Ecore000\n");
  hwmon.WriteFile("hwmon2/energy1_input", "1234567\n");
  hwmon.WriteFile("hwmon2/energy2_label", "Ecore001\n");
  hwmon.WriteFile("hwmon2/energy2_input", "2345678\n");
  hwmon.WriteFile("hwmon2/energy3_label", "Esocket0\n");
  hwmon.WriteFile("hwmon2/energy3_input", "99999999\n");
  const std::vector<SourceStatus> sources =
      ListEnergySources(Options("/nonexistent", hwmon.root()));
  const SourceStatus& amd = sources[2];
  EXPECT_TRUE(amd.available);
  EXPECT_FALSE(amd.would_use);
  EXPECT_EQ(amd.state, SourceState::kOk);
  EXPECT_EQ(amd.domains, (std::vector<std::string>{"Esocket0", "Ecore000..Ecore001 (2 cores)"}));
  EXPECT_EQ(amd.reason, "1 socket and 2 core counter(s) readable under " + hwmon.root() +
                            "/hwmon2; not used: greenrl has no amd_energy meter, and RAPL reads "
                            "the same sockets on AMD Zen (Linux 5.11+)");
  EXPECT_TRUE(sources[3].would_use);  // amd_energy does not replace the estimator
}

TEST(SourcesTest, AmdEnergyUnreadableInputIsUnsupported) {
  FakePowercap hwmon;
  hwmon.WriteFile("hwmon1/energy1_label", "Esocket0\n");
  hwmon.MakeUnreadable("hwmon1/energy1_input");
  const SourceStatus amd = ListEnergySources(Options("/nonexistent", hwmon.root()))[2];
  EXPECT_FALSE(amd.available);
  EXPECT_EQ(amd.state, SourceState::kUnsupported);
  EXPECT_EQ(amd.reason, "cannot read " + hwmon.root() + "/hwmon1/energy1_input: Is a directory");
}

}  // namespace
}  // namespace greenrl::energy
