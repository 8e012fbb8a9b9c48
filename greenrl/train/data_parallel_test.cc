// Data-parallel training on loopback: two ranks as threads of this process, each with its own
// c10d group (a FileStore per test, so parallel ctest runs never share a port).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>

#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/algo/sac.h"
#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/dist/process_group.h"
#include "greenrl/energy/estimator_meter.h"
#include "greenrl/energy/fake_meter.h"
#include "greenrl/env/registry.h"
#include "greenrl/report/run_report.h"
#include "greenrl/train/checkpointing.h"
#include "greenrl/train/run_compare_testing.h"
#include "greenrl/train/run_config.h"
#include "greenrl/train/trainer.h"

namespace greenrl::train {
namespace {

std::string StorePath(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("greenrl_dp_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove(p);
  return p.string();
}

std::unique_ptr<dist::ProcessGroup> Join(int rank, int world, const std::string& store) {
  dist::DistEnv env;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  dist::DistOptions o;
  o.timeout_s = 60.0;
  o.file_store_path = store;
  return dist::ProcessGroup::Connect(env, o);
}

struct RankRun {
  std::vector<float> after_broadcast, final_params, own_init;
};

// One rank of DD-PPO on CartPole: its own envs and seeds, rank 0's parameters, K updates with
// gradients averaged per minibatch.
RankRun RunPpoRank(int rank, const std::string& store, const std::string& update_path, int k) {
  auto pg = Join(rank, 2, store);
  algo::PpoConfig c;
  c.n_envs = 2;
  c.n_steps = 32;
  c.batch_size = 16;  // 4 minibatches per epoch
  c.n_epochs = 2;
  c.update_path = update_path;
  c.seed = 7 + 1000003ull * rank;  // the trainer's rank seeds
  auto env = env::MakeVecEnv("CartPole-v1", c.n_envs, c.seed, 1);
  env->Reset();
  auto ppo = algo::MakePpo(c, env->spec());
  RankRun out;
  out.own_init = ppo->GetParameters();
  ppo->SetCollectives(pg.get());
  out.after_broadcast = ppo->GetParameters();
  std::vector<algo::EpisodeRecord> episodes;
  for (int i = 0; i < k; ++i) {
    ppo->CollectRollout(*env, &episodes);
    ppo->Update(algo::ProgressRemaining((i + 1) * 128, k * 128));
  }
  out.final_params = ppo->GetParameters();
  return out;
}

void ExpectIdenticalAfterUpdates(const std::string& update_path) {
  const std::string store = StorePath("ppo_" + update_path);
  auto r1 = std::async(std::launch::async, RunPpoRank, 1, store, update_path, 3);
  const RankRun a = RunPpoRank(0, store, update_path, 3);
  const RankRun b = r1.get();
  ASSERT_EQ(a.final_params.size(), b.final_params.size());
  EXPECT_NE(a.own_init, b.own_init) << "the ranks' seeds should give different initialisations";
  EXPECT_EQ(b.after_broadcast, a.own_init) << "rank 1 starts from rank 0's parameters";
  EXPECT_EQ(a.final_params, b.final_params) << "bitwise identical after 3 updates";
  EXPECT_NE(a.final_params, a.own_init) << "the updates moved the parameters";
  std::filesystem::remove(store);
}

TEST(DataParallelPpoTest, ParametersIdenticalOnBothRanksFused) {
  ExpectIdenticalAfterUpdates("fused");
}

TEST(DataParallelPpoTest, ParametersIdenticalOnBothRanksAutograd) {
  ExpectIdenticalAfterUpdates("autograd");
}

struct OffPolicyRun {
  std::vector<float> own_init, final_params;
  int64_t nonfinite_skips = 0;
};

// DQN and SAC: the same gradient averaging; both ranks' parameters stay bitwise identical.
// With `nan_on_rank1`, rank 1 alone gets NaN gradients in its 7th update.
OffPolicyRun RunOffPolicyRank(int rank, const std::string& store, const std::string& algo,
                              bool nan_on_rank1, bool actor_only = false) {
  auto pg = Join(rank, 2, store);
  const uint64_t seed = 5 + 1000003ull * rank;
  std::unique_ptr<algo::Algorithm> a;
  std::unique_ptr<env::VecEnv> env;
  if (algo == "dqn") {
    algo::DqnConfig c;
    c.learning_starts = 64;
    c.train_freq = 16;
    c.gradient_steps = 4;
    c.batch_size = 32;
    c.target_update_interval = 40;
    c.buffer_size = 1000;
    c.learning_rate = Schedule::Constant(1e-3);
    c.seed = seed;
    env = env::MakeVecEnv("CartPole-v1", 1, seed, 1);
    a = algo::MakeDqn(c, env->spec());
  } else {
    algo::SacConfig c;
    c.learning_starts = 32;
    c.batch_size = 16;
    c.train_freq = 8;
    c.gradient_steps = 2;
    c.buffer_size = 1000;
    c.net_arch = {32, 32};
    c.seed = seed;
    env = env::MakeVecEnv("Pendulum-v1", 1, seed, 1);
    a = algo::MakeSac(c, env->spec());
  }
  env->Reset();
  const std::vector<float> own_init = a->GetParameters();
  a->SetCollectives(pg.get());
  std::vector<algo::EpisodeRecord> episodes;
  for (int i = 0; i < 12; ++i) {
    a->CollectRollout(*env, &episodes);
    if (nan_on_rank1 && rank == 1 && i == 6) {
      if (actor_only) {
        a->InjectNonFiniteActorForTesting(1);
      } else {
        a->InjectNonFiniteForTesting(1);
      }
    }
    a->Update(1.0 - i / 12.0);
  }
  return {own_init, a->GetParameters(), a->nonfinite_skips()};
}

// Returns: the number of gradient steps rank 0 skipped.
int64_t ExpectOffPolicyIdentical(const std::string& algo, bool nan_on_rank1 = false,
                                 bool actor_only = false) {
  const std::string store = StorePath(algo);
  auto r1 =
      std::async(std::launch::async, RunOffPolicyRank, 1, store, algo, nan_on_rank1, actor_only);
  const OffPolicyRun a = RunOffPolicyRank(0, store, algo, nan_on_rank1, actor_only);
  const OffPolicyRun b = r1.get();
  EXPECT_NE(a.own_init, b.own_init);
  EXPECT_EQ(a.final_params, b.final_params) << algo << ": bitwise identical after the updates";
  EXPECT_NE(a.final_params, a.own_init) << algo << ": the updates moved the parameters";
  EXPECT_EQ(a.nonfinite_skips, b.nonfinite_skips) << algo;
  std::filesystem::remove(store);
  return a.nonfinite_skips;
}

TEST(DataParallelOffPolicyTest, DqnParametersIdenticalOnBothRanks) {
  EXPECT_EQ(ExpectOffPolicyIdentical("dqn"), 0);
}

TEST(DataParallelOffPolicyTest, SacParametersIdenticalOnBothRanks) {
  EXPECT_EQ(ExpectOffPolicyIdentical("sac"), 0);
}

// A NaN gradient on rank 1 alone reaches rank 0 through the gradient all-reduce: both ranks skip
// every gradient step of that update (DQN 4, SAC 2) and stay bitwise identical.
TEST(DataParallelOffPolicyTest, DqnNanOnOneRankSkippedOnBoth) {
  EXPECT_EQ(ExpectOffPolicyIdentical("dqn", /*nan_on_rank1=*/true), 4);
}

TEST(DataParallelOffPolicyTest, SacNanOnOneRankSkippedOnBoth) {
  EXPECT_EQ(ExpectOffPolicyIdentical("sac", /*nan_on_rank1=*/true), 2);
}

// SAC's actor step has its own check: a NaN in rank 1's actor gradient alone (its critics'
// step finite) makes both ranks skip the actor's step of both gradient steps alike.
TEST(DataParallelOffPolicyTest, SacActorNanOnOneRankSkippedOnBoth) {
  EXPECT_EQ(ExpectOffPolicyIdentical("sac", /*nan_on_rank1=*/true, /*actor_only=*/true), 2);
}

// DQN's schedules count the job's env steps: 2 ranks x 2 envs follow epsilon, learning_starts
// and target updates exactly as 1 rank x 4 envs, iteration by iteration. By hand: 64 env steps
// per iteration, total 1024, exploration_fraction 0.5 from 1.0 to 0.05: after iteration 1,
// epsilon = 1 - 0.95 x (64 / 1024) / 0.5 = 0.88125; after 8 (512 steps) it is 0.05, and the
// target network was updated floor(512 / 40) = 12 times.
std::vector<std::pair<double, double>> DqnScheduleRank(int rank, int world,
                                                       const std::string& store) {
  std::unique_ptr<dist::ProcessGroup> pg;
  if (world > 1) pg = Join(rank, world, store);
  algo::DqnConfig c;
  c.n_envs = 4 / world;
  c.total_timesteps = 1024;
  c.learning_starts = 64;
  c.train_freq = 16;
  c.gradient_steps = 1;
  c.batch_size = 16;
  c.target_update_interval = 40;
  c.exploration_fraction = 0.5;
  c.exploration_initial_eps = 1.0;
  c.exploration_final_eps = 0.05;
  c.buffer_size = 1000;
  c.learning_rate = Schedule::Constant(1e-3);
  c.seed = 11 + 1000003ull * rank;
  auto env = env::MakeVecEnv("CartPole-v1", c.n_envs, c.seed, 1);
  auto a = algo::MakeDqn(c, env->spec());
  env->Reset();
  if (pg) a->SetCollectives(pg.get());
  std::vector<std::pair<double, double>> out;  // (charts/epsilon, losses/target_updates)
  std::vector<algo::EpisodeRecord> episodes;
  for (int i = 0; i < 8; ++i) {
    a->CollectRollout(*env, &episodes);
    double epsilon = NAN, target_updates = NAN;
    for (const auto& [key, value] : a->Update(1.0 - (i + 1) / 16.0)) {
      if (key == "charts/epsilon") epsilon = value;
      if (key == "losses/target_updates") target_updates = value;
    }
    out.emplace_back(epsilon, target_updates);
  }
  return out;
}

// SAC's learning_starts counts the job's steps too: with learning_starts 32 and train_freq 8
// (gradient_steps 2), 2 ranks x 1 env and 1 rank x 2 envs (16 env steps per iteration) both
// train once num_timesteps > 32 (SB3's rule), from the 3rd iteration: losses/n_updates 0, 0, 2,
// 4. Counting each rank's own steps, 2 ranks would still be at 32 after 4 iterations: 0, 0, 0, 0.
std::vector<double> SacUpdatesRank(int rank, int world, const std::string& store) {
  std::unique_ptr<dist::ProcessGroup> pg;
  if (world > 1) pg = Join(rank, world, store);
  algo::SacConfig c;
  c.n_envs = 2 / world;
  c.learning_starts = 32;
  c.batch_size = 16;
  c.train_freq = 8;
  c.gradient_steps = 2;
  c.buffer_size = 1000;
  c.net_arch = {16, 16};
  c.seed = 13 + 1000003ull * rank;
  auto env = env::MakeVecEnv("Pendulum-v1", c.n_envs, c.seed, 1);
  auto a = algo::MakeSac(c, env->spec());
  env->Reset();
  if (pg) a->SetCollectives(pg.get());
  std::vector<double> n_updates;
  std::vector<algo::EpisodeRecord> episodes;
  for (int i = 0; i < 4; ++i) {
    a->CollectRollout(*env, &episodes);
    for (const auto& [key, value] : a->Update(1.0 - (i + 1) / 8.0)) {
      if (key == "losses/n_updates") n_updates.push_back(value);
    }
  }
  return n_updates;
}

// Runs run_rank(rank, 2, store) as ranks 0 and 1 (threads) and run_rank(0, 1, "") alone; expects
// rank 1 to see what rank 0 sees and the two ranks to see what one process sees. Returns it.
template <typename RunRank>
auto TwoRanksAsOne(const std::string& name, RunRank run_rank) {
  const std::string store = StorePath(name);
  auto r1 = std::async(std::launch::async, run_rank, 1, 2, store);
  const auto two_ranks = run_rank(0, 2, store);
  EXPECT_EQ(r1.get(), two_ranks);
  std::filesystem::remove(store);
  EXPECT_EQ(two_ranks, run_rank(0, 1, ""));
  return two_ranks;
}

TEST(DataParallelOffPolicyTest, SacLearningStartsCountsAllRanksSteps) {
  EXPECT_EQ(TwoRanksAsOne("sac_schedule", SacUpdatesRank), (std::vector<double>{0, 0, 2, 4}));
}

TEST(DataParallelOffPolicyTest, DqnSchedulesCountAllRanksSteps) {
  const auto one_rank = TwoRanksAsOne("dqn_schedule", DqnScheduleRank);
  ASSERT_EQ(one_rank.size(), 8u);
  EXPECT_DOUBLE_EQ(one_rank[0].first, 0.88125);
  EXPECT_NEAR(one_rank[7].first, 0.05, 1e-12);  // the schedule's end, up to rounding
  EXPECT_EQ(one_rank[7].second, 12.0);
}

// The averaged gradient of 2 ranks x 4 rows equals the gradient of 1 rank x 8 rows for a loss
// that is a mean over rows (PPO's minibatch losses are): mean_r (1/4 sum_{i in r} g_i) =
// 1/8 sum_i g_i. Checked on a small tanh MLP with an MSE loss through the real all-reduce.
TEST(DataParallelPpoTest, AveragedGradientOfTwoRanksEqualsTheWholeBatch) {
  torch::manual_seed(0);
  torch::nn::Sequential reference(torch::nn::Linear(4, 16), torch::nn::Tanh(),
                                  torch::nn::Linear(16, 1));
  const torch::Tensor x = torch::linspace(-1.0, 1.0, 32).reshape({8, 4});
  const torch::Tensor y = torch::linspace(0.5, -0.5, 8).reshape({8, 1});
  auto flat_grad = [&](torch::nn::Sequential& m, const torch::Tensor& xs, const torch::Tensor& ys) {
    m->zero_grad();
    torch::mse_loss(m->forward(xs), ys).backward();
    std::vector<torch::Tensor> g;
    for (const auto& p : m->parameters()) g.push_back(p.grad().reshape({-1}));
    return torch::cat(g).contiguous();
  };
  const torch::Tensor whole = flat_grad(reference, x, y);
  // Each rank gets its own copy of the same network (as after the parameter broadcast).
  auto copy0 = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(reference->clone());
  auto copy1 = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(reference->clone());
  torch::nn::Sequential m0(copy0), m1(copy1);
  const torch::Tensor g0 = flat_grad(m0, x.narrow(0, 0, 4), y.narrow(0, 0, 4));
  const torch::Tensor g1 = flat_grad(m1, x.narrow(0, 4, 4), y.narrow(0, 4, 4));
  const std::string store = StorePath("grad");
  auto r1 = std::async(std::launch::async, [&] {
    auto pg = Join(1, 2, store);
    pg->AllReduceMean(g1.data_ptr<float>(), g1.numel(), "gradients");
  });
  auto pg = Join(0, 2, store);
  pg->AllReduceMean(g0.data_ptr<float>(), g0.numel(), "gradients");
  r1.get();
  EXPECT_TRUE(torch::equal(g0, g1));
  EXPECT_TRUE(torch::allclose(g0, whole, /*rtol=*/1e-5, /*atol=*/1e-7))
      << (g0 - whole).abs().max().item<float>();
  EXPECT_GT(whole.abs().max().item<float>(), 1e-3);  // a real gradient, not zeros
  std::filesystem::remove(store);
}

// 2 ranks x 4 envs against 1 rank x 8 envs through greenrl's real PPO update, on the same data.
//
// The data: one CartPole-v1 rollout of 8 envs x 16 steps collected by a 1-rank PPO (its GAE
// advantages and returns included). The 1-rank PPO trains on all 8 columns; rank r of the
// 2-rank group gets columns [4r, 4r + 4) of every step (PpoRolloutForTesting writes them into
// its storage) and starts from the same parameters (rank 0 is seeded as the 1-rank run, so its
// initialisation is the same; rank 1 receives it by the broadcast).
//
// What is equivalent, and why:
// - batch_size is the whole rollout (8 x 16 = 128 rows for 1 rank, 4 x 16 = 64 per rank; the
//   CartPole preset also takes one minibatch per epoch). Every minibatch then holds all of the
//   rank's rows, whatever the shuffle, so rank r's minibatch is its half of the 1-rank
//   minibatch. PPO's minibatch losses are means over rows, so the rank-averaged gradient
//   (1/2) sum_r (1/64) sum_{i in r} g_i equals (1/128) sum_i g_i, the 1-rank gradient. The
//   gradient-norm clip (max_grad_norm) and Adam then see the same gradient on every rank, so
//   each of the n_epochs = 4 minibatch steps is the 1-rank step, up to float32 rounding (the
//   sums are split and ordered differently).
// - normalize_advantage is off. greenrl normalises advantages per minibatch on each rank
//   (SB3's rule, applied to the rank's own minibatch), without a collective: with it on, each
//   rank's half is normalised with its own mean and std, which differs from the 1-rank
//   minibatch's. DD-PPO's reference code (habitat-lab, ddppo.py distributed_mean_and_var)
//   normalises instead over the whole rollout of all workers; greenrl keeps SB3's per-minibatch
//   rule and spends no extra all-reduce per minibatch on it.
// - With batch_size below the rollout, the ranks' minibatches are drawn from their own rows by
//   their own shuffles: the averaged step is over B rows from each rank, the same distribution
//   as 2B rows of the union but not the same rows as a 1-rank shuffle, so there is no
//   row-for-row equivalence to test.
struct SplitRollout {
  std::vector<float> obs, log_probs, values, advantages, returns;
  std::vector<int64_t> actions;
};

// Columns [first, first + count) of every step of the rollout in `v` (t-major [T, N, ...]).
SplitRollout TakeColumns(const algo::PpoRolloutView& v, int first, int count) {
  SplitRollout out;
  for (int t = 0; t < v.n_steps; ++t) {
    for (int i = first; i < first + count; ++i) {
      const size_t row = static_cast<size_t>(t) * v.n_envs + i;
      out.obs.insert(out.obs.end(), v.obs + row * v.obs_dim, v.obs + (row + 1) * v.obs_dim);
      out.actions.push_back(v.actions[row]);
      out.log_probs.push_back(v.log_probs[row]);
      out.values.push_back(v.values[row]);
      out.advantages.push_back(v.advantages[row]);
      out.returns.push_back(v.returns[row]);
    }
  }
  return out;
}

void WriteRollout(const SplitRollout& r, const algo::PpoRolloutView& v) {
  ASSERT_EQ(r.log_probs.size(), static_cast<size_t>(v.n_steps) * v.n_envs);
  std::copy(r.obs.begin(), r.obs.end(), v.obs);
  std::copy(r.actions.begin(), r.actions.end(), v.actions);
  std::copy(r.log_probs.begin(), r.log_probs.end(), v.log_probs);
  std::copy(r.values.begin(), r.values.end(), v.values);
  std::copy(r.advantages.begin(), r.advantages.end(), v.advantages);
  std::copy(r.returns.begin(), r.returns.end(), v.returns);
}

algo::PpoConfig EquivalenceConfig(int n_envs, const std::string& update_path, uint64_t seed) {
  algo::PpoConfig c;
  c.n_envs = n_envs;
  c.n_steps = 16;
  c.batch_size = 16 * n_envs;  // one minibatch per epoch: the whole rollout
  c.n_epochs = 4;
  c.normalize_advantage = false;
  c.learning_rate = Schedule::Constant(1e-3);
  c.update_path = update_path;
  c.seed = seed;
  return c;
}

void ExpectTwoByFourEqualsOneByEight(const std::string& update_path) {
  const uint64_t seed = 11;
  const env::EnvSpec spec = env::MakeVecEnv("CartPole-v1", 1, seed, 1)->spec();
  // 1 rank x 8 envs: a real rollout, then one update (4 minibatch steps).
  auto env8 = env::MakeVecEnv("CartPole-v1", 8, seed, 1);
  env8->Reset();
  auto one = algo::MakePpo(EquivalenceConfig(8, update_path, seed), spec);
  const std::vector<float> init = one->GetParameters();
  std::vector<algo::EpisodeRecord> episodes;
  one->CollectRollout(*env8, &episodes);
  const algo::PpoRolloutView view8 = algo::PpoRolloutForTesting(one.get());
  const SplitRollout halves[2] = {TakeColumns(view8, 0, 4), TakeColumns(view8, 4, 4)};
  one->Update(1.0);
  const std::vector<float> whole = one->GetParameters();

  // 2 ranks x 4 envs over loopback Gloo, each on its half.
  const std::string store = StorePath("equiv_" + update_path);
  auto rank_run = [&](int rank) {
    auto pg = Join(rank, 2, store);
    auto ppo = algo::MakePpo(EquivalenceConfig(4, update_path, seed + 1000003ull * rank), spec);
    ppo->SetCollectives(pg.get());
    WriteRollout(halves[rank], algo::PpoRolloutForTesting(ppo.get()));
    ppo->Update(1.0);
    return ppo->GetParameters();
  };
  auto r1 = std::async(std::launch::async, rank_run, 1);
  const std::vector<float> p0 = rank_run(0);
  const std::vector<float> p1 = r1.get();
  std::filesystem::remove(store);

  // Without the all-reduce: rank 0's half alone (what averaging must correct).
  auto alone = algo::MakePpo(EquivalenceConfig(4, update_path, seed), spec);
  WriteRollout(halves[0], algo::PpoRolloutForTesting(alone.get()));
  alone->Update(1.0);
  const std::vector<float> half_only = alone->GetParameters();

  ASSERT_EQ(p0.size(), whole.size());
  EXPECT_EQ(p0, p1) << "both ranks hold the same parameters";
  double max_diff = 0.0, max_moved = 0.0, max_half_diff = 0.0;
  for (size_t k = 0; k < whole.size(); ++k) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(p0[k]) - whole[k]));
    max_moved = std::max(max_moved, std::abs(static_cast<double>(whole[k]) - init[k]));
    max_half_diff = std::max(max_half_diff, std::abs(static_cast<double>(half_only[k]) - whole[k]));
  }
  // 4 Adam steps of lr 1e-3 move a parameter by up to 4e-3; float32 rounding of the split sums
  // moved the result by at most 6e-8 when this test was written (fused 5.96e-8, autograd
  // 2.98e-8; Adam's eps = 1e-5 bounds how much a near-zero gradient entry's rounding can change
  // its step). Tolerance 2e-6: far below the 4.0e-3 the update moved the parameters and the
  // 6.9e-3 between the 1-rank result and training on one half alone.
  EXPECT_LT(max_diff, 2e-6) << update_path;
  EXPECT_GT(max_moved, 3e-3) << update_path << ": the update moved the parameters";
  EXPECT_GT(max_half_diff, 100 * 2e-6) << update_path << ": one half alone trains differently";
  std::printf("%s: max |2x4 - 1x8| = %.3g, max |1x8 - init| = %.3g, max |half - 1x8| = %.3g\n",
              update_path.c_str(), max_diff, max_moved, max_half_diff);
}

TEST(DataParallelPpoTest, TwoRanksOfFourEnvsEqualOneRankOfEightFused) {
  ExpectTwoByFourEqualsOneByEight("fused");
}

TEST(DataParallelPpoTest, TwoRanksOfFourEnvsEqualOneRankOfEightAutograd) {
  ExpectTwoByFourEqualsOneByEight("autograd");
}

// --- Multi-rank resume (train::Train with each rank's group, ranks as threads) -------------------

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/greenrl_dp_resume_" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// A meter whose total is exactly `joules` from its second reading on: every segment of every
// rank costs exactly `joules` (resume_test's FixedMeter).
std::unique_ptr<energy::EnergyMeter> FixedMeter(double joules) {
  auto meter =
      std::make_unique<energy::FakeMeter>(std::vector<std::string>{"cpu:process"},
                                          energy::Provenance::kMeasured, energy::Scope::kProcess);
  meter->Script({{0.0}, {joules}});
  return meter;
}

struct RankOutcome {
  TrainResult result;
  std::string error;  // what() of an exception, empty when Train returned
  bool config_error = false;
};

RankOutcome TrainRank(const Config& config, const std::string& dir, int rank,
                      const std::string& store, std::unique_ptr<energy::EnergyMeter> meter,
                      bool resume, int64_t stop_after) {
  RankOutcome out;
  try {
    auto pg = Join(rank, 2, store);
    pg->Barrier("joined");  // both connected before either may refuse and leave
    TrainOptions options;
    options.out_dir = dir;
    options.verbose = false;
    options.meter_override = std::move(meter);
    options.process_group = pg.get();
    options.resume = resume;
    options.stop_after_steps = stop_after;
    out.result = Train(config, std::move(options));
  } catch (const ConfigError& e) {
    out.error = e.what();
    out.config_error = true;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// Rank 0 and rank 1 of one run, rank r metered by make_meter(r).
std::array<RankOutcome, 2> TrainTwoRanksMetered(
    const Config& config, const std::string& dir,
    const std::function<std::unique_ptr<energy::EnergyMeter>(int)>& make_meter, bool resume,
    int64_t stop_after = 0) {
  static int segment = 0;
  const std::string store = StorePath("resume" + std::to_string(segment++));
  auto r1 = std::async(std::launch::async, TrainRank, config, dir, 1, store, make_meter(1), resume,
                       stop_after);
  RankOutcome r0 = TrainRank(config, dir, 0, store, make_meter(0), resume, stop_after);
  std::array<RankOutcome, 2> out{std::move(r0), r1.get()};
  std::filesystem::remove(store);
  return out;
}

// Rank 0 and rank 1 of one run (rank r's meter gives joules[r] per segment).
std::array<RankOutcome, 2> TrainTwoRanks(const Config& config, const std::string& dir,
                                         const std::array<double, 2>& joules, bool resume,
                                         int64_t stop_after = 0) {
  return TrainTwoRanksMetered(
      config, dir, [&](int r) { return FixedMeter(joules[static_cast<size_t>(r)]); }, resume,
      stop_after);
}

// metrics.csv's column `key`, one value per row.
std::vector<double> MetricsColumn(const std::string& dir, const std::string& key) {
  const auto [header, rows] = report::ReadMetricsCsv(dir + "/metrics.csv");
  const auto it = std::find(header.begin(), header.end(), key);
  EXPECT_NE(it, header.end()) << key;
  std::vector<double> column;
  if (it == header.end()) return column;
  for (const auto& row : rows) column.push_back(row[static_cast<size_t>(it - header.begin())]);
  return column;
}

// The PPO CartPole preset with `sets` applied and `seed`.
Config CartPoleConfig(const std::vector<std::string>& sets, int64_t seed) {
  return LoadRunConfig(SourceTreeDir() + "/configs/ppo/cartpole.yaml", sets, seed);
}

// --- The job's energy with several ranks (energy/job_energy.h) ----------------------------------

const std::vector<std::string> kSmallRun = {
    "n_envs=2",         "batch_size=32",         "n_epochs=1",        "n_timesteps=512",
    "eval.freq=0",      "eval.final_episodes=1", "checkpoint_freq=0", "energy.sample_period_s=3600",
    "dist.timeout_s=60"};

// Rank 0 and rank 1 started apart: each with its own config and run directory.
std::array<RankOutcome, 2> TrainTwoRanksApart(const Config& config0, const std::string& dir0,
                                              const Config& config1, const std::string& dir1,
                                              const std::string& store_name) {
  const std::string store = StorePath(store_name);
  auto r1 =
      std::async(std::launch::async, TrainRank, config1, dir1, 1, store, FixedMeter(1.0), false, 0);
  RankOutcome r0 = TrainRank(config0, dir0, 0, store, FixedMeter(1.0), false, 0);
  std::array<RankOutcome, 2> out{std::move(r0), r1.get()};
  std::filesystem::remove(store);
  return out;
}

// Ranks given different --out directories are refused on every rank once connected, naming both:
// rank 0 writes the reports and every rank its checkpoints into the one run directory (before, a
// walkthrough found the run split over the two folders).
TEST(DataParallelConfigTest, RanksWithDifferentRunDirectoriesAreRefused) {
  const std::string a = FreshDir("dp_out_a"), b = FreshDir("dp_out_b");
  const std::array<RankOutcome, 2> outcomes = TrainTwoRanksApart(
      CartPoleConfig(kSmallRun, 0), a, CartPoleConfig(kSmallRun, 0), b, "other_out");
  auto normal = [](const std::string& dir) {
    return std::filesystem::path(dir).lexically_normal().string();
  };
  for (const RankOutcome* o : {&outcomes[0], &outcomes[1]}) {
    EXPECT_TRUE(o->config_error) << o->error;
    EXPECT_NE(o->error.find("--out: got 'rank 1: " + normal(b) +
                            "'; the same run directory on every rank (rank 0: " + normal(a) + ")"),
              std::string::npos)
        << o->error;
  }
  EXPECT_FALSE(std::filesystem::exists(a + "/metrics.csv"));
  EXPECT_FALSE(std::filesystem::exists(b + "/metrics.csv"));
}

// --out given to rank 0 alone (a per-rank command line under torchrun or srun): every rank
// refuses it once connected, where rank 1 used to take rank 0's directory and go on into a
// collective rank 0 had left.
TEST(DataParallelConfigTest, OutGivenToOneRankOnlyIsRefusedByBoth) {
  const std::string a = FreshDir("dp_out_one");
  const std::array<RankOutcome, 2> outcomes = TrainTwoRanksApart(
      CartPoleConfig(kSmallRun, 0), a, CartPoleConfig(kSmallRun, 0), "", "one_out");
  const std::string given = std::filesystem::absolute(a).lexically_normal().string();
  for (const RankOutcome* o : {&outcomes[0], &outcomes[1]}) {
    EXPECT_TRUE(o->config_error) << o->error;
    EXPECT_NE(o->error.find("--out: got '" + given +
                            "'; --out on every rank or on none: rank 0 gave it, rank 1 did not "
                            "(its checkpoints would go elsewhere)"),
              std::string::npos)
        << o->error;
  }
  EXPECT_FALSE(std::filesystem::exists(a + "/metrics.csv"));
}

// Ranks started with different configs (here another learning_rate on rank 1, as a torchrun or
// srun user might by a per-rank --set) are refused on every rank once connected, naming the first
// key that differs with both values, before anything is written: before, rank 1 trained beside
// rank 0 with its own learning rate and the copies drifted apart.
TEST(DataParallelConfigTest, RanksWithDifferentConfigsAreRefused) {
  const std::string dir = FreshDir("dp_other_config");
  std::vector<std::string> other = kSmallRun;
  other.push_back("learning_rate=0.01");
  const std::array<RankOutcome, 2> outcomes = TrainTwoRanksApart(
      CartPoleConfig(kSmallRun, 0), dir, CartPoleConfig(other, 0), dir, "other_config");
  for (const RankOutcome* o : {&outcomes[0], &outcomes[1]}) {
    EXPECT_TRUE(o->config_error) << o->error;
    EXPECT_NE(o->error.find("config: got 'rank 1: learning_rate: 0.01'; the same resolved config "
                            "on every rank (rank 0: learning_rate: lin_0.001); start every rank "
                            "with the same --config and --set values"),
              std::string::npos)
        << o->error;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/metrics.csv"));
  // A key in a section is named in full (it was "budget_wh: 0.002", ambiguous).
  std::vector<std::string> budget = kSmallRun;
  budget.push_back("energy.budget_wh=0.002");
  const std::array<RankOutcome, 2> nested = TrainTwoRanksApart(
      CartPoleConfig(kSmallRun, 0), dir, CartPoleConfig(budget, 0), dir, "other_budget");
  EXPECT_NE(nested[1].error.find("config: got 'rank 1: energy.budget_wh: 0.002'; the same "
                                 "resolved config on every rank (rank 0: energy.budget_wh: 0"),
            std::string::npos)
      << nested[1].error;
}

// Both ranks (threads of this process: one machine) read a package-scope counter, rank 0 10 J
// and rank 1 10.5 J over the run: the job spent 10 J, counted once from rank 0, in energy.json
// and in every metrics.csv row. Process-scope meters of 10 J and 1 J add up to 11 J, and every
// row shows the job's 11 J, not rank 0's 10 J.
TEST(DataParallelEnergyTest, SharedCounterCountsOnceProcessScopeSumsInEveryRow) {
  const Config config = CartPoleConfig(kSmallRun, 3);
  const std::string package_dir = FreshDir("energy_package");
  const auto shared = TrainTwoRanksMetered(
      config, package_dir,
      [](int r) {
        auto meter = std::make_unique<energy::FakeMeter>(std::vector<std::string>{"cpu:package-0"},
                                                         energy::Provenance::kMeasured,
                                                         energy::Scope::kPackage);
        meter->Script({{0.0}, {r == 0 ? 10.0 : 10.5}});
        return meter;
      },
      false);
  ASSERT_EQ(shared[0].error + shared[1].error, "");
  EXPECT_DOUBLE_EQ(testing::TotalJ(package_dir), 10.0);
  const std::vector<double> package_wh = MetricsColumn(package_dir, "energy/total_wh");
  ASSERT_EQ(package_wh.size(), 4u);  // 2 ranks x 2 envs x 32 steps = 128 steps per iteration
  for (double wh : package_wh) EXPECT_DOUBLE_EQ(wh, 10.0 / 3600.0);
  // energy.json's ranks: each rank's own readings (the shared counter in both), and the part of
  // the job's total each makes, which sum to it (rank 0's 10 J, rank 1's none).
  const nlohmann::json ranks =
      nlohmann::json::parse(std::ifstream(package_dir + "/energy.json"))["distributed"]["ranks"];
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(ranks[0]["total_energy_j"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(ranks[1]["total_energy_j"].get<double>(), 10.5);
  EXPECT_DOUBLE_EQ(ranks[0]["job_energy_j"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(ranks[1]["job_energy_j"].get<double>(), 0.0);

  const std::string process_dir = FreshDir("energy_process");
  const auto own = TrainTwoRanks(config, process_dir, {10.0, 1.0}, false);
  ASSERT_EQ(own[0].error + own[1].error, "");
  EXPECT_DOUBLE_EQ(testing::TotalJ(process_dir), 11.0);
  for (double wh : MetricsColumn(process_dir, "energy/total_wh")) {
    EXPECT_DOUBLE_EQ(wh, 11.0 / 3600.0);
  }
}

// Ranks whose meters give different domains (RAPL's package on one machine, the CPU-time
// estimate on another whose RAPL is unreadable) are refused on every rank once connected, naming
// both: rank 1's figures would have been added into rank 0's domain and called measured.
TEST(DataParallelEnergyTest, RanksMeteringOtherDomainsAreRefused) {
  const std::string dir = FreshDir("energy_other_domains");
  const auto r = TrainTwoRanksMetered(
      CartPoleConfig(kSmallRun, 3), dir,
      [](int rank) {
        auto meter = rank == 0 ? std::make_unique<energy::FakeMeter>(
                                     std::vector<std::string>{"cpu:package-0"},
                                     energy::Provenance::kMeasured, energy::Scope::kPackage)
                               : std::make_unique<energy::FakeMeter>(
                                     std::vector<std::string>{"cpu:process"},
                                     energy::Provenance::kEstimated, energy::Scope::kProcess);
        meter->Script({{0.0}, {1.0}});
        return meter;
      },
      false);
  for (const RankOutcome& o : r) {
    EXPECT_TRUE(o.config_error) << o.error;
    EXPECT_NE(o.error.find("the same energy domains on every rank: rank 0 meters cpu:package-0 "
                           "(measured), rank 1 cpu:process (estimated)"),
              std::string::npos)
        << o.error;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/metrics.csv"));
}

// Each meter read advances a scripted CPU clock by 0.25 s: 12 W x 0.25 s = 3 J per read, on each
// rank (trainer_test's ScriptedMeter).
std::unique_ptr<energy::EnergyMeter> ThreeJoulesPerRead() {
  auto cpu_s = std::make_shared<double>(0.0);
  return std::make_unique<energy::EstimatorMeter>(12.0, [cpu_s] { return *cpu_s += 0.25; });
}

// energy.json's windows hold the job's energy: with 3 J per meter read on each rank, every
// rollout and update window costs 3 J per rank (one read at its start, one at its end), so 4
// iterations give 2 ranks x 4 x 3 = 24 J each, counted 4 times (rank 0's count); the final
// evaluation runs on rank 0 alone: 3 J. Windows + unattributed = total.
TEST(DataParallelEnergyTest, WindowsHoldEveryRanksEnergy) {
  const Config config = CartPoleConfig(kSmallRun, 3);
  const std::string dir = FreshDir("energy_windows");
  const auto r = TrainTwoRanksMetered(
      config, dir, [](int) { return ThreeJoulesPerRead(); }, false);
  ASSERT_EQ(r[0].error + r[1].error, "");
  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["windows"]["rollout"]["count"].get<int>(), 4);
  EXPECT_DOUBLE_EQ(j["windows"]["rollout"]["total_energy_j"].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(j["windows"]["update"]["total_energy_j"].get<double>(), 24.0);
  EXPECT_DOUBLE_EQ(j["windows"]["eval"]["total_energy_j"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(j["windows"]["rollout"]["total_energy_j"].get<double>() +
                       j["windows"]["update"]["total_energy_j"].get<double>() +
                       j["windows"]["eval"]["total_energy_j"].get<double>() +
                       j["unattributed"]["total_energy_j"].get<double>(),
                   j["total_energy_j"].get<double>());
}

// rollout/ep_rew_mean and ep_len_mean are the job's window (episode_window.h), not rank 0's: in
// the first row, fewer than 100 episodes have finished on the two ranks together, so the window
// holds all of them and equals charts/episodic_return and episodic_length, which average every
// rank's episodes of the iteration.
TEST(DataParallelMetricsTest, EpRewMeanIsTheJobsLastHundredEpisodes) {
  const Config config = CartPoleConfig(kSmallRun, 3);
  const std::string dir = FreshDir("ep_rew_mean");
  const auto r = TrainTwoRanks(config, dir, {1.0, 1.0}, false);
  ASSERT_EQ(r[0].error + r[1].error, "");
  const std::vector<double> episodic = MetricsColumn(dir, "charts/episodic_return");
  const std::vector<double> rew_mean = MetricsColumn(dir, "rollout/ep_rew_mean");
  const std::vector<double> episodic_len = MetricsColumn(dir, "charts/episodic_length");
  const std::vector<double> len_mean = MetricsColumn(dir, "rollout/ep_len_mean");
  ASSERT_EQ(rew_mean.size(), 4u);
  ASSERT_FALSE(std::isnan(episodic[0])) << "episodes finished in the first iteration";
  EXPECT_DOUBLE_EQ(rew_mean[0], episodic[0]);
  EXPECT_DOUBLE_EQ(len_mean[0], episodic_len[0]);
  EXPECT_DOUBLE_EQ(rew_mean[0], len_mean[0]) << "CartPole pays 1 per step";
}

// Past 100 episodes the window is the job's last 100 on every rank: with a learning rate too
// small to move the policy, CartPole episodes stay short (about 20 steps), so the 3072 steps
// before the checkpoint end well over 100. Both ranks' checkpoints of step 3072 hold the same
// 100 returns, and rank 0's metrics row of that step shows their mean.
TEST(DataParallelMetricsTest, EveryRankCheckpointsTheJobsWindow) {
  const Config config = CartPoleConfig(
      {"n_envs=4", "batch_size=128", "n_epochs=1", "n_timesteps=4096", "learning_rate=1e-9",
       "eval.freq=0", "eval.final_episodes=1", "checkpoint_freq=1024", "checkpoint_keep=8",
       "energy.sample_period_s=3600", "dist.timeout_s=60"},
      5);
  const std::string dir = FreshDir("ep_window");
  const auto r = TrainTwoRanks(config, dir, {1.0, 1.0}, false);
  ASSERT_EQ(r[0].error + r[1].error, "");
  const env::EnvSpec spec = env::FindEnvSpec("CartPole-v1");
  auto rank0 = MakeAlgorithm(config, spec), rank1 = MakeAlgorithm(config, spec);
  const TrainerState s0 = LoadResumeCheckpoint(rank0.get(), CheckpointPath(dir, 3072));
  const TrainerState s1 = LoadResumeCheckpoint(rank1.get(), CheckpointPath(dir, 3072, 1));
  ASSERT_EQ(s0.recent_returns.size(), 100u);
  EXPECT_EQ(s0.recent_returns, s1.recent_returns);
  EXPECT_EQ(s0.recent_lengths, s1.recent_lengths);
  double sum = 0.0;
  for (double v : s0.recent_returns) sum += v;
  const std::vector<double> steps = MetricsColumn(dir, "global_step");
  const std::vector<double> rew_mean = MetricsColumn(dir, "rollout/ep_rew_mean");
  const auto at = std::find(steps.begin(), steps.end(), 3072.0);
  ASSERT_NE(at, steps.end());
  EXPECT_DOUBLE_EQ(rew_mean[static_cast<size_t>(at - steps.begin())], sum / 100.0);
}

// eval.reward_threshold with two ranks: rank 0 evaluates, its verdict reaches rank 1 through a
// one-number all-reduce, and both stop after the same iteration (256 of 512 steps).
TEST(DataParallelMetricsTest, RewardThresholdStopsBothRanksAfterTheSameIteration) {
  std::vector<std::string> sets = kSmallRun;
  sets.push_back("eval.freq=256");
  sets.push_back("eval.reward_threshold=0");
  const Config config = CartPoleConfig(sets, 3);
  const std::string dir = FreshDir("reward_threshold");
  const auto r = TrainTwoRanks(config, dir, {1.0, 1.0}, false);
  ASSERT_EQ(r[0].error + r[1].error, "");
  EXPECT_EQ(r[0].result.report.steps, 256);
  EXPECT_EQ(r[1].result.report.steps, 256);
  EXPECT_TRUE(r[0].result.report.early_stop.stopped);
  EXPECT_TRUE(std::filesystem::exists(dir + "/checkpoints/final.pt"));
  EXPECT_EQ(MetricsColumn(dir, "global_step").back(), 256.0);
}

// An energy budget of half of what a 2-rank run needs: both ranks walk the same ladder on the
// job's energy and stop after the same iteration, within one iteration's energy of the budget;
// rank 0 keeps a final checkpoint and lists the decisions in energy.json.
TEST(DataParallelEnergyTest, BudgetStopsBothRanksAfterTheSameIteration) {
  std::vector<std::string> sets = kSmallRun;
  sets.push_back("n_timesteps=5120");
  sets.push_back("energy.budget.warmup_steps=512");
  const std::string source = SourceTreeDir() + "/configs/ppo/cartpole.yaml";
  const std::string full_dir = FreshDir("budget_full");
  const auto full = TrainTwoRanksMetered(
      LoadRunConfig(source, sets, 4), full_dir, [](int) { return ThreeJoulesPerRead(); }, false);
  ASSERT_EQ(full[0].error + full[1].error, "");
  const double full_j = testing::TotalJ(full_dir);
  ASSERT_GT(full_j, 0.0);

  sets.push_back("energy.budget_wh=" + std::to_string(full_j / 2.0 / 3600.0));
  const Config config = LoadRunConfig(source, sets, 4);
  const double budget_j = config.GetFloat("energy.budget_wh") * 3600.0;
  const std::string dir = FreshDir("budget_half");
  const auto r = TrainTwoRanksMetered(
      config, dir, [](int) { return ThreeJoulesPerRead(); }, false);
  ASSERT_EQ(r[0].error + r[1].error, "");
  EXPECT_TRUE(r[0].result.report.budget.stopped);
  EXPECT_LT(r[0].result.report.steps, 5120);
  EXPECT_EQ(r[1].result.report.steps, r[0].result.report.steps);  // the same last iteration
  EXPECT_FALSE(r[0].result.checkpoint_path.empty());
  EXPECT_TRUE(std::filesystem::exists(r[0].result.checkpoint_path));
  // Never past the budget by more than one iteration's energy (40 iterations in the full run).
  EXPECT_LE(testing::TotalJ(dir), budget_j + full_j / 40.0);
  EXPECT_GT(testing::TotalJ(dir), budget_j / 2.0);

  std::ifstream in(dir + "/energy.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_TRUE(j["budget"]["stopped_by_budget"].get<bool>());
  std::vector<std::string> actions;
  for (const auto& e : j["budget"]["events"]) {
    actions.push_back(e["action"].get<std::string>() + (e["taken"].get<bool>() ? "" : "(passed)"));
  }
  const std::vector<std::string> ladder = {"reduce_precision(passed)", "skip_non_critical",
                                           "throttle", "stop"};
  EXPECT_EQ(actions, ladder);

  // Both ranks left a resume checkpoint at the stop; resumed under a budget 3x the full run's,
  // both go on from there to the end, in step (the budget's origin is the job's energy, one
  // collective on every rank).
  const int64_t stop_step = r[0].result.report.steps;
  EXPECT_TRUE(std::filesystem::exists(CheckpointPath(dir, stop_step, 0)));
  EXPECT_TRUE(std::filesystem::exists(CheckpointPath(dir, stop_step, 1)));
  // A budget above the one that stopped it, and above rank 0's energy plus the stop's estimate of
  // the next iteration and the final evaluation's reserve, but short of the job's: refused on
  // both ranks, nothing written (rank 0's energy alone was checked, a lower bound, and such a
  // resume ran one iteration and stopped again over its budget).
  double stop_extra_j = 0.0;
  for (const auto& e : j["budget"]["events"]) {
    if (e["action"] == "stop") {
      stop_extra_j = e["next_iteration_energy_j"].get<double>() + e["reserve_j"].get<double>();
    }
  }
  const double job_j = j["total_energy_j"].get<double>();
  const double rank0_j = j["distributed"]["ranks"][0]["total_energy_j"].get<double>();
  ASSERT_LT(rank0_j + stop_extra_j, budget_j);
  ASSERT_LT(budget_j, job_j + stop_extra_j);  // the stop's rule
  const double between_wh = (budget_j + job_j + stop_extra_j) / 2.0 / 3600.0;
  const std::string metrics_before = ReadFile(dir + "/metrics.csv");
  const std::string power_before = ReadFile(dir + "/power.csv");
  const auto short_of_it = TrainTwoRanksMetered(
      LoadRunConfig(dir + "/config.yaml", {fmt::format("energy.budget_wh={:.17g}", between_wh)},
                    {}),
      dir, [](int) { return ThreeJoulesPerRead(); }, /*resume=*/true);
  for (const RankOutcome& o : short_of_it) {
    EXPECT_TRUE(o.config_error) << o.error;
    EXPECT_NE(o.error.find("energy.budget_wh: got"), std::string::npos) << o.error;
    EXPECT_NE(o.error.find(fmt::format("this run used {:.6g} Wh up to step {}", job_j / 3600.0,
                                       r[0].result.report.steps)),
              std::string::npos)
        << o.error;
  }
  EXPECT_EQ(ReadFile(dir + "/metrics.csv"), metrics_before);
  EXPECT_EQ(ReadFile(dir + "/power.csv"), power_before);
  const Config larger = LoadRunConfig(
      dir + "/config.yaml", {"energy.budget_wh=" + std::to_string(3.0 * full_j / 3600.0)}, {});
  const auto resumed = TrainTwoRanksMetered(
      larger, dir, [](int) { return ThreeJoulesPerRead(); }, /*resume=*/true);
  ASSERT_EQ(resumed[0].error + resumed[1].error, "");
  EXPECT_FALSE(resumed[0].result.report.budget.stopped);
  EXPECT_EQ(resumed[0].result.report.steps, 5120);
  EXPECT_EQ(resumed[1].result.report.steps, 5120);
  EXPECT_GT(testing::TotalJ(dir), testing::TotalJ(full_dir) / 2.0);
}

// A 2-rank PPO run (VecNormalize on, evaluations, periodic checkpoints) stopped at step 384 and
// resumed with 2 ranks ends with the same parameters, bit for bit, and the same metrics rows as
// the uninterrupted 2-rank run of the same seed: every rank restores its own envs, generators
// and normaliser (rank 1 from checkpoints/rank1/), and the normaliser merge restarts from the
// restored statistics. Energy: rank 0's meter gives 10 J then 20 J, rank 1's 1 J then 2 J; the
// resumed run's total is their sum, 33 J (each rank carries only its own earlier energy).
// A resume with another world size is refused (ConfigError naming both).
TEST(DataParallelResumeTest, TwoRankRunStoppedAndResumedWithTwoRanksIsBitIdentical) {
  const Config config =
      CartPoleConfig({"n_envs=2", "batch_size=32", "n_epochs=4", "n_timesteps=1024",
                      "normalize=true", "eval.freq=512", "eval.episodes=1", "eval.final_episodes=1",
                      "checkpoint_freq=256", "checkpoint_keep=2", "dist.timeout_s=60"},
                     6);
  // 2 ranks x 2 envs x 32 steps = 128 global steps per iteration, 8 iterations.
  const std::string straight = FreshDir("straight"), split = FreshDir("split");
  const auto a = TrainTwoRanks(config, straight, {10.0, 1.0}, false);
  ASSERT_EQ(a[0].error + a[1].error, "");
  EXPECT_EQ(a[0].result.report.steps, 1024);
  EXPECT_DOUBLE_EQ(testing::TotalJ(straight), 11.0);

  const auto first = TrainTwoRanks(config, split, {10.0, 1.0}, false, /*stop_after=*/384);
  ASSERT_EQ(first[0].error + first[1].error, "");
  ASSERT_TRUE(first[0].result.interrupted && first[1].result.interrupted);
  EXPECT_EQ(first[0].result.resume_checkpoint, CheckpointPath(split, 384));
  EXPECT_EQ(first[1].result.resume_checkpoint, CheckpointPath(split, 384, 1));
  EXPECT_EQ(CheckpointWorldSize(CheckpointPath(split, 384)), 2);
  const auto rank1_kept = ListCheckpoints(split, 1);
  ASSERT_EQ(rank1_kept.size(), 2u);  // 256 and 384 (checkpoint_keep 2), as rank 0's
  EXPECT_EQ(rank1_kept[0].first, 256);
  EXPECT_EQ(ListCheckpoints(split).size(), 2u);

  // One process cannot resume a 2-rank run: refused before anything is touched.
  {
    TrainOptions options;
    options.out_dir = split;
    options.verbose = false;
    options.meter_override = FixedMeter(1.0);
    options.resume = true;
    try {
      Train(config, std::move(options));
      ADD_FAILURE() << "a 2-rank run resumed in one process";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--resume"), std::string::npos) << what;
      EXPECT_NE(what.find("WORLD_SIZE 2, this launch has WORLD_SIZE 1"), std::string::npos) << what;
    }
  }

  const auto second = TrainTwoRanks(config, split, {20.0, 2.0}, /*resume=*/true);
  ASSERT_EQ(second[0].error + second[1].error, "");
  EXPECT_FALSE(second[0].result.interrupted);
  EXPECT_EQ(second[0].result.report.steps, 1024);
  EXPECT_DOUBLE_EQ(testing::TotalJ(split), 33.0);  // (10 + 1) before the stop + (20 + 2) after

  testing::ExpectBitIdenticalParameters(config, straight, split);

  // metrics.csv: the same steps and the same training figures (time and energy columns differ).
  testing::ExpectSameLearningColumns(straight, split, 8);

  // energy.json's all-reduce figures cover the whole run, as its wall, CPU and energy figures
  // do: the straight run's calls, plus the few a resume makes (checkpoint agreement).
  auto calls = [](const std::string& dir) {
    std::ifstream in(dir + "/energy.json");
    return nlohmann::json::parse(in)["distributed"]["rank0_allreduce_calls"].get<int64_t>();
  };
  EXPECT_GE(calls(split), calls(straight));
  EXPECT_LE(calls(split), calls(straight) + 4) << calls(straight);
}

// The numerical guard with two ranks: rank 1 alone gets NaN gradients in 3 updates in a row
// (iterations 4-6, guard.max_consecutive 3). The gradient all-reduce carries the NaN to rank 0,
// so both ranks skip the same 20 minibatch steps per update (20 epochs of one minibatch), count
// the same streak, restore their own checkpoints of step 1024 and halve the learning rate: rank
// 0's metrics.csv is resume_test's single-process story (one row per 256 steps, the rate halved
// from 1280), and both ranks' checkpoints of step 1536, written after the restore, hold the same
// parameters.
TEST(DataParallelGuardTest, NanOnOneRankRestoresBothRanksAlike) {
  const Config config = CartPoleConfig(
      {"n_envs=4", "batch_size=128", "n_timesteps=2048", "eval.freq=0", "eval.final_episodes=1",
       "checkpoint_freq=512", "checkpoint_keep=8", "learning_rate=0.001", "dist.timeout_s=60"},
      2);
  // 2 ranks x 4 envs x 32 steps = 256 global steps per iteration.
  const std::string dir = FreshDir("guard"), store = StorePath("guard");
  auto run_rank = [&](int rank) {
    RankOutcome out;
    try {
      auto pg = Join(rank, 2, store);
      TrainOptions options;
      options.out_dir = dir;
      options.verbose = false;
      options.meter_override = FixedMeter(1.0);
      options.process_group = pg.get();
      if (rank == 1) {
        options.before_update = [](int64_t iteration, algo::Algorithm& algorithm) {
          if (iteration == 4) algorithm.InjectNonFiniteForTesting(3);
        };
      }
      out.result = Train(config, std::move(options));
    } catch (const std::exception& e) {
      out.error = e.what();
    }
    return out;
  };
  auto r1 = std::async(std::launch::async, run_rank, 1);
  const RankOutcome a = run_rank(0);
  const RankOutcome b = r1.get();
  std::filesystem::remove(store);
  ASSERT_EQ(a.error + b.error, "");
  EXPECT_EQ(a.result.guard_restores, 1);
  EXPECT_EQ(b.result.guard_restores, 1);
  const std::vector<double> steps = MetricsColumn(dir, "global_step");
  const std::vector<double> lr = MetricsColumn(dir, "charts/learning_rate");
  const std::vector<double> skips = MetricsColumn(dir, "losses/nonfinite_skips");
  ASSERT_EQ(steps.size(), 8u);
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i], 256.0 * static_cast<double>(i + 1));
  EXPECT_EQ(lr[3], 0.001);
  EXPECT_EQ(lr[4], 0.0005);
  EXPECT_EQ(lr.back(), 0.0005);
  EXPECT_EQ(skips[2], 0);
  EXPECT_EQ(skips[3], 20);  // rank 0's own count: its update saw rank 1's NaN
  EXPECT_EQ(skips.back(), 20);
  const env::EnvSpec spec = env::FindEnvSpec("CartPole-v1");
  auto rank0 = MakeAlgorithm(config, spec), rank1 = MakeAlgorithm(config, spec);
  EXPECT_EQ(LoadResumeCheckpoint(rank0.get(), CheckpointPath(dir, 1536)).steps, 1536);
  EXPECT_EQ(LoadResumeCheckpoint(rank1.get(), CheckpointPath(dir, 1536, 1)).steps, 1536);
  EXPECT_EQ(rank0->GetParameters(), rank1->GetParameters());
}

// A single-process run's checkpoint refuses a 2-rank resume on both ranks, naming both world
// sizes, before any collective.
TEST(DataParallelResumeTest, OneRankRunRefusesTwoRankResume) {
  const Config config =
      CartPoleConfig({"n_envs=2", "batch_size=32", "n_epochs=1", "n_timesteps=512", "eval.freq=0",
                      "eval.final_episodes=1", "checkpoint_freq=0", "dist.timeout_s=60"},
                     6);
  const std::string dir = FreshDir("one");
  {
    TrainOptions options;
    options.out_dir = dir;
    options.verbose = false;
    options.meter_override = FixedMeter(1.0);
    options.stop_after_steps = 128;
    ASSERT_TRUE(Train(config, std::move(options)).interrupted);
  }
  EXPECT_EQ(CheckpointWorldSize(CheckpointPath(dir, 128)), 1);
  const auto r = TrainTwoRanks(config, dir, {1.0, 1.0}, /*resume=*/true);
  for (int q = 0; q < 2; ++q) {
    EXPECT_TRUE(r[q].config_error) << "rank " << q << ": " << r[q].error;
    EXPECT_NE(r[q].error.find("WORLD_SIZE 1, this launch has WORLD_SIZE 2"), std::string::npos)
        << r[q].error;
  }
}

}  // namespace
}  // namespace greenrl::train
