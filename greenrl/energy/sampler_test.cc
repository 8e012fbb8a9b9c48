#include "greenrl/energy/sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "greenrl/core/errors.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/energy/internal/fake_powercap.h"
#include "greenrl/energy/rapl_meter.h"

namespace greenrl::energy {
namespace {

using ::testing::HasSubstr;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// An EnergyMonitor on `clock` over one FakeMeter with the single domain `domain`; `fake` stays
// valid while `monitor` lives.
struct OneMeterMonitor {
  OneMeterMonitor(const std::string& domain, const Clock& clock) {
    auto meter = std::make_unique<FakeMeter>(std::vector<std::string>{domain});
    fake = meter.get();
    std::vector<std::unique_ptr<EnergyMeter>> meters;
    meters.push_back(std::move(meter));
    monitor = std::make_unique<EnergyMonitor>(std::move(meters), clock);
  }
  FakeMeter* fake = nullptr;
  std::unique_ptr<EnergyMonitor> monitor;
};

// One scripted wake-up of the sampler thread: the clock time it wakes at and the energy each
// domain gained since the previous wake-up.
struct Wake {
  double now_s;
  std::vector<double> added_j;
};

// A monitor over a FakeMeter with a package, a package part and psys (the last two non-additive,
// still sampled), and a FakeClock driven by a scripted sleep_until.
class SamplerScriptTest : public ::testing::Test {
 protected:
  SamplerScriptTest() : clock_(/*start_s=*/100.0) {
    auto meter = std::make_unique<FakeMeter>(
        std::vector<std::string>{"cpu:package-0", "cpu:package-0/core", "psys:0"});
    meter_ = meter.get();
    std::vector<std::unique_ptr<EnergyMeter>> meters;
    meters.push_back(std::move(meter));
    monitor_ = std::make_unique<EnergyMonitor>(std::move(meters), clock_);
  }

  // Options whose sleep_until plays `script` (runs on the sampler thread, which alone touches
  // the clock while it runs), recording each deadline, then returns false to end the thread.
  SamplerOptions ScriptedOptions(std::vector<Wake> script) {
    SamplerOptions options;
    options.sleep_until = [this, script, next = size_t{0}](double deadline_s) mutable {
      deadlines_s_.push_back(deadline_s);
      if (next == script.size()) return false;
      const Wake& wake = script[next++];
      clock_.AdvanceS(wake.now_s - clock_.NowS());
      for (size_t i = 0; i < wake.added_j.size(); ++i) meter_->AddEnergyJ(i, wake.added_j[i]);
      return true;
    };
    options.unix_time_s = [this] { return 1.7e9 + clock_.NowS(); };
    options.warn = [this](const std::string& message) { warnings_.push_back(message); };
    return options;
  }

  FakeClock clock_;
  FakeMeter* meter_ = nullptr;
  std::unique_ptr<EnergyMonitor> monitor_;
  std::vector<double> deadlines_s_;
  std::vector<std::string> warnings_;
  internal::FakePowercap dir_;  // a temporary directory for power.csv
};

// Period 0.5 s from t = 100 s. Wake-ups: on time; 0.25 s late (half a period: not a miss); 1.25 s
// late (ticks 101.5 and 102.0 missed, 102.75 serves tick 102.5, next tick 103.0: no burst); on
// time; 1.125 s late (two more misses, no second warning).
TEST_F(SamplerScriptTest, ExactRowsMissesAndCsv) {
  const std::string csv_path = dir_.root() + "/power.csv";
  SamplerOptions options = ScriptedOptions({
      {100.5, {10.0, 5.0, 20.0}},
      {101.25, {15.0, 3.0, 30.0}},
      {102.75, {30.0, 6.0, 60.0}},
      {103.0, {5.0, 1.0, 10.0}},
      {104.625, {13.0, 6.5, 26.0}},
  });
  options.power_csv_path = csv_path;
  Sampler sampler(*monitor_, clock_, /*period_s=*/0.5, std::move(options));
  EXPECT_EQ(sampler.domain_names(),
            (std::vector<std::string>{"cpu:package-0", "cpu:package-0/core", "psys:0"}));
  sampler.Start();
  sampler.Stop();  // the script ends the thread; Stop() joins it

  EXPECT_EQ(deadlines_s_, (std::vector<double>{100.5, 101.0, 101.5, 103.0, 103.5, 105.0}));
  const std::vector<PowerRow> rows = sampler.rows();
  ASSERT_EQ(rows.size(), 5u);
  const std::vector<double> time_s = {0.5, 1.25, 2.75, 3.0, 4.625};
  const std::vector<double> duration_s = {0.5, 0.75, 1.5, 0.25, 1.625};
  const std::vector<std::vector<double>> energy_j = {
      {10.0, 5.0, 20.0}, {15.0, 3.0, 30.0}, {30.0, 6.0, 60.0}, {5.0, 1.0, 10.0}, {13.0, 6.5, 26.0}};
  const std::vector<std::vector<double>> power_w = {{20.0, 10.0, 40.0},
                                                    {20.0, 4.0, 40.0},
                                                    {20.0, 4.0, 40.0},
                                                    {20.0, 4.0, 40.0},
                                                    {8.0, 4.0, 16.0}};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].time_s, time_s[i]) << i;
    EXPECT_EQ(rows[i].unix_time_s, 1.7e9 + 100.0 + time_s[i]) << i;
    EXPECT_EQ(rows[i].duration_s, duration_s[i]) << i;
    EXPECT_EQ(rows[i].energy_j, energy_j[i]) << i;
    EXPECT_EQ(rows[i].power_w, power_w[i]) << i;
  }
  EXPECT_EQ(sampler.missed_ticks(), 4);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_THAT(warnings_[0], HasSubstr("the tick due at 1.5 s ran at 2.75 s (period 0.5 s), 2 "
                                      "tick(s) missed; skipping to the next tick"));
  EXPECT_EQ(ReadText(csv_path),
            "time_s,cpu:package-0_w,cpu:package-0/core_w,psys:0_w\n"
            "0.5,20,10,40\n"
            "1.25,20,4,40\n"
            "2.75,20,4,40\n"
            "3,20,4,40\n"
            "4.625,8,4,16\n");
  // The rows add up to the monitor's total per domain; the total itself skips core and psys.
  const Measurement total = monitor_->Total();
  EXPECT_EQ(total.energy_j.at("psys:0"), 146.0);
  EXPECT_EQ(total.total_energy_j(), 73.0);
  EXPECT_GE(sampler.cpu_time_s(), 0.0);
}

// An early wake-up (clock short of the deadline) sleeps again without recording.
TEST_F(SamplerScriptTest, EarlyWakeSleepsAgain) {
  Sampler sampler(*monitor_, clock_, /*period_s=*/1.0,
                  ScriptedOptions({{100.25, {1.0, 0.0, 0.0}}, {101.0, {1.0, 0.0, 0.0}}}));
  sampler.Start();
  sampler.Stop();
  EXPECT_EQ(deadlines_s_, (std::vector<double>{101.0, 101.0, 102.0}));
  ASSERT_EQ(sampler.rows().size(), 1u);
  EXPECT_EQ(sampler.rows()[0].energy_j, (std::vector<double>{2.0, 0.0, 0.0}));
  EXPECT_EQ(sampler.missed_ticks(), 0);
}

// A meter that fails on its third reading (monitor construction and Start() take the first two).
class FailingMeter final : public EnergyMeter {
 public:
  std::string name() const override { return "failing"; }
  std::vector<std::string> domains() const override { return {"gpu:0"}; }
  Provenance provenance() const override { return Provenance::kMeasured; }
  Scope scope() const override { return Scope::kDevice; }
  std::vector<double> ReadEnergyJ() override {
    if (++reads_ == 3) throw std::runtime_error("counter vanished");
    return {0.0};
  }
  std::vector<std::pair<std::string, std::string>> Details() const override { return {}; }

 private:
  int reads_ = 0;
};

TEST(SamplerTest, ThreadExceptionIsRethrownByStop) {
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FailingMeter>());
  EnergyMonitor monitor(std::move(meters), clock);
  SamplerOptions options;
  options.sleep_until = [&clock](double deadline_s) {
    clock.AdvanceS(deadline_s - clock.NowS());
    return true;
  };
  Sampler sampler(monitor, clock, 1.0, std::move(options));
  sampler.Start();
  EXPECT_THROW(
      {
        try {
          sampler.Stop();
        } catch (const std::runtime_error& error) {
          EXPECT_STREQ(error.what(), "counter vanished");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_NO_THROW(sampler.Stop());  // rethrown once
}

TEST(SamplerTest, PeriodMustBePositiveAndFinite) {
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  EnergyMonitor monitor(std::move(meters), clock);
  EXPECT_THROW(Sampler(monitor, clock, 0.0), ConfigError);
  EXPECT_THROW(Sampler(monitor, clock, -1.0), ConfigError);
  EXPECT_THROW(Sampler(monitor, clock, std::nan("")), ConfigError);
  EXPECT_THROW(Sampler(monitor, clock, INFINITY), ConfigError);
}

// The sampler knows the RAPL wrap bound and warns when its period exceeds it: a 1 J range at 10 W
// wraps every 0.1 s.
TEST(SamplerTest, WarnsWhenPeriodExceedsRaplSafePeriod) {
  internal::FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 0, /*max_energy_range_uj=*/1'000'000);
  tree.WriteFile("intel-rapl:0/constraint_0_max_power_uw", "10000000\n");
  std::string why;
  std::unique_ptr<RaplMeter> rapl = RaplMeter::TryCreate(tree.root(), &why);
  ASSERT_NE(rapl, nullptr) << why;
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::move(rapl));
  EnergyMonitor monitor(std::move(meters), clock);
  std::vector<std::string> warnings;
  SamplerOptions options;
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  Sampler fast(monitor, clock, 0.05, options);
  EXPECT_DOUBLE_EQ(fast.MaxSafePeriodS(), 0.1);
  EXPECT_TRUE(warnings.empty());
  Sampler slow(monitor, clock, 1.0, options);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("sampling period 1 s is longer than 0.1 s"));

  // Without a RAPL meter there is no bound.
  std::vector<std::unique_ptr<EnergyMeter>> fakes;
  fakes.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  EnergyMonitor fake_monitor(std::move(fakes), clock);
  EXPECT_EQ(Sampler(fake_monitor, clock, 1.0).MaxSafePeriodS(), INFINITY);
}

TEST(SamplerTest, UnwritableCsvIsWarnedAndRowsAreKept) {
  FakeClock clock;
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  EnergyMonitor monitor(std::move(meters), clock);
  std::vector<std::string> warnings;
  SamplerOptions options;
  options.power_csv_path = "/nonexistent/greenrl/power.csv";
  options.warn = [&warnings](const std::string& message) { warnings.push_back(message); };
  int wakes = 0;
  options.sleep_until = [&clock, &wakes](double deadline_s) {
    if (++wakes > 2) return false;
    clock.AdvanceS(deadline_s - clock.NowS());
    return true;
  };
  Sampler sampler(monitor, clock, 1.0, std::move(options));
  sampler.Start();
  sampler.Stop();
  EXPECT_EQ(sampler.rows().size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("cannot write /nonexistent/greenrl/power.csv"));
}

// The real thread on the steady clock: rows appear at a 10 ms period and Stop() joins promptly.
// Only generous bounds: CI machines are slow and shared.
TEST(SamplerTest, RealThreadRecordsRowsAndStopsPromptly) {
  const SteadyClock& clock = SteadyClock::Instance();
  OneMeterMonitor m("cpu:package-0", clock);
  FakeMeter* fake = m.fake;
  EnergyMonitor& monitor = *m.monitor;
  internal::FakePowercap dir;
  SamplerOptions options;
  options.power_csv_path = dir.root() + "/power.csv";
  options.warn = [](const std::string&) {};  // misses are possible on a loaded machine
  Sampler sampler(monitor, clock, /*period_s=*/0.01, std::move(options));
  sampler.Start();
  for (int i = 0; i < 10; ++i) {
    fake->AddEnergyJ(0, 1.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto stop_begin = std::chrono::steady_clock::now();
  sampler.Stop();
  const double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_begin).count();
  EXPECT_LT(stop_s, 1.0);
  const std::vector<PowerRow> rows = sampler.rows();
  EXPECT_GE(rows.size(), 2u);
  EXPECT_LE(rows.size(), 200u);
  double sum_j = 0.0;
  for (const PowerRow& row : rows) {
    EXPECT_GT(row.duration_s, 0.0);
    EXPECT_GT(row.unix_time_s, 1.6e9);  // after 2020
    sum_j += row.energy_j[0];
  }
  EXPECT_LE(sum_j, 10.0);
  EXPECT_GE(sampler.cpu_time_s(), 0.0);
  EXPECT_LT(sampler.cpu_time_s(), 1.0);
  // Header plus one line per row, each flushed as it was written.
  const std::string csv = ReadText(dir.root() + "/power.csv");
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), rows.size() + 1);
}

// A run shorter than one period still gets a row: Stop() records the partial period (here 0.4 s
// of a 1 s period, 2 J), once, also in power.csv; under 1% of a period it records nothing.
TEST(SamplerTest, StopRecordsThePartialPeriodOnce) {
  for (const double elapsed_s : {0.4, 0.005}) {
    SCOPED_TRACE(elapsed_s);
    FakeClock clock;
    OneMeterMonitor m("gpu:0", clock);
    FakeMeter* fake = m.fake;
    EnergyMonitor& monitor = *m.monitor;
    internal::FakePowercap dir;
    SamplerOptions options;
    options.power_csv_path = dir.root() + "/power.csv";
    options.sleep_until = [](double) { return false; };  // the thread ends before any tick
    Sampler sampler(monitor, clock, /*period_s=*/1.0, std::move(options));
    sampler.Start();
    clock.AdvanceS(elapsed_s);
    fake->AddEnergyJ(0, 2.0);
    sampler.Stop();
    sampler.Stop();  // idempotent: no second row
    const std::vector<PowerRow> rows = sampler.rows();
    const std::string csv = ReadText(dir.root() + "/power.csv");
    if (elapsed_s < 0.01) {
      EXPECT_TRUE(rows.empty());
      EXPECT_EQ(csv, "time_s,gpu:0_w\n");
      continue;
    }
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_DOUBLE_EQ(rows[0].time_s, 0.4);
    EXPECT_DOUBLE_EQ(rows[0].duration_s, 0.4);
    EXPECT_EQ(rows[0].energy_j, std::vector<double>{2.0});
    EXPECT_DOUBLE_EQ(rows[0].power_w[0], 5.0);
    EXPECT_EQ(csv, "time_s,gpu:0_w\n0.4,5\n");
  }
}

// A long period must not delay Stop(): the condition variable wakes the thread.
TEST(SamplerTest, StopInterruptsALongSleep) {
  const SteadyClock& clock = SteadyClock::Instance();
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  EnergyMonitor monitor(std::move(meters), clock);
  Sampler sampler(monitor, clock, /*period_s=*/60.0);
  sampler.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto stop_begin = std::chrono::steady_clock::now();
  sampler.Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_begin).count(),
            1.0);
  EXPECT_TRUE(sampler.rows().empty());
  EXPECT_TRUE(sampler.stop_requested());
}

// The destructor stops and joins a running sampler.
TEST(SamplerTest, DestructorStops) {
  const SteadyClock& clock = SteadyClock::Instance();
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  meters.push_back(std::make_unique<FakeMeter>(std::vector<std::string>{"gpu:0"}));
  EnergyMonitor monitor(std::move(meters), clock);
  {
    Sampler sampler(monitor, clock, /*period_s=*/0.005);
    sampler.Start();
    EXPECT_THROW(sampler.Start(), InternalError);
  }
  SUCCEED();
}

}  // namespace
}  // namespace greenrl::energy
