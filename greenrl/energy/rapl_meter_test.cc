#include "greenrl/energy/rapl_meter.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>

#include "greenrl/core/clock.h"
#include "greenrl/energy/internal/fake_powercap.h"
#include "greenrl/energy/monitor.h"

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
  // Additive domains first, then the parts of each package, then psys.
  const std::vector<std::string> domains = {"cpu:package-0",
                                            "cpu:package-1",
                                            "dram:1",
                                            "cpu:package-0/core",
                                            "cpu:package-0/uncore",
                                            "cpu:package-1/core",
                                            "cpu:package-1/uncore",
                                            "psys:0"};
  EXPECT_EQ(meter->domains(), domains);
  EXPECT_EQ(meter->additive(),
            (std::vector<bool>{true, true, true, false, false, false, false, false}));
  for (size_t i = 0; i < domains.size(); ++i) {
    EXPECT_EQ(IsAdditiveDomain(domains[i]), meter->additive()[i]) << domains[i];
  }
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>(8, 0.0)));

  // package-0 (zone 1) +2 J, package-1 (zone 0) +1.5 J, dram +0.25 J, package-1's core (zone 0:0)
  // +1 J, package-0's core (zone 1:0) +1 J, psys +50 J; the mmio repeat of package-0 is ignored.
  tree.SetEnergyUj("intel-rapl:1", 11'000'000);
  tree.SetEnergyUj("intel-rapl:0", 6'500'000);
  tree.SetEnergyUj("intel-rapl:0:2", 950'000);
  tree.SetEnergyUj("intel-rapl:0:0", 4'000'000);
  tree.SetEnergyUj("intel-rapl:1:0", 5'000'000);
  tree.SetEnergyUj("intel-rapl:2", 90'000'000);
  tree.SetEnergyUj("intel-rapl-mmio:0", 20'000'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{2.0, 1.5, 0.25, 1.0, 0.0, 1.0, 0.0, 50.0}));
  // Cumulative since creation.
  tree.SetEnergyUj("intel-rapl:1", 12'000'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{3.0, 1.5, 0.25, 1.0, 0.0, 1.0, 0.0, 50.0}));

  const auto details = DetailsMap(*meter);
  EXPECT_EQ(details.at("cpu:package-0.energy_uj_path"), tree.root() + "/intel-rapl:1/energy_uj");
  EXPECT_EQ(details.at("cpu:package-0.max_energy_range_uj"), "262143328850");
  EXPECT_EQ(details.at("cpu:package-0.additive"), "true");
  EXPECT_EQ(details.at("psys:0.additive"), "false");
  EXPECT_EQ(details.at("zones_skipped"), "intel-rapl-mmio:0 (package-0): repeats cpu:package-0");
  EXPECT_EQ(details.at("counter_wraps"), "0");
  EXPECT_EQ(details.at("wraps_dropped"), "0");
  EXPECT_EQ(details.at("read_errors"), "0");
}

// Through EnergyMonitor, psys and the package parts are reported per domain but never summed:
// the total is packages + dram only.
TEST(RaplMeterTest, MonitorTotalAddsPackagesAndDramOnly) {
  FakePowercap tree;
  BuildTwoSocketTree(&tree);
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::move(meter));
  EnergyMonitor monitor(std::move(meters), clock);
  tree.SetEnergyUj("intel-rapl:1", 11'000'000);   // package-0 +2 J
  tree.SetEnergyUj("intel-rapl:0", 6'500'000);    // package-1 +1.5 J
  tree.SetEnergyUj("intel-rapl:0:2", 950'000);    // dram:1 +0.25 J
  tree.SetEnergyUj("intel-rapl:1:0", 5'000'000);  // package-0/core +1 J
  tree.SetEnergyUj("intel-rapl:2", 90'000'000);   // psys +50 J
  const Measurement total = monitor.Total();
  EXPECT_EQ(total.energy_j.at("psys:0"), 50.0);
  EXPECT_EQ(total.energy_j.at("cpu:package-0/core"), 1.0);
  EXPECT_EQ(total.total_energy_j(), 3.75);
  EXPECT_FALSE(monitor.domains().back().additive);
  EXPECT_TRUE(monitor.domains().front().additive);
  EXPECT_EQ(monitor.update_period_s(), 1e-3);  // RAPL's counters: about every 1 ms
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

// The Intel desktop range from ../shared/REFERENCES.md, wrapping on two packages and a dram zone
// in the same read: (262143328850 - 262143000000) + 671150 = 1,000,000 uJ on package-0.
TEST(RaplMeterTest, WrapAroundOnSeveralZonesWithIntelRange) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 262'143'000'000);
  tree.AddZone("intel-rapl:0:0", "dram", 262'143'328'000);
  tree.AddZone("intel-rapl:1", "package-1", 5'000);
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  ASSERT_EQ(meter->domains(),
            (std::vector<std::string>{"cpu:package-0", "cpu:package-1", "dram:0"}));
  tree.SetEnergyUj("intel-rapl:0", 671'150);
  tree.SetEnergyUj("intel-rapl:0:0", 149'150);  // (850 + 149,150) uJ = 0.15 J
  tree.SetEnergyUj("intel-rapl:1", 505'000);    // no wrap: 0.5 J
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{1.0, 0.5, 0.15}));
  EXPECT_EQ(DetailsMap(*meter).at("counter_wraps"), "2");
}

// A drop that no wrap can explain is a counter reset: with the Intel range (262,143 J) and the
// default 240 W, package-0's 500 -> 100 uJ one second after the last read would be a 262 kJ
// wrap, far more than 4 x 240 W x (1 + 1) s, so only the 100 uJ since the reset count (warned
// once). package-1, near the top of the range, wraps in the same read by 1 J: a wrap.
TEST(RaplMeterTest, ImplausibleWrapIsACounterReset) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 500);
  tree.AddZone("intel-rapl:1", "package-1", 262'143'000'000);
  double now_s = 100.0;
  std::vector<std::string> warnings;
  RaplOptions options;
  options.now_s = [&now_s] { return now_s; };
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  RaplProbe probe = RaplMeter::Probe(tree.root(), options);
  ASSERT_NE(probe.meter, nullptr) << probe.why_not;
  RaplMeter& meter = *probe.meter;
  now_s = 101.0;
  tree.SetEnergyUj("intel-rapl:0", 100);
  tree.SetEnergyUj("intel-rapl:1", 671'150);  // (262143328850 - 262143000000) + 671150 uJ
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{0.0001, 1.0}));
  const auto details = DetailsMap(meter);
  EXPECT_EQ(details.at("counter_resets"), "1");
  EXPECT_EQ(details.at("counter_wraps"), "1");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("500 -> 100 uJ) 1.000 s after the previous read; a wrap "
                                     "would mean 262143 J, more than 4 x its 240 W can draw"));
}

// max_energy_range_uj unreadable (a directory in its place: read() fails even for root): the meter
// is still created, and a counter that goes down adds nothing for that read pair, warned once.
TEST(RaplMeterTest, WrapWithUnreadableRangeIsDroppedWithOneWarning) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 5'000'000);
  tree.MakeUnreadable("intel-rapl:0/max_energy_range_uj");
  std::vector<std::string> warnings;
  RaplOptions options;
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  RaplProbe probe = RaplMeter::Probe(tree.root(), options);
  ASSERT_NE(probe.meter, nullptr) << probe.why_not;
  EXPECT_EQ(probe.failure, RaplFailure::kNone);
  RaplMeter& meter = *probe.meter;
  EXPECT_THAT(DetailsMap(meter).at("cpu:package-0.max_energy_range_uj"),
              HasSubstr("unknown (cannot read " + tree.root() +
                        "/intel-rapl:0/max_energy_range_uj: Is a directory)"));

  tree.SetEnergyUj("intel-rapl:0", 7'000'000);  // +2 J
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{2.0}));
  tree.SetEnergyUj("intel-rapl:0", 1'000'000);  // went down: dropped, total stays 2 J
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{2.0}));
  tree.SetEnergyUj("intel-rapl:0", 1'500'000);  // counting resumes from the new value: +0.5 J
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{2.5}));
  tree.SetEnergyUj("intel-rapl:0", 500'000);  // a second drop: no second warning
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{2.5}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("7000000 -> 1000000 uJ"));
  EXPECT_THAT(warnings[0], HasSubstr("max_energy_range_uj is unreadable"));
  const auto details = DetailsMap(meter);
  EXPECT_EQ(details.at("wraps_dropped"), "2");
  EXPECT_EQ(details.at("counter_wraps"), "0");
  // The poll bound falls back to AMD's shortest range at the default power: 65536 J / 240 W.
  EXPECT_DOUBLE_EQ(meter.MaxSafePollPeriodS(), 65536.0 / 240.0);
}

// Range / max power per zone, minimum over zones: the package's largest constraint (170 W, the
// short-term limit) bounds the package and, lacking its own constraints, its dram child.
TEST(RaplMeterTest, MaxSafePollPeriodUsesLargestConstraintPower) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 0);
  tree.WriteFile("intel-rapl:0/constraint_0_max_power_uw", "125000000\n");
  tree.WriteFile("intel-rapl:0/constraint_1_max_power_uw", "170000000\n");
  tree.AddZone("intel-rapl:0:0", "dram", 0, /*max_energy_range_uj=*/65'712'999'613);
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  // package: 262143.32885 J / 170 W = 1542.02 s; dram: 65712.999613 J / 170 W = 386.55 s.
  EXPECT_DOUBLE_EQ(meter->MaxSafePollPeriodS(), 65'712'999'613 / 1e6 / 170.0);
  const auto details = DetailsMap(*meter);
  EXPECT_EQ(details.at("cpu:package-0.max_power_w"),
            "170 (" + tree.root() + "/intel-rapl:0/constraint_1_max_power_uw)");
  EXPECT_EQ(details.at("dram:0.max_power_w"),
            "170 (" + tree.root() + "/intel-rapl:0/constraint_1_max_power_uw)");

  // No constraint files anywhere: the stated default, 240 W.
  FakePowercap bare;
  bare.AddZone("intel-rapl:0", "package-0", 0);
  meter = RaplMeter::TryCreate(bare.root(), nullptr);
  ASSERT_NE(meter, nullptr);
  EXPECT_DOUBLE_EQ(meter->MaxSafePollPeriodS(), 262'143.32885 / RaplMeter::kDefaultMaxPowerW);
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
  EXPECT_EQ(meter->domains(),
            (std::vector<std::string>{"cpu:package-0", "dram:0", "cpu:package-0/core"}));
  tree.SetEnergyUj("intel-rapl/intel-rapl:0/intel-rapl:0:1", 1'500'000);
  EXPECT_EQ(meter->ReadEnergyJ(), (std::vector<double>{0.0, 0.5, 0.0}));
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
  EXPECT_THAT(why, HasSubstr("energy.powercap_root"));
  // A file given as the tree is named as a file, not as missing.
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  const std::string file = tree.root() + "/intel-rapl:0/energy_uj";
  EXPECT_EQ(RaplMeter::TryCreate(file, &why), nullptr);
  EXPECT_EQ(why, file +
                     " is not a directory (energy.powercap_root names the powercap tree, e.g. "
                     "/sys/class/powercap)");
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

// Probe() classifies each failure for `greenrl meters` (sources.h).
TEST(RaplMeterTest, ProbeSaysWhichFailure) {
  EXPECT_EQ(RaplMeter::Probe("/nonexistent/greenrl/powercap").failure, RaplFailure::kMissingRoot);
  FakePowercap empty;
  EXPECT_EQ(RaplMeter::Probe(empty.root()).failure, RaplFailure::kNoZones);
  FakePowercap psys_only;
  psys_only.AddZone("intel-rapl:0", "psys", 1'000'000);
  EXPECT_EQ(RaplMeter::Probe(psys_only.root()).failure, RaplFailure::kNoPackage);
  FakePowercap garbage;
  garbage.AddZone("intel-rapl:0", "package-0", 1'000'000);
  garbage.WriteFile("intel-rapl:0/energy_uj", "not a number\n");
  const RaplProbe probe = RaplMeter::Probe(garbage.root());
  EXPECT_EQ(probe.failure, RaplFailure::kUnreadable);
  EXPECT_EQ(probe.meter, nullptr);
  EXPECT_THAT(probe.why_not, HasSubstr("'not a number' is not a non-negative integer"));
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

// The same permission path through an injected open failure, so it is tested even where the
// tests cannot drop root: EACCES on energy_uj fails the probe with the remedy; EACCES on
// max_energy_range_uj (root-only on some systems) does not.
TEST(RaplMeterTest, InjectedPermissionDenied) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  auto deny = [](const std::string& suffix) {
    return [suffix](const std::string& path) -> int {
      if (path.size() >= suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        errno = EACCES;
        return -1;
      }
      return ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    };
  };
  RaplOptions options;
  options.open_file = deny("/energy_uj");
  RaplProbe probe = RaplMeter::Probe(tree.root(), options);
  EXPECT_EQ(probe.meter, nullptr);
  EXPECT_EQ(probe.failure, RaplFailure::kPermissionDenied);
  EXPECT_EQ(probe.why_not, "cannot read " + tree.root() +
                               "/intel-rapl:0/energy_uj: Permission denied (energy_uj is readable "
                               "by root only since Linux 5.10, CVE-2020-8694; run as root, add a "
                               "udev or sysfs.conf rule making energy_uj mode 0444, or use a "
                               "privileged helper)");

  options.open_file = deny("/max_energy_range_uj");
  probe = RaplMeter::Probe(tree.root(), options);
  ASSERT_NE(probe.meter, nullptr) << probe.why_not;
  EXPECT_THAT(DetailsMap(*probe.meter).at("cpu:package-0.max_energy_range_uj"),
              HasSubstr("unknown (cannot read"));
}

// An unreadable core / uncore / psys counter skips that zone only; the meter is still created.
TEST(RaplMeterTest, UnreadableInformationalZoneIsSkipped) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  tree.AddZone("intel-rapl:0:0", "core", 1'000'000);
  tree.AddZone("intel-rapl:1", "psys", 1'000'000);
  tree.MakeUnreadable("intel-rapl:1/energy_uj");
  std::string why;
  std::unique_ptr<RaplMeter> meter = RaplMeter::TryCreate(tree.root(), &why);
  ASSERT_NE(meter, nullptr) << why;
  EXPECT_EQ(meter->domains(), (std::vector<std::string>{"cpu:package-0", "cpu:package-0/core"}));
  EXPECT_EQ(DetailsMap(*meter).at("zones_skipped"), "intel-rapl:1 (psys): cannot read " +
                                                        tree.root() +
                                                        "/intel-rapl:1/energy_uj: Is a directory");
}

// An unreadable dram counter skips that zone with a warning (the totals then cover the package
// alone); an unreadable package counter fails the meter.
TEST(RaplMeterTest, UnreadableDramIsSkippedWithAWarning) {
  FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  tree.AddZone("intel-rapl:0:0", "dram", 1'000'000);
  tree.MakeUnreadable("intel-rapl:0:0/energy_uj");
  std::vector<std::string> warnings;
  RaplOptions options;
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  RaplProbe probe = RaplMeter::Probe(tree.root(), options);
  ASSERT_NE(probe.meter, nullptr) << probe.why_not;
  EXPECT_EQ(probe.meter->domains(), (std::vector<std::string>{"cpu:package-0"}));
  const std::string why =
      "cannot read " + tree.root() + "/intel-rapl:0:0/energy_uj: Is a directory";
  EXPECT_EQ(DetailsMap(*probe.meter).at("zones_skipped"), "intel-rapl:0:0 (dram): " + why);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "RAPL: dram:0 skipped (" + why +
                             "): the energy totals cover the CPU packages without DRAM");
  tree.MakeUnreadable("intel-rapl:0/energy_uj");
  EXPECT_EQ(RaplMeter::Probe(tree.root(), options).failure, RaplFailure::kUnreadable);
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
