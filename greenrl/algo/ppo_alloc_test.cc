// No heap allocation per step: after a warm-up iteration, a PPO rollout (fused forward,
// sampling, env steps, GAE) and a full update (20 epochs of fused minibatch updates, Adam,
// clipping, loss scaler) allocate nothing. Counted by replacing the global operator new in
// this test binary only.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "greenrl/algo/ppo.h"
#include "greenrl/env/registry.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace greenrl::algo {
namespace {

TEST(PpoAllocationTest, RolloutAndUpdateAllocateNothingAfterWarmUp) {
  PpoConfig c;
  c.n_envs = 8;
  c.n_steps = 32;
  c.batch_size = 256;
  c.n_epochs = 20;
  c.gamma = 0.98;
  c.gae_lambda = 0.8;
  auto env = env::MakeVecEnv("CartPole-v1", 8, 0, 1);
  env->Reset();
  auto ppo = MakePpo(c, env->spec());
  std::vector<EpisodeRecord> episodes;
  episodes.reserve(1024);
  ppo->CollectRollout(*env, &episodes);  // warm-up: first-call setup may allocate
  ppo->Update(0.9);
  for (int iteration = 0; iteration < 3; ++iteration) {
    episodes.clear();
    const long before = g_allocations.load();
    ppo->CollectRollout(*env, &episodes);
    const long after_rollout = g_allocations.load();
    ppo->Update(0.8);
    const long after_update = g_allocations.load();
    EXPECT_EQ(after_rollout - before, 0) << "rollout " << iteration;
    EXPECT_EQ(after_update - after_rollout, 0) << "update " << iteration;
  }
}

}  // namespace
}  // namespace greenrl::algo
