// thread_pool_test.cc: ThreadPool covers every index once, in the documented chunks, reuses its
// threads, and carries worker exceptions to the caller with their type and message.
#include "greenrl/core/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl {
namespace {

TEST(ThreadPoolTest, RejectsFewerThanOneThread) {
  EXPECT_THROW(ThreadPool(0), ConfigError);
  EXPECT_THROW(ThreadPool(-2), ConfigError);
}

TEST(ThreadPoolTest, EveryIndexOnceInContiguousChunks) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    for (int n : {1, 2, 3, 7, 100}) {
      std::vector<int> hits(n, 0);
      std::vector<int> chunk_of(n, -1);
      const ThreadPool::RangeFn fn = [&](int begin, int end) {
        for (int i = begin; i < end; ++i) {
          ++hits[i];
          chunk_of[i] = begin;
        }
      };
      for (int repeat = 0; repeat < 3; ++repeat) pool.ParallelFor(n, fn);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(hits[i], 3) << "threads " << threads << " n " << n << " i " << i;
        // Chunk k starts at n*k/T: recompute which chunk i falls in.
        int k = 0;
        while (static_cast<int64_t>(n) * (k + 1) / threads <= i) ++k;
        EXPECT_EQ(chunk_of[i], static_cast<int>(static_cast<int64_t>(n) * k / threads));
      }
    }
  }
}

TEST(ThreadPoolTest, UsesWorkerThreads) {
  ThreadPool pool(3);
  std::vector<std::thread::id> ids(3);
  pool.ParallelFor(3, [&](int begin, int) { ids[begin] = std::this_thread::get_id(); });
  EXPECT_EQ(ids[0], std::this_thread::get_id());  // chunk 0 runs on the caller
  EXPECT_NE(ids[1], std::this_thread::get_id());
  EXPECT_NE(ids[2], std::this_thread::get_id());
  EXPECT_NE(ids[1], ids[2]);
}

class CustomError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

TEST(ThreadPoolTest, WorkerExceptionKeepsTypeAndMessageAndPoolStaysUsable) {
  ThreadPool pool(4);
  std::atomic<int> ran{0};
  const ThreadPool::RangeFn throw_in_last = [&](int begin, int end) {
    ran += end - begin;
    if (end == 8) throw CustomError("row " + std::to_string(end - 1) + " failed");
  };
  try {
    pool.ParallelFor(8, throw_in_last);
    ADD_FAILURE() << "no exception";
  } catch (const CustomError& e) {
    EXPECT_STREQ(e.what(), "row 7 failed");
  }
  EXPECT_EQ(ran.load(), 8);  // every chunk still ran
  // The lowest-numbered failing chunk wins when several fail.
  try {
    pool.ParallelFor(8, [](int begin, int) {
      if (begin >= 4) throw std::out_of_range("chunk at " + std::to_string(begin));
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "chunk at 4");
  }
  std::atomic<int> after{0};
  pool.ParallelFor(8, [&](int begin, int end) { after += end - begin; });
  EXPECT_EQ(after.load(), 8);
}

// Process CPU time (all threads) in seconds.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// No busy-waiting when idle: after a burst of jobs, 3 workers waiting ~0.3 s for the next one
// may spin for kSpinBeforeBlock (50 us) each, then must block. Allow 20 ms of CPU in all (a
// spinning pool would use ~0.9 s).
TEST(ThreadPoolTest, IdlePoolBurnsNoCpu) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  const ThreadPool::RangeFn fn = [&](int begin, int end) { sum += end - begin; };
  for (int i = 0; i < 1000; ++i) pool.ParallelFor(64, fn);
  EXPECT_EQ(sum.load(), 64000);
  const double cpu_before = ProcessCpuSeconds();
  const auto wall_before = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double idle_cpu_s = ProcessCpuSeconds() - cpu_before;
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  RecordProperty("idle_cpu_ms", std::to_string(idle_cpu_s * 1e3));
  std::printf("idle pool: %.3f ms CPU over %.0f ms wall\n", idle_cpu_s * 1e3, wall_s * 1e3);
  EXPECT_LT(idle_cpu_s, 0.020);
  pool.ParallelFor(64, fn);  // and it still wakes up
  EXPECT_EQ(sum.load(), 64064);
}

// Burst scopes: jobs inside one run as usual (nested scopes, a null pool allowed), and once the
// last scope closes the idle pool does not keep spinning: under 20 ms of CPU over 0.3 s (workers
// spinning through it would use ~0.9 s).
TEST(ThreadPoolTest, BurstEndsAndIdlePoolBurnsNoCpu) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  const ThreadPool::RangeFn fn = [&](int begin, int end) { sum += end - begin; };
  {
    ThreadPool::Burst burst(&pool);
    ThreadPool::Burst nested(&pool);
    ThreadPool::Burst none(nullptr);
    for (int i = 0; i < 1000; ++i) pool.ParallelFor(64, fn);
  }
  EXPECT_EQ(sum.load(), 64000);
  const double cpu_before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double idle_cpu_s = ProcessCpuSeconds() - cpu_before;
  std::printf("idle pool after a burst: %.3f ms CPU over 300 ms\n", idle_cpu_s * 1e3);
  EXPECT_LT(idle_cpu_s, 0.020);
  pool.ParallelFor(64, fn);
  EXPECT_EQ(sum.load(), 64064);
}

}  // namespace
}  // namespace greenrl

namespace greenrl {
namespace {

// Throttled to fewer threads, the pool still covers every row once, on fewer threads.
TEST(ThreadPoolTest, ActiveThreadsLimitsTheThreadsThatWork) {
  ThreadPool pool(3);
  std::vector<std::thread::id> owner(90);
  const ThreadPool::RangeFn fn = [&](int begin, int end) {
    for (int i = begin; i < end; ++i) owner[i] = std::this_thread::get_id();
  };
  pool.ParallelFor(90, fn);
  std::set<std::thread::id> all(owner.begin(), owner.end());
  EXPECT_EQ(all.size(), 3u);
  pool.set_active_threads(2);
  EXPECT_EQ(pool.active_threads(), 2);
  std::fill(owner.begin(), owner.end(), std::thread::id());
  pool.ParallelFor(90, fn);
  std::set<std::thread::id> two(owner.begin(), owner.end());
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(two.count(std::thread::id()), 0u);  // every row written
  pool.set_active_threads(0);                   // clamped to 1: the caller alone
  EXPECT_EQ(pool.active_threads(), 1);
  pool.ParallelFor(90, fn);
  std::set<std::thread::id> one(owner.begin(), owner.end());
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(*one.begin(), std::this_thread::get_id());
}

}  // namespace
}  // namespace greenrl
