// thread_pool.h: a small fork-join pool of persistent threads for stepping VecEnv row ranges.
//
// ParallelFor splits [0, n) into num_threads contiguous chunks. The caller's thread runs chunk 0
// and num_threads - 1 persistent workers run the others; with num_threads == 1 there are no
// workers and everything runs inline. Idle workers block on a condition variable (no spinning).
// An exception thrown in any chunk is captured as a std::exception_ptr and rethrown on the
// caller's thread, so it keeps its type and message (../shared/STYLE.md, "Errors").
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace greenrl::env {

class ThreadPool {
 public:
  // Function over one chunk: fn(begin, end) handles indices [begin, end), begin < end.
  using RangeFn = std::function<void(int begin, int end)>;

  // Starts num_threads - 1 worker threads.
  // Errors: greenrl::ConfigError("num_threads", value, "an integer >= 1") when num_threads < 1.
  explicit ThreadPool(int num_threads);
  // Wakes and joins the workers. Must not run concurrently with ParallelFor.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads taking part in ParallelFor, the caller's included.
  int num_threads() const { return num_threads_; }

  // Runs fn on the chunks [n*k/T, n*(k+1)/T) for k in [0, T), T = num_threads(), skipping empty
  // chunks; returns when all chunks are done. Chunk boundaries depend only on n and T.
  // Allocates nothing (fn is referenced, not copied).
  // Errors: if chunks throw, every chunk still finishes, then the exception of the lowest-numbered
  // throwing chunk is rethrown here, with its original type.
  // Thread-safety: one ParallelFor at a time per pool; fn must be safe to run on disjoint chunks
  // concurrently.
  void ParallelFor(int n, const RangeFn& fn);

 private:
  void WorkerLoop(int chunk);
  // Runs chunk `chunk` of the current job, storing any exception in errors_[chunk].
  void RunChunk(int chunk);

  const int num_threads_;
  std::vector<std::thread> workers_;        // num_threads_ - 1 threads; worker k runs chunk k + 1
  std::vector<std::exception_ptr> errors_;  // [num_threads_], per chunk of the current job

  std::mutex mu_;                    // guards everything below
  std::condition_variable work_cv_;  // workers wait here for a new job or stop_
  std::condition_variable done_cv_;  // the caller waits here for pending_ == 0
  const RangeFn* fn_ = nullptr;      // current job's function
  int n_ = 0;                        // current job's size
  uint64_t generation_ = 0;          // incremented once per job
  int pending_ = 0;                  // workers still running the current job
  bool stop_ = false;                // set by the destructor
};

}  // namespace greenrl::env
