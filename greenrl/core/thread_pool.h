// thread_pool.h: a small fork-join pool of persistent threads: VecEnv row ranges, and the
// halves of the fused update's GEMMs (nn/fused_mlp.h).
//
// ParallelFor splits [0, n) into num_threads contiguous chunks. The caller's thread runs chunk 0
// and num_threads - 1 persistent workers run the others; with num_threads == 1 there are no
// workers and everything runs inline.
//
// Hand-off: a job is published with one atomic store (generation_). A waiting thread (worker
// waiting for a job, caller waiting for the workers) first spins for at most kSpinBeforeBlock,
// then blocks on a condition variable, so back-to-back ParallelFor calls (VecEnv::Step in a
// rollout) skip the futex round trip while an idle pool burns no CPU after that bound. Inside a
// burst (Burst below) the bound is kBurstSpin instead, for callers that run jobs every few tens
// of microseconds with short serial stretches between them (DQN's gradient steps). Wake-ups
// use the Dekker pattern (seq_cst store of the flag, then seq_cst load of the sleeper count), and
// the notifier takes the mutex, so no wake-up is lost.
// An exception thrown in any chunk is captured as a std::exception_ptr and rethrown on the
// caller's thread, so it keeps its type and message (../shared/STYLE.md, "Errors").
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace greenrl {

class ThreadPool {
 public:
  // Function over one chunk: fn(begin, end) handles indices [begin, end), begin < end.
  using RangeFn = std::function<void(int begin, int end)>;

  // Starts num_threads - 1 worker threads; each runs worker_init (if set) once, first. The
  // fused update uses it to keep each worker's BLAS on one thread (nn::blas::OneThreadHere).
  // Errors: greenrl::ConfigError("num_threads", value, "an integer >= 1") when num_threads < 1.
  explicit ThreadPool(int num_threads, std::function<void()> worker_init = {});
  // Wakes and joins the workers. Must not run concurrently with ParallelFor.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads taking part in ParallelFor, the caller's included.
  int num_threads() const { return num_threads_; }

  // Splits later jobs over only the first `threads` chunks (clamped to [1, num_threads()]); the
  // other workers still take part in the hand-off but get empty chunks. The energy budget's
  // throttle rung uses it to run fewer env threads. Not thread-safe against ParallelFor.
  void set_active_threads(int threads);
  int active_threads() const { return active_threads_; }

  // Runs fn on the chunks [n*k/T, n*(k+1)/T) for k in [0, T), T = active_threads(), skipping empty
  // chunks; returns when all chunks are done. Chunk boundaries depend only on n and T.
  // Allocates nothing (fn is referenced, not copied).
  // Errors: if chunks throw, every chunk still finishes, then the exception of the lowest-numbered
  // throwing chunk is rethrown here, with its original type.
  // Thread-safety: one ParallelFor at a time per pool; fn must be safe to run on disjoint chunks
  // concurrently.
  void ParallelFor(int n, const RangeFn& fn);

  // Burst mode, as a scope: while a Burst is alive, a waiting thread (a worker between jobs, the
  // caller waiting for the workers) spins for up to kBurstSpin before it blocks instead of
  // kSpinBeforeBlock, so back-to-back jobs with serial work of up to about a millisecond between
  // them need no futex wake-up (each costs ~5-50 us on a VM, on the critical path). When the
  // scope ends the pool is idle-cheap again: spinning workers block kSpinBeforeBlock after they
  // began waiting. A null pool is allowed (no effect); scopes may nest.
  // Thread-safety: open and close it on the thread that calls ParallelFor.
  class Burst {
   public:
    explicit Burst(ThreadPool* pool);
    ~Burst();
    Burst(const Burst&) = delete;
    Burst& operator=(const Burst&) = delete;

   private:
    ThreadPool* pool_;
  };
  // The longest a waiting thread spins inside a Burst before it blocks.
  static constexpr std::chrono::microseconds kBurstSpin{2000};

 private:
  void WorkerLoop(int chunk);
  // Runs chunk `chunk` of the current job, storing any exception in errors_[chunk].
  void RunChunk(int chunk);

  const int num_threads_;
  std::vector<std::thread> workers_;        // num_threads_ - 1 threads; worker k runs chunk k + 1
  std::vector<std::exception_ptr> errors_;  // [num_threads_], per chunk of the current job

  // How long a waiting thread spins before it blocks. Long enough to cover the gap between two
  // VecEnv::Step calls of a rollout, short enough that an idle pool costs nothing measurable.
  static constexpr std::chrono::microseconds kSpinBeforeBlock{50};

  const RangeFn* fn_ = nullptr;  // current job's function; published by generation_ (release)
  int n_ = 0;                    // current job's size; published by generation_ (release)
  int active_threads_;           // chunks with work (<= num_threads_); see set_active_threads
  int job_threads_ = 1;          // active_threads_ of the current job; published like n_
  std::atomic<uint64_t> generation_{0};  // incremented once per job
  std::atomic<int> pending_{0};          // workers still running the current job
  std::atomic<bool> stop_{false};        // set by the destructor
  std::atomic<int> bursts_{0};           // open Burst scopes; > 0: waits spin up to kBurstSpin

  std::mutex mu_;                             // pairs with the two condition variables
  std::condition_variable work_cv_;           // blocked workers wait here for a job or stop_
  std::condition_variable done_cv_;           // the blocked caller waits here for pending_ == 0
  std::atomic<int> sleeping_workers_{0};      // workers blocked (or about to block) on work_cv_
  std::atomic<bool> caller_sleeping_{false};  // the caller blocked (or about to) on done_cv_
};

}  // namespace greenrl
