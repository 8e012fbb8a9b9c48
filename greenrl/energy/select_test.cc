#include "greenrl/energy/select.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "greenrl/core/errors.h"
#include "greenrl/energy/internal/fake_powercap.h"

namespace greenrl::energy {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(SelectMeterTest, AutoUsesRaplWhenReadable) {
  internal::FakePowercap tree;
  tree.AddZone("intel-rapl:0", "package-0", 1'000'000);
  MeterOptions options;
  options.powercap_root = tree.root();
  MeterChoice choice = SelectMeter(options);
  ASSERT_NE(choice.meter, nullptr);
  EXPECT_EQ(choice.meter->name(), "rapl");
  EXPECT_EQ(choice.reason, "using RAPL (measured) under " + tree.root() + ": cpu:package-0");
  EXPECT_EQ(choice.brief, "RAPL (measured): cpu:package-0");
}

TEST(SelectMeterTest, AutoFallsBackToEstimatorWithOneReason) {
  internal::FakePowercap empty;
  MeterOptions options;
  options.powercap_root = empty.root();
  MeterChoice choice = SelectMeter(options);
  ASSERT_NE(choice.meter, nullptr);
  EXPECT_EQ(choice.meter->name(), "estimator");
  EXPECT_EQ(choice.reason, "RAPL unavailable: " + empty.root() +
                               " has no intel-rapl zones; using CPU-time estimator (estimate, 12 "
                               "W per core, Green Algorithms default)");
  EXPECT_EQ(choice.brief,
            "CPU-time estimator (estimate, 12 W per core, Green Algorithms default; RAPL "
            "unavailable)");
}

// energy.meter: rapl asks for measured figures: where RAPL cannot be read it is a ConfigError
// saying why and which values would run, never an estimate in its place.
TEST(SelectMeterTest, RequestedRaplThatCannotBeReadIsRefused) {
  MeterOptions options;
  options.meter = "rapl";
  options.powercap_root = "/nonexistent/greenrl/powercap";
  options.watts_per_core = 8.0;
  try {
    SelectMeter(options);
    ADD_FAILURE() << "no error for an unreadable RAPL with energy.meter rapl";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "energy.meter");
    EXPECT_THAT(e.what(), StartsWith("energy.meter: got 'rapl'; auto or estimator on this "
                                     "machine, where RAPL is unavailable (/nonexistent/greenrl/"
                                     "powercap does not exist"));
    EXPECT_THAT(e.what(), HasSubstr("auto falls back to the CPU-time estimator"));
  }
  options.meter = "auto";  // the same machine under auto: the estimator, with the reason
  const MeterChoice choice = SelectMeter(options);
  EXPECT_EQ(choice.meter->name(), "estimator");
  EXPECT_THAT(choice.reason, StartsWith("RAPL unavailable: /nonexistent/greenrl/powercap does "
                                        "not exist"));
  EXPECT_THAT(choice.reason, HasSubstr("using CPU-time estimator (estimate, 8 W per core)"));
  EXPECT_EQ(static_cast<const EstimatorMeter&>(*choice.meter).watts_per_core(), 8.0);
}

TEST(SelectMeterTest, EstimatorOnRequest) {
  MeterOptions options;
  options.meter = "estimator";
  MeterChoice choice = SelectMeter(options);
  EXPECT_EQ(choice.meter->name(), "estimator");
  EXPECT_THAT(choice.reason, StartsWith("energy.meter=estimator"));
  EXPECT_EQ(choice.brief,
            "CPU-time estimator (estimate, 12 W per core, Green Algorithms default; "
            "energy.meter=estimator)");
}

TEST(SelectMeterTest, InvalidOptionsNameTheirField) {
  MeterOptions bad_meter;
  bad_meter.meter = "nvml-please";
  try {
    SelectMeter(bad_meter);
    FAIL() << "accepted meter " << bad_meter.meter;
  } catch (const ConfigError& error) {
    EXPECT_EQ(error.field(), "energy.meter");
    EXPECT_THAT(error.what(), HasSubstr("one of: auto, rapl, estimator"));
  }
  for (double bad : {0.0, -3.0, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    MeterOptions options;
    options.watts_per_core = bad;
    try {
      SelectMeter(options);
      FAIL() << "accepted watts_per_core " << bad;
    } catch (const ConfigError& error) {
      EXPECT_EQ(error.field(), "energy.watts_per_core");
    }
  }
  EXPECT_EQ(MeterKinds(), (std::vector<std::string>{"auto", "rapl", "estimator"}));
}

TEST(SelectMeterTest, NoNvmlMeansNoGpuMeterAndSaysWhy) {
  MeterOptions options;
  options.powercap_root = "/nonexistent/greenrl/powercap";
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  MeterChoice choice = SelectMeter(options);
  EXPECT_EQ(choice.gpu_meter, nullptr);
  EXPECT_THAT(choice.gpu_reason, StartsWith("no GPU meter: "));
  EXPECT_EQ(choice.gpu_brief, "no GPU meter");
  options.gpu = "off";
  choice = SelectMeter(options);
  EXPECT_EQ(choice.gpu_meter, nullptr);
  EXPECT_EQ(choice.gpu_reason, "energy.gpu=off: GPUs are not metered");
  EXPECT_EQ(choice.gpu_brief, "GPUs not metered (energy.gpu=off)");
  options.gpu = "maybe";
  EXPECT_THROW(SelectMeter(options), ConfigError);
}

}  // namespace
}  // namespace greenrl::energy
