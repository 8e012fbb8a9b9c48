// thread_pool_test.cc: ThreadPool covers every index once, in the documented chunks, reuses its
// threads, and carries worker exceptions to the caller with their type and message.
#include "greenrl/core/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <set>
#include <utility>
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

// Blocks until `started` reaches `expected` (every chunk of the job has begun), so no thread can
// finish its chunk and take another's: each chunk then runs on its own thread. Gives up after 10 s.
void WaitForAll(std::atomic<int>& started, int expected) {
  ++started;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (started.load() < expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
}

TEST(ThreadPoolTest, UsesWorkerThreads) {
  ThreadPool pool(3);
  std::vector<std::thread::id> ids(3);
  std::atomic<int> started{0};
  pool.ParallelFor(3, [&](int begin, int) {
    ids[begin] = std::this_thread::get_id();
    WaitForAll(started, 3);
  });
  EXPECT_EQ(started.load(), 3);
  EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 3u);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), std::this_thread::get_id()), 1);  // the caller
}

// grain > 0 cuts each thread's chunk into clamp(len / grain, 1, kMaxSlices) slices at
// begin + len*j/S; grain 0 gives one call per chunk; one thread gives one call over [0, n).
TEST(ThreadPoolTest, SlicesFollowTheGrain) {
  using Calls = std::set<std::pair<int, int>>;
  auto calls_of = [](ThreadPool& pool, int n, int grain) {
    std::mutex mu;
    Calls calls;
    pool.ParallelFor(n, [&](int begin, int end) {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_TRUE(calls.insert({begin, end}).second) << begin;
    }, grain);
    return calls;
  };
  ThreadPool two(2);
  // 100 rows, 2 threads: chunks [0, 50) and [50, 100), 5 slices of 10 each.
  Calls expected;
  for (int b = 0; b < 100; b += 10) expected.insert({b, b + 10});
  EXPECT_EQ(calls_of(two, 100, 10), expected);
  // grain 12: 50 / 12 = 4 slices per chunk, at 0, 12, 25, 37 (50 j / 4).
  expected.clear();
  for (int base : {0, 50}) {
    for (int j = 0; j < 4; ++j) expected.insert({base + 50 * j / 4, base + 50 * (j + 1) / 4});
  }
  EXPECT_EQ(calls_of(two, 100, 12), expected);
  // At most kMaxSlices (16) per chunk: 1,000 rows at grain 1 give 16 slices of 500 / 16 rows.
  Calls many = calls_of(two, 1000, 1);
  EXPECT_EQ(many.size(), 32u);
  EXPECT_EQ(*many.begin(), std::make_pair(0, 31));  // 500 * 1 / 16 = 31
  // A grain above the chunk: one slice per chunk, as grain 0.
  EXPECT_EQ(calls_of(two, 100, 64), (Calls{{0, 50}, {50, 100}}));
  EXPECT_EQ(calls_of(two, 100, 0), (Calls{{0, 50}, {50, 100}}));
  ThreadPool one(1);
  EXPECT_EQ(calls_of(one, 100, 10), (Calls{{0, 100}}));
}

// Back-to-back jobs of varying size and grain, where threads finish at different times and steal
// each other's slices: ParallelFor returns only once every index of its job has run, exactly
// once (each thread reports its own count of slices; the caller sums the counts of the job).
TEST(ThreadPoolTest, BackToBackJobsEachReturnAfterEveryIndexRanOnce) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(512);
    for (int job = 0; job < 3000; ++job) {
      const int n = 1 + (job * 37) % 512;
      const int grain = job % 4 == 0 ? 0 : 1 + job % 23;
      for (int i = 0; i < n; ++i) hits[i].store(0, std::memory_order_relaxed);
      pool.ParallelFor(
          n,
          [&](int begin, int end) {
            // Uneven slices: some take a few microseconds, so others get stolen.
            if ((begin * 7 + job) % 5 == 0)
              std::this_thread::sleep_for(std::chrono::microseconds(5));
            for (int i = begin; i < end; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
          },
          grain);
      int wrong = 0;
      for (int i = 0; i < n; ++i) wrong += hits[i].load(std::memory_order_relaxed) != 1;
      ASSERT_EQ(wrong, 0) << "threads " << threads << " job " << job << " n " << n;
    }
  }
}

// A worker that is not there when a job starts (here: still in its start-up function) does not
// hold the job up: the caller, done with its own chunk, runs the worker's unstarted chunk (grain
// 0) or slices (grain > 0) itself, each exactly once.
TEST(ThreadPoolTest, CallerRunsALateWorkersShare) {
  ThreadPool pool(2, [] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); });
  std::vector<std::thread::id> ids(2);
  pool.ParallelFor(2, [&](int begin, int) { ids[begin] = std::this_thread::get_id(); });
  EXPECT_EQ(ids[0], std::this_thread::get_id());
  EXPECT_EQ(ids[1], std::this_thread::get_id());
  std::vector<int> hits(256, 0);
  pool.ParallelFor(256, [&](int begin, int end) {
    for (int i = begin; i < end; ++i) ++hits[i];
  }, 16);
  EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 256);
}

// A slower thread gives up the slices it has not started: with the worker taking 20 ms per slice
// and the caller none, the caller runs most of the worker's 8 slices (from the far end), and every
// row is still stepped exactly once.
TEST(ThreadPoolTest, FasterThreadTakesOverASlowerThreadsSlices) {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int> hits(16, 0);
  std::atomic<int> caller_rows_of_chunk1{0};
  pool.ParallelFor(16, [&](int begin, int end) {
    const bool on_caller = std::this_thread::get_id() == caller;
    if (!on_caller) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int i = begin; i < end; ++i) {
      ++hits[i];
      if (on_caller && i >= 8) ++caller_rows_of_chunk1;
    }
  }, 1);
  EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 16);
  // If the worker arrives before the caller is done, it sleeps in the one slice it claimed while
  // the caller takes the others from the back; allow one more slice for a loaded machine.
  EXPECT_GE(caller_rows_of_chunk1.load(), 6);
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

// Throttled to fewer threads, the pool still covers every row once, on fewer threads; an inactive
// worker takes no share and steals nothing.
TEST(ThreadPoolTest, ActiveThreadsLimitsTheThreadsThatWork) {
  ThreadPool pool(3);
  std::vector<std::thread::id> owner(90);
  std::atomic<int> started{0};
  int expected = 3;
  const ThreadPool::RangeFn fn = [&](int begin, int end) {
    for (int i = begin; i < end; ++i) owner[i] = std::this_thread::get_id();
    WaitForAll(started, expected);
  };
  pool.ParallelFor(90, fn);
  std::set<std::thread::id> all(owner.begin(), owner.end());
  EXPECT_EQ(all.size(), 3u);
  pool.set_active_threads(2);
  EXPECT_EQ(pool.active_threads(), 2);
  std::fill(owner.begin(), owner.end(), std::thread::id());
  started = 0;
  expected = 2;
  pool.ParallelFor(90, fn);
  std::set<std::thread::id> two(owner.begin(), owner.end());
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(two.count(std::thread::id()), 0u);  // every row written
  EXPECT_EQ(two.count(std::this_thread::get_id()), 1u);
  // Without the rendezvous, over many jobs, only the two active threads ever run a slice.
  std::set<std::thread::id> seen;
  std::mutex mu;
  for (int repeat = 0; repeat < 200; ++repeat) {
    pool.ParallelFor(90, [&](int, int) {
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(std::this_thread::get_id());
    }, 5);
  }
  for (const std::thread::id& id : seen) EXPECT_EQ(two.count(id), 1u);
  pool.set_active_threads(0);  // clamped to 1: the caller alone
  EXPECT_EQ(pool.active_threads(), 1);
  started = 0;
  expected = 1;
  pool.ParallelFor(90, fn);
  std::set<std::thread::id> one(owner.begin(), owner.end());
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(*one.begin(), std::this_thread::get_id());
}

}  // namespace
}  // namespace greenrl
