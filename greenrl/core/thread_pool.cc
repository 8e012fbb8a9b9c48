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

}  // namespace

ThreadPool::ThreadPool(int num_threads, std::function<void()> worker_init)
    : num_threads_(num_threads), active_threads_(num_threads) {
  if (num_threads < 1) {
    throw ConfigError("num_threads", std::to_string(num_threads), "an integer >= 1");
  }
  errors_.resize(num_threads_);
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

void ThreadPool::RunChunk(int chunk) {
  const int64_t n = n_;
  const int t = job_threads_;
  if (chunk >= t) return;
  const int begin = static_cast<int>(n * chunk / t);
  const int end = static_cast<int>(n * (chunk + 1) / t);
  if (begin >= end) return;
  try {
    (*fn_)(begin, end);
  } catch (...) {
    errors_[chunk] = std::current_exception();
  }
}

void ThreadPool::WorkerLoop(int chunk) {
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
    // fn_, n_ and errors_ were written before generation_'s release store and are not touched by
    // the caller until pending_ drops to 0.
    RunChunk(chunk);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int n, const RangeFn& fn) {
  if (n <= 0) return;
  if (workers_.empty()) {
    fn(0, n);
    return;
  }
  if (active_threads_ == 1) {  // throttled to the caller alone: no hand-off at all
    fn(0, n);
    return;
  }
  fn_ = &fn;
  n_ = n;
  job_threads_ = active_threads_;
  for (std::exception_ptr& error : errors_) error = nullptr;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);  // seq_cst: publishes the job, then the sleeper check below
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    work_cv_.notify_all();
  }
  RunChunk(0);
  auto all_done = [&] { return pending_.load() == 0; };
  if (!SpinUntil(all_done, kSpinBeforeBlock, bursts_)) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeping_.store(true);  // seq_cst: ordered before the re-check in wait()
    done_cv_.wait(lock, all_done);
    caller_sleeping_.store(false);
  }
  fn_ = nullptr;
  for (const std::exception_ptr& error : errors_) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace greenrl
