#include "greenrl/energy/integrated_meter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

namespace greenrl::energy {
namespace {

TEST(PowerIntegratorTest, TrapezoidOverUnevenSamples) {
  PowerIntegrator integrator;
  EXPECT_TRUE(integrator.AddSample(0.0, 100.0));
  EXPECT_EQ(integrator.energy_j(), 0.0);
  EXPECT_TRUE(integrator.AddSample(1.0, 200.0));
  EXPECT_EQ(integrator.energy_j(), 150.0);  // (100 + 200) / 2 x 1 s
  EXPECT_TRUE(integrator.AddSample(3.0, 200.0));
  EXPECT_EQ(integrator.energy_j(), 550.0);  // + (200 + 200) / 2 x 2 s
  EXPECT_EQ(integrator.sample_count(), 3);
  EXPECT_EQ(integrator.last_time_s(), 3.0);
  EXPECT_EQ(integrator.last_power_w(), 200.0);
}

TEST(PowerIntegratorTest, RejectsNonIncreasingTimeAndBadPower) {
  PowerIntegrator integrator;
  ASSERT_TRUE(integrator.AddSample(10.0, 50.0));
  EXPECT_FALSE(integrator.AddSample(10.0, 80.0));  // same time
  EXPECT_FALSE(integrator.AddSample(9.0, 80.0));   // backwards
  EXPECT_FALSE(integrator.AddSample(11.0, -1.0));
  EXPECT_FALSE(integrator.AddSample(11.0, std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(integrator.AddSample(std::numeric_limits<double>::infinity(), 1.0));
  EXPECT_EQ(integrator.rejected_count(), 5);
  EXPECT_TRUE(integrator.AddSample(10.5, 70.0));
  EXPECT_EQ(integrator.energy_j(), 30.0);  // (50 + 70) / 2 x 0.5 s
}

TEST(IntegratedMeterTest, SamplesEveryDomainAndSkipsFailedReads) {
  std::vector<std::vector<double>> script = {{100.0, 10.0}, {200.0, 20.0}, {}, {200.0, 30.0}};
  std::size_t next = 0;
  IntegratedMeter meter("power", {"gpu:0", "gpu:1"}, Scope::kDevice,
                        [&](std::vector<double>* power_w) {
                          const std::vector<double>& row = script[next++];
                          if (row.empty()) return false;
                          *power_w = row;
                          return true;
                        });
  EXPECT_EQ(meter.provenance(), Provenance::kIntegrated);
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{0.0, 0.0}));
  meter.Sample(0.0);
  meter.Sample(1.0);
  meter.Sample(2.0);  // read fails: the next trapezoid spans 1 s .. 3 s
  meter.Sample(3.0);
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{550.0, 15.0 + 50.0}));
  std::map<std::string, std::string> details;
  for (const auto& [key, value] : meter.Details()) details[key] = value;
  EXPECT_EQ(details["samples"], "3");
  EXPECT_EQ(details["failed_reads"], "1");
}

}  // namespace
}  // namespace greenrl::energy
