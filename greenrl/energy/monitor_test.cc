#include "greenrl/energy/monitor.h"

#include <gtest/gtest.h>

#include "greenrl/core/errors.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/energy/integrated_meter.h"

namespace greenrl::energy {
namespace {

// A monitor over two fake meters (gpu:0 + cpu:package-0 measured, dram:0 estimated) and a fake
// clock; the test keeps raw pointers to the meters, which the monitor owns.
class MonitorTest : public ::testing::Test {
 protected:
  MonitorTest() : clock_(/*start_s=*/100.0) {
    auto device = std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0", "cpu:package-0"},
                                              Provenance::kMeasured, Scope::kDevice, "fake");
    auto dram = std::make_unique<FakeMeter>(std::vector<std::string>{"dram:0"},
                                            Provenance::kEstimated, Scope::kPackage, "fake-dram");
    device_ = device.get();
    dram_ = dram.get();
    std::vector<std::unique_ptr<EnergyMeter>> meters;
    meters.push_back(std::move(device));
    meters.push_back(std::move(dram));
    monitor_ =
        std::make_unique<EnergyMonitor>(std::move(meters), clock_, [this] { ++sync_calls_; });
  }

  // Advances time by duration_s and adds energy to each domain.
  void Spend(double duration_s, double gpu_j, double cpu_j, double dram_j) {
    clock_.AdvanceS(duration_s);
    device_->AddEnergyJ(0, gpu_j);
    device_->AddEnergyJ(1, cpu_j);
    dram_->AddEnergyJ(0, dram_j);
  }

  FakeClock clock_;
  FakeMeter* device_ = nullptr;
  FakeMeter* dram_ = nullptr;
  int sync_calls_ = 0;
  std::unique_ptr<EnergyMonitor> monitor_;
};

using EnergyJ = std::map<std::string, double>;

TEST_F(MonitorTest, OneWindowIsExact) {
  Spend(5.0, 1000.0, 1000.0, 1000.0);  // before the window: not counted
  monitor_->BeginWindow("rollout");
  Spend(2.0, 100.0, 50.0, 0.5);
  const Measurement m = monitor_->EndWindow("rollout");
  EXPECT_EQ(m.duration_s, 2.0);
  EXPECT_EQ(m.energy_j, (EnergyJ{{"gpu:0", 100.0}, {"cpu:package-0", 50.0}, {"dram:0", 0.5}}));
  EXPECT_EQ(m.total_energy_j(), 150.5);
  EXPECT_FALSE(monitor_->IsWindowOpen("rollout"));
}

TEST_F(MonitorTest, OverlappingWindows) {
  monitor_->BeginWindow("iteration");
  Spend(1.0, 10.0, 1.0, 0.0);
  monitor_->BeginWindow("update");
  Spend(2.0, 20.0, 2.0, 0.0);
  const Measurement iteration = monitor_->EndWindow("iteration");
  Spend(0.5, 5.0, 0.25, 0.0);
  const Measurement update = monitor_->EndWindow("update");
  EXPECT_EQ(iteration.duration_s, 3.0);
  EXPECT_EQ(iteration.energy_j,
            (EnergyJ{{"gpu:0", 30.0}, {"cpu:package-0", 3.0}, {"dram:0", 0.0}}));
  EXPECT_EQ(update.duration_s, 2.5);
  EXPECT_EQ(update.energy_j, (EnergyJ{{"gpu:0", 25.0}, {"cpu:package-0", 2.25}, {"dram:0", 0.0}}));
}

TEST_F(MonitorTest, PerKeyTotalsAccumulate) {
  for (int i = 0; i < 3; ++i) {
    monitor_->BeginWindow("rollout");
    Spend(1.5, 8.0, 2.0, 0.5);
    monitor_->EndWindow("rollout");
    Spend(1.0, 100.0, 100.0, 100.0);  // between windows: not in "rollout"
  }
  const WindowTotals totals = monitor_->TotalsFor("rollout");
  EXPECT_EQ(totals.count, 3);
  EXPECT_EQ(totals.sum.duration_s, 4.5);
  EXPECT_EQ(totals.sum.energy_j,
            (EnergyJ{{"gpu:0", 24.0}, {"cpu:package-0", 6.0}, {"dram:0", 1.5}}));
  EXPECT_EQ(totals.sum.total_energy_j(), 31.5);

  const WindowTotals none = monitor_->TotalsFor("eval");
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.sum.total_energy_j(), 0.0);
  EXPECT_EQ(monitor_->AllWindowTotals().size(), 1u);
}

TEST_F(MonitorTest, WindowsThatTileTheRunSumToTotal) {
  const double spend[][4] = {{1.0, 10.0, 3.0, 1.0},
                             {0.5, 40.0, 1.0, 0.25},
                             {1.25, 12.0, 3.5, 1.0},
                             {0.75, 36.0, 0.5, 0.5}};
  for (int i = 0; i < 4; ++i) {
    const std::string key = i % 2 == 0 ? "rollout" : "update";
    monitor_->BeginWindow(key);
    Spend(spend[i][0], spend[i][1], spend[i][2], spend[i][3]);
    monitor_->EndWindow(key);
  }
  const Measurement total = monitor_->Total();
  EXPECT_EQ(total.duration_s, 3.5);
  EXPECT_EQ(total.energy_j, (EnergyJ{{"gpu:0", 98.0}, {"cpu:package-0", 8.0}, {"dram:0", 2.75}}));
  Measurement sum;
  for (const auto& [key, totals] : monitor_->AllWindowTotals()) {
    sum.duration_s += totals.sum.duration_s;
    for (const auto& [domain, energy_j] : totals.sum.energy_j) sum.energy_j[domain] += energy_j;
  }
  EXPECT_EQ(sum.duration_s, total.duration_s);
  EXPECT_EQ(sum.energy_j, total.energy_j);
  EXPECT_EQ(sum.total_energy_j(), total.total_energy_j());
}

TEST_F(MonitorTest, DomainsCarryProvenanceAndScope) {
  const std::vector<DomainInfo>& domains = monitor_->domains();
  ASSERT_EQ(domains.size(), 3u);
  EXPECT_EQ(domains[0].domain, "gpu:0");
  EXPECT_EQ(domains[0].meter, "fake");
  EXPECT_EQ(domains[0].provenance, Provenance::kMeasured);
  EXPECT_EQ(domains[0].scope, Scope::kDevice);
  EXPECT_EQ(domains[2].domain, "dram:0");
  EXPECT_EQ(domains[2].meter, "fake-dram");
  EXPECT_EQ(domains[2].provenance, Provenance::kEstimated);
  EXPECT_EQ(domains[2].scope, Scope::kPackage);
  ASSERT_EQ(monitor_->meters().size(), 2u);
  EXPECT_EQ(monitor_->meters()[1]->name(), "fake-dram");
}

TEST_F(MonitorTest, SyncCalledBeforeEveryReading) {
  EXPECT_EQ(sync_calls_, 1);  // construction
  monitor_->BeginWindow("a");
  monitor_->EndWindow("a");
  monitor_->Total();
  EXPECT_EQ(sync_calls_, 4);
  EXPECT_EQ(device_->read_count(), 4u);
}

TEST_F(MonitorTest, MisuseIsABrokenInvariant) {
  monitor_->BeginWindow("rollout");
  EXPECT_THROW(monitor_->BeginWindow("rollout"), InternalError);
  EXPECT_THROW(monitor_->EndWindow("update"), InternalError);
  monitor_->EndWindow("rollout");
  EXPECT_THROW(monitor_->EndWindow("rollout"), InternalError);
}

// A power-integrating meter (a GPU without an energy counter) is sampled at each reading: a
// window at a constant 100 W from t = 1 s to t = 3.5 s holds 250 J with no sampler running
// (before, 0 J: the integral stopped at the last sampler tick), and a sampler tick at a time
// not after the last reading adds nothing and is not counted as rejected.
TEST(EnergyMonitorTest, IntegratingMetersAreSampledAtEveryReading) {
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<IntegratedMeter>("power", std::vector<std::string>{"gpu:0"},
                                                     Scope::kDevice, [](std::vector<double>* w) {
                                                       *w = {100.0};
                                                       return true;
                                                     }));
  EnergyMonitor monitor(std::move(meters), clock);
  clock.AdvanceS(1.0);
  monitor.BeginWindow("update");
  clock.AdvanceS(2.5);
  EXPECT_DOUBLE_EQ(monitor.EndWindow("update").energy_j.at("gpu:0"), 250.0);
  monitor.SampleAll(3.0);  // older than the last reading: skipped
  EXPECT_DOUBLE_EQ(monitor.Total().energy_j.at("gpu:0"), 350.0);
  for (const auto& [key, value] : monitor.meters()[0]->Details()) {
    if (key == "rejected_samples") {
      EXPECT_EQ(value, "0");
    }
  }
}

TEST(EnergyMonitorTest, DuplicateDomainAcrossMetersIsRejected) {
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  EXPECT_THROW(EnergyMonitor(std::move(meters), clock), InternalError);
}

TEST(EnergyMonitorTest, AdditiveDomainNamingRule) {
  EXPECT_TRUE(IsAdditiveDomain("cpu:package-0"));
  EXPECT_TRUE(IsAdditiveDomain("dram:1"));
  EXPECT_TRUE(IsAdditiveDomain("gpu:0"));
  EXPECT_TRUE(IsAdditiveDomain("cpu:process"));
  EXPECT_FALSE(IsAdditiveDomain("cpu:package-0/core"));
  EXPECT_FALSE(IsAdditiveDomain("cpu:package-1/uncore"));
  EXPECT_FALSE(IsAdditiveDomain("psys:0"));
}

// Non-additive domains are windowed and reported per domain, but sums skip them.
TEST(EnergyMonitorTest, NonAdditiveDomainsAreReportedButNotSummed) {
  FakeClock clock;
  auto meter = std::make_unique<FakeMeter>(
      std::vector<std::string>{"cpu:package-0", "cpu:package-0/core", "psys:0"});
  FakeMeter* fake = meter.get();
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::move(meter));
  EnergyMonitor monitor(std::move(meters), clock);
  EXPECT_EQ(monitor.domains()[0].additive, true);
  EXPECT_EQ(monitor.domains()[1].additive, false);
  EXPECT_EQ(monitor.domains()[2].additive, false);
  monitor.BeginWindow("update");
  clock.AdvanceS(2.0);
  fake->SetEnergyJ({10.0, 6.0, 25.0});
  const Measurement window = monitor.EndWindow("update");
  EXPECT_EQ(window.energy_j,
            (EnergyJ{{"cpu:package-0", 10.0}, {"cpu:package-0/core", 6.0}, {"psys:0", 25.0}}));
  EXPECT_EQ(window.total_energy_j(), 10.0);
  EXPECT_EQ(monitor.Total().total_energy_j(), 10.0);
  EXPECT_EQ(monitor.TotalsFor("update").sum.total_energy_j(), 10.0);
}

// A meter that records the times its Sample() hook was called.
class SampleRecordingMeter final : public EnergyMeter {
 public:
  std::string name() const override { return "recording"; }
  std::vector<std::string> domains() const override { return {"gpu:0"}; }
  Provenance provenance() const override { return Provenance::kIntegrated; }
  Scope scope() const override { return Scope::kDevice; }
  std::vector<double> ReadEnergyJ() override { return {energy_j}; }
  std::vector<std::pair<std::string, std::string>> Details() const override { return {}; }
  void Sample(double now_s) override {
    if (!sample_times_s.empty() && now_s <= sample_times_s.back()) return;  // meter.h's contract
    sample_times_s.push_back(now_s);
    energy_j += 5.0;  // integrates a 5 J step per sample
  }

  double energy_j = 100.0;
  std::vector<double> sample_times_s;
};

TEST(EnergyMonitorTest, SampleAllCallsSampleThenReadsSinceStart) {
  FakeClock clock(/*start_s=*/50.0);
  auto recording = std::make_unique<SampleRecordingMeter>();
  auto fake = std::make_unique<FakeMeter>(std::vector<std::string>{"cpu:package-0"});
  SampleRecordingMeter* recording_ptr = recording.get();
  FakeMeter* fake_ptr = fake.get();
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::move(recording));
  meters.push_back(std::move(fake));
  int sync_calls = 0;
  EnergyMonitor monitor(std::move(meters), clock, [&sync_calls] { ++sync_calls; });
  fake_ptr->SetEnergyJ(0, 7.5);
  const CumulativeReading first = monitor.SampleAll(51.0);
  EXPECT_EQ(first.time_s, 51.0);
  EXPECT_EQ(first.energy_j, (std::vector<double>{5.0, 7.5}));  // since construction
  const CumulativeReading second = monitor.SampleAll(52.0);
  EXPECT_EQ(second.energy_j, (std::vector<double>{10.0, 7.5}));
  // The monitor's own first reading (at construction, t = 50 s) samples too: kIntegrated.
  EXPECT_EQ(recording_ptr->sample_times_s, (std::vector<double>{50.0, 51.0, 52.0}));
  EXPECT_EQ(sync_calls, 1);  // construction only: the sampler never syncs the device
  // Windows see what Sample() integrated; a reading at the clock's 50 s adds no sample.
  EXPECT_EQ(monitor.Total().energy_j.at("gpu:0"), 10.0);
}

// ../shared/STYLE.md point 7: windows shorter than the slowest meter's update period are
// counted per key, and the first of each key is warned about once, naming key, both durations and
// the meter; a meter that follows every reading (period 0) never makes a window short.
TEST(EnergyMonitorTest, CountsAndWarnsOnceAboutWindowsShorterThanTheUpdatePeriod) {
  FakeClock clock(/*start_s=*/10.0);
  auto counter = std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"},
                                             Provenance::kMeasured, Scope::kDevice, "slow");
  counter->SetUpdatePeriodS(0.125);  // binary-exact, as the clock's sums below
  auto follows = std::make_unique<FakeMeter>(std::vector<std::string>{"cpu:process"},
                                             Provenance::kEstimated, Scope::kProcess, "model");
  follows->SetUpdatePeriodS(0.0);
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::move(follows));
  meters.push_back(std::move(counter));
  std::vector<std::string> warnings;
  EnergyMonitor monitor(std::move(meters), clock, {},
                        [&warnings](const std::string& message) { warnings.push_back(message); });
  EXPECT_EQ(monitor.update_period_s(), 0.125);
  auto window = [&](const std::string& key, double duration_s) {
    monitor.BeginWindow(key);
    clock.AdvanceS(duration_s);
    monitor.EndWindow(key);
  };
  window("update", 0.25);   // longer: not counted
  window("update", 0.125);  // exactly one period: not counted
  EXPECT_EQ(monitor.TotalsFor("update").short_count, 0);
  EXPECT_TRUE(warnings.empty());
  window("update", 0.0005);
  window("update", 0.05);
  window("rollout", 0.002);
  EXPECT_EQ(monitor.TotalsFor("update").count, 4);
  EXPECT_EQ(monitor.TotalsFor("update").short_count, 2);
  EXPECT_EQ(monitor.TotalsFor("rollout").short_count, 1);
  ASSERT_EQ(warnings.size(), 2u);  // one per key
  EXPECT_EQ(warnings[0],
            "energy window 'update' lasted 0.5 ms, less than the 125 ms between updates of meter "
            "'slow': one such window reads what the meter last updated (0 J, a whole step, or a "
            "stale power), so only sums over many windows mean something (the run's total is "
            "unaffected); energy.json counts them as windows.update.short_windows");
  EXPECT_NE(warnings[1].find("energy window 'rollout' lasted 2 ms"), std::string::npos);

  // Meters with no update period: no window is short, however brief.
  std::vector<std::unique_ptr<EnergyMeter>> live;
  live.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"cpu:process"}));
  EnergyMonitor live_monitor(std::move(live), clock, {},
                             [&warnings](const std::string& m) { warnings.push_back(m); });
  EXPECT_EQ(live_monitor.update_period_s(), 0.0);
  live_monitor.BeginWindow("rollout");
  clock.AdvanceS(1e-6);
  live_monitor.EndWindow("rollout");
  EXPECT_EQ(live_monitor.TotalsFor("rollout").short_count, 0);
  EXPECT_EQ(warnings.size(), 2u);
}

}  // namespace
}  // namespace greenrl::energy
