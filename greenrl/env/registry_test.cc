// registry_test: env::RegisterEnv, an env type of the user's own added at run time (its own
// binary: registering changes the process's registry, which vec_env_test lists).
#include "greenrl/env/registry.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "greenrl/core/errors.h"

namespace greenrl::env {
namespace {

// A walk to cell 3: action 1 moves right, action 0 stays; reaching cell 3 ends the episode with
// reward 1 (0 otherwise); TimeLimit 5.
class Walk {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const EnvSpec& Spec() {
    static const EnvSpec spec = [] {
      EnvSpec s;
      s.id = "TestWalk-v0";
      s.observation_space = Box{{0.0f}, {3.0f}, {1}};
      s.action_space = Discrete{2};
      s.max_episode_steps = 5;
      return s;
    }();
    return spec;
  }
  std::array<float, 1> Reset(uint64_t) { return Reset(); }
  std::array<float, 1> Reset() {
    position_ = 0;
    steps_ = 0;
    return {0.0f};
  }
  StepResult Step(Action action) {
    if (action != 0 && action != 1) throw std::invalid_argument("TestWalk-v0: bad action");
    position_ += static_cast<int>(action);
    ++steps_;
    StepResult r;
    r.obs = {static_cast<float>(position_)};
    r.terminated = position_ == 3;
    r.reward = r.terminated ? 1.0 : 0.0;
    r.truncated = !r.terminated && steps_ >= 5;
    return r;
  }

 private:
  int position_ = 0;
  int steps_ = 0;
};

// Registered, the env is found by id, listed last, and a VecEnv steps it with same-step autoreset
// and episode statistics: three steps right end an episode (final_obs 3, obs 0 again, return 1,
// length 3); staying still five steps truncates one.
TEST(RegistryTest, RegisterEnvAddsAnEnvThatVecEnvSteps) {
  const size_t before = RegisteredEnvs().size();
  RegisterEnv(EnvRegistrationOf<Walk>(4));
  ASSERT_EQ(RegisteredEnvs().size(), before + 1);
  EXPECT_EQ(&FindEnvSpec("TestWalk-v0"), &Walk::Spec());
  const std::string ids = RegisteredEnvIdList();
  EXPECT_EQ(ids.substr(ids.size() - 13), ", TestWalk-v0") << ids;
  EXPECT_EQ(EnvThreadsFor("TestWalk-v0", 8, 4), 2);  // 4 rows per thread at least

  auto env = MakeVecEnv("TestWalk-v0", 2, 7, 2);
  env->Reset();
  for (int step = 1; step <= 3; ++step) {
    env->discrete_actions()[0] = 1;
    env->discrete_actions()[1] = 0;
    env->Step();
  }
  EXPECT_EQ(env->terminated()[0], 1);
  EXPECT_EQ(env->final_obs()[0], 3.0f);
  EXPECT_EQ(env->obs()[0], 0.0f);
  EXPECT_EQ(env->reward()[0], 1.0f);
  EXPECT_EQ(env->episode_return()[0], 1.0f);
  EXPECT_EQ(env->episode_length()[0], 3);
  EXPECT_EQ(env->terminated()[1], 0);
  for (int step = 4; step <= 5; ++step) env->Step();
  EXPECT_EQ(env->truncated()[1], 1);
  EXPECT_EQ(env->episode_length()[1], 5);
  EXPECT_EQ(env->episode_return()[1], 0.0f);
}

// A second registration of an id, or a spec that cannot work, is refused by name and adds nothing.
TEST(RegistryTest, RegisterEnvRefusesTakenIdsAndBadSpecs) {
  const size_t before = RegisteredEnvs().size();
  try {
    RegisterEnv(EnvRegistration{&FindEnvSpec("CartPole-v1"), RegisteredEnvs()[0].make_batched, 1});
    ADD_FAILURE() << "registered CartPole-v1 twice";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "env_id");
    EXPECT_NE(std::string(e.what()).find("an id that is not registered yet"), std::string::npos)
        << e.what();
  }
  static EnvSpec no_limit = Walk::Spec();
  no_limit.id = "NoLimit-v0";
  no_limit.max_episode_steps = 0;
  try {
    RegisterEnv(EnvRegistration{&no_limit, RegisteredEnvs()[0].make_batched, 1});
    ADD_FAILURE() << "registered a spec without a TimeLimit";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NoLimit-v0: max_episode_steps (the TimeLimit) must be "
                                         ">= 1, got 0"),
              std::string::npos)
        << e.what();
  }
  static EnvSpec no_bounds = Walk::Spec();
  no_bounds.id = "NoBounds-v0";
  no_bounds.observation_space.low.clear();
  EXPECT_THROW(RegisterEnv(EnvRegistration{&no_bounds, RegisteredEnvs()[0].make_batched, 1}),
               std::invalid_argument);
  static EnvSpec no_actions = Walk::Spec();
  no_actions.id = "NoActions-v0";
  no_actions.action_space = Discrete{0};
  EXPECT_THROW(RegisterEnv(EnvRegistration{&no_actions, RegisteredEnvs()[0].make_batched, 1}),
               std::invalid_argument);
  EXPECT_THROW(RegisterEnv(EnvRegistration{nullptr, RegisteredEnvs()[0].make_batched, 1}),
               std::invalid_argument);
  EXPECT_THROW(RegisterEnv(EnvRegistrationOf<Walk>(0)), std::invalid_argument);
  EXPECT_EQ(RegisteredEnvs().size(), before);
}

// A class whose rows disagree with its spec (its observation or action width, or its Action
// type) is refused when its registration is made: its rows would be read and written out of
// place (a hunt's kObsDim 5 against a spec of 2 overflowed the obs buffer under ASan).
template <int ObsDim, typename ActionType, int ActDim>
class Misfit {
 public:
  using Action = ActionType;
  static constexpr int kObsDim = ObsDim;
  static constexpr int kActDim = ActDim;
  using StepResult = env::StepResult<kObsDim>;
  static const EnvSpec& Spec() {
    static const EnvSpec spec = [] {
      EnvSpec s;
      s.id = "Misfit-v0";
      s.observation_space = Box{{0.0f, 0.0f}, {1.0f, 1.0f}, {2}};
      s.action_space = Box{{-1.0f, -1.0f}, {1.0f, 1.0f}, {2}};
      s.max_episode_steps = 5;
      return s;
    }();
    return spec;
  }
  std::array<float, kObsDim> Reset(uint64_t) { return {}; }
  std::array<float, kObsDim> Reset() { return {}; }
  StepResult Step(Action) { return {}; }
};

TEST(RegistryTest, EnvRegistrationOfRefusesAClassThatDisagreesWithItsSpec) {
  auto message = [](auto make) {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { EnvRegistrationOf<Misfit<5, const float*, 2>>(); }),
            "Misfit-v0: kObsDim is 5 but the spec's observation space has 2 values");
  EXPECT_EQ(message([] { EnvRegistrationOf<Misfit<2, const float*, 1>>(); }),
            "Misfit-v0: kActDim is 1 but the spec's action space has 2 values");
  EXPECT_EQ(message([] { EnvRegistrationOf<Misfit<2, int64_t, 0>>(); }),
            "Misfit-v0: Action is int64_t (Discrete) but the spec's action space is a Box");
  EXPECT_EQ(message([] { EnvRegistrationOf<Misfit<2, const float*, 2>>(); }), "no error");
}

// Observation bounds that are NaN, or a low above its high, are refused (Gymnasium's Box
// refuses both).
TEST(RegistryTest, RegisterEnvRefusesNanOrCrossedObservationBounds) {
  const size_t before = RegisteredEnvs().size();
  static EnvSpec crossed = Walk::Spec();
  crossed.id = "Crossed-v0";
  crossed.observation_space.low = {4.0f};
  static EnvSpec nan_bound = Walk::Spec();
  nan_bound.id = "NanBound-v0";
  nan_bound.observation_space.high = {std::nanf("")};
  // A shape entry below 1 is refused too, even where the product of the entries is positive.
  static EnvSpec negative_shape = Walk::Spec();
  negative_shape.id = "NegativeShape-v0";
  negative_shape.observation_space.shape = {-1, -1};
  try {
    RegisterEnv(EnvRegistration{&negative_shape, RegisteredEnvs()[0].make_batched, 1});
    ADD_FAILURE() << negative_shape.id;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NegativeShape-v0: the observation space needs a shape "
                                         "whose entries are all >= 1"),
              std::string::npos)
        << e.what();
  }
  for (const EnvSpec* spec : {&crossed, &nan_bound}) {
    try {
      RegisterEnv(EnvRegistration{spec, RegisteredEnvs()[0].make_batched, 1});
      ADD_FAILURE() << spec->id;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(spec->id + ": observation bound 0 is ["),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("each needs low <= high and neither NaN"),
                std::string::npos);
    }
  }
  EXPECT_EQ(RegisteredEnvs().size(), before);
}

// An env that never truncates itself (a port of a Gymnasium env that relied on gymnasium.make's
// TimeLimit) is truncated at its spec's max_episode_steps, as Gymnasium's TimeLimit does; it ran
// forever, and its first evaluation failed. A step that terminates at the limit is also truncated,
// as there.
class Drift {
 public:
  using Action = int64_t;
  static constexpr int kObsDim = 1;
  using StepResult = env::StepResult<kObsDim>;
  static const EnvSpec& Spec() {
    static const EnvSpec spec = [] {
      EnvSpec s = Walk::Spec();
      s.id = "TestDrift-v0";
      s.max_episode_steps = 4;
      return s;
    }();
    return spec;
  }
  std::array<float, 1> Reset(uint64_t) { return Reset(); }
  std::array<float, 1> Reset() {
    steps_ = 0;
    return {0.0f};
  }
  StepResult Step(Action action) {
    ++steps_;
    StepResult r;
    r.obs = {static_cast<float>(steps_)};
    r.reward = 0.5;
    r.terminated = action == 1 && steps_ == 4;
    return r;
  }

 private:
  int steps_ = 0;
};

// The buffers of two rows of a one-value observation, for BatchedEnvOf without a VecEnv.
struct TwoRows {
  std::array<float, 2> obs{}, final_obs{}, reward{}, episode_return{};
  std::array<uint8_t, 2> terminated{}, truncated{};
  std::array<int32_t, 2> episode_length{};
  std::array<int64_t, 2> actions{};
  VecBuffers Views() {
    VecBuffers b;
    b.discrete_actions = actions.data();
    b.obs = obs.data(), b.final_obs = final_obs.data(), b.reward = reward.data();
    b.terminated = terminated.data(), b.truncated = truncated.data();
    b.episode_return = episode_return.data(), b.episode_length = episode_length.data();
    return b;
  }
};

TEST(RegistryTest, BatchedEnvOfAppliesTheSpecsTimeLimit) {
  BatchedEnvOf<Drift> batched(2);
  TwoRows rows;
  rows.actions = {0, 1};
  auto& [obs, final_obs, reward, episode_return, terminated, truncated, episode_length, actions] =
      rows;
  const VecBuffers b = rows.Views();
  batched.ResetRows(0, 2, 1, b);
  for (int step = 1; step <= 3; ++step) {
    batched.StepRows(0, 2, b);
    EXPECT_EQ(truncated[0], 0) << step;
  }
  batched.StepRows(0, 2, b);
  EXPECT_EQ(truncated[0], 1);
  EXPECT_EQ(terminated[0], 0);
  EXPECT_EQ(final_obs[0], 4.0f);
  EXPECT_EQ(obs[0], 0.0f);  // reset
  EXPECT_EQ(episode_length[0], 4);
  EXPECT_EQ(episode_return[0], 2.0f);
  EXPECT_EQ(truncated[1], 1);  // terminated at the limit: both, as Gymnasium's TimeLimit
  EXPECT_EQ(terminated[1], 1);
  batched.StepRows(0, 2, b);
  EXPECT_EQ(truncated[0], 0);
  EXPECT_EQ(final_obs[0], 1.0f);
}

// NaN or infinite observations and rewards are counted, and the trainer warns once naming the
// env; a NaN observation at step 2 and an infinite reward at step 3, on each of two rows, are 4.
struct Faulty : Drift {
  StepResult Step(Action action) {
    StepResult r = Drift::Step(action);
    if (r.obs[0] == 2.0f) r.obs[0] = std::nanf("");
    if (r.obs[0] == 3.0f) r.reward = std::numeric_limits<double>::infinity();
    return r;
  }
};
TEST(RegistryTest, BatchedEnvOfCountsNonFiniteObservationsAndRewards) {
  BatchedEnvOf<Faulty> batched(2);
  TwoRows rows;
  const VecBuffers b = rows.Views();
  batched.ResetRows(0, 2, 1, b);
  batched.StepRows(0, 2, b);
  EXPECT_EQ(batched.non_finite_outputs(), 0);
  batched.StepRows(0, 2, b);
  EXPECT_EQ(batched.non_finite_outputs(), 2);
  batched.StepRows(0, 2, b);
  EXPECT_EQ(batched.non_finite_outputs(), 4);
  batched.StepRows(0, 2, b);
  EXPECT_EQ(batched.non_finite_outputs(), 4);
  EXPECT_EQ(BatchedEnvOf<Drift>(2).non_finite_outputs(), 0);
}

// The automatic reset's observation is counted too (a NaN from the unseeded Reset that starts
// every episode after the first went uncounted): two rows truncated at step 4 reset to NaN.
struct FaultyReset : Drift {
  std::array<float, 1> Reset(uint64_t) { return Drift::Reset(); }
  std::array<float, 1> Reset() {
    Drift::Reset();
    return {std::nanf("")};
  }
};
TEST(RegistryTest, BatchedEnvOfCountsNonFiniteObservationsOfTheAutomaticReset) {
  BatchedEnvOf<FaultyReset> batched(2);
  TwoRows rows;
  const VecBuffers b = rows.Views();
  batched.ResetRows(0, 2, 1, b);
  for (int step = 1; step <= 3; ++step) batched.StepRows(0, 2, b);
  EXPECT_EQ(batched.non_finite_outputs(), 0);
  batched.StepRows(0, 2, b);
  EXPECT_EQ(batched.non_finite_outputs(), 2);
  EXPECT_TRUE(std::isnan(rows.obs[0]));
}

// A trivially copyable class is saved byte for byte, unless it declares kSaveBytes = false (a
// member pointer's bytes name an address of the process that saved them; a resume crashed).
struct PointsIntoATable : Walk {
  static constexpr bool kSaveBytes = false;
  const float* table = nullptr;
};
TEST(RegistryTest, KSaveBytesFalseKeepsAnEnvsBytesOutOfCheckpoints) {
  std::string bytes;
  EXPECT_TRUE(BatchedEnvOf<Walk>(2).SaveState(&bytes));
  EXPECT_FALSE(bytes.empty());
  std::string none;
  EXPECT_FALSE(BatchedEnvOf<PointsIntoATable>(2).SaveState(&none));
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace greenrl::env
