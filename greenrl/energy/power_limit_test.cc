#include "greenrl/energy/power_limit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "greenrl/core/errors.h"
#include "greenrl/core/test_paths.h"

namespace greenrl::energy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ChoosePowerLimit: Zeus's cost eta x energy_j + (1 - eta) x max_power_w x time_s on a hand table.
const std::vector<PowerLimitProfile> kTable = {
    {300.0, 10000.0, 40.0},  // 0.5 x 10000 + 0.5 x 300 x 40 = 11000
    {275.0, 9000.0, 42.0},   // 4500 + 6300 = 10800  <- minimum at eta 0.5
    {250.0, 8200.0, 45.0},   // 4100 + 6750 = 10850
    {225.0, 7800.0, 50.0},   // 3900 + 7500 = 11400
};

TEST(ChoosePowerLimitTest, ZeusCostOnAHandTable) {
  PowerLimitChoice choice = ChoosePowerLimit(kTable, /*max_power_w=*/300.0);
  EXPECT_EQ(choice.limit_w, 275.0);
  EXPECT_EQ(choice.index, 1u);
  EXPECT_THAT(choice.cost_j, ElementsAre(11000.0, 10800.0, 10850.0, 11400.0));
}

TEST(ChoosePowerLimitTest, EtaOneMinimisesEnergyEtaZeroTime) {
  EXPECT_EQ(ChoosePowerLimit(kTable, 300.0, /*eta=*/1.0).limit_w, 225.0);
  EXPECT_EQ(ChoosePowerLimit(kTable, 300.0, /*eta=*/0.0).limit_w, 300.0);
}

TEST(ChoosePowerLimitTest, TiesGoToTheHigherLimit) {
  // 0.5 x 1000 + 0.5 x 100 x 10 = 1000 for both.
  PowerLimitChoice choice =
      ChoosePowerLimit({{150.0, 1000.0, 10.0}, {200.0, 1000.0, 10.0}}, /*max_power_w=*/100.0);
  EXPECT_EQ(choice.limit_w, 200.0);
}

TEST(ChoosePowerLimitTest, BadInputs) {
  EXPECT_THROW(ChoosePowerLimit(kTable, 300.0, /*eta=*/1.5), ConfigError);
  EXPECT_THROW(ChoosePowerLimit(kTable, 300.0, /*eta=*/-0.1), ConfigError);
  EXPECT_THROW(ChoosePowerLimit({}, 300.0), InternalError);
  EXPECT_THROW(ChoosePowerLimit(kTable, 0.0), InternalError);
  EXPECT_THROW(ChoosePowerLimit({{300.0, -1.0, 1.0}}, 300.0), InternalError);
}

TEST(PowerLimitPlanTest, FromMaxDownIn25WattSteps) {
  EXPECT_THAT(PowerLimitPlanW(100.0, 300.0),
              ElementsAre(300.0, 275.0, 250.0, 225.0, 200.0, 175.0, 150.0, 125.0, 100.0));
  // Stops at the last limit that is still within the constraints.
  EXPECT_THAT(PowerLimitPlanW(150.0, 310.0),
              ElementsAre(310.0, 285.0, 260.0, 235.0, 210.0, 185.0, 160.0));
  EXPECT_THAT(PowerLimitPlanW(300.0, 300.0), ElementsAre(300.0));
  EXPECT_THAT(PowerLimitPlanW(100.0, 100.4, /*step_w=*/0.1),
              ElementsAre(100.4, 100.3, 100.2, 100.1, 100.0));
  EXPECT_THROW(PowerLimitPlanW(300.0, 100.0), InternalError);
  EXPECT_THROW(PowerLimitPlanW(100.0, 300.0, /*step_w=*/0.0), InternalError);
}

TEST(PowerLimitPlanTest, Describe) {
  PowerLimitInfo info{"gpu:0", "GPU-1", "NVIDIA A100", 300.0, 300.0, 100.0, 300.0};
  EXPECT_EQ(DescribePowerLimitPlan(info, {300.0, 275.0, 250.0}),
            "gpu:0 (NVIDIA A100, GPU-1): power-limit plan 300, 275, 250 W (constraints 100-300 W, "
            "current 300 W, default 300 W)");
}

// NvmlPowerLimitControl through the fake library (testing/fake_nvml.cc). Every call to the fake's
// nvmlDeviceSetPowerManagementLimit is appended to set_log().
class NvmlPowerLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/greenrl_power_limit_XXXXXX";
    dir_ = ::mkdtemp(dir);
    ::setenv("GREENRL_FAKE_NVML_SET_LOG", (dir_ + "/set.log").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("GREENRL_FAKE_NVML_SCRIPT");
    ::unsetenv("GREENRL_FAKE_NVML_SET_LOG");
    std::filesystem::remove_all(dir_);
  }

  void WriteScript(const std::string& script) {
    std::ofstream(dir_ + "/script") << script;
    ::setenv("GREENRL_FAKE_NVML_SCRIPT", (dir_ + "/script").c_str(), 1);
  }

  // The fake's record of set calls: "<uuid> <mW>" lines; empty when none happened.
  std::vector<std::string> SetLog() const {
    std::vector<std::string> lines;
    std::ifstream in(dir_ + "/set.log");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  std::unique_ptr<NvmlPowerLimitControl> Create(bool dry_run, std::ostream* log = nullptr) {
    WriteScript(
        "device GPU-a100 00000000:07:00.0 NVIDIA A100-SXM4-40GB\n"
        "power_limits 0 100000 400000 400000 400000\n"
        "device GPU-p100 00000000:08:00.0 Tesla P100\n");
    PowerLimitOptions options;
    options.nvml.library_path = test_paths::FakeNvmlLibrary();
    options.nvml.get_env = [](const std::string&) { return std::nullopt; };
    options.dry_run = dry_run;
    options.log = log;
    std::string why_not;
    std::unique_ptr<NvmlPowerLimitControl> control =
        NvmlPowerLimitControl::TryCreate(options, &why_not);
    EXPECT_NE(control, nullptr) << why_not;
    return control;
  }

  std::string dir_;
};

TEST_F(NvmlPowerLimitTest, ReadsLimitsInWatts) {
  auto control = Create(/*dry_run=*/true);
  ASSERT_NE(control, nullptr);
  EXPECT_THAT(control->domains(), ElementsAre("gpu:0", "gpu:1"));
  std::string error;
  std::optional<PowerLimitInfo> info = control->Read("gpu:0", &error);
  ASSERT_TRUE(info.has_value()) << error;
  EXPECT_EQ(info->uuid, "GPU-a100");
  EXPECT_EQ(info->current_limit_w, 400.0);
  EXPECT_EQ(info->default_limit_w, 400.0);
  EXPECT_EQ(info->min_limit_w, 100.0);
  EXPECT_EQ(info->max_limit_w, 400.0);
  EXPECT_FALSE(control->Read("gpu:1", &error).has_value());
  EXPECT_EQ(error,
            "gpu:1 (Tesla P100, GPU-p100): nvmlDeviceGetPowerManagementLimit failed: Not "
            "Supported (NVML error 3)");
  EXPECT_FALSE(control->Read("gpu:7", &error).has_value());
  EXPECT_EQ(error, "no GPU domain 'gpu:7'");
}

TEST_F(NvmlPowerLimitTest, DryRunSetsNothing) {
  std::ostringstream log;
  {
    auto control = Create(/*dry_run=*/true, &log);
    ASSERT_NE(control, nullptr);
    EXPECT_TRUE(control->dry_run());
    PowerLimitSetResult result = control->Set("gpu:0", 275.0);
    EXPECT_TRUE(result.ok);
    EXPECT_FALSE(result.applied);
    EXPECT_EQ(result.line,
              "dry-run: would set power limit of gpu:0 (NVIDIA A100-SXM4-40GB, GPU-a100) from "
              "400 W to 275 W (nvmlDeviceSetPowerManagementLimit, 275000 mW); nothing was "
              "changed");
    EXPECT_EQ(control->Read("gpu:0", nullptr)->current_limit_w, 400.0);
  }  // destruction "restores": in dry-run only a line
  EXPECT_THAT(SetLog(), IsEmpty());
  EXPECT_EQ(log.str(),
            "dry-run: would set power limit of gpu:0 (NVIDIA A100-SXM4-40GB, GPU-a100) from 400 W "
            "to 275 W (nvmlDeviceSetPowerManagementLimit, 275000 mW); nothing was changed\n"
            "dry-run: would restore power limit of gpu:0 (NVIDIA A100-SXM4-40GB, GPU-a100) from "
            "275 W to 400 W (nvmlDeviceSetPowerManagementLimit, 400000 mW); nothing was "
            "changed\n");
}

TEST_F(NvmlPowerLimitTest, RealSetThroughTheFakeCallsOnceAndRestoresAtExit) {
  {
    auto control = Create(/*dry_run=*/false);
    ASSERT_NE(control, nullptr);
    PowerLimitSetResult result = control->Set("gpu:0", 250.0);
    EXPECT_TRUE(result.ok);
    EXPECT_TRUE(result.applied);
    EXPECT_EQ(result.line,
              "Set power limit of gpu:0 (NVIDIA A100-SXM4-40GB, GPU-a100) from 400 W to 250 W "
              "(nvmlDeviceSetPowerManagementLimit, 250000 mW)");
    EXPECT_THAT(SetLog(), ElementsAre("GPU-a100 250000"));
    EXPECT_EQ(control->Read("gpu:0", nullptr)->current_limit_w, 250.0);
  }
  EXPECT_THAT(SetLog(), ElementsAre("GPU-a100 250000", "GPU-a100 400000"));
}

TEST_F(NvmlPowerLimitTest, OutOfConstraintsIsRefusedWithoutACall) {
  auto control = Create(/*dry_run=*/false);
  ASSERT_NE(control, nullptr);
  PowerLimitSetResult result = control->Set("gpu:0", 450.0);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.line,
            "cannot set power limit of gpu:0 (NVIDIA A100-SXM4-40GB, GPU-a100) to 450 W: outside "
            "the constraints 100 W to 400 W");
  EXPECT_FALSE(control->Set("gpu:1", 200.0).ok);  // no limits reported
  EXPECT_TRUE(control->RestoreAll().empty());
  EXPECT_THAT(SetLog(), IsEmpty());
}

TEST_F(NvmlPowerLimitTest, PermissionDeniedSaysRootIsNeeded) {
  WriteScript(
      "device GPU-a100 00000000:07:00.0 NVIDIA A100-SXM4-40GB\n"
      "power_limits 0 100000 400000 400000 400000\n"
      "set_limit_error 0 4\n");
  PowerLimitOptions options;
  options.nvml.library_path = test_paths::FakeNvmlLibrary();
  options.dry_run = false;
  auto control = NvmlPowerLimitControl::TryCreate(options, nullptr);
  ASSERT_NE(control, nullptr);
  PowerLimitSetResult result = control->Set("gpu:0", 300.0);
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.applied);
  EXPECT_THAT(result.line, HasSubstr("Insufficient Permissions (NVML error 4); setting a power "
                                     "limit needs root"));
  EXPECT_TRUE(control->RestoreAll().empty());
  EXPECT_THAT(SetLog(), ElementsAre("GPU-a100 300000"));  // attempted once, refused
}

}  // namespace
}  // namespace greenrl::energy
