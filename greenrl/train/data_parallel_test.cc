// Data-parallel training on loopback: two ranks as threads of this process, each with its own
// c10d group (a FileStore per test, so parallel ctest runs never share a port).
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/algo/sac.h"
#include "greenrl/dist/process_group.h"
#include "greenrl/env/registry.h"

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

TEST(DataParallelPpoTest, ParametersIdenticalOnBothRanksFused) { ExpectIdenticalAfterUpdates("fused"); }

TEST(DataParallelPpoTest, ParametersIdenticalOnBothRanksAutograd) {
  ExpectIdenticalAfterUpdates("autograd");
}

// DQN and SAC: the same gradient averaging; both ranks' parameters stay bitwise identical.
std::pair<std::vector<float>, std::vector<float>> RunOffPolicyRank(int rank, const std::string& store,
                                                                   const std::string& algo) {
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
    a->Update(1.0 - i / 12.0);
  }
  return {own_init, a->GetParameters()};
}

void ExpectOffPolicyIdentical(const std::string& algo) {
  const std::string store = StorePath(algo);
  auto r1 = std::async(std::launch::async, RunOffPolicyRank, 1, store, algo);
  const auto [init0, final0] = RunOffPolicyRank(0, store, algo);
  const auto [init1, final1] = r1.get();
  EXPECT_NE(init0, init1);
  EXPECT_EQ(final0, final1) << algo << ": bitwise identical after the updates";
  EXPECT_NE(final0, init0) << algo << ": the updates moved the parameters";
  std::filesystem::remove(store);
}

TEST(DataParallelOffPolicyTest, DqnParametersIdenticalOnBothRanks) { ExpectOffPolicyIdentical("dqn"); }

TEST(DataParallelOffPolicyTest, SacParametersIdenticalOnBothRanks) { ExpectOffPolicyIdentical("sac"); }

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

}  // namespace
}  // namespace greenrl::train
