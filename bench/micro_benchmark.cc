// micro_benchmark.cc: Google Benchmark microbenchmarks for greenrl's hot paths. They print
// figures and assert nothing (correctness lives in the *_test.cc files); see bench/README.md for
// how to run them and the figures last measured.
//
//   BM_PpoMinibatchUpdate/{fused,autograd}: one PPO minibatch update (loss, gradient, clip, Adam)
//     of SB3's MlpPolicy on CartPole shapes (obs 4, 2 actions, pi/vf [64, 64] tanh, batch 256),
//     timed through the public Algorithm::Update and reported per minibatch.
//   BM_DqnUpdate: one DQN Update (128 gradient steps) of rl-zoo's CartPole preset, reported
//     per gradient step.
//   BM_FlatAdam/n:67586: one Adam step over the DQN CartPole Q-network's parameters.
//   BM_FusedMlpForward/batch:{8,256}: FusedMlp forward of the [4, 64, 64, 2] tanh actor.
//   BM_Gemm/orient:{0,1,2}/small:{0,1}/batch:B/width:W: one [B, W] x [W, W]-shaped product in
//     the fused MLP's three orientations (0 forward X W^T, 1 dX = delta W, 2 dW += delta^T X),
//     through OpenBLAS's sgemm (small 0) or SmallGemm (small 1; forward with its W^T copy).
//   BM_CartPoleVecEnvStep/n_envs:N/threads:T/real_time: VecEnv::Step of CartPole-v1, reported
//     as env steps per second.
//
// The single-threaded benchmarks report CPU time (Google Benchmark's default; us_per_minibatch
// is wall-clock); the VecEnv one uses wall-clock time (UseRealTime) so its workers count.
// LibTorch runs on one intra-op thread (set in main); run with OMP_NUM_THREADS=1 so OpenBLAS
// does the same.

#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "greenrl/algo/algorithm.h"
#include "greenrl/algo/dqn.h"
#include "greenrl/algo/ppo.h"
#include "greenrl/core/install_paths.h"
#include "greenrl/core/openblas_core.h"
#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/vec_env.h"
#include "greenrl/nn/actor_critic.h"
#include "greenrl/nn/flat_optim.h"
#include "greenrl/nn/fused_mlp.h"
#include "greenrl/nn/small_gemm.h"
#include "greenrl/train/run_config.h"

namespace {

constexpr uint64_t kSeed = 0;
constexpr int kCartPoleObsDim = 4;
constexpr int kCartPoleNumActions = 2;

// PPO with CartPole's SB3 network and one minibatch per epoch: n_envs * n_steps = 256 rows =
// batch_size, so Update(...) runs exactly n_epochs = 20 minibatch updates.
greenrl::algo::PpoConfig MinibatchBenchConfig(const std::string& update_path) {
  greenrl::algo::PpoConfig config;
  config.n_envs = 8;
  config.n_steps = 32;
  config.batch_size = 256;
  config.n_epochs = 20;
  config.update_path = update_path;
  config.seed = kSeed;
  return config;
}

// Times Update() on one fixed rollout (collected once, outside the timed loop) and reports
// us_per_minibatch. Update's per-call extras (index shuffle, explained variance over 256 rows)
// are included and spread over its minibatches; they are small next to a minibatch.
void BM_PpoMinibatchUpdate(benchmark::State& state, const std::string& update_path) {
  const greenrl::algo::PpoConfig config = MinibatchBenchConfig(update_path);
  auto env = greenrl::env::MakeVecEnv("CartPole-v1", config.n_envs, kSeed, /*num_threads=*/1);
  env->Reset();
  std::unique_ptr<greenrl::algo::Algorithm> ppo = greenrl::algo::MakePpo(config, env->spec());
  std::vector<greenrl::algo::EpisodeRecord> episodes;
  ppo->CollectRollout(*env, &episodes);

  const int64_t rollout_rows = static_cast<int64_t>(config.n_envs) * config.n_steps;
  const int64_t minibatches_per_update =
      config.n_epochs * ((rollout_rows + config.batch_size - 1) / config.batch_size);

  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    greenrl::algo::Metrics metrics = ppo->Update(/*progress_remaining=*/0.5);
    benchmark::DoNotOptimize(metrics.data());
  }
  const double elapsed_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();

  const int64_t minibatches = static_cast<int64_t>(state.iterations()) * minibatches_per_update;
  state.SetItemsProcessed(minibatches);  // items = minibatch updates
  state.counters["us_per_minibatch"] = elapsed_us / static_cast<double>(minibatches);
  state.SetLabel(std::to_string(minibatches_per_update) + " minibatches of " +
                 std::to_string(config.batch_size) + " per Update");
}
BENCHMARK_CAPTURE(BM_PpoMinibatchUpdate, fused, std::string("fused"))
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PpoMinibatchUpdate, autograd, std::string("autograd"))
    ->Unit(benchmark::kMicrosecond);

// DQN's update on rl-zoo's CartPole preset (configs/dqn/cartpole.yaml: net_arch [256, 256],
// batch_size 64, gradient_steps 128, train_freq 256, learning_starts 1000): the replay buffer is
// filled by 100 rollouts (25,600 env steps, half of the preset's run) outside the timed loop,
// then each iteration is one
// Update (128 gradient steps: sampling, online and target forward passes, TD target, Huber loss,
// backward, norm clip, Adam). Reports us_per_gradient_step.
void BM_DqnUpdate(benchmark::State& state) {
  const greenrl::algo::DqnConfig config =
      greenrl::algo::DqnConfigFromConfig(greenrl::train::LoadRunConfig(
          greenrl::SourceTreeDir() + "/configs/dqn/cartpole.yaml", {}, kSeed));
  auto env = greenrl::env::MakeVecEnv("CartPole-v1", config.n_envs, kSeed, /*num_threads=*/1);
  env->Reset();
  greenrl::algo::Dqn dqn(config, env->spec());
  std::vector<greenrl::algo::EpisodeRecord> episodes;
  for (int r = 0; r < 100; ++r) dqn.CollectRollout(*env, &episodes);

  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const greenrl::algo::Metrics& metrics = dqn.Update(/*progress_remaining=*/0.5);
    benchmark::DoNotOptimize(metrics.data());
  }
  const double elapsed_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const int64_t steps = static_cast<int64_t>(state.iterations()) * config.gradient_steps;
  state.SetItemsProcessed(steps);  // items = gradient steps
  state.counters["us_per_gradient_step"] = elapsed_us / static_cast<double>(steps);
}
BENCHMARK(BM_DqnUpdate)->Unit(benchmark::kMillisecond);

// FlatAdam::Step over float32 [n] parameters and gradients (n: 67,586 is the DQN CartPole
// preset's Q-network, [4, 256, 256, 2]). Items are parameters.
void BM_FlatAdam(benchmark::State& state) {
  const int64_t n = state.range(0);
  greenrl::Rng rng(kSeed);
  std::vector<float> params(n), grads(n);
  for (float& x : params) x = static_cast<float>(rng.Uniform(-0.1, 0.1));
  for (float& x : grads) x = static_cast<float>(rng.Uniform(-1e-2, 1e-2));
  greenrl::nn::FlatAdam adam(n, greenrl::nn::AdamOptions{0.9, 0.999, 1e-8});
  for (auto _ : state) {
    adam.Step(params.data(), grads.data(), 1e-3);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_FlatAdam)->ArgName("n")->Arg(67586)->Unit(benchmark::kMicrosecond);

// Forward of SB3's CartPole actor [4, 64, 64, 2] tanh with ortho-initialised parameters, on
// random observations (the parameters could as well be random: forward cost does not depend on
// their values). Arg: batch rows.
void BM_FusedMlpForward(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  greenrl::nn::ActorCriticSpec spec;
  spec.obs_dim = kCartPoleObsDim;
  spec.num_actions = kCartPoleNumActions;
  greenrl::nn::ActorCriticParams params(spec);
  greenrl::Rng rng(kSeed);
  params.Initialize(rng);
  greenrl::nn::FusedMlp mlp(spec.actor_spec(), /*max_batch=*/batch);

  std::vector<float> obs(static_cast<size_t>(batch) * kCartPoleObsDim);  // float32 [batch, 4]
  for (float& x : obs) x = static_cast<float>(rng.Uniform(-0.2, 0.2));

  for (auto _ : state) {
    const float* logits = mlp.Forward(params.actor_params(), obs.data(), batch);
    benchmark::DoNotOptimize(logits);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * batch);  // items = rows
}
BENCHMARK(BM_FusedMlpForward)->ArgName("batch")->Arg(8)->Arg(256)->Unit(benchmark::kMicrosecond);

// One GEMM of a [batch, width] -> [batch, width] layer, as FusedMlp issues it, without the bias
// and activation passes (sgemm) or with them in the epilogue where the orientation has them
// (SmallGemm: bias + tanh forward, tanh' for dX). Items are multiply-adds.
// Args: orientation (0 forward, 1 dX, 2 dW), small (0 sgemm, 1 SmallGemm), batch, width.
void BM_Gemm(benchmark::State& state) {
  const int orient = static_cast<int>(state.range(0));
  const bool small = state.range(1) != 0;
  const int batch = static_cast<int>(state.range(2)), width = static_cast<int>(state.range(3));
  greenrl::Rng rng(kSeed);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = static_cast<float>(rng.Uniform(-0.5, 0.5));
    return v;
  };
  std::vector<float> x = fill(static_cast<size_t>(batch) * width);  // [batch, width]
  std::vector<float> w = fill(static_cast<size_t>(width) * width);  // [out, in]
  std::vector<float> bias = fill(width), wt(w.size());
  std::vector<float> c(static_cast<size_t>(batch) * width), gw(w.size(), 0.0f);
  for (auto _ : state) {
    if (!small) {
      if (orient == 0) {
        greenrl::nn::blas::Sgemm('T', 'N', width, batch, width, 1.0f, w.data(), width, x.data(),
                                 width, 1.0f, c.data(), width);
      } else if (orient == 1) {
        greenrl::nn::blas::Sgemm('N', 'N', width, batch, width, 1.0f, w.data(), width, x.data(),
                                 width, 0.0f, c.data(), width);
      } else {
        greenrl::nn::blas::Sgemm('N', 'T', width, width, batch, 1.0f, x.data(), width, x.data(),
                                 width, 1.0f, gw.data(), width);
      }
    } else {
      greenrl::nn::SmallGemmArgs g;
      g.m = orient == 2 ? width : batch;
      g.n = width;
      g.k = orient == 2 ? batch : width;
      g.a = x.data();
      g.a_row_stride = orient == 2 ? 1 : width;
      g.a_col_stride = orient == 2 ? width : 1;
      g.ldb = width;
      g.ldc = width;
      if (orient == 0) {
        greenrl::nn::TransposeMatrix(w.data(), width, width, width, wt.data(), width);
        g.b = wt.data();
        g.c = c.data();
        g.init = greenrl::nn::GemmInit::kBias;
        g.bias = bias.data();
        g.post = greenrl::nn::GemmPost::kTanh;
      } else if (orient == 1) {
        g.b = w.data();
        g.c = c.data();
        g.post = greenrl::nn::GemmPost::kTanhGrad;
        g.h = x.data();
        g.ldh = width;
      } else {
        g.b = x.data();
        g.c = gw.data();
        g.init = greenrl::nn::GemmInit::kAccumulate;
      }
      greenrl::nn::SmallGemm(g);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * batch * width * width);  // items = MACs
}
BENCHMARK(BM_Gemm)
    ->ArgNames({"orient", "small", "batch", "width"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {256}, {64}})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {8}, {64}})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {64}, {256}})
    ->Unit(benchmark::kMicrosecond);

// VecEnv::Step of CartPole-v1 with uniformly random actions, pre-generated for kActionRounds
// steps and copied into the action buffer each step (no allocation in the loop).
// Args: n_envs, threads.
void BM_CartPoleVecEnvStep(benchmark::State& state) {
  constexpr int kActionRounds = 64;
  const int n_envs = static_cast<int>(state.range(0));
  const int num_threads = static_cast<int>(state.range(1));
  auto env = greenrl::env::MakeVecEnv("CartPole-v1", n_envs, kSeed, num_threads);
  env->Reset();

  greenrl::Rng rng(kSeed);
  std::vector<int64_t> actions(static_cast<size_t>(kActionRounds) * n_envs);  // int64 [rounds, N]
  for (int64_t& a : actions) a = static_cast<int64_t>(rng.Below(kCartPoleNumActions));

  int64_t* action_buffer = env->discrete_actions();
  int round = 0;
  for (auto _ : state) {
    const int64_t* row = actions.data() + static_cast<size_t>(round) * n_envs;
    std::copy(row, row + n_envs, action_buffer);
    env->Step();
    benchmark::DoNotOptimize(env->obs());
    round = (round + 1) % kActionRounds;
  }
  state.SetItemsProcessed(state.iterations() * n_envs);  // items = env steps
}
BENCHMARK(BM_CartPoleVecEnvStep)
    ->ArgNames({"n_envs", "threads"})
    ->Args({8, 1})
    ->Args({64, 1})
    ->Args({1024, 1})
    ->Args({1024, 2})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  greenrl::RestartWithOpenBlasCoreTypeIfNeeded(argv, "greenrl_bench_micro");
  at::set_num_threads(1);  // LibTorch intra-op: one thread, as the trainer runs small networks
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
