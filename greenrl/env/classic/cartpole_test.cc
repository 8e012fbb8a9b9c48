// cartpole_test.cc: CartPole-v1 against Gymnasium 1.0.0's recorded trajectories
// ($GREENRL_TESTDATA/classic_control/CartPole-v1.json, schema in its README), plus the single-env
// API: spec, reset, invalid actions, TimeLimit and the after-termination behaviour.
#include "greenrl/env/classic/cartpole.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "greenrl/core/errors.h"
#include "greenrl/env/classic/golden_testdata.h"

namespace greenrl::env {
namespace {

using nlohmann::json;

// |mine - golden| / max(1, |golden|), the README's error measure.
constexpr double kStateTolerance = 1e-9;

double RelErr(double mine, double golden) {
  return std::abs(mine - golden) / std::max(1.0, std::abs(golden));
}

const json& Golden() { return testing::GoldenTrajectories("CartPole-v1"); }

// Replays the first max_steps steps of one trajectory open loop, as the README prescribes:
// reset(seed=reset_seed), overwrite the state, apply the recorded actions. Returns the largest
// state error seen; the per-step expectations are inside.
double Replay(const json& traj, size_t max_steps = std::numeric_limits<size_t>::max()) {
  SCOPED_TRACE(traj.at("name").get<std::string>());
  CartPole env;
  env.Reset(traj.at("reset_seed").get<uint64_t>());
  double initial[4];
  for (int k = 0; k < 4; ++k) initial[k] = traj.at("initial_state")[k].get<double>();
  env.SetState(initial);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(static_cast<float>(env.state()[k]), traj.at("initial_observation")[k].get<double>());
  }
  const json& actions = traj.at("actions");
  const json& steps = traj.at("steps");
  EXPECT_EQ(actions.size(), steps.size());
  EXPECT_EQ(static_cast<int>(steps.size()), traj.at("num_steps").get<int>());
  const ::testing::TestResult& result =
      *::testing::UnitTest::GetInstance()->current_test_info()->result();
  const int failures_before = result.total_part_count();
  double max_err = 0.0;
  for (size_t t = 0; t < std::min(steps.size(), max_steps); ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    const json& golden = steps[t];
    const CartPole::StepResult r = env.Step(actions[t].get<int64_t>());
    for (int k = 0; k < 4; ++k) {
      const double err = RelErr(env.state()[k], golden.at("state")[k].get<double>());
      max_err = std::max(max_err, err);
      EXPECT_LE(err, kStateTolerance) << "state[" << k << "]";
      // obs values are written as the exact double of the float32.
      EXPECT_EQ(static_cast<double>(r.obs[k]), golden.at("obs")[k].get<double>())
          << "obs[" << k << "]";
    }
    EXPECT_EQ(r.reward, golden.at("reward").get<double>());
    EXPECT_EQ(r.terminated, golden.at("terminated").get<bool>());
    EXPECT_EQ(r.truncated, golden.at("truncated").get<bool>());
    if (result.total_part_count() > failures_before) break;  // one broken step per trajectory
  }
  return max_err;
}

TEST(CartPoleGoldenTest, FileIsCartPoleV1) {
  EXPECT_EQ(Golden().at("env_id"), "CartPole-v1");
  EXPECT_EQ(Golden().at("max_episode_steps").get<int>(), CartPole::kMaxEpisodeSteps);
  EXPECT_EQ(Golden().at("action_type"), "discrete");
  EXPECT_GE(Golden().at("trajectories").size(), 1u);
}

TEST(CartPoleGoldenTest, EveryTrajectoryMatchesWithin1e9) {
  double worst = 0.0;
  for (const json& traj : Golden().at("trajectories")) worst = std::max(worst, Replay(traj));
  std::ostringstream worst_text;
  worst_text << std::setprecision(3) << worst;  // "0" means bit-identical to Gymnasium
  RecordProperty("max_state_rel_err", worst_text.str());
  EXPECT_LE(worst, kStateTolerance);
}

// The first 100 steps of every trajectory, checked on their own: the README's guaranteed horizon
// even where chaotic growth could make later steps drift on another libm.
TEST(CartPoleGoldenTest, First100StepsMatchWithin1e9) {
  for (const json& traj : Golden().at("trajectories")) {
    EXPECT_LE(Replay(traj, /*max_steps=*/100), kStateTolerance) << traj.at("name");
  }
}

// The shared data must exercise step-after-termination: rewards 0.0 once terminated, and the
// warning printed once.
TEST(CartPoleGoldenTest, StepAfterTerminationPaysZero) {
  int cases = 0;
  for (const json& traj : Golden().at("trajectories")) {
    if (traj.at("steps_after_done").get<int>() <= 0) continue;
    ++cases;
    ::testing::internal::CaptureStderr();
    Replay(traj);
    const std::string err = ::testing::internal::GetCapturedStderr();
    size_t first_done = 0;
    const json& steps = traj.at("steps");
    while (first_done < steps.size() && !steps[first_done].at("terminated").get<bool>()) {
      ++first_done;
    }
    ASSERT_LT(first_done, steps.size());
    EXPECT_EQ(steps[first_done].at("reward").get<double>(), 1.0);
    int zero_rewards = 0;
    for (size_t t = first_done + 1; t < steps.size(); ++t) {
      zero_rewards += steps[t].at("reward").get<double>() == 0.0;
    }
    EXPECT_GT(zero_rewards, 0);
    // One warning line per episode, however many steps follow termination.
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_NE(err.find("terminated = True"), std::string::npos) << err;
  }
  if (cases == 0) GTEST_SKIP() << "no trajectory with steps_after_done > 0 in this data set";
}

// The shared data must exercise the TimeLimit: truncated first on step 500, counted from Reset
// even though the state was overwritten after it.
TEST(CartPoleGoldenTest, TruncationAt500StepsSinceReset) {
  int cases = 0;
  for (const json& traj : Golden().at("trajectories")) {
    const json& steps = traj.at("steps");
    if (steps.empty() || !steps.back().at("truncated").get<bool>()) continue;
    ++cases;
    EXPECT_EQ(steps.size(), 500u);
    for (size_t t = 0; t + 1 < steps.size(); ++t)
      ASSERT_FALSE(steps[t].at("truncated").get<bool>());
    Replay(traj);
  }
  if (cases == 0) GTEST_SKIP() << "no truncated trajectory in this data set";
}

TEST(CartPoleTest, SpecMatchesGymnasium) {
  const EnvSpec& spec = CartPole::Spec();
  EXPECT_EQ(spec.id, "CartPole-v1");
  EXPECT_EQ(spec.obs_dim(), 4);
  ASSERT_TRUE(spec.discrete_actions());
  EXPECT_EQ(spec.num_actions(), 2);
  EXPECT_EQ(spec.act_dim(), 1);
  EXPECT_EQ(spec.max_episode_steps, 500);
  EXPECT_EQ(spec.reward_threshold, 475.0);
  EXPECT_EQ(spec.observation_space.high[0], 4.8f);
  EXPECT_EQ(spec.observation_space.high[2], static_cast<float>(2 * 0.20943951023931953));
  EXPECT_EQ(spec.observation_space.high[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(spec.observation_space.low[3], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(CartPole::kThetaThresholdRad, 0.20943951023931953);
}

TEST(CartPoleTest, ResetDrawsFromOwnSeededRng) {
  CartPole a;
  CartPole b(/*seed=*/99);
  const CartPole::Observation first = a.Reset(/*seed=*/7);
  EXPECT_EQ(b.Reset(/*seed=*/7), first);  // the seed given to Reset wins over the constructor's
  for (int k = 0; k < 4; ++k) {
    EXPECT_GE(a.state()[k], -0.05);
    EXPECT_LT(a.state()[k], 0.05);
    EXPECT_EQ(first[k], static_cast<float>(a.state()[k]));
  }
  const CartPole::Observation second = a.Reset();  // continues the generator
  EXPECT_NE(second, first);
  EXPECT_EQ(b.Reset(), second);
  EXPECT_NE(a.Reset(/*seed=*/8), first);
}

TEST(CartPoleTest, InvalidActionThrowsInvalidArgumentNamingIt) {
  CartPole env;
  env.Reset(/*seed=*/1);
  const CartPole::State before = env.state();
  for (int64_t action : {int64_t{7}, int64_t{-1}, int64_t{2}}) {
    try {
      env.Step(action);
      ADD_FAILURE() << "action " << action << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("invalid action " + std::to_string(action)),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(env.state(), before);
  EXPECT_EQ(env.elapsed_steps(), 0);
}

TEST(CartPoleTest, StepBeforeResetIsABug) {
  CartPole env;
  EXPECT_THROW(env.Step(0), InternalError);
}

TEST(CartPoleTest, TruncatedFromStep500SinceResetAndResetClearsIt) {
  CartPole env;
  env.Reset(/*seed=*/3);
  const double upright[4] = {0.0, 0.0, 0.0, 0.0};
  for (int t = 1; t <= 502; ++t) {
    env.SetState(upright);  // keep it in bounds; SetState leaves the step count alone
    const CartPole::StepResult r = env.Step(t % 2);
    EXPECT_FALSE(r.terminated);
    EXPECT_EQ(r.reward, 1.0);
    EXPECT_EQ(r.truncated, t >= 500) << "step " << t;
    EXPECT_EQ(env.elapsed_steps(), t);
  }
  env.Reset();
  EXPECT_EQ(env.elapsed_steps(), 0);
  EXPECT_FALSE(env.Step(0).truncated);
}

// Gymnasium's steps_beyond_terminated: only Reset clears it; a state back in bounds pays 1.0.
TEST(CartPoleTest, AfterTerminationRewardFollowsBoundsUntilReset) {
  CartPole env;
  env.Reset(/*seed=*/5);
  const double outside[4] = {3.0, 0.0, 0.0, 0.0};
  const double inside[4] = {0.0, 0.0, 0.0, 0.0};
  ::testing::internal::CaptureStderr();
  env.SetState(outside);
  CartPole::StepResult r = env.Step(1);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 1.0);  // the terminating step pays
  r = env.Step(1);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 0.0);
  env.SetState(inside);
  r = env.Step(1);
  EXPECT_FALSE(r.terminated);
  EXPECT_EQ(r.reward, 1.0);
  env.SetState(outside);
  r = env.Step(1);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 0.0);  // still "already terminated": no second 1.0
  env.Reset();
  env.SetState(outside);
  r = env.Step(1);
  EXPECT_EQ(r.reward, 1.0);  // Reset cleared the counter
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace greenrl::env
