#include "greenrl/energy/estimator_meter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

using ::testing::HasSubstr;

TEST(EstimatorMeterTest, ExactJoulesFromScriptedCpuSeconds) {
  double cpu_s = 10.0;  // CPU seconds already used before the meter exists: not counted
  EstimatorMeter meter(/*watts_per_core=*/12.0, [&cpu_s] { return cpu_s; });
  EXPECT_EQ(meter.name(), "estimator");
  EXPECT_EQ(meter.domains(), (std::vector<std::string>{"cpu:process"}));
  EXPECT_EQ(meter.provenance(), Provenance::kEstimated);
  EXPECT_EQ(meter.scope(), Scope::kProcess);
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{0.0}));
  cpu_s = 12.5;  // 2.5 core-seconds x 12 W = 30 J
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{30.0}));
  cpu_s = 14.0;  // 4 core-seconds (e.g. 2 threads for 1 s each, twice) x 12 W = 48 J
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{48.0}));
  cpu_s = 13.0;  // a source stepping back never lowers the cumulative reading
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{48.0}));
}

TEST(EstimatorMeterTest, ConfigurableWattsPerCoreAndDetails) {
  double cpu_s = 0.0;
  EstimatorMeter meter(/*watts_per_core=*/4.0, [&cpu_s] { return cpu_s; });
  cpu_s = 0.75;
  EXPECT_EQ(meter.ReadEnergyJ(), (std::vector<double>{3.0}));
  const auto details = meter.Details();
  ASSERT_EQ(details.size(), 4u);
  EXPECT_EQ(details[1], (std::pair<std::string, std::string>{"watts_per_core", "4"}));
  EXPECT_EQ(details[2].second, "configured (energy.watts_per_core)");
  EXPECT_EQ(details[3], (std::pair<std::string, std::string>{"cpu_seconds_since_start_s", "0.75"}));
}

TEST(EstimatorMeterTest, DefaultIsGreenAlgorithmsPerCoreValue) {
  EXPECT_EQ(kDefaultWattsPerCore, 12.0);
  EstimatorMeter meter;  // real ProcessCpuSeconds
  EXPECT_EQ(meter.watts_per_core(), 12.0);
  EXPECT_THAT(meter.Details()[2].second, HasSubstr("Green Algorithms"));
  const double first_j = meter.ReadEnergyJ()[0];
  volatile double sink = 0.0;
  for (int i = 0; i < 2'000'000; ++i) sink = sink + std::sqrt(static_cast<double>(i));
  const double second_j = meter.ReadEnergyJ()[0];
  EXPECT_GE(first_j, 0.0);
  EXPECT_GE(second_j, first_j);
}

TEST(EstimatorMeterTest, InvalidWattsPerCoreNamesField) {
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    try {
      EstimatorMeter meter(bad, [] { return 0.0; });
      FAIL() << "accepted watts_per_core " << bad;
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "energy.watts_per_core");
    }
  }
}

}  // namespace
}  // namespace greenrl::energy
