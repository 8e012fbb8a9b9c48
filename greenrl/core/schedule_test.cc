#include "greenrl/core/schedule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "greenrl/core/errors.h"

namespace greenrl {
namespace {

TEST(ScheduleTest, ConstantIgnoresProgress) {
  const Schedule schedule = Schedule::Parse("clip_range", "0.2");
  EXPECT_EQ(schedule.kind, Schedule::Kind::kConstant);
  EXPECT_EQ(schedule.Value(1.0), 0.2);
  EXPECT_EQ(schedule.Value(0.5), 0.2);
  EXPECT_EQ(schedule.Value(0.0), 0.2);
  EXPECT_EQ(schedule.Value(-0.01), 0.2);
}

// rl_zoo3.utils.linear_schedule: func(progress_remaining) = progress_remaining * initial_value.
TEST(ScheduleTest, LinearDecaysFromInitialToZero) {
  const Schedule schedule = Schedule::Parse("learning_rate", "lin_0.001");
  EXPECT_EQ(schedule.kind, Schedule::Kind::kLinear);
  EXPECT_EQ(schedule.initial, 0.001);
  EXPECT_EQ(schedule.Value(1.0), 0.001);
  EXPECT_EQ(schedule.Value(0.5), 0.0005);
  EXPECT_EQ(schedule.Value(0.0), 0.0);
  EXPECT_EQ(Schedule::Parse("learning_rate", "lin_2.5e-4").Value(0.5), 1.25e-4);
}

// SB3: progress_remaining = 1 - num_timesteps / total_timesteps. With total 1000 and rollouts of
// 2 envs x 128 steps, the last rollout ends at 1024 steps: progress -0.024, which unclamped would
// give a negative learning rate.
TEST(ScheduleTest, LinearClampsProgressIntoUnitInterval) {
  const Schedule schedule = Schedule::Linear(3e-4);
  const double progress_remaining = 1.0 - 1024.0 / 1000.0;
  ASSERT_LT(progress_remaining, 0.0);
  EXPECT_EQ(schedule.Value(progress_remaining), 0.0);
  EXPECT_EQ(schedule.Value(-5.0), 0.0);
  EXPECT_EQ(schedule.Value(1.5), 3e-4);
  EXPECT_EQ(schedule.Value(std::numeric_limits<double>::quiet_NaN()), 0.0);
}

TEST(ScheduleTest, ParsesRlZooSpellings) {
  EXPECT_EQ(Schedule::Parse("lr", "3e-4"), Schedule::Constant(3e-4));
  EXPECT_EQ(Schedule::Parse("lr", "1"), Schedule::Constant(1.0));
  EXPECT_EQ(Schedule::Parse("lr", "lin_1e-3"), Schedule::Linear(0.001));
  EXPECT_EQ(Schedule::Parse("lr", " lin_.5 "), Schedule::Linear(0.5));
  EXPECT_EQ(Schedule::Parse("lr", "+2.0E-2"), Schedule::Constant(0.02));
  // rl-zoo's longer spelling (`--hyperparams learning_rate:linear_0.002`), read as lin_.
  EXPECT_EQ(Schedule::Parse("lr", "linear_0.002"), Schedule::Linear(0.002));
  EXPECT_EQ(Schedule::Parse("lr", "linear_2.5e-4").ToString(), "lin_0.00025");
}

TEST(ScheduleTest, ParseRejectsBadTextNamingFieldValueAndForm) {
  for (const std::string text :
       {"", "lin_", "lin_abc", "abc", "linear_", "cos_0.1", "0.1x", "lin_0.1_", ".nan", "lin_.inf",
        "inf", "nan", "1e999", "0x10", "lin 0.1"}) {
    try {
      Schedule::Parse("learning_rate", text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const ConfigError& error) {
      EXPECT_EQ(std::string(error.what()),
                "learning_rate: got '" + text +
                    "'; a number, or lin_<number> or linear_<number> (linear to 0), e.g. "
                    "lin_0.001");
      EXPECT_EQ(error.field(), "learning_rate");
    }
  }
}

TEST(ScheduleTest, ToStringRoundTripsShortest) {
  EXPECT_EQ(Schedule::Linear(0.001).ToString(), "lin_0.001");
  EXPECT_EQ(Schedule::Linear(2.5e-4).ToString(), "lin_0.00025");
  EXPECT_EQ(Schedule::Constant(0.2).ToString(), "0.2");
  EXPECT_EQ(Schedule::Constant(1e-7).ToString(), "1e-07");
  EXPECT_EQ(Schedule::Constant(100000).ToString(), "100000");
  for (double value : {0.1, 1.0 / 3.0, 3e-4, 2.5e-4, 7e-10, 123456.789, -0.02, 1e20, 0.0}) {
    for (const Schedule& schedule : {Schedule::Constant(value), Schedule::Linear(value)}) {
      EXPECT_EQ(Schedule::Parse("x", schedule.ToString()), schedule) << schedule.ToString();
    }
  }
}

TEST(YamlNumberTest, FollowsYaml12CoreSchema) {
  using internal::ParseYamlNumber;
  EXPECT_EQ(ParseYamlNumber("1e5"), 100000.0);
  EXPECT_EQ(ParseYamlNumber("-1.5"), -1.5);
  EXPECT_EQ(ParseYamlNumber("1."), 1.0);
  EXPECT_EQ(ParseYamlNumber("007"), 7.0);
  EXPECT_EQ(ParseYamlNumber(".inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParseYamlNumber("-.Inf"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*ParseYamlNumber(".NaN")));
  EXPECT_EQ(ParseYamlNumber("1e999"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(ParseYamlNumber("-1e-999"), 0.0);
  for (const char* bad : {"", ".", "e5", "1e", "1.2.3", " 1", "inf", "NaN", "1_000", "0x1p3"}) {
    EXPECT_FALSE(ParseYamlNumber(bad).has_value()) << bad;
  }
  EXPECT_EQ(internal::FormatShortestDouble(0.1), "0.1");
  EXPECT_EQ(internal::FormatShortestDouble(1e20), "1e+20");
  EXPECT_EQ(internal::FormatShortestDouble(-std::numeric_limits<double>::infinity()), "-.inf");
}

TEST(YamlNumberTest, IntegersIncludeIntegralFloats) {
  using internal::ParseYamlInt;
  EXPECT_EQ(ParseYamlInt("100000"), 100000);
  EXPECT_EQ(ParseYamlInt("+7"), 7);
  EXPECT_EQ(ParseYamlInt("-3"), -3);
  EXPECT_EQ(ParseYamlInt("1e5"), 100000);
  EXPECT_EQ(ParseYamlInt("2.5e3"), 2500);
  EXPECT_EQ(ParseYamlInt("9223372036854775807"), std::numeric_limits<int64_t>::max());
  // Digit groups joined by single underscores, as Python's int() reads them (PyYAML too).
  EXPECT_EQ(ParseYamlInt("100_000"), 100000);
  EXPECT_EQ(ParseYamlInt("-1_0"), -10);
  for (const char* bad : {"", "1.5", "1e-1", "9.3e18", "1e99", ".inf", ".nan", "abc", "1__000",
                          "_1", "1_", "1_e5", "+_1"}) {
    EXPECT_FALSE(ParseYamlInt(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace greenrl
