#include "greenrl/env/thread_pool.h"

#include <string>

#include "greenrl/core/errors.h"

namespace greenrl::env {

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads) {
  if (num_threads < 1) {
    throw ConfigError("num_threads", std::to_string(num_threads), "an integer >= 1");
  }
  errors_.resize(num_threads_);
  workers_.reserve(num_threads_ - 1);
  for (int k = 1; k < num_threads_; ++k) workers_.emplace_back([this, k] { WorkerLoop(k); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::RunChunk(int chunk) {
  const int64_t n = n_;
  const int begin = static_cast<int>(n * chunk / num_threads_);
  const int end = static_cast<int>(n * (chunk + 1) / num_threads_);
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
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen_generation; });
      if (stop_) return;
      seen_generation = generation_;
    }
    // fn_, n_ and errors_ are published under mu_ before generation_ changes and are not
    // touched by the caller until pending_ drops to 0.
    RunChunk(chunk);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int n, const RangeFn& fn) {
  if (n <= 0) return;
  if (workers_.empty()) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    for (std::exception_ptr& error : errors_) error = nullptr;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  work_cv_.notify_all();
  RunChunk(0);
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    fn_ = nullptr;
  }
  for (const std::exception_ptr& error : errors_) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace greenrl::env
