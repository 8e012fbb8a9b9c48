// vec_env_test.cc: VecEnv and MakeVecEnv, mostly on CartPole-v1: the registry, seeding, same-step
// autoreset into final_obs, the 500-step TimeLimit, episode statistics, determinism across thread
// counts, no allocation per step, exceptions carried from worker threads, and StepRandom
// (CartPole-v1, Acrobot-v1, Pendulum-v1, Hopper-v4, and a decorator).
#include "greenrl/env/vec_env.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/classic/cartpole.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/wrappers.h"

// Counts heap allocations in this test binary, to prove Step() allocates nothing. The replacement
// pairs malloc with free; GCC cannot see that and would warn at every inlined new/delete pair.
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

constexpr int kObsDim = CartPole::kObsDim;

// Everything a Step() wrote, for comparing runs.
struct Snapshot {
  std::vector<float> obs, reward, final_obs, episode_return;
  std::vector<uint8_t> terminated, truncated;
  std::vector<int32_t> episode_length;

  explicit Snapshot(const VecEnv& env) {
    const int n = env.num_envs();
    obs.assign(env.obs(), env.obs() + n * kObsDim);
    final_obs.assign(env.final_obs(), env.final_obs() + n * kObsDim);
    reward.assign(env.reward(), env.reward() + n);
    episode_return.assign(env.episode_return(), env.episode_return() + n);
    terminated.assign(env.terminated(), env.terminated() + n);
    truncated.assign(env.truncated(), env.truncated() + n);
    episode_length.assign(env.episode_length(), env.episode_length() + n);
  }
  bool operator==(const Snapshot& o) const {
    return obs == o.obs && reward == o.reward && final_obs == o.final_obs &&
           episode_return == o.episode_return && terminated == o.terminated &&
           truncated == o.truncated && episode_length == o.episode_length;
  }
};

// 1000 steps with pseudo-random actions from a fixed stream; every step's buffers.
std::vector<Snapshot> RandomRollout(uint64_t seed, int num_envs, int num_threads) {
  std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", num_envs, seed, num_threads);
  Rng action_rng(/*seed=*/12345);
  std::vector<Snapshot> out;
  env->Reset();
  out.emplace_back(*env);
  for (int t = 0; t < 1000; ++t) {
    for (int i = 0; i < num_envs; ++i) {
      env->discrete_actions()[i] = static_cast<int64_t>(action_rng.Below(2));
    }
    env->Step();
    out.emplace_back(*env);
  }
  return out;
}

TEST(RegistryTest, ListsCartPoleWithItsSpec) {
  const std::vector<EnvRegistration>& envs = RegisteredEnvs();
  ASSERT_EQ(envs.size(), 27u);
  EXPECT_EQ(envs[0].spec->id, "CartPole-v1");
  EXPECT_EQ(&FindEnvSpec("CartPole-v1"), &CartPole::Spec());
  EXPECT_EQ(RegisteredEnvIdList(),
            "CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0, Pendulum-v1, "
            "HalfCheetah-v4, HalfCheetah-v5, Hopper-v4, Hopper-v5, Walker2d-v4, Walker2d-v5, "
            "Ant-v4, Ant-v5, Swimmer-v4, Swimmer-v5, InvertedPendulum-v4, InvertedPendulum-v5, "
            "InvertedDoublePendulum-v4, InvertedDoublePendulum-v5, Reacher-v4, Reacher-v5, "
            "Humanoid-v4, Humanoid-v5, HumanoidStandup-v4, HumanoidStandup-v5, Pusher-v4, "
            "Pusher-v5");
}

// threads.env is an upper bound: a thread per min_rows_per_thread rows (CartPole 256, Acrobot 8,
// MuJoCo 1), at least one, at most max_threads.
TEST(RegistryTest, EnvThreadsForGivesEachThreadEnoughRows) {
  EXPECT_EQ(EnvThreadsFor("CartPole-v1", 8, 2), 1);
  EXPECT_EQ(EnvThreadsFor("CartPole-v1", 511, 2), 1);
  EXPECT_EQ(EnvThreadsFor("CartPole-v1", 512, 2), 2);
  EXPECT_EQ(EnvThreadsFor("CartPole-v1", 1024, 8), 4);
  EXPECT_EQ(EnvThreadsFor("CartPole-v1", 1024, 1), 1);
  EXPECT_EQ(EnvThreadsFor("Acrobot-v1", 8, 2), 1);
  EXPECT_EQ(EnvThreadsFor("Acrobot-v1", 16, 2), 2);
  EXPECT_EQ(EnvThreadsFor("Pendulum-v1", 128, 2), 2);
  EXPECT_EQ(EnvThreadsFor("HalfCheetah-v4", 1, 2), 1);
  EXPECT_EQ(EnvThreadsFor("HalfCheetah-v4", 2, 2), 2);
  EXPECT_EQ(EnvThreadsFor("Hopper-v4", 8, 16), 8);
  for (const EnvRegistration& entry : RegisteredEnvs()) {
    EXPECT_GE(entry.min_rows_per_thread, 1) << entry.spec->id;
  }
  EXPECT_THROW(EnvThreadsFor("Pong-v5", 8, 2), ConfigError);
}

TEST(RegistryTest, UnknownIdAndBadSizesAreConfigErrors) {
  try {
    MakeVecEnv("Pong-v5", 4, 0, 1);
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "env_id");
    EXPECT_NE(std::string(e.what()).find("Pong-v5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("one of: CartPole-v1, Acrobot-v1"), std::string::npos)
        << e.what();
  }
  try {  // ids are case-sensitive, as Gymnasium's; the close one is named
    FindEnvSpec("cartpole-v1");
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(
            "env_id: got 'cartpole-v1'; did you mean 'CartPole-v1'? one of: CartPole-v1, ", 0),
        0u)
        << e.what();
  }
  try {
    MakeVecEnv("CartPole-v1", 0, 0, 1);
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "num_envs");
  }
  try {
    MakeVecEnv("CartPole-v1", 4, 0, 0);
    ADD_FAILURE() << "no exception";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "num_threads");
  }
}

TEST(VecEnvTest, BuffersAndActionAccessorsFollowTheSpec) {
  std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", 5, 0, 8);
  EXPECT_EQ(env->num_envs(), 5);
  EXPECT_EQ(env->num_threads(), 5);  // no thread without a row
  EXPECT_EQ(env->spec().id, "CartPole-v1");
  EXPECT_NE(env->discrete_actions(), nullptr);
  EXPECT_THROW(env->continuous_actions(), InternalError);
  EXPECT_THROW(env->Step(), InternalError);  // before Reset
}

// Every SoA buffer starts on a 64-byte cache line, so a thread boundary at a row whose byte offset
// is a multiple of 64 (row 512 of 1024) shares no line between two threads (aligned_vector.h).
TEST(VecEnvTest, BuffersStartOnCacheLines) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; };
  for (const char* id : {"CartPole-v1", "Pendulum-v1"}) {
    SCOPED_TRACE(id);
    std::unique_ptr<VecEnv> env = MakeVecEnv(id, 1024, 0, 2);
    if (env->spec().discrete_actions()) {
      EXPECT_TRUE(aligned(env->discrete_actions()));
    } else {
      EXPECT_TRUE(aligned(env->continuous_actions()));
    }
    EXPECT_TRUE(aligned(env->obs()));
    EXPECT_TRUE(aligned(env->reward()));
    EXPECT_TRUE(aligned(env->terminated()));
    EXPECT_TRUE(aligned(env->truncated()));
    EXPECT_TRUE(aligned(env->final_obs()));
    EXPECT_TRUE(aligned(env->episode_return()));
    EXPECT_TRUE(aligned(env->episode_length()));
  }
}

// Row i behaves exactly like a single CartPole reset with DeriveSeed(seed, i) and reset again on
// every episode end: obs, final_obs, rewards, flags and episode statistics.
TEST(VecEnvTest, MatchesSingleEnvsWithSameStepAutoreset) {
  constexpr int kN = 5;
  constexpr uint64_t kSeed = 42;
  std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", kN, kSeed, 2);
  std::vector<CartPole> shadow(kN);
  std::vector<double> shadow_return(kN, 0.0);
  std::vector<int> shadow_length(kN, 0);
  env->Reset();
  for (int i = 0; i < kN; ++i) {
    const CartPole::Observation first = shadow[i].Reset(DeriveSeed(kSeed, i));
    for (int k = 0; k < kObsDim; ++k) {
      EXPECT_EQ(env->obs()[i * kObsDim + k], first[k]);
      EXPECT_GE(env->obs()[i * kObsDim + k], -0.05f);
      EXPECT_LE(env->obs()[i * kObsDim + k], 0.05f);
    }
  }
  int episodes_ended = 0;
  Rng action_rng(/*seed=*/9);
  for (int t = 0; t < 300; ++t) {
    for (int i = 0; i < kN; ++i) env->discrete_actions()[i] = action_rng.Below(2);
    env->Step();
    for (int i = 0; i < kN; ++i) {
      const CartPole::StepResult r = shadow[i].Step(env->discrete_actions()[i]);
      shadow_return[i] += r.reward;
      ++shadow_length[i];
      const bool done = r.terminated || r.truncated;
      ASSERT_EQ(env->reward()[i], static_cast<float>(r.reward));
      ASSERT_EQ(env->terminated()[i], r.terminated ? 1 : 0);
      ASSERT_EQ(env->truncated()[i], r.truncated ? 1 : 0);
      for (int k = 0; k < kObsDim; ++k) ASSERT_EQ(env->final_obs()[i * kObsDim + k], r.obs[k]);
      if (done) {
        ++episodes_ended;
        EXPECT_EQ(env->episode_return()[i], static_cast<float>(shadow_return[i]));
        EXPECT_EQ(env->episode_length()[i], shadow_length[i]);
        EXPECT_EQ(env->episode_return()[i], static_cast<float>(env->episode_length()[i]));
        const CartPole::Observation next = shadow[i].Reset();
        for (int k = 0; k < kObsDim; ++k) {
          ASSERT_EQ(env->obs()[i * kObsDim + k], next[k]);
          EXPECT_LE(std::abs(env->obs()[i * kObsDim + k]), 0.05f);
        }
        shadow_return[i] = 0.0;
        shadow_length[i] = 0;
      } else {
        EXPECT_EQ(env->episode_return()[i], 0.0f);
        EXPECT_EQ(env->episode_length()[i], 0);
        for (int k = 0; k < kObsDim; ++k) ASSERT_EQ(env->obs()[i * kObsDim + k], r.obs[k]);
      }
    }
  }
  EXPECT_GT(episodes_ended, 10);  // random actions end CartPole episodes in ~20 steps
}

// The terminal observation of a terminated row lies out of bounds; the next obs is a fresh reset.
TEST(VecEnvTest, TerminalObsGoesToFinalObs) {
  std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", 3, 7, 1);
  env->Reset();
  bool seen = false;
  for (int t = 0; t < 200 && !seen; ++t) {
    for (int i = 0; i < 3; ++i) env->discrete_actions()[i] = 1;  // push right until it falls
    env->Step();
    for (int i = 0; i < 3; ++i) {
      if (!env->terminated()[i]) continue;
      seen = true;
      const float* final_row = env->final_obs() + i * kObsDim;
      const float* obs_row = env->obs() + i * kObsDim;
      EXPECT_TRUE(std::abs(final_row[0]) > 2.4f ||
                  std::abs(final_row[2]) > static_cast<float>(CartPole::kThetaThresholdRad));
      for (int k = 0; k < kObsDim; ++k) EXPECT_LE(std::abs(obs_row[k]), 0.05f);
      EXPECT_EQ(env->reward()[i], 1.0f);
      EXPECT_EQ(env->episode_length()[i], t + 1);
      EXPECT_EQ(env->episode_return()[i], static_cast<float>(t + 1));
    }
  }
  EXPECT_TRUE(seen);
}

// A linear state-feedback controller keeps every pole up: each row is truncated at exactly step
// 500, with return 500, and the next episode starts at once.
TEST(VecEnvTest, TruncatesAtExactly500Steps) {
  constexpr int kN = 4;
  std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", kN, 2024, 2);
  env->Reset();
  for (int t = 1; t <= 501; ++t) {
    for (int i = 0; i < kN; ++i) {
      const float* o = env->obs() + i * kObsDim;
      const float u = 1.0f * o[0] + 1.0f * o[1] + 10.0f * o[2] + 2.0f * o[3];
      env->discrete_actions()[i] = u > 0.0f ? 1 : 0;
    }
    env->Step();
    for (int i = 0; i < kN; ++i) {
      SCOPED_TRACE("step " + std::to_string(t) + " row " + std::to_string(i));
      ASSERT_EQ(env->terminated()[i], 0);
      ASSERT_EQ(env->truncated()[i], t == 500 ? 1 : 0);
      if (t == 500) {
        EXPECT_EQ(env->episode_length()[i], 500);
        EXPECT_EQ(env->episode_return()[i], 500.0f);
        for (int k = 0; k < kObsDim; ++k) EXPECT_LE(std::abs(env->obs()[i * kObsDim + k]), 0.05f);
        EXPECT_NE(std::vector<float>(env->obs() + i * kObsDim, env->obs() + (i + 1) * kObsDim),
                  std::vector<float>(env->final_obs() + i * kObsDim,
                                     env->final_obs() + (i + 1) * kObsDim));
      }
    }
  }
}

TEST(VecEnvTest, SameSeedSameBuffersForAnyThreadCount) {
  const std::vector<Snapshot> one = RandomRollout(/*seed=*/1, /*num_envs=*/7, /*num_threads=*/1);
  const std::vector<Snapshot> two = RandomRollout(1, 7, 2);
  const std::vector<Snapshot> three = RandomRollout(1, 7, 3);
  ASSERT_EQ(one.size(), 1001u);
  for (size_t t = 0; t < one.size(); ++t) {
    ASSERT_TRUE(one[t] == two[t]) << "threads 1 vs 2 differ at step " << t;
    ASSERT_TRUE(one[t] == three[t]) << "threads 1 vs 3 differ at step " << t;
  }
  const std::vector<Snapshot> other = RandomRollout(/*seed=*/2, 7, 2);
  EXPECT_FALSE(one[0] == other[0]);  // different reset observations
  int differing_steps = 0;
  for (size_t t = 0; t < one.size(); ++t) differing_steps += !(one[t] == other[t]);
  EXPECT_GT(differing_steps, 900);
}

TEST(VecEnvTest, ResetRestartsTheSameEpisodes) {
  std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", 3, 11, 3);
  env->Reset();
  const Snapshot first(*env);
  for (int i = 0; i < 3; ++i) env->discrete_actions()[i] = 0;
  env->Step();
  env->Reset();
  EXPECT_TRUE(Snapshot(*env) == first);
}

TEST(VecEnvTest, StepAllocatesNothing) {
  for (int threads : {1, 3}) {
    std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", 16, 5, threads);
    env->Reset();
    int64_t* actions = env->discrete_actions();
    const int64_t before = g_allocations.load();
    for (int t = 0; t < 600; ++t) {  // crosses episode ends and the 500-step limit
      for (int i = 0; i < 16; ++i) actions[i] = (t + i) % 2;
      env->Step();
    }
    EXPECT_EQ(g_allocations.load(), before) << "threads " << threads;
  }
}

// An invalid action in a row stepped by a worker thread reaches the caller as the same
// std::invalid_argument, with the message a single CartPole gives.
TEST(VecEnvTest, WorkerExceptionReachesCallerWithTypeAndMessage) {
  CartPole single;
  single.Reset(/*seed=*/0);
  std::string expected;
  try {
    single.Step(7);
  } catch (const std::invalid_argument& e) {
    expected = e.what();
  }
  ASSERT_FALSE(expected.empty());
  for (int threads : {2, 1}) {
    std::unique_ptr<VecEnv> env = MakeVecEnv("CartPole-v1", 4, 0, threads);
    env->Reset();
    for (int i = 0; i < 4; ++i) env->discrete_actions()[i] = 0;
    env->discrete_actions()[3] = 7;  // row 3 is in the worker's chunk [2, 4) when threads == 2
    try {
      env->Step();
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
    EXPECT_THROW(env->Step(), InternalError);  // a failed Step demands a Reset
    env->discrete_actions()[3] = 1;
    env->Reset();
    EXPECT_NO_THROW(env->Step());
  }
}

// --- VecEnv::StepRandom (the sampling itself: spaces_test.cc) ---

// StepRandom gives every buffer, and the actions it leaves, identical to the caller drawing the
// same actions with SampleActions (SampleActionRows) and calling Step(), for any thread count.
// 1,000 rows give each thread's chunk several slices (7 of 71-72 rows per chunk with 2 threads, 5
// of 66-67 with 3), so a slice may be run by a thread that steals it (not forced here: stealing
// depends on timing). Discrete(2) (CartPole-v1),
// Discrete(3) (Acrobot-v1), a one-dimensional Box (Pendulum-v1) and a three-dimensional one
// (Hopper-v4, fewer steps: each costs tens of microseconds per row).
TEST(VecEnvTest, StepRandomMatchesCallerDrawnActionsForAnyThreadCount) {
  struct Case {
    const char* id;
    int rows, steps;
  };
  for (const Case& c : {Case{"CartPole-v1", 1000, 300}, Case{"Acrobot-v1", 1000, 60},
                        Case{"Pendulum-v1", 1000, 300}, Case{"Hopper-v4", 300, 10}}) {
    const int n = c.rows;
    std::unique_ptr<VecEnv> reference = MakeVecEnv(c.id, n, /*seed=*/4, /*num_threads=*/1);
    std::vector<std::unique_ptr<VecEnv>> others;
    for (int threads : {1, 2, 3}) others.push_back(MakeVecEnv(c.id, n, 4, threads));
    reference->Reset();
    for (auto& env : others) env->Reset();
    const int obs_dim = static_cast<int>(reference->spec().obs_dim());
    const int act_dim = static_cast<int>(reference->spec().act_dim());
    const bool discrete = reference->spec().discrete_actions();
    Rng keys(7);
    for (int t = 0; t < c.steps; ++t) {  // CartPole rows end and autoreset on the way
      const uint64_t key = keys.NextU64();
      reference->SampleActions(key);  // SampleActionRows over all rows, on this thread
      reference->Step();
      for (size_t k = 0; k < others.size(); ++k) {
        VecEnv& env = *others[k];
        env.StepRandom(key);
        const std::string where =
            std::string(c.id) + " threads " + std::to_string(k + 1) + " step " + std::to_string(t);
        if (discrete) {
          ASSERT_TRUE(std::equal(env.discrete_actions(), env.discrete_actions() + n,
                                 reference->discrete_actions()))
              << where;
        } else {
          ASSERT_TRUE(std::equal(env.continuous_actions(), env.continuous_actions() + n * act_dim,
                                 reference->continuous_actions()))
              << where;
        }
        ASSERT_TRUE(std::equal(env.obs(), env.obs() + n * obs_dim, reference->obs())) << where;
        ASSERT_TRUE(std::equal(env.reward(), env.reward() + n, reference->reward())) << where;
        ASSERT_TRUE(std::equal(env.terminated(), env.terminated() + n, reference->terminated()))
            << where;
        ASSERT_TRUE(std::equal(env.truncated(), env.truncated() + n, reference->truncated()))
            << where;
      }
    }
  }
}

// On a decorator StepRandom samples the decorator's own action space (RescaleAction's [-1, 1]),
// leaves the sampled actions in its buffer and steps through its Step(), which maps them onto
// Pendulum's [-2, 2]. An unsampleable space is refused before any row moves, and a root VecEnv
// refuses StepRandom before Reset() as Step() does.
TEST(VecEnvTest, StepRandomOnADecoratorAndItsErrors) {
  RescaleActionVecEnv rescaled(MakeVecEnv("Pendulum-v1", 3, 2, 1));
  std::unique_ptr<VecEnv> plain = MakeVecEnv("Pendulum-v1", 3, 2, 1);
  rescaled.Reset();
  plain->Reset();
  rescaled.StepRandom(77);
  std::vector<float> expected(3);
  SampleActionRows(rescaled.spec().action_space, 77, 0, 3, nullptr, expected.data());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rescaled.continuous_actions()[i], expected[i]);
    EXPECT_GE(expected[i], -1.0f);
    EXPECT_LE(expected[i], 1.0f);
    plain->continuous_actions()[i] =
        static_cast<float>(-2.0 + 4.0 * ((static_cast<double>(expected[i]) + 1.0) / 2.0));
  }
  plain->Step();
  EXPECT_TRUE(std::equal(plain->obs(), plain->obs() + 3 * 3, rescaled.obs()));

  std::unique_ptr<VecEnv> fresh = MakeVecEnv("CartPole-v1", 4, 0, 2);
  EXPECT_THROW(fresh->StepRandom(1), InternalError);  // before Reset()

  // A decorator exposing an unbounded action Box: refused, and no row has moved.
  EnvSpec unbounded = MakeVecEnv("Pendulum-v1", 1, 0, 1)->spec();
  std::get<Box>(unbounded.action_space).high = {INFINITY};
  VecEnvWrapper wrapper(MakeVecEnv("Pendulum-v1", 3, 2, 1), &unbounded);
  wrapper.Reset();
  const std::vector<float> before(wrapper.obs(), wrapper.obs() + 3 * 3);
  EXPECT_THROW(wrapper.StepRandom(5), std::invalid_argument);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), wrapper.obs()));
  wrapper.Step();  // the env itself is untouched and still steps
  EXPECT_FALSE(std::equal(before.begin(), before.end(), wrapper.obs()));
}

TEST(VecEnvTest, StepRandomAllocatesNothing) {
  for (const char* id : {"CartPole-v1", "Pendulum-v1", "Acrobot-v1"}) {
    for (int threads : {1, 2}) {
      std::unique_ptr<VecEnv> env = MakeVecEnv(id, 130, 5, threads);
      env->Reset();
      env->StepRandom(0);  // the first call checks the space once
      const int64_t before = g_allocations.load();
      for (int t = 0; t < 600; ++t) env->StepRandom(static_cast<uint64_t>(t));
      EXPECT_EQ(g_allocations.load(), before) << id << ", threads " << threads;
    }
  }
}

}  // namespace
}  // namespace greenrl::env
