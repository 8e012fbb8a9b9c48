// env_benchmark.cc: raw VecEnv::Step throughput of every registered env (Google Benchmark),
// with uniformly random actions pre-generated outside the timed loop. Torch-free: built as
// greenrl_bench_envs on its own (benchmark_main) and linked into greenrl_bench_micro too.
//
//   BM_VecEnvStep/<env id>/n_envs:N/threads:T/real_time: env steps per second (items_per_second),
//   for N in {1, 8, 64, 1024} and T in {1, 2}; the MuJoCo envs (HalfCheetah-v4, Hopper-v4), whose
//   step costs tens of microseconds, for N in {1, 8, 64}.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/vec_env.h"

namespace {

constexpr int kActionRounds = 64;  // distinct action rows, cycled

void BM_VecEnvStep(benchmark::State& state, const std::string& env_id) {
  const int n_envs = static_cast<int>(state.range(0));
  const int num_threads = static_cast<int>(state.range(1));
  auto env = greenrl::env::MakeVecEnv(env_id, n_envs, /*seed=*/0, num_threads);
  env->Reset();
  const greenrl::env::EnvSpec& spec = env->spec();
  const size_t row = static_cast<size_t>(n_envs) * spec.act_dim();
  greenrl::Rng rng(/*seed=*/0);
  if (spec.discrete_actions()) {
    std::vector<int64_t> actions(kActionRounds * row);  // int64 [rounds, N]
    for (int64_t& a : actions) a = static_cast<int64_t>(rng.Below(spec.num_actions()));
    int round = 0;
    for (auto _ : state) {
      const int64_t* src = actions.data() + round * row;
      std::copy(src, src + row, env->discrete_actions());
      env->Step();
      benchmark::DoNotOptimize(env->obs());
      round = (round + 1) % kActionRounds;
    }
  } else {
    const auto& box = std::get<greenrl::env::Box>(spec.action_space);
    const size_t d = static_cast<size_t>(spec.act_dim());
    std::vector<float> actions(kActionRounds * row);  // float32 [rounds, N, act_dim]
    for (size_t j = 0; j < actions.size(); ++j) {
      actions[j] = static_cast<float>(rng.Uniform(box.low[j % d], box.high[j % d]));
    }
    int round = 0;
    for (auto _ : state) {
      const float* src = actions.data() + round * row;
      std::copy(src, src + row, env->continuous_actions());
      env->Step();
      benchmark::DoNotOptimize(env->obs());
      round = (round + 1) % kActionRounds;
    }
  }
  state.SetItemsProcessed(state.iterations() * n_envs);  // items = env steps
}

// Registers BM_VecEnvStep/<id> for every registered env at static-initialisation time.
const bool kRegistered = [] {
  for (const greenrl::env::EnvRegistration& entry : greenrl::env::RegisteredEnvs()) {
    const std::string id = entry.spec->id;
    const bool mujoco = id == "HalfCheetah-v4" || id == "Hopper-v4";
    const std::vector<int64_t> n_envs =
        mujoco ? std::vector<int64_t>{1, 8, 64} : std::vector<int64_t>{1, 8, 64, 1024};
    benchmark::RegisterBenchmark(("BM_VecEnvStep/" + id).c_str(), BM_VecEnvStep, id)
        ->ArgNames({"n_envs", "threads"})
        ->ArgsProduct({n_envs, {1, 2}})
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
