// cartpole_batched_test.cc: CartPoleBatched (the SoA CartPole-v1 batch behind MakeVecEnv) against
// Gymnasium 1.0.0's recorded trajectories ($GREENRL_TESTDATA/classic_control/CartPole-v1.json,
// every trajectory in its own row, on the four-row vector path and on the one-row tail), and bit
// for bit against BatchedEnvOf<CartPole> (N single envs) over long random rollouts, plus invalid
// actions and SaveState/LoadState.
#include "greenrl/env/classic/cartpole_batched.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/classic/golden_testdata.h"
#include "greenrl/env/vec_env.h"

namespace greenrl::env {
namespace {

using nlohmann::json;

constexpr int kObsDim = CartPole::kObsDim;
constexpr double kStateTolerance = 1e-9;  // |mine - golden| / max(1, |golden|), the README's

const json& Golden() { return testing::GoldenTrajectories("CartPole-v1"); }

// Buffers for driving a BatchedEnv directly (what VecEnv owns).
struct Buffers {
  explicit Buffers(int n)
      : actions(n, 0),
        obs(n * kObsDim),
        final_obs(n * kObsDim),
        reward(n),
        episode_return(n),
        terminated(n),
        truncated(n),
        episode_length(n) {
    views.discrete_actions = actions.data();
    views.obs = obs.data();
    views.final_obs = final_obs.data();
    views.reward = reward.data();
    views.terminated = terminated.data();
    views.truncated = truncated.data();
    views.episode_return = episode_return.data();
    views.episode_length = episode_length.data();
  }
  std::vector<int64_t> actions;
  std::vector<float> obs, final_obs, reward, episode_return;
  std::vector<uint8_t> terminated, truncated;
  std::vector<int32_t> episode_length;
  VecBuffers views;
};

// Replays every trajectory open loop in its own row, rows first_row.. of a batch of
// first_row + trajectories + extra_rows rows, up to the trajectory's first terminated or truncated
// step (the batch resets a row there). row_by_row: step each row with its own StepRows call
// (ranges of one row take the one-row path). *max_err: the largest state error seen.
// *compared: the number of (trajectory, step) pairs checked.
void ReplayAll(int first_row, int extra_rows, bool row_by_row, double* max_err, int* compared) {
  const json& trajs = Golden().at("trajectories");
  const int n_traj = static_cast<int>(trajs.size());
  const int n = first_row + n_traj + extra_rows;
  CartPoleBatched batch(n);
  Buffers buf(n);
  batch.ResetRows(0, n, /*seed=*/0, buf.views);
  size_t horizon = 0;
  for (int j = 0; j < n_traj; ++j) {
    CartPole::State s;
    for (int k = 0; k < 4; ++k) s[k] = trajs[j].at("initial_state")[k].get<double>();
    batch.SetRowState(first_row + j, s);
    horizon = std::max(horizon, trajs[j].at("steps").size());
  }
  std::vector<bool> active(n_traj, true);
  *max_err = 0.0;
  *compared = 0;
  for (size_t t = 0; t < horizon; ++t) {
    for (int j = 0; j < n_traj; ++j) {
      active[j] = active[j] && t < trajs[j].at("steps").size();
      buf.actions[first_row + j] = active[j] ? trajs[j].at("actions")[t].get<int64_t>() : 0;
    }
    for (int i = 0; i < n; ++i) {
      if (i < first_row || i >= first_row + n_traj) buf.actions[i] = (i + t) % 2;
    }
    if (row_by_row) {
      for (int i = 0; i < n; ++i) batch.StepRows(i, i + 1, buf.views);
    } else {
      batch.StepRows(0, n, buf.views);
    }
    for (int j = 0; j < n_traj; ++j) {
      if (!active[j]) continue;
      const int i = first_row + j;
      SCOPED_TRACE(trajs[j].at("name").get<std::string>() + " step " + std::to_string(t) + " row " +
                   std::to_string(i));
      const json& golden = trajs[j].at("steps")[t];
      ++*compared;
      for (int k = 0; k < kObsDim; ++k) {
        ASSERT_EQ(static_cast<double>(buf.final_obs[i * kObsDim + k]),
                  golden.at("obs")[k].get<double>());
      }
      ASSERT_EQ(static_cast<double>(buf.reward[i]), golden.at("reward").get<double>());
      ASSERT_EQ(buf.terminated[i] != 0, golden.at("terminated").get<bool>());
      ASSERT_EQ(buf.truncated[i] != 0, golden.at("truncated").get<bool>());
      if (buf.terminated[i] || buf.truncated[i]) {
        EXPECT_EQ(buf.episode_length[i], static_cast<int32_t>(t + 1));
        EXPECT_EQ(buf.episode_return[i], static_cast<float>(t + 1));
        active[j] = false;  // the row has been reset; Gymnasium's later steps are not replayed
        continue;
      }
      EXPECT_EQ(buf.episode_length[i], 0);
      const CartPole::State s = batch.row_state(i);
      for (int k = 0; k < 4; ++k) {
        const double g = golden.at("state")[k].get<double>();
        const double err = std::abs(s[k] - g) / std::max(1.0, std::abs(g));
        *max_err = std::max(*max_err, err);
        ASSERT_LE(err, kStateTolerance) << "state[" << k << "]";
      }
    }
  }
}

// Steps up to and including each trajectory's first terminated or truncated step, summed.
int StepsUntilDone() {
  int total = 0;
  for (const json& traj : Golden().at("trajectories")) {
    for (const json& step : traj.at("steps")) {
      ++total;
      if (step.at("terminated").get<bool>() || step.at("truncated").get<bool>()) break;
    }
  }
  return total;
}

TEST(CartPoleBatchedGoldenTest, EveryTrajectoryMatchesOnTheVectorPath) {
  const int pad = (4 - static_cast<int>(Golden().at("trajectories").size()) % 4) % 4;
  double max_err = 1.0;
  int compared = 0;
  ReplayAll(/*first_row=*/0, /*extra_rows=*/pad, /*row_by_row=*/false, &max_err, &compared);
  EXPECT_LE(max_err, kStateTolerance);
  EXPECT_EQ(compared, StepsUntilDone());
}

TEST(CartPoleBatchedGoldenTest, EveryTrajectoryMatchesOnTheOneRowPath) {
  double max_err = 1.0;
  int compared = 0;
  ReplayAll(/*first_row=*/0, /*extra_rows=*/0, /*row_by_row=*/true, &max_err, &compared);
  EXPECT_LE(max_err, kStateTolerance);
  EXPECT_EQ(compared, StepsUntilDone());
}

TEST(CartPoleBatchedGoldenTest, EveryTrajectoryMatchesInUnalignedRows) {
  // Rows start at 3: trajectories straddle the four-row groups.
  double max_err = 1.0;
  int compared = 0;
  ReplayAll(/*first_row=*/3, /*extra_rows=*/2, /*row_by_row=*/false, &max_err, &compared);
  EXPECT_LE(max_err, kStateTolerance);
  EXPECT_EQ(compared, StepsUntilDone());
}

// Every buffer of a VecEnv, for comparing runs.
std::vector<uint8_t> Bytes(const VecEnv& env) {
  std::vector<uint8_t> out;
  const int n = env.num_envs();
  auto add = [&out](const void* p, size_t bytes) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + bytes);
  };
  add(env.obs(), sizeof(float) * n * kObsDim);
  add(env.final_obs(), sizeof(float) * n * kObsDim);
  add(env.reward(), sizeof(float) * n);
  add(env.terminated(), n);
  add(env.truncated(), n);
  add(env.episode_return(), sizeof(float) * n);
  add(env.episode_length(), sizeof(int32_t) * n);
  return out;
}

// Same seed, same actions: CartPoleBatched and N single CartPoles (BatchedEnvOf) write the same
// bytes on every step, across thousands of episode ends and the 500-step TimeLimit.
TEST(CartPoleBatchedTest, BitIdenticalToSingleEnvs) {
  // (n, threads, steps); the second thread only once: hand-offs are slow on a loaded machine.
  struct Case {
    int n, threads, steps;
  };
  for (const Case& c : {Case{1, 1, 1200}, Case{13, 1, 1200}, Case{40, 1, 1200}, Case{13, 2, 300}}) {
    {
      const int n = c.n, threads = c.threads;
      SCOPED_TRACE("n " + std::to_string(n) + " threads " + std::to_string(threads));
      VecEnv fast(std::make_unique<CartPoleBatched>(n), /*seed=*/77, threads);
      VecEnv single(std::make_unique<BatchedEnvOf<CartPole>>(n), /*seed=*/77, threads);
      fast.Reset();
      single.Reset();
      ASSERT_EQ(Bytes(fast), Bytes(single));
      Rng action_rng(/*seed=*/3);
      int64_t ended = 0, truncated = 0;
      for (int t = 0; t < c.steps; ++t) {
        for (int i = 0; i < n; ++i) {
          // Mostly a stabilising controller (reaches the TimeLimit), sometimes random.
          const float* o = single.obs() + i * kObsDim;
          const float u = o[0] + o[1] + 10.0f * o[2] + 2.0f * o[3];
          const int64_t a =
              (i % 3 == 0) ? (u > 0.0f ? 1 : 0) : static_cast<int64_t>(action_rng.Below(2));
          fast.discrete_actions()[i] = a;
          single.discrete_actions()[i] = a;
        }
        fast.Step();
        single.Step();
        ASSERT_EQ(Bytes(fast), Bytes(single)) << "step " << t;
        for (int i = 0; i < n; ++i) {
          ended += fast.terminated()[i] | fast.truncated()[i];
          truncated += fast.truncated()[i];
        }
      }
      EXPECT_GT(ended, n > 1 ? 50 : 0);
      if (n > 1 && c.steps > CartPole::kMaxEpisodeSteps) {
        EXPECT_GT(truncated, 0);  // the controller's rows reach the TimeLimit
      }
    }
  }
}

// An action outside {0, 1} throws CartPole's message before any row of the range changes.
TEST(CartPoleBatchedTest, InvalidActionThrowsBeforeAnyRowChanges) {
  for (int64_t bad : {int64_t{2}, int64_t{-1}}) {
    CartPoleBatched batch(6);
    Buffers buf(6);
    batch.ResetRows(0, 6, /*seed=*/1, buf.views);
    const std::vector<float> obs_before = buf.obs;
    const CartPole::State state_before = batch.row_state(0);
    buf.actions[4] = bad;
    try {
      batch.StepRows(0, 6, buf.views);
      ADD_FAILURE() << "no exception for action " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "CartPole-v1: invalid action " + std::to_string(bad) + "; expected 0 or 1");
    }
    EXPECT_EQ(buf.obs, obs_before);
    EXPECT_EQ(batch.row_state(0), state_before);
  }
}

// SaveState/LoadState continue the same trajectories (state, step counts and generators).
TEST(CartPoleBatchedTest, SaveAndLoadContinueExactly) {
  constexpr int kN = 9;
  VecEnv env(std::make_unique<CartPoleBatched>(kN), /*seed=*/5, 1);
  env.Reset();
  auto step = [&env](int t) {
    for (int i = 0; i < kN; ++i) env.discrete_actions()[i] = (t * 7 + i * 3) % 5 < 2 ? 1 : 0;
    env.Step();
  };
  for (int t = 0; t < 300; ++t) step(t);
  std::string saved;
  ASSERT_TRUE(env.SaveState(&saved));
  std::vector<std::vector<uint8_t>> first;
  for (int t = 300; t < 700; ++t) {
    step(t);
    first.push_back(Bytes(env));
  }
  VecEnv restored(std::make_unique<CartPoleBatched>(kN), /*seed=*/5, 1);
  size_t offset = 0;
  restored.LoadState(saved, &offset);
  EXPECT_EQ(offset, saved.size());
  for (int t = 300; t < 700; ++t) {
    for (int i = 0; i < kN; ++i) {
      restored.discrete_actions()[i] = (t * 7 + i * 3) % 5 < 2 ? 1 : 0;
    }
    restored.Step();
    ASSERT_EQ(Bytes(restored), first[t - 300]) << "step " << t;
  }
}

}  // namespace
}  // namespace greenrl::env
