// wrappers_test.cc: NormalizeVecEnv against a direct transcription of SB3's VecNormalize
// formulas, frozen statistics, save/load round trip, reward returns reset on done, action
// clipping and rescaling, raw episode statistics, and no allocation per Step().
#include "greenrl/env/wrappers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"

#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace greenrl::env {
namespace {

void RandomDiscrete(VecEnv& env, Rng& rng) {
  for (int i = 0; i < env.num_envs(); ++i) {
    env.discrete_actions()[i] = static_cast<int64_t>(rng.Below(env.spec().num_actions()));
  }
}

// `steps` vec steps of uniform random Discrete actions.
void StepRandomly(VecEnv& env, Rng& rng, int steps) {
  for (int t = 0; t < steps; ++t) {
    RandomDiscrete(env, rng);
    env.Step();
  }
}

std::unique_ptr<NormalizeVecEnv> MakeNormalized(const std::string& id, int n, uint64_t seed) {
  return std::make_unique<NormalizeVecEnv>(MakeVecEnv(id, n, seed, 1), NormalizeOptions{});
}

// Reference: SB3's RunningMeanStd and VecNormalize written out with plain vectors.
struct Reference {
  std::vector<double> mean, var;
  double count = 1e-4;
  void Update(const std::vector<std::vector<double>>& rows) {
    const size_t d = mean.size();
    const double n = static_cast<double>(rows.size());
    for (size_t k = 0; k < d; ++k) {
      double bm = 0, bv = 0;
      for (const auto& r : rows) bm += r[k];
      bm /= n;
      for (const auto& r : rows) bv += (r[k] - bm) * (r[k] - bm);
      bv /= n;
      const double delta = bm - mean[k];
      const double tot = count + n;
      const double m2 = var[k] * count + bv * n + delta * delta * count * n / tot;
      mean[k] += delta * n / tot;
      var[k] = m2 / tot;
    }
    count += n;
  }
};

TEST(NormalizeVecEnvTest, MatchesSb3VecNormalizeFormulas) {
  constexpr int kN = 4;
  auto env = MakeNormalized("CartPole-v1", kN, 3);
  auto raw = MakeVecEnv("CartPole-v1", kN, 3, 1);  // same seed: the same raw trajectories
  Reference obs_ref{std::vector<double>(4, 0.0), std::vector<double>(4, 1.0)};
  Reference ret_ref{std::vector<double>(1, 0.0), std::vector<double>(1, 1.0)};
  std::vector<double> returns(kN, 0.0);
  auto rows_of = [&](const float* p) {
    std::vector<std::vector<double>> rows(kN, std::vector<double>(4));
    for (int i = 0; i < kN; ++i)
      for (int k = 0; k < 4; ++k) rows[i][k] = p[i * 4 + k];
    return rows;
  };
  auto expect_obs = [&](const float* normalized, const float* raw_rows) {
    for (int j = 0; j < kN * 4; ++j) {
      const int k = j % 4;
      const double z = std::clamp(
          (raw_rows[j] - obs_ref.mean[k]) / std::sqrt(obs_ref.var[k] + 1e-8), -10.0, 10.0);
      ASSERT_EQ(normalized[j], static_cast<float>(z)) << j;
    }
  };
  env->Reset();
  raw->Reset();
  obs_ref.Update(rows_of(raw->obs()));
  expect_obs(env->obs(), raw->obs());
  Rng rng(1);
  for (int t = 0; t < 300; ++t) {
    RandomDiscrete(*env, rng);
    std::copy(env->discrete_actions(), env->discrete_actions() + kN, raw->discrete_actions());
    env->Step();
    raw->Step();
    obs_ref.Update(rows_of(raw->obs()));
    expect_obs(env->obs(), raw->obs());
    expect_obs(env->final_obs(), raw->final_obs());
    std::vector<std::vector<double>> ret_rows(kN, std::vector<double>(1));
    for (int i = 0; i < kN; ++i) {
      returns[i] = returns[i] * 0.99 + raw->reward()[i];
      ret_rows[i][0] = returns[i];
    }
    ret_ref.Update(ret_rows);
    for (int i = 0; i < kN; ++i) {
      const double r = std::clamp(raw->reward()[i] / std::sqrt(ret_ref.var[0] + 1e-8), -10.0, 10.0);
      ASSERT_EQ(env->reward()[i], static_cast<float>(r)) << "t " << t << " i " << i;
      // Raw episode statistics pass through unchanged.
      ASSERT_EQ(env->episode_return()[i], raw->episode_return()[i]);
      ASSERT_EQ(env->episode_length()[i], raw->episode_length()[i]);
      if (raw->terminated()[i] || raw->truncated()[i]) returns[i] = 0.0;
    }
    ASSERT_EQ(env->raw_obs(), env->inner().obs());
  }
  EXPECT_NEAR(env->obs_rms().count, 1e-4 + kN * 301, 1e-6);
}

// NormalizeObs / NormalizeRewards (what DQN and SAC apply to a sampled replay batch) with set
// statistics, against values computed by hand: obs (x - mean) / sqrt(var + 1e-8) clipped to
// +-10, reward r / sqrt(ret_var + 1e-8) clipped to +-10; identity when switched off.
TEST(NormalizeVecEnvTest, NormalizeObsAndRewardsUseTheCurrentStatistics) {
  auto env = MakeNormalized("CartPole-v1", 1, 0);
  // [version, obs_dim, obs_count, mean[4], var[4], ret_count, ret_mean, ret_var]
  env->SetState({1.0, 4.0, 10.0, 1.0, 0.0, -2.0, 0.5, 4.0, 1.0, 0.25, 0.01, 7.0, 0.0, 16.0});
  const float rows[8] = {3.0f, 1.0f, -2.0f, 100.0f, -1.0f, -1.0f, 0.0f, 0.5f};
  float out[8];
  env->NormalizeObs(rows, out, 2);
  const double expected[8] = {(3.0 - 1.0) / std::sqrt(4.0 + 1e-8),
                              1.0 / std::sqrt(1.0 + 1e-8),
                              0.0,
                              10.0,  // (99.5 / 0.1) clipped
                              (-1.0 - 1.0) / std::sqrt(4.0 + 1e-8),
                              -1.0 / std::sqrt(1.0 + 1e-8),
                              2.0 / std::sqrt(0.25 + 1e-8),
                              0.0};
  for (int j = 0; j < 8; ++j) EXPECT_EQ(out[j], static_cast<float>(expected[j])) << j;
  float in_place[8];
  std::copy(rows, rows + 8, in_place);
  env->NormalizeObs(in_place, in_place, 2);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(in_place[j], out[j]) << j;
  float rewards[3] = {2.0f, -100.0f, 0.5f};
  env->NormalizeRewards(rewards, 3);
  EXPECT_EQ(rewards[0], static_cast<float>(2.0 / std::sqrt(16.0 + 1e-8)));
  EXPECT_EQ(rewards[1], -10.0f);  // -25 clipped
  EXPECT_EQ(rewards[2], static_cast<float>(0.5 / std::sqrt(16.0 + 1e-8)));

  NormalizeOptions off;
  off.norm_obs = false;
  off.norm_reward = false;
  NormalizeVecEnv plain(MakeVecEnv("CartPole-v1", 1, 0, 1), off);
  plain.NormalizeObs(rows, out, 2);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(out[j], rows[j]) << j;
  float kept[1] = {2.0f};
  plain.NormalizeRewards(kept, 1);
  EXPECT_EQ(kept[0], 2.0f);
}

TEST(NormalizeVecEnvTest, FrozenStatisticsNeverChange) {
  auto env = MakeNormalized("Acrobot-v1", 5, 7);
  env->Reset();
  Rng rng(2);
  StepRandomly(*env, rng, 50);
  env->set_training(false);
  const std::vector<double> frozen = env->GetState();
  env->Reset();
  StepRandomly(*env, rng, 200);
  EXPECT_EQ(env->GetState(), frozen);
}

TEST(NormalizeVecEnvTest, SaveLoadRoundTripGivesIdenticalNormalizedObservations) {
  auto trained = MakeNormalized("MountainCar-v0", 6, 11);
  trained->Reset();
  Rng rng(3);
  StepRandomly(*trained, rng, 100);
  const std::vector<double> saved = trained->GetState();
  ASSERT_EQ(saved.size(), 6u + 2u * 2u);

  // Two frozen evaluators on the same seed: one continues the trained object, one is new and
  // loads the saved statistics.
  trained->set_training(false);
  auto loaded = MakeNormalized("MountainCar-v0", 6, 11);
  loaded->SetState(saved);
  loaded->set_training(false);
  EXPECT_EQ(loaded->GetState(), saved);
  trained->Reset();
  loaded->Reset();
  for (int t = 0; t < 250; ++t) {
    for (int i = 0; i < 6; ++i) {
      const int64_t a = static_cast<int64_t>(rng.Below(3));
      trained->discrete_actions()[i] = a;
      loaded->discrete_actions()[i] = a;
    }
    trained->Step();
    loaded->Step();
    for (int j = 0; j < 12; ++j) ASSERT_EQ(trained->obs()[j], loaded->obs()[j]) << t;
    for (int i = 0; i < 6; ++i) ASSERT_EQ(trained->reward()[i], loaded->reward()[i]) << t;
  }
}

// Statistics restored after the envs were reset (a MuJoCo resume; a data-parallel merge
// between rollouts) apply to the observation the agent acts on next: obs() is normalised again
// with them, as SB3's VecNormalize.load gives it before the first reset. Before, obs() kept the
// fresh statistics' values (the first rows divided by a tiny reset variance).
TEST(NormalizeVecEnvTest, SetStateNormalisesTheCurrentObservationsAgain) {
  auto fresh = MakeNormalized("MountainCar-v0", 4, 9);
  fresh->Reset();  // statistics from 4 reset observations
  Rng rng(7);
  auto trained = MakeNormalized("MountainCar-v0", 4, 5);
  trained->Reset();
  StepRandomly(*trained, rng, 50);
  fresh->SetState(trained->GetState());
  std::vector<float> want(8);
  fresh->NormalizeObs(fresh->raw_obs(), want.data(), 4);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(fresh->obs()[j], want[j]) << j;
}

TEST(NormalizeVecEnvTest, BadStateAndOptionsAreConfigErrors) {
  auto env = MakeNormalized("CartPole-v1", 2, 0);
  std::vector<double> state = env->GetState();
  state.pop_back();
  EXPECT_THROW(env->SetState(state), ConfigError);
  auto other = MakeNormalized("Pendulum-v1", 2, 0);
  EXPECT_THROW(env->SetState(other->GetState()), ConfigError);
  NormalizeOptions bad;
  bad.gamma = 1.5;
  try {
    NormalizeVecEnv wrapped(MakeVecEnv("CartPole-v1", 2, 0, 1), bad);
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "gamma");
  }
  // The clips are named by their config keys.
  NormalizeOptions bad_clip;
  bad_clip.clip_obs = 0.0;
  try {
    NormalizeVecEnv wrapped(MakeVecEnv("CartPole-v1", 2, 0, 1), bad_clip);
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "normalize_kwargs.clip_obs");
  }
}

TEST(ActionWrappersTest, ClipAndRescaleMapOntoTheInnerBox) {
  auto clip = std::make_unique<ClipActionVecEnv>(MakeVecEnv("Pendulum-v1", 3, 0, 1));
  ClipActionVecEnv* clip_ptr = clip.get();
  clip->Reset();
  clip->continuous_actions()[0] = 5.0f;
  clip->continuous_actions()[1] = -7.0f;
  clip->continuous_actions()[2] = 0.5f;
  clip->Step();
  EXPECT_EQ(clip_ptr->inner().continuous_actions()[0], 2.0f);
  EXPECT_EQ(clip_ptr->inner().continuous_actions()[1], -2.0f);
  EXPECT_EQ(clip_ptr->inner().continuous_actions()[2], 0.5f);

  RescaleActionVecEnv rescale(MakeVecEnv("Pendulum-v1", 3, 0, 1));
  const Box& outer = std::get<Box>(rescale.spec().action_space);
  EXPECT_EQ(outer.low[0], -1.0f);
  EXPECT_EQ(outer.high[0], 1.0f);
  EXPECT_EQ(std::get<Box>(rescale.inner().spec().action_space).high[0], 2.0f);
  rescale.Reset();
  rescale.continuous_actions()[0] = 1.0f;
  rescale.continuous_actions()[1] = -0.25f;
  rescale.continuous_actions()[2] = 3.0f;
  rescale.Step();
  EXPECT_EQ(rescale.inner().continuous_actions()[0], 2.0f);
  EXPECT_EQ(rescale.inner().continuous_actions()[1], -0.5f);
  EXPECT_EQ(rescale.inner().continuous_actions()[2], 2.0f);  // clipped after rescaling

  EXPECT_THROW(ClipActionVecEnv(MakeVecEnv("CartPole-v1", 2, 0, 1)), ConfigError);
  EXPECT_THROW(RescaleActionVecEnv(MakeVecEnv("Acrobot-v1", 2, 0, 1)), ConfigError);
}

TEST(WrappersTest, StackedWrappersStepWithoutAllocating) {
  std::unique_ptr<VecEnv> env = std::make_unique<NormalizeVecEnv>(
      std::make_unique<RescaleActionVecEnv>(MakeVecEnv("Pendulum-v1", 8, 0, 2)),
      NormalizeOptions{});
  env->Reset();
  Rng rng(4);
  std::vector<float> actions(8 * 300);
  for (float& a : actions) a = static_cast<float>(rng.Uniform(-1.5, 1.5));
  const int64_t before = g_allocations.load();
  for (int t = 0; t < 300; ++t) {
    std::copy(&actions[t * 8], &actions[t * 8] + 8, env->continuous_actions());
    env->Step();
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(env->num_threads(), 2);
}

}  // namespace
}  // namespace greenrl::env
