// classic_control_test.cc: Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0 and Pendulum-v1
// against Gymnasium 1.0.0's recorded trajectories ($GREENRL_TESTDATA/classic_control/<id>.json,
// schema in its README), and, for all five classic-control envs through the registry and VecEnv:
// observations stay inside the declared Box, and the same seed gives the same trajectories for any
// thread count while another seed gives others. Plus each env's documented edge rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/classic/acrobot.h"
#include "greenrl/env/classic/cartpole.h"
#include "greenrl/env/classic/golden_testdata.h"
#include "greenrl/env/classic/mountain_car.h"
#include "greenrl/env/classic/mountain_car_continuous.h"
#include "greenrl/env/classic/pendulum.h"
#include "greenrl/env/registry.h"

namespace greenrl::env {
namespace {

using nlohmann::json;

// |mine - golden| / max(1, |golden|), the README's error measure, and its bound for float64 ports.
constexpr double kTolerance = 1e-9;
constexpr double kTwoPi = 2 * 3.141592653589793;

double RelErr(double mine, double golden) {
  return std::abs(mine - golden) / std::max(1.0, std::abs(golden));
}

// Angle error modulo 2 pi (the README's rule for Acrobot's theta1 and theta2).
double AngleErr(double mine, double golden) {
  double d = std::fmod(std::abs(mine - golden), kTwoPi);
  return std::min(d, kTwoPi - d) / std::max(1.0, std::abs(golden));
}

const json& LoadGolden(const std::string& env_id) { return testing::GoldenTrajectories(env_id); }

// Per-env facts the replay needs: which state components are angles (compared modulo 2 pi).
template <typename E>
bool IsAngle(int /*k*/) {
  return false;
}
template <>
bool IsAngle<Acrobot>(int k) {
  return k < 2;
}

// Worst errors of one replay.
struct ReplayErrors {
  double state = 0.0;   // max state error (README measure)
  double obs = 0.0;     // max observation error (README measure)
  double reward = 0.0;  // max reward error (README measure)
};

// Replays steps [0, max_steps) of one trajectory open loop, as the README prescribes:
// reset(seed=reset_seed), overwrite the state, apply the recorded actions. Expects every reward
// and flag equal and the state within kTolerance; stops at the first failing step.
template <typename E>
ReplayErrors Replay(const json& traj, size_t max_steps = std::numeric_limits<size_t>::max()) {
  SCOPED_TRACE(traj.at("name").get<std::string>());
  constexpr int kStateDim = static_cast<int>(std::tuple_size<typename E::State>::value);
  E env;
  env.Reset(traj.at("reset_seed").get<uint64_t>());
  double initial[kStateDim];
  for (int k = 0; k < kStateDim; ++k) initial[k] = traj.at("initial_state")[k].get<double>();
  env.SetState(initial);
  const json& actions = traj.at("actions");
  const json& steps = traj.at("steps");
  EXPECT_EQ(actions.size(), steps.size());
  EXPECT_EQ(static_cast<int>(steps.size()), traj.at("num_steps").get<int>());
  const ::testing::TestResult& test_result =
      *::testing::UnitTest::GetInstance()->current_test_info()->result();
  const int failures_before = test_result.total_part_count();
  ReplayErrors worst;
  for (size_t t = 0; t < std::min(steps.size(), max_steps); ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    const json& golden = steps[t];
    typename E::StepResult r;
    if constexpr (std::is_same_v<typename E::Action, int64_t>) {
      r = env.Step(actions[t].get<int64_t>());
    } else {
      const double a = actions[t][0].get<double>();
      const float action[1] = {static_cast<float>(a)};
      EXPECT_EQ(static_cast<double>(action[0]), a) << "action not float32-representable";
      r = env.Step(action);
    }
    for (int k = 0; k < kStateDim; ++k) {
      const double g = golden.at("state")[k].get<double>();
      const double err = IsAngle<E>(k) ? AngleErr(env.state()[k], g) : RelErr(env.state()[k], g);
      worst.state = std::max(worst.state, err);
      EXPECT_LE(err, kTolerance) << "state[" << k << "] mine " << env.state()[k] << " golden " << g;
    }
    for (int k = 0; k < E::kObsDim; ++k) {
      // obs values are written as the exact double of the float32; a state within 1e-9 can still
      // round to the neighbouring float32, so allow one float32 ulp here.
      const double err = RelErr(r.obs[k], golden.at("obs")[k].get<double>());
      worst.obs = std::max(worst.obs, err);
      EXPECT_LE(err, 1.2e-7) << "obs[" << k << "]";
    }
    const double reward_err = RelErr(r.reward, golden.at("reward").get<double>());
    worst.reward = std::max(worst.reward, reward_err);
    EXPECT_LE(reward_err, kTolerance) << "reward " << r.reward;
    EXPECT_EQ(r.terminated, golden.at("terminated").get<bool>());
    EXPECT_EQ(r.truncated, golden.at("truncated").get<bool>());
    if (test_result.total_part_count() > failures_before) break;  // one broken step per trajectory
  }
  return worst;
}

std::string Format(double x) {
  std::ostringstream out;
  out << std::setprecision(3) << x;  // "0" means bit-identical to Gymnasium
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// Golden replays, one typed suite over the four envs added beside CartPole (cartpole_test.cc).

template <typename E>
class GoldenTest : public ::testing::Test {};
using GoldenEnvs = ::testing::Types<Acrobot, MountainCar, MountainCarContinuous, Pendulum>;
TYPED_TEST_SUITE(GoldenTest, GoldenEnvs);

TYPED_TEST(GoldenTest, FileMatchesSpec) {
  const EnvSpec& spec = TypeParam::Spec();
  const json golden = LoadGolden(spec.id);
  EXPECT_EQ(golden.at("env_id"), spec.id);
  EXPECT_EQ(golden.at("max_episode_steps").get<int>(), spec.max_episode_steps);
  EXPECT_EQ(golden.at("action_type"), spec.discrete_actions() ? "discrete" : "continuous");
  EXPECT_GE(golden.at("trajectories").size(), 1u);
}

TYPED_TEST(GoldenTest, EveryTrajectoryMatchesWithin1e9) {
  const json golden = LoadGolden(TypeParam::Spec().id);
  ReplayErrors worst;
  for (const json& traj : golden.at("trajectories")) {
    const ReplayErrors e = Replay<TypeParam>(traj);
    worst.state = std::max(worst.state, e.state);
    worst.obs = std::max(worst.obs, e.obs);
    worst.reward = std::max(worst.reward, e.reward);
  }
  this->RecordProperty("max_state_rel_err", Format(worst.state));
  this->RecordProperty("max_obs_rel_err", Format(worst.obs));
  this->RecordProperty("max_reward_rel_err", Format(worst.reward));
  std::printf("%s: max rel err state %s, obs %s, reward %s\n", TypeParam::Spec().id.c_str(),
              Format(worst.state).c_str(), Format(worst.obs).c_str(), Format(worst.reward).c_str());
  EXPECT_LE(worst.state, kTolerance);
  EXPECT_LE(worst.reward, kTolerance);
}

// The README's guaranteed horizon, on its own: the first 100 steps of every trajectory.
TYPED_TEST(GoldenTest, First100StepsMatchWithin1e9) {
  const json golden = LoadGolden(TypeParam::Spec().id);
  for (const json& traj : golden.at("trajectories")) {
    EXPECT_LE(Replay<TypeParam>(traj, /*max_steps=*/100).state, kTolerance) << traj.at("name");
  }
}

// ---------------------------------------------------------------------------------------------
// All five envs through the registry and VecEnv.

struct RolloutRecord {
  std::vector<float> obs, final_obs, reward;
  std::vector<uint8_t> terminated, truncated;
  bool operator==(const RolloutRecord& o) const {
    return obs == o.obs && final_obs == o.final_obs && reward == o.reward &&
           terminated == o.terminated && truncated == o.truncated;
  }
};

// Fills the action buffer with pseudo-random actions: uniform over Discrete(n), or uniform over
// [low - span/4, high + span/4] for a Box, so out-of-range actions are exercised too.
void RandomActions(VecEnv& env, Rng& rng) {
  const EnvSpec& spec = env.spec();
  const int n = env.num_envs();
  if (spec.discrete_actions()) {
    for (int i = 0; i < n; ++i) {
      env.discrete_actions()[i] = static_cast<int64_t>(rng.Below(spec.num_actions()));
    }
    return;
  }
  const Box& box = std::get<Box>(spec.action_space);
  const int64_t d = spec.act_dim();
  for (int i = 0; i < n; ++i) {
    for (int64_t k = 0; k < d; ++k) {
      const double span = static_cast<double>(box.high[k]) - box.low[k];
      env.continuous_actions()[i * d + k] =
          static_cast<float>(rng.Uniform(box.low[k] - span / 4, box.high[k] + span / 4));
    }
  }
}

// `steps` steps of env_id with actions from a fixed stream, every step's buffers concatenated.
RolloutRecord Rollout(const std::string& env_id, uint64_t seed, int num_envs, int num_threads,
                      int steps) {
  std::unique_ptr<VecEnv> env = MakeVecEnv(env_id, num_envs, seed, num_threads);
  const size_t rows = static_cast<size_t>(num_envs);
  const size_t obs_size = rows * static_cast<size_t>(env->spec().obs_dim());
  Rng action_rng(/*seed=*/777);
  RolloutRecord rec;
  env->Reset();
  rec.obs.insert(rec.obs.end(), env->obs(), env->obs() + obs_size);
  for (int t = 0; t < steps; ++t) {
    RandomActions(*env, action_rng);
    env->Step();
    rec.obs.insert(rec.obs.end(), env->obs(), env->obs() + obs_size);
    rec.final_obs.insert(rec.final_obs.end(), env->final_obs(), env->final_obs() + obs_size);
    rec.reward.insert(rec.reward.end(), env->reward(), env->reward() + rows);
    rec.terminated.insert(rec.terminated.end(), env->terminated(), env->terminated() + rows);
    rec.truncated.insert(rec.truncated.end(), env->truncated(), env->truncated() + rows);
  }
  return rec;
}

class ClassicEnvTest : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(AllClassic, ClassicEnvTest,
                         ::testing::Values("CartPole-v1", "Acrobot-v1", "MountainCar-v0",
                                           "MountainCarContinuous-v0", "Pendulum-v1"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name += std::isalnum(c) ? c : '_';
                           return name;
                         });

// 16 envs x 3000 random steps (several full episodes each, with autoresets, and out-of-range
// actions for Box spaces): every obs and final_obs component is finite and inside the Box.
TEST_P(ClassicEnvTest, ObservationsNeverLeaveTheirBox) {
  constexpr int kEnvs = 16;
  std::unique_ptr<VecEnv> env = MakeVecEnv(GetParam(), kEnvs, /*seed=*/3, /*num_threads=*/2);
  const Box& box = env->spec().observation_space;
  const int64_t d = env->spec().obs_dim();
  Rng action_rng(/*seed=*/5);
  int64_t episodes = 0;
  auto check = [&](const float* rows, const char* what, int t) {
    for (int i = 0; i < kEnvs; ++i) {
      for (int64_t k = 0; k < d; ++k) {
        const float v = rows[i * d + k];
        ASSERT_TRUE(std::isfinite(v) && v >= box.low[k] && v <= box.high[k])
            << what << "[" << i << "][" << k << "] = " << v << " at step " << t << ", box ["
            << box.low[k] << ", " << box.high[k] << "]";
      }
    }
  };
  env->Reset();
  check(env->obs(), "obs", 0);
  for (int t = 1; t <= 3000; ++t) {
    RandomActions(*env, action_rng);
    env->Step();
    check(env->obs(), "obs", t);
    check(env->final_obs(), "final_obs", t);
    for (int i = 0; i < kEnvs; ++i) episodes += env->terminated()[i] || env->truncated()[i];
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(episodes, kEnvs);  // every row went through at least one autoreset on average
}

TEST_P(ClassicEnvTest, SameSeedSameTrajectoryForAnyThreadCountOtherSeedDiffers) {
  constexpr int kEnvs = 7;
  constexpr int kSteps = 600;  // past every TimeLimit but MountainCarContinuous's 999
  const RolloutRecord one = Rollout(GetParam(), /*seed=*/42, kEnvs, 1, kSteps);
  EXPECT_EQ(Rollout(GetParam(), 42, kEnvs, 1, kSteps), one);
  EXPECT_EQ(Rollout(GetParam(), 42, kEnvs, 2, kSteps), one);
  EXPECT_EQ(Rollout(GetParam(), 42, kEnvs, 3, kSteps), one);
  const RolloutRecord other = Rollout(GetParam(), /*seed=*/43, kEnvs, 2, kSteps);
  EXPECT_NE(other.obs, one.obs);
}

// ---------------------------------------------------------------------------------------------
// Specs and the registry.

TEST(ClassicRegistryTest, EveryEnvWithGymnasiumIdsLimitsAndThresholds) {
  struct Expected {
    const char* id;
    int obs_dim;
    bool discrete;
    int64_t actions_or_dim;
    int limit;
    std::optional<double> threshold;
  };
  const Expected expected[] = {
      {"CartPole-v1", 4, true, 2, 500, 475.0},
      {"Acrobot-v1", 6, true, 3, 500, -100.0},
      {"MountainCar-v0", 2, true, 3, 200, -110.0},
      {"MountainCarContinuous-v0", 2, false, 1, 999, 90.0},
      {"Pendulum-v1", 3, false, 1, 200, std::nullopt},
      // The MuJoCo envs follow, each v4 then v5 (Gymnasium's registrations; mujoco/mujoco_test.cc
      // and mujoco/mujoco_v5_test.cc test them).
      {"HalfCheetah-v4", 17, false, 6, 1000, 4800.0},
      {"HalfCheetah-v5", 17, false, 6, 1000, 4800.0},
      {"Hopper-v4", 11, false, 3, 1000, 3800.0},
      {"Hopper-v5", 11, false, 3, 1000, 3800.0},
      {"Walker2d-v4", 17, false, 6, 1000, std::nullopt},
      {"Walker2d-v5", 17, false, 6, 1000, std::nullopt},
      {"Ant-v4", 27, false, 8, 1000, 6000.0},
      {"Ant-v5", 105, false, 8, 1000, 6000.0},
      {"Swimmer-v4", 8, false, 2, 1000, 360.0},
      {"Swimmer-v5", 8, false, 2, 1000, 360.0},
      {"InvertedPendulum-v4", 4, false, 1, 1000, 950.0},
      {"InvertedPendulum-v5", 4, false, 1, 1000, 950.0},
      {"InvertedDoublePendulum-v4", 11, false, 1, 1000, 9100.0},
      {"InvertedDoublePendulum-v5", 9, false, 1, 1000, 9100.0},
      {"Reacher-v4", 11, false, 2, 50, -3.75},
      {"Reacher-v5", 10, false, 2, 50, -3.75},
      {"Humanoid-v4", 376, false, 17, 1000, std::nullopt},
      {"Humanoid-v5", 348, false, 17, 1000, std::nullopt},
      {"HumanoidStandup-v4", 376, false, 17, 1000, std::nullopt},
      {"HumanoidStandup-v5", 348, false, 17, 1000, std::nullopt},
      {"Pusher-v4", 23, false, 7, 100, 0.0},
      {"Pusher-v5", 23, false, 7, 100, 0.0},
  };
  const std::vector<EnvRegistration>& envs = RegisteredEnvs();
  ASSERT_EQ(envs.size(), std::size(expected));
  for (size_t j = 0; j < envs.size(); ++j) {
    const EnvSpec& spec = *envs[j].spec;
    SCOPED_TRACE(expected[j].id);
    EXPECT_EQ(spec.id, expected[j].id);
    EXPECT_EQ(&FindEnvSpec(expected[j].id), &spec);
    EXPECT_EQ(spec.obs_dim(), expected[j].obs_dim);
    EXPECT_EQ(spec.discrete_actions(), expected[j].discrete);
    if (expected[j].discrete) {
      EXPECT_EQ(spec.num_actions(), expected[j].actions_or_dim);
    } else {
      EXPECT_EQ(spec.act_dim(), expected[j].actions_or_dim);
    }
    EXPECT_EQ(spec.max_episode_steps, expected[j].limit);
    EXPECT_EQ(spec.reward_threshold, expected[j].threshold);
  }
}

TEST(ClassicSpecTest, BoundsMatchGymnasium) {
  const Box& acrobot = Acrobot::Spec().observation_space;
  EXPECT_EQ(acrobot.high[4], static_cast<float>(4 * 3.141592653589793));
  EXPECT_EQ(acrobot.low[5], static_cast<float>(-9 * 3.141592653589793));
  EXPECT_EQ(MountainCar::Spec().observation_space.low[0], -1.2f);
  EXPECT_EQ(MountainCar::Spec().observation_space.high[1], 0.07f);
  const Box& mcc_action = std::get<Box>(MountainCarContinuous::Spec().action_space);
  EXPECT_EQ(mcc_action.low[0], -1.0f);
  EXPECT_EQ(mcc_action.high[0], 1.0f);
  const Box& pendulum_action = std::get<Box>(Pendulum::Spec().action_space);
  EXPECT_EQ(pendulum_action.low[0], -2.0f);
  EXPECT_EQ(pendulum_action.high[0], 2.0f);
  EXPECT_EQ(Pendulum::Spec().observation_space.high[2], 8.0f);
}

TEST(ClassicSpecTest, ContinuousEnvsUseTheContinuousActionBuffer) {
  std::unique_ptr<VecEnv> env = MakeVecEnv("Pendulum-v1", 3, 0, 1);
  EXPECT_THROW(env->discrete_actions(), InternalError);
  EXPECT_NE(env->continuous_actions(), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Edge rules of single envs.

TEST(AcrobotTest, ResetRoundsToFloat32AndInvalidActionsThrow) {
  Acrobot env;
  env.Reset(/*seed=*/9);
  for (double v : env.state()) {
    EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
    EXPECT_GE(v, -0.1);
    EXPECT_LE(v, 0.1);
  }
  EXPECT_THROW(env.Step(3), std::invalid_argument);
  EXPECT_THROW(env.Step(-1), std::invalid_argument);
  EXPECT_EQ(env.elapsed_steps(), 0);
  Acrobot fresh;
  EXPECT_THROW(fresh.Step(0), InternalError);
}

TEST(MountainCarTest, InvalidActionsThrowAndResetIsInRange) {
  MountainCar env;
  env.Reset(/*seed=*/1);
  EXPECT_GE(env.state()[0], -0.6);
  EXPECT_LT(env.state()[0], -0.4);
  EXPECT_EQ(env.state()[1], 0.0);
  EXPECT_THROW(env.Step(3), std::invalid_argument);
}

TEST(MountainCarContinuousTest, OutOfRangeActionClippedForPhysicsButPenalisedRaw) {
  MountainCarContinuous a;
  MountainCarContinuous b;
  a.Reset(/*seed=*/2);
  b.Reset(/*seed=*/2);
  const float big[1] = {3.0f};
  const float one[1] = {1.0f};
  const MountainCarContinuous::StepResult ra = a.Step(big);
  const MountainCarContinuous::StepResult rb = b.Step(one);
  EXPECT_EQ(ra.obs, rb.obs);  // same physics
  EXPECT_EQ(ra.reward, -0.1 * 9.0);
  EXPECT_EQ(rb.reward, -0.1);
  // The state is float32 after the step.
  for (double v : a.state()) EXPECT_EQ(v, static_cast<double>(static_cast<float>(v)));
}

// A NaN force goes through the physics as Gymnasium's Python min(max(nan, -1), 1) lets it: the
// state becomes NaN (not a push of -1 with a finite state), the episode does not terminate.
TEST(MountainCarContinuousTest, NanActionGivesANanStateAsInGymnasium) {
  MountainCarContinuous env;
  env.Reset(/*seed=*/2);
  const float nan[1] = {std::numeric_limits<float>::quiet_NaN()};
  const MountainCarContinuous::StepResult r = env.Step(nan);
  EXPECT_TRUE(std::isnan(r.obs[0]));
  EXPECT_TRUE(std::isnan(r.obs[1]));
  EXPECT_TRUE(std::isnan(r.reward));
  EXPECT_FALSE(r.terminated);
}

TEST(PendulumTest, AngleNormalizeIsFloorModulo) {
  constexpr double kPi = Pendulum::kPi;
  EXPECT_EQ(Pendulum::AngleNormalize(kPi), -kPi);
  EXPECT_EQ(Pendulum::AngleNormalize(0.0), 0.0);
  EXPECT_NEAR(Pendulum::AngleNormalize(-kPi - 0.5), kPi - 0.5, 1e-12);
  EXPECT_NEAR(Pendulum::AngleNormalize(7.0), 7.0 - 2 * kPi, 1e-12);
  EXPECT_NEAR(Pendulum::AngleNormalize(-20.0), -20.0 + 6 * kPi, 1e-12);
}

TEST(PendulumTest, OutOfRangeTorqueIsClippedForPhysicsAndCost) {
  Pendulum a;
  Pendulum b;
  a.Reset(/*seed=*/4);
  b.Reset(/*seed=*/4);
  const float big[1] = {-5.0f};
  const float two[1] = {-2.0f};
  const Pendulum::StepResult ra = a.Step(big);
  const Pendulum::StepResult rb = b.Step(two);
  EXPECT_EQ(ra.obs, rb.obs);
  EXPECT_EQ(ra.reward, rb.reward);
  EXPECT_FALSE(ra.terminated);
}

TEST(PendulumTest, TruncatedAt200NeverTerminated) {
  Pendulum env;
  env.Reset(/*seed=*/8);
  const float zero[1] = {0.0f};
  for (int t = 1; t <= 201; ++t) {
    const Pendulum::StepResult r = env.Step(zero);
    EXPECT_FALSE(r.terminated);
    EXPECT_EQ(r.truncated, t >= 200) << t;
  }
}

}  // namespace
}  // namespace greenrl::env
