#include "greenrl/energy/rapl_meter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "greenrl/energy/internal/fake_powercap.h"

namespace greenrl::energy {
namespace {

using internal::FakePowercap;
using ::testing::HasSubstr;

std::map<std::string, std::string> DetailsMap(const EnergyMeter& meter) {
  std::map<std::string, std::string> details;
  for (const auto& [key, value] : meter.Details()) details[key] = value;
  return details;
}

// A two-socket Intel server as /sys/class/powercap shows it (flat): zone indices deliberately
// differ from socket ids, each package has core/uncore children, package-1 has a dram child, a psys
// zone contains both packages and an intel-rapl-mmio zone repeats package-0.
void BuildTwoSocketTree(FakePowercap* tree) {
  tree->WriteFile("intel-rapl/enabled", "1\n");  // the control-type directory, not a zone
  tree->AddZone("intel-rapl:0", "package-1", 5'000'000);
  tree->AddZone("intel-rapl:0:0", "core", 3'000'000);
  tree->AddZone("intel-rapl:0:1", "uncore", 1'000'000);
  tree->AddZone("intel-rapl:0:2", "dram", 700'000);
  tree->AddZone("intel-rapl:1", "package-0", 9'000'000);
  tree->AddZone("intel-rapl:1:0", "core", 4'000'000);
  tree->AddZone("intel-rapl:1:1", "uncore", 2'000'000);
  tree->AddZone("intel-rapl:2", "psys", 40'000'000);
  tree->AddZone("intel-rapl-mmio:0", "package-0", 9'000'000);
}

TEST(RaplMeterTest, CountsPackagesAndDramOnceByNameNotIndex) {
  FakePowercap tree;
  BuildTwoSocketTree(&tree);
  std::string why;
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), &why);
  ASSERT_NE(meter, nullptr) << why;
  EXPECT_EQ(meter->name(), "rapl");
  EXPECT_EQ(meter->provenance(), Provenance::kMeasured);
  EXPECT_EQ(meter->scope(), Scope::kPackage);
  EXPECT_EQ(meter->domains(),
            (std::vector<std::string>{"cpu:package-0", "cpu:package-1", "dram:1"}));
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{0.0, 0.0, 0.0}));

  // package-0 (zone 1) +2 J, package-1 (zone 0) +1.5 J, dram +0.25 J; children, psys and mmio move
  // too but must not be added.
  tree.SetEnergyUj("intel-rapl:1", 11'000'000);
  tree.SetEnergyUj("intel-rapl:0", 6'500'000);
  tree.SetEnergyUj("intel-rapl:0:2", 950'000);
  tree.SetEnergyUj("intel-rapl:0:0", 4'000'000);
  tree.SetEnergyUj("intel-rapl:1:0", 5'000'000);
  tree.SetEnergyUj("intel-rapl:2", 90'000'000);
  tree.SetEnergyUj("intel-rapl-mmio:0", 20'000'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{2.0, 1.5, 0.25}));
  // Cumulative since creation.
  tree.SetEnergyUj("intel-rapl:1", 12'000'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{3.0, 1.5, 0.25}));

  const auto details = DetailsMap(*meter);
  EXPECT_EQ(details.at("cpu:package-0.energy_uj_path"), tree.root() + "/intel-rapl:1/energy_uj");
  EXPECT_EQ(details.at("cpu:package-0.max_energy_range_uj"), "262143328850");
  EXPECT_THAT(details.at("zones_skipped"), HasSubstr("intel-rapl:0:0 (core)"));
  EXPECT_THAT(details.at("zones_skipped"), HasSubstr("intel-rapl:2 (psys)"));
  EXPECT_THAT(details.at("zones_skipped"), HasSubstr("intel-rapl-mmio:0 (package-0): repeats"));
  EXPECT_EQ(details.at("counter_wraps"), "0");
  EXPECT_EQ(details.at("read_errors"), "0");
}

TEST(RaplMeterTest, WrapAroundUsesMaxEnergyRange) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 999'000'000, /*max_energy_range_uj=*/1'000'000'000);
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  // (max - prev) + cur = (1e9 - 999e6) + 250e3 uJ = 1.25 J.
  tree.SetEnergyUj("intel-rapl:0", 250'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{1.25}));
  tree.SetEnergyUj("intel-rapl:0", 750'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{1.75}));
  EXPECT_EQ(DetailsMap(*meter).at("counter_wraps"), "1");
}

// /sys/devices/virtual/powercap layout: zones nested under the control type, and class-style
// symlinks beside them pointing at the same directories: each zone counted once.
TEST(RaplMeterTest, NestedLayoutAndSymlinksDeduplicated) {
  FakePowercap tree;
  tree.AddZone("intel-rapl/intel-rapl:0", "package-0", 1'000'000);
  tree.AddZone("intel-rapl/intel-rapl:0/intel-rapl:0:0", "core", 1'000'000);
  tree.AddZone("intel-rapl/intel-rapl:0/intel-rapl:0:1", "dram", 1'000'000);
  std::filesystem::create_directory_symlink(tree.root() + "/intel-rapl/intel-rapl:0",
                                            tree.root() + "/intel-rapl:0");
  std::filesystem::create_directory_symlink(tree.root() + "/intel-rapl/intel-rapl:0/intel-rapl:0:1",
                                            tree.root() + "/intel-rapl:0:1");
  std::string why;
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), &why);
  ASSERT_NE(meter, nullptr) << why;
  EXPECT_EQ(meter->domains(), (std::vector<std::string>{"cpu:package-0", "dram:0"}));
  tree.SetEnergyUj("intel-rapl/intel-rapl:0/intel-rapl:0:1", 1'500'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{0.0, 0.5}));
}

// Zen1/Zen2: one zone per die mirroring the socket counter; only die 0 counts.
TEST(RaplMeterTest, MultiDiePackageCountedOnce) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0-die-0", 1'000'000);
  tree.AddZone("intel-rapl:1", "package-0-die-1", 1'000'000);
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_EQ(meter->domains(), (std::vector<std::string>{"cpu:package-0"}));
}

TEST(RaplMeterTest, MissingRootGivesNullAndReason) {
  std::string why;
  EXPECT_EQ(RaplMeter::TryCreate("/nonexistent/greenrl/powercap", &why), nullptr);
  EXPECT_THAT(why, HasSubstr("/nonexistent/greenrl/powercap does not exist"));
  EXPECT_THAT(why, HasSubstr("energy.rapl_root"));
}

TEST(RaplMeterTest, NoZonesOrNoPackageGivesReason) {
  FakePowercap empty;
  std::string why;
  EXPECT_EQ(RaplMeter::TryCreate(empty.root(), &why), nullptr);
  EXPECT_EQ(why, empty.root() + " has no intel-rapl zones");

  FakePowercap psys_only;
  psys_only.AddZone("intel-rapl:0", "psys", 1'000'000);
  EXPECT_EQ(RaplMeter::TryCreate(psys_only.root(), &why), nullptr);
  EXPECT_EQ(why, psys_only.root() + " has intel-rapl zones but none named package-N");
}

// Tests run as root, so chmod 000 alone would not make energy_uj unreadable: a directory stands
// where the file should be, which makes read() fail (EISDIR) like any other unreadable counter.
TEST(RaplMeterTest, UnreadableEnergyGivesNullAndReason) {
  FakePowercap tree;
  const std::string dir = tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  std::filesystem::remove(dir + "/energy_uj");
  std::filesystem::create_directory(dir + "/energy_uj");
  std::string why;
  EXPECT_EQ(RaplMeter::TryCreate(tree.root(), &why), nullptr);
  EXPECT_THAT(why, HasSubstr("cannot read " + dir + "/energy_uj: Is a directory"));
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

// The real permission error (root-only energy_uj since Linux 5.10): when running as root, drop to
// the "nobody" uid for the duration of the read so that mode 000 is enforced.
TEST(RaplMeterTest, PermissionDeniedSaysTheRemedy) {
  FakePowercap tree;
  const std::string dir = tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  ASSERT_EQ(::chmod(tree.root().c_str(), 0755), 0);
  ASSERT_EQ(::chmod((dir + "/energy_uj").c_str(), 0000), 0);
  std::string why;
  std::unique_ptr<RaplMeter> meter;
  if (::geteuid() == 0) {
    EffectiveUidGuard nobody(65534);
    if (!nobody.ok()) GTEST_SKIP() << "cannot drop privileges to test EACCES";
    meter = RaplMeter::TryCreate(tree.root(), &why);
  } else {
    meter = RaplMeter::TryCreate(tree.root(), &why);
  }
  EXPECT_EQ(meter, nullptr);
  EXPECT_THAT(why, HasSubstr("Permission denied"));
  EXPECT_THAT(why, HasSubstr("root only since Linux 5.10"));
  EXPECT_THAT(why, HasSubstr("udev"));
}

// A counter that becomes unreadable after creation keeps its last value and is counted.
TEST(RaplMeterTest, ReadErrorKeepsLastValue) {
  FakePowercap tree;
  const std::string dir = tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  tree.SetEnergyUj("intel-rapl:0", 3'000'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{2.0}));
  std::filesystem::remove(dir + "/energy_uj");
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{2.0}));
  EXPECT_EQ(DetailsMap(*meter).at("read_errors"), "1");
}

}  // namespace
}  // namespace greenrl::energy
