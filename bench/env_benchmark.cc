// env_benchmark.cc: raw VecEnv::Step throughput of every registered env (Google Benchmark).
// Torch-free: built as greenrl_bench_envs on its own (benchmark_main) and linked into
// greenrl_bench_micro too.
//
//   BM_VecEnvStep/<env id>/n_envs:N/threads:T/real_time: env steps per second (items_per_second)
//   with uniformly random actions from VecEnv::StepRandom, for N in {1, 8, 64, 1024} and T in
//   {1, 2}; the MuJoCo envs (HalfCheetah, Hopper, Walker2d, Ant, Swimmer, InvertedPendulum,
//   InvertedDoublePendulum, Reacher, Humanoid, HumanoidStandup and Pusher, each -v4 and -v5), whose
//   step costs microseconds to hundreds of microseconds, for N in {1, 8, 64}.
//   BM_VecEnvStepCallerDrawn/<env id>/n_envs:1024/threads:T/real_time (classic envs): the same
//   steps with the same actions drawn on the caller's thread (VecEnv::SampleActions) and then
//   VecEnv::Step, as every row of this benchmark was measured before 852f993 (2026-12-03; then
//   with a xoshiro256** generator); with two threads the worker's half of the action buffer then
//   moves to its core every step.
//   BM_IndependentVecEnvs/<env id>/n_envs:1024/real_time/threads:2: the same 1024 envs as two
//   one-thread VecEnvs of 512 (StepRandom), stepped at once by two threads that share nothing
//   (classic envs only): the most two threads can give on this machine at that moment, for the
//   T2 column.
//
// What the timed loop includes: drawing fresh uniformly random actions for every env on every
// step and stepping (dynamics, same-step autoreset, final_obs, episode statistics). StepRandom
// draws each row's action on the thread that steps the row, inside the same slice
// (env::SampleActionRows, counter-based, so the figures do not depend on who draws). For a
// drift-proof two-thread ratio see env_scaling.cc.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/vec_env.h"

namespace {

// Steps `env` once per benchmark iteration with fresh random actions: VecEnv::StepRandom with keys
// from `rng` or, with `caller_drawn`, the same actions drawn on this thread by
// VecEnv::SampleActions before VecEnv::Step (see "What the timed loop includes" above). Counts
// its envs as items.
void StepWithRandomActions(benchmark::State& state, greenrl::env::VecEnv& env, greenrl::Rng& rng,
                           bool caller_drawn) {
  const int n_envs = env.num_envs();
  if (caller_drawn) {
    for (auto _ : state) {
      env.SampleActions(rng.NextU64());
      env.Step();
      benchmark::DoNotOptimize(env.obs());
    }
  } else {
    for (auto _ : state) {
      env.StepRandom(rng.NextU64());
      benchmark::DoNotOptimize(env.obs());
    }
  }
  state.SetItemsProcessed(state.iterations() * n_envs);  // items = env steps
}

void BM_VecEnvStep(benchmark::State& state, const std::string& env_id, bool caller_drawn) {
  const int n_envs = static_cast<int>(state.range(0));
  const int num_threads = static_cast<int>(state.range(1));
  auto env = greenrl::env::MakeVecEnv(env_id, n_envs, /*seed=*/0, num_threads);
  env->Reset();
  greenrl::Rng rng(/*seed=*/0);
  StepWithRandomActions(state, *env, rng, caller_drawn);
}

// The same work without a pool: each of Google Benchmark's state.threads() threads steps its own
// one-thread VecEnv of n_envs / threads() envs, all at once. Nothing is shared and nothing is
// handed off, so its steps/s (summed over the threads) is what this machine gives that many
// threads for this env at the moment: the ceiling for BM_VecEnvStep's T2 column. It falls short
// of twice T1 when the two vCPUs are not two free cores (on 2026-12-02 the AMD EPYC VM's two
// vCPUs slowed each other by 0-43% from minute to minute: README, "the AMD EPYC VM").
void BM_IndependentVecEnvs(benchmark::State& state, const std::string& env_id) {
  const int per_thread = static_cast<int>(state.range(0)) / state.threads();
  const uint64_t seed = static_cast<uint64_t>(state.thread_index());
  auto env = greenrl::env::MakeVecEnv(env_id, per_thread, seed, /*num_threads=*/1);
  env->Reset();
  greenrl::Rng rng(seed);
  StepWithRandomActions(state, *env, rng, /*caller_drawn=*/false);
}

// Registers BM_VecEnvStep/<id> for every registered env, and BM_IndependentVecEnvs/<id> for the
// classic ones, at static-initialisation time.
const bool kRegistered = [] {
  for (const greenrl::env::EnvRegistration& entry : greenrl::env::RegisteredEnvs()) {
    const std::string id = entry.spec->id;
    // Every built-in env but Gymnasium's five classic-control ones is a MuJoCo task (v4 or v5).
    const bool mujoco = id != "CartPole-v1" && id != "Acrobot-v1" && id != "MountainCar-v0" &&
                        id != "MountainCarContinuous-v0" && id != "Pendulum-v1";
    const std::vector<int64_t> n_envs =
        mujoco ? std::vector<int64_t>{1, 8, 64} : std::vector<int64_t>{1, 8, 64, 1024};
    benchmark::RegisterBenchmark(("BM_VecEnvStep/" + id).c_str(), BM_VecEnvStep, id,
                                 /*caller_drawn=*/false)
        ->ArgNames({"n_envs", "threads"})
        ->ArgsProduct({n_envs, {1, 2}})
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
    if (!mujoco) {
      benchmark::RegisterBenchmark(("BM_VecEnvStepCallerDrawn/" + id).c_str(), BM_VecEnvStep, id,
                                   /*caller_drawn=*/true)
          ->ArgNames({"n_envs", "threads"})
          ->ArgsProduct({{1024}, {1, 2}})
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("BM_IndependentVecEnvs/" + id).c_str(), BM_IndependentVecEnvs,
                                   id)
          ->ArgName("n_envs")
          ->Arg(1024)
          ->Threads(2)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace
