#include "greenrl/core/thread_pool.h"

#include <algorithm>
#include <string>

#include "greenrl/core/errors.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GREENRL_CPU_RELAX() _mm_pause()
#else
#define GREENRL_CPU_RELAX() ((void)0)
#endif

namespace greenrl {
namespace {

// Polls done() until it holds or the spin bound has passed; returns done(). The bound is
// ThreadPool::kBurstSpin while `bursts` > 0, else `spin`, measured from the call (re-read every
// 64 polls, so a burst that ends shortens a long wait at once). The first 256 polls only pause
// the core; later ones also yield it, so on an oversubscribed machine the thread being waited
// for can run on this core instead of waiting for the spin to end.
template <typename Done>
bool SpinUntil(Done done, std::chrono::microseconds spin, const std::atomic<int>& bursts) {
  const auto start = std::chrono::steady_clock::now();
  for (int polls = 1;; ++polls) {
    if (done()) return true;
    GREENRL_CPU_RELAX();
    if (polls > 256) std::this_thread::yield();
    if (polls % 64 == 0) {
      const auto bound = bursts.load(std::memory_order_relaxed) > 0 ? ThreadPool::kBurstSpin : spin;
      if (std::chrono::steady_clock::now() - start >= bound) return done();
    }
  }
}

// Slot state packing (ThreadPool::Slot).
constexpr uint64_t Pack(uint64_t generation, int front, int back) {
  return (generation << 32) | (static_cast<uint64_t>(front) << 16) | static_cast<uint64_t>(back);
}
constexpr uint64_t GenerationOf(uint64_t state) { return state >> 32; }
constexpr int FrontOf(uint64_t state) { return static_cast<int>((state >> 16) & 0xFFFF); }
constexpr int BackOf(uint64_t state) { return static_cast<int>(state & 0xFFFF); }

// Chunk k of [0, n) over t threads and its number of slices for `grain` (ParallelFor).
struct ChunkRange {
  int begin, end, slices;
};
ChunkRange ChunkOf(int n, int t, int grain, int k) {
  ChunkRange c{static_cast<int>(int64_t{n} * k / t), static_cast<int>(int64_t{n} * (k + 1) / t), 0};
  const int len = c.end - c.begin;
  if (len > 0) {
    c.slices = grain > 0 ? std::clamp(len / grain, 1, ThreadPool::kMaxSlices) : 1;
  }
  return c;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads, std::function<void()> worker_init)
    : num_threads_(num_threads), active_threads_(num_threads) {
  if (num_threads < 1) {
    throw ConfigError("num_threads", std::to_string(num_threads), "an integer >= 1");
  }
  slots_ = std::vector<Slot>(num_threads_);
  done_ = std::vector<DoneCount>(num_threads_);
  errors_.resize(static_cast<size_t>(num_threads_) * kMaxSlices);
  workers_.reserve(num_threads_ - 1);
  for (int k = 1; k < num_threads_; ++k) {
    workers_.emplace_back([this, k, worker_init] {
      if (worker_init) worker_init();
      WorkerLoop(k);
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

ThreadPool::Burst::Burst(ThreadPool* pool) : pool_(pool) {
  if (pool_ != nullptr) pool_->bursts_.fetch_add(1, std::memory_order_relaxed);
}

ThreadPool::Burst::~Burst() {
  if (pool_ != nullptr) pool_->bursts_.fetch_sub(1, std::memory_order_relaxed);
}

void ThreadPool::set_active_threads(int threads) {
  active_threads_ = std::max(1, std::min(threads, num_threads_));
}

int ThreadPool::Claim(int chunk, uint64_t generation, bool front) {
  std::atomic<uint64_t>& state = slots_[chunk].state;
  uint64_t s = state.load(std::memory_order_acquire);
  for (;;) {
    if (GenerationOf(s) != (generation & 0xFFFFFFFFu)) return -1;
    const int f = FrontOf(s), b = BackOf(s);
    if (f >= b) return -1;
    const uint64_t next = front ? Pack(GenerationOf(s), f + 1, b) : Pack(GenerationOf(s), f, b - 1);
    if (state.compare_exchange_weak(s, next, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return front ? f : b - 1;
    }
  }
}

void ThreadPool::RunSlice(int chunk, int slice) {
  // The job's fields are stable here: the claim succeeded for this job's generation, and the
  // caller rewrites them only after this slice is counted done.
  const int n = n_.load(std::memory_order_relaxed);
  const int t = job_threads_.load(std::memory_order_relaxed);
  const ChunkRange c = ChunkOf(n, t, grain_.load(std::memory_order_relaxed), chunk);
  const int len = c.end - c.begin;
  const int begin = c.begin + static_cast<int>(int64_t{len} * slice / c.slices);
  const int end = c.begin + static_cast<int>(int64_t{len} * (slice + 1) / c.slices);
  try {
    (*fn_.load(std::memory_order_relaxed))(begin, end);
  } catch (...) {
    errors_[static_cast<size_t>(chunk) * kMaxSlices + slice] = std::current_exception();
  }
}

int ThreadPool::Participate(int thread, uint64_t generation) {
  const int t = job_threads_.load(std::memory_order_relaxed);
  if (thread >= t) return 0;  // throttled off (set_active_threads): no share, no stealing
  int ran = 0;
  for (int slice; (slice = Claim(thread, generation, /*front=*/true)) >= 0; ++ran) {
    RunSlice(thread, slice);
  }
  for (int i = 1; i < t; ++i) {
    const int chunk = (thread + i) % t;
    for (int slice; (slice = Claim(chunk, generation, /*front=*/false)) >= 0; ++ran) {
      RunSlice(chunk, slice);
    }
  }
  return ran;
}

int ThreadPool::WorkerSlicesDone(uint64_t generation) const {
  int done = 0;
  for (int k = 1; k < num_threads_; ++k) {
    const uint64_t s = done_[k].state.load();  // seq_cst: the caller's re-check before it blocks
    if (GenerationOf(s) == (generation & 0xFFFFFFFFu)) done += static_cast<int>(s & 0xFFFFFFFFu);
  }
  return done;
}

void ThreadPool::WorkerLoop(int thread) {
  uint64_t seen_generation = 0;
  for (;;) {
    auto has_job = [&] { return stop_.load() || generation_.load() != seen_generation; };
    if (!SpinUntil(has_job, kSpinBeforeBlock, bursts_)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_workers_.fetch_add(1);  // seq_cst: ordered before the re-check in wait()
      work_cv_.wait(lock, has_job);
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen_generation = generation_.load(std::memory_order_acquire);
    const int ran = Participate(thread, seen_generation);
    if (ran == 0) continue;  // nothing to report: the caller does not wait for this thread
    // seq_cst: ordered before the caller_sleeping_ check (Dekker pattern, see the header).
    done_[thread].state.store(((seen_generation & 0xFFFFFFFFu) << 32) | static_cast<uint64_t>(ran));
    if (caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int n, const RangeFn& fn, int grain) {
  if (n <= 0) return;
  if (workers_.empty() || active_threads_ == 1) {  // one thread (or throttled to the caller)
    fn(0, n);
    return;
  }
  const int t = active_threads_;
  const uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
  int total = 0;
  for (int k = 0; k < num_threads_; ++k) {
    const int slices = k < t ? ChunkOf(n, t, grain, k).slices : 0;
    slots_[k].state.store(Pack(generation & 0xFFFFFFFFu, 0, slices), std::memory_order_relaxed);
    total += slices;
  }
  fn_.store(&fn, std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  job_threads_.store(t, std::memory_order_relaxed);
  grain_.store(grain, std::memory_order_relaxed);
  total_slices_ = total;
  generation_.store(generation);  // seq_cst: publishes the job, then the sleeper check below
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    work_cv_.notify_all();
  }
  const int caller_ran = Participate(0, generation);
  auto all_done = [&] { return caller_ran + WorkerSlicesDone(generation) == total_slices_; };
  if (!SpinUntil(all_done, kSpinBeforeBlock, bursts_)) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeping_.store(true);  // seq_cst: ordered before the re-check in wait()
    done_cv_.wait(lock, all_done);
    caller_sleeping_.store(false);
  }
  for (std::exception_ptr& error : errors_) {
    if (error) {
      std::exception_ptr first = error;
      for (std::exception_ptr& e : errors_) e = nullptr;
      std::rethrow_exception(first);
    }
  }
}

}  // namespace greenrl
