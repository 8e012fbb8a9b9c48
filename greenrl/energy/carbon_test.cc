#include "greenrl/energy/carbon.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "greenrl/core/errors.h"

namespace greenrl::energy {
namespace {

using ::testing::HasSubstr;

constexpr double kJoulesPerKwh = 3.6e6;

TEST(CarbonTest, FormulaWithOverrides) {
  CarbonOptions options;
  options.intensity_g_per_kwh = 400.0;
  options.pue = 1.5;
  // 2 kWh x 1.5 x 400 g/kWh / 1000 = 1.2 kg.
  const CarbonResult result = ComputeCarbon(2.0 * kJoulesPerKwh, options);
  EXPECT_EQ(result.energy_kwh, 2.0);
  EXPECT_EQ(result.pue, 1.5);
  EXPECT_EQ(result.intensity_g_per_kwh, 400.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 1.2);
  EXPECT_EQ(result.region, "world");
  EXPECT_EQ(result.intensity_source, "override (carbon.intensity_g_per_kwh)");
  EXPECT_FALSE(result.intensity_is_default);
}

TEST(CarbonTest, RegionFromTable) {
  CarbonOptions options;
  options.region = "FR";
  // 10 kWh x 1.0 x 56.0 g/kWh / 1000 = 0.56 kg.
  const CarbonResult result = ComputeCarbon(10.0 * kJoulesPerKwh, options);
  EXPECT_EQ(result.region, "FR");
  EXPECT_EQ(result.intensity_g_per_kwh, 56.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 0.56);
  EXPECT_THAT(result.intensity_source, HasSubstr("Our World in Data"));
  EXPECT_THAT(result.intensity_source, HasSubstr("France, 2023"));
  EXPECT_FALSE(result.intensity_is_default);

  // Names and lower case work; a 2022 entry says so.
  options.region = "indonesia";
  const CarbonResult indonesia = ComputeCarbon(kJoulesPerKwh, options);
  EXPECT_EQ(indonesia.region, "ID");
  EXPECT_EQ(indonesia.intensity_g_per_kwh, 675.9);
  EXPECT_THAT(indonesia.intensity_source, HasSubstr("Indonesia, 2022"));
  EXPECT_EQ(FindRegion("uk")->code, std::string("GB"));
  EXPECT_EQ(FindRegion("United States")->intensity_g_per_kwh, 369.5);
  EXPECT_EQ(FindRegion("de")->intensity_g_per_kwh, 381.0);
  EXPECT_EQ(RegionIntensities().size(), 26u);
}

TEST(CarbonTest, WorldDefault) {
  const CarbonResult result = ComputeCarbon(kJoulesPerKwh, CarbonOptions{});
  EXPECT_EQ(result.intensity_g_per_kwh, 481.0);
  EXPECT_EQ(result.pue, 1.0);
  EXPECT_DOUBLE_EQ(result.kg_co2e, 0.481);
  EXPECT_TRUE(result.intensity_is_default);
  EXPECT_EQ(result.region, "world");
  EXPECT_EQ(result.intensity_source, "Ember world average, 2023");
}

TEST(CarbonTest, OverrideWinsOverRegion) {
  CarbonOptions options;
  options.region = "de";
  options.intensity_g_per_kwh = 0.0;
  const CarbonResult result = ComputeCarbon(kJoulesPerKwh, options);
  EXPECT_EQ(result.region, "DE");
  EXPECT_EQ(result.kg_co2e, 0.0);
}

// Expects ComputeCarbon(options) to throw a ConfigError naming `field`; returns its message.
std::string ExpectConfigError(const CarbonOptions& options, const std::string& field) {
  try {
    ComputeCarbon(1.0, options);
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), field);
    return error.what();
  }
  ADD_FAILURE() << "no ConfigError for " << field;
  return "";
}

TEST(CarbonTest, ErrorsNameTheirFields) {
  CarbonOptions region;
  region.region = "Atlantis";
  const std::string message = ExpectConfigError(region, "carbon.region");
  EXPECT_THAT(message, HasSubstr("got 'Atlantis'"));
  EXPECT_THAT(message, HasSubstr("one of: AU, BR, CA"));

  for (double bad :
       {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    CarbonOptions intensity;
    intensity.intensity_g_per_kwh = bad;
    ExpectConfigError(intensity, "carbon.intensity_g_per_kwh");
  }
  for (double bad : {0.99, 0.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    CarbonOptions pue;
    pue.pue = bad;
    ExpectConfigError(pue, "carbon.pue");
  }
  EXPECT_THROW(ComputeCarbon(-1.0, CarbonOptions{}), InternalError);
}

}  // namespace
}  // namespace greenrl::energy
