// env_scaling.cc: greenrl_bench_env_scaling, the two-thread speed-up of VecEnv stepping measured
// so that a VM whose speed drifts from second to second cannot bias it. Google Benchmark runs each
// configuration for a while and then the next one, so a drift between them lands in their ratio
// (on 2026-12-03 the same one-thread figure ranged 42.8-57.1M steps/s within minutes). Here the
// configurations take turns, `rounds` times, each for `steps` steps of the same env with fresh
// uniformly random actions:
//   T1d, T2d: one VecEnv of n_envs on one thread / two threads (greenrl's pool: the caller and one
//             worker), the actions drawn on the caller's thread (VecEnv::SampleActions) and then
//             VecEnv::Step; with two threads the worker's half of the action buffer moves to its
//             core every step;
//   T1r, T2r: the same two VecEnvs stepped by VecEnv::StepRandom, which draws the same actions
//             (the same generator, env::SampleActionRows) on the thread that steps each row, so
//             the pairs differ only in where the actions are drawn;
//   indep:    two one-thread VecEnvs of n_envs / 2 (StepRandom), stepped by two std::threads
//             that share nothing: after their warm-ups they start together, and the time from
//             that common start until the later of the two has finished counts, per step (thread
//             start and join are outside it): what two threads can give on this machine at that
//             moment. Unlike T2, the halves never wait for each other. (Until 2026-12-07 each half
//             timed its own steps and the slower half counted, which gives about 2x even when the
//             halves take turns on one core: 1.79x under `taskset -c 0`.)
// Every timed run starts with an untimed warm-up (StepMicros), and the caller-drawn and StepRandom
// pairs swap order from round to round (within a pair T1 always runs before T2). Each round gives
// the time ratios (speed-ups: above 1 when two threads are faster) T1d/T2d, T1r/T2r and T1r/indep
// from figures taken a fraction of a second apart (CartPole-v1 at 1,024 envs: ~5 ms per
// configuration); it prints the first 5 rounds, the median time per step of each configuration, and
// the median, 10th and 90th percentiles (nearest rank) of each ratio over the rounds. Issue #5 asks
// T2 >= 1.7x T1 at 1,024 envs with random actions.
//
// Usage: greenrl_bench_env_scaling [--env ID] [--n-envs N] [--rounds R] [--steps S]
// (defaults CartPole-v1, 1024, 40, 300). Errors: an unknown env id (MakeVecEnv's message, which
// calls it env_id), an odd n_envs or a value out of range is refused with a message naming it;
// exit code 2.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "greenrl/core/rng.h"
#include "greenrl/env/registry.h"
#include "greenrl/env/vec_env.h"

namespace {

using Clock = std::chrono::steady_clock;

// Mean wall time of one step with fresh random actions, over `steps` steps, in microseconds:
// actions drawn on the caller's thread (VecEnv::SampleActions) and then VecEnv::Step, or, with
// `step_random`, VecEnv::StepRandom, which draws the same actions for the same key on the thread
// that steps each row. An untimed warm-up of steps / 10 steps (at least 5) comes first, so a
// worker that fell asleep while another configuration ran is awake and the rows are back in its
// cache: the figure is the steady state of a stepping loop, whichever configuration ran before.
double StepMicros(greenrl::env::VecEnv& env, greenrl::Rng& rng, int steps, bool step_random) {
  auto run = [&](int n) {
    if (step_random) {
      for (int s = 0; s < n; ++s) env.StepRandom(rng.NextU64());
    } else {
      for (int s = 0; s < n; ++s) {
        env.SampleActions(rng.NextU64());
        env.Step();
      }
    }
  };
  run(std::max(5, steps / 10));
  const auto start = Clock::now();
  run(steps);
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / steps;
}

// indep's time per step, microseconds: `a` on the caller's thread and `b` on another, each with
// StepRandom and an untimed warm-up of steps / 10 steps (at least 5); then both start at once,
// and the span from that start until the later one finishes `steps` steps, over `steps`. Halves
// that take turns on one core take about twice as long as either alone, so the ratio to T1 is
// only as high as the two really ran at the same time.
double IndependentMicros(greenrl::env::VecEnv& a, greenrl::env::VecEnv& b, greenrl::Rng& rng_a,
                         greenrl::Rng& rng_b, int steps) {
  const int warm_up = std::max(5, steps / 10);
  std::atomic<bool> b_ready{false}, go{false};
  Clock::time_point b_end;
  std::thread other([&] {
    for (int s = 0; s < warm_up; ++s) b.StepRandom(rng_b.NextU64());
    b_ready = true;
    while (!go) std::this_thread::yield();
    for (int s = 0; s < steps; ++s) b.StepRandom(rng_b.NextU64());
    b_end = Clock::now();
  });
  for (int s = 0; s < warm_up; ++s) a.StepRandom(rng_a.NextU64());
  while (!b_ready) std::this_thread::yield();
  const auto start = Clock::now();
  go = true;
  for (int s = 0; s < steps; ++s) a.StepRandom(rng_a.NextU64());
  const auto a_end = Clock::now();
  other.join();
  return std::chrono::duration<double, std::micro>(std::max(a_end, b_end) - start).count() / steps;
}

// The q-quantile (0..1) of `v` by nearest rank; v is sorted in place.
double Quantile(std::vector<double>* v, double q) {
  std::sort(v->begin(), v->end());
  const size_t k = static_cast<size_t>(q * static_cast<double>(v->size() - 1) + 0.5);
  return (*v)[k];
}

}  // namespace

// A CLI11 check: an integer in [low, high], or "got 'TEXT'; an integer in [low, high]" (CLI11's
// own Range says "Value abc not in range" for text that is no number at all).
CLI::Validator IntegerIn(int low, int high) {
  return CLI::Validator(
      [low, high](const std::string& text) {
        int value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc() && ptr == end && value >= low && value <= high) return std::string();
        return fmt::format("got '{}'; an integer in [{}, {}]", text, low, high);
      },
      fmt::format("INT in [{} - {}]", low, high));
}

int main(int argc, char** argv) {
  CLI::App app{"Two-thread VecEnv speed-up, the configurations taking turns (drift-proof)"};
  std::string env_id = "CartPole-v1";
  int n_envs = 1024, rounds = 40, steps = 300;
  app.add_option("--env", env_id, "env id (greenrl envs lists them)");
  app.add_option("--n-envs", n_envs, "envs in the T1 and T2 VecEnvs (even)")
      ->check(IntegerIn(2, 1 << 20))
      ->check([](const std::string& s) {
        return std::stoi(s) % 2 == 0 ? std::string() : "got '" + s + "'; an even number of envs";
      });
  app.add_option("--rounds", rounds,
                 "rounds of the five configurations (T1d, T2d, T1r, T2r, indep)")
      ->check(IntegerIn(1, 100000));
  app.add_option("--steps", steps, "steps per configuration per round")
      ->check(IntegerIn(1, 10000000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help: 0; a bad option or value: 2
  }

  std::unique_ptr<greenrl::env::VecEnv> t1, t2, half_a, half_b;
  try {
    t1 = greenrl::env::MakeVecEnv(env_id, n_envs, /*seed=*/0, /*num_threads=*/1);
    t2 = greenrl::env::MakeVecEnv(env_id, n_envs, /*seed=*/0, /*num_threads=*/2);
    half_a = greenrl::env::MakeVecEnv(env_id, n_envs / 2, /*seed=*/0, /*num_threads=*/1);
    half_b = greenrl::env::MakeVecEnv(env_id, n_envs / 2, /*seed=*/1, /*num_threads=*/1);
  } catch (const std::exception& e) {
    fmt::print(stderr, "greenrl_bench_env_scaling: error: {}\n", e.what());
    return 2;
  }
  for (auto* env : {t1.get(), t2.get(), half_a.get(), half_b.get()}) env->Reset();
  greenrl::Rng rng(0), rng_b(1);

  fmt::print("{} with {} envs: {} rounds of {} steps per configuration, in turns\n", env_id, n_envs,
             rounds, steps);
  fmt::print("{:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "round", "T1d_us", "T2d_us",
             "T1r_us", "T2r_us", "indep_us", "T1d/T2d", "T1r/T2r", "T1r/indep");
  std::vector<double> drawn, stepped_random, independent, us_t1d, us_t2d, us_t1r, us_t2r, us_ind;
  for (int r = 0; r < rounds; ++r) {
    // Odd rounds run the StepRandom pair first, so neither pair always follows the other.
    double t1d = 0, t2d = 0, t1r = 0, t2r = 0;
    for (int k = 0; k < 2; ++k) {
      if ((k == 0) == (r % 2 == 0)) {
        t1d = StepMicros(*t1, rng, steps, /*step_random=*/false);
        t2d = StepMicros(*t2, rng, steps, /*step_random=*/false);
      } else {
        t1r = StepMicros(*t1, rng, steps, /*step_random=*/true);
        t2r = StepMicros(*t2, rng, steps, /*step_random=*/true);
      }
    }
    const double ind = IndependentMicros(*half_a, *half_b, rng, rng_b, steps);
    drawn.push_back(t1d / t2d);
    stepped_random.push_back(t1r / t2r);
    independent.push_back(t1r / ind);
    us_t1d.push_back(t1d);
    us_t2d.push_back(t2d);
    us_t1r.push_back(t1r);
    us_t2r.push_back(t2r);
    us_ind.push_back(ind);
    if (r < 5) {
      fmt::print("{:>5} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f}\n",
                 r, t1d, t2d, t1r, t2r, ind, t1d / t2d, t1r / t2r, t1r / ind);
    }
  }
  fmt::print("median us per step: T1d {:.2f}, T2d {:.2f}, T1r {:.2f}, T2r {:.2f}, indep {:.2f}\n",
             Quantile(&us_t1d, 0.5), Quantile(&us_t2d, 0.5), Quantile(&us_t1r, 0.5),
             Quantile(&us_t2r, 0.5), Quantile(&us_ind, 0.5));
  auto summary = [](const char* what, std::vector<double>* v) {
    const double med = Quantile(v, 0.5), p10 = Quantile(v, 0.1), p90 = Quantile(v, 0.9);
    fmt::print("{}: median {:.2f}x (p10 {:.2f}, p90 {:.2f})\n", what, med, p10, p90);
  };
  summary("speed-up T1r/T2r (StepRandom, greenrl's pool)", &stepped_random);
  summary("speed-up T1d/T2d (caller-drawn actions, greenrl's pool)", &drawn);
  summary("speed-up T1r/indep (two threads sharing nothing)", &independent);
  return 0;
}
