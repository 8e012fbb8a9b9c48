// thread_pool.h: a small fork-join pool of persistent threads: VecEnv row ranges, and the
// halves of the fused update's GEMMs (nn/fused_mlp.h).
//
// ParallelFor splits [0, n) into num_threads contiguous chunks. The caller's thread runs chunk 0
// and num_threads - 1 persistent workers run the others; with num_threads == 1 there are no
// workers and everything runs inline.
//
// Work stealing: a chunk is cut into one or more slices (ParallelFor's `grain`). Each thread takes
// its own chunk's slices front to back; once its own are taken it takes the slices nobody has
// started yet from the far end of the other chunks, so a worker that is scheduled late (a busy
// machine) or runs on a slower vCPU does not hold the job up: the job ends when the slices are
// done, not when the slowest thread has done its share. A slice is run exactly once, by whichever
// thread claims it (one compare-and-swap on the chunk's slot, which also carries the job's
// generation, so a late worker cannot claim a slice of a job that has moved on). fn must
// therefore not depend on which thread runs a slice (every user here writes disjoint rows or
// the task's own buffers).
//
// Hand-off: a job is published with one atomic store (generation_). A waiting thread (worker
// waiting for a job, caller waiting for the slices) first spins for at most kSpinBeforeBlock,
// then blocks on a condition variable, so back-to-back ParallelFor calls (VecEnv::Step in a
// rollout) skip the futex round trip while an idle pool burns no CPU after that bound. Inside a
// burst (Burst below) the bound is kBurstSpin instead, for callers that run jobs every few tens
// of microseconds with short serial stretches between them (DQN's gradient steps). Wake-ups
// use the Dekker pattern (seq_cst store of the flag, then seq_cst load of the sleeper count), and
// the notifier takes the mutex, so no wake-up is lost.
// An exception thrown in any slice is captured as a std::exception_ptr and rethrown on the
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
  // Function over one slice: fn(begin, end) handles indices [begin, end), begin < end.
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
  // other workers still wake for each job but take no share and steal nothing. The energy
  // budget's throttle rung uses it to run fewer env threads. Not thread-safe against ParallelFor.
  void set_active_threads(int threads);
  int active_threads() const { return active_threads_; }

  // Runs fn over [0, n) in chunks [n*k/T, n*(k+1)/T) for k in [0, T), T = active_threads(),
  // skipping empty chunks; returns when all are done. grain <= 0: each chunk is one slice, one
  // fn(begin, end) call over the whole chunk. grain > 0: a chunk of len indices is cut into
  // S = clamp(len / grain, 1, kMaxSlices) slices [b + len*j/S, b + len*(j+1)/S), one call each.
  // With one active thread (no workers, or throttled) it is one call fn(0, n) whatever grain.
  // Slice boundaries depend only on n, T and grain; which thread runs a slice does not change
  // them (see "Work stealing" above): chunk k's slices normally run on thread k (the caller is
  // thread 0), but any thread may run a slice its owner has not started.
  // Allocates nothing (fn is referenced, not copied).
  // Errors: if slices throw, every slice still runs, then the exception of the lowest-numbered
  // throwing slice (in index order) is rethrown here, with its original type.
  // Thread-safety: one ParallelFor at a time per pool; fn must be safe to run on disjoint slices
  // concurrently and must not depend on the thread that runs it.
  void ParallelFor(int n, const RangeFn& fn, int grain = 0);

  // The most slices a chunk is cut into (ParallelFor's grain).
  static constexpr int kMaxSlices = 16;

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
  // One chunk's claim state, on its own cache line: generation (high 32 bits) | next slice from
  // the front (bits 16-31) | one past the last unclaimed slice (bits 0-15). The chunk's owner
  // claims at the front, other threads at the back; a claim is a compare-and-swap that keeps the
  // generation, so it fails once the caller has published a newer job.
  struct alignas(64) Slot {
    std::atomic<uint64_t> state{0};
  };

  // Slices thread k has run of the current job, on its own cache line: generation (high 32 bits)
  // | count (low 32 bits), stored once when the thread has no slice left to claim (a thread that
  // ran none stores nothing). The caller sums the counts of its generation. One count shared by
  // all threads and decremented per slice moved its cache line between cores once per slice
  // (README, "Threads": CartPole-v1, 1,024 envs, 2 threads went from 79-90M to 93-95M steps/s).
  struct alignas(64) DoneCount {
    std::atomic<uint64_t> state{0};
  };

  void WorkerLoop(int thread);
  // Takes part in job `generation` as thread `thread`: its own chunk's slices from the front,
  // then other chunks' unstarted slices from the back. Returns when no slice is left to claim,
  // with the number of slices it ran.
  int Participate(int thread, uint64_t generation);
  // Claims one slice of chunk `chunk` (front: its owner; else from the back); returns its index,
  // or -1 when the chunk has none left or the job is no longer `generation`.
  int Claim(int chunk, uint64_t generation, bool front);
  // Runs slice `slice` of chunk `chunk`, storing any exception.
  void RunSlice(int chunk, int slice);
  // Slices of job `generation` that the workers have reported done (DoneCount).
  int WorkerSlicesDone(uint64_t generation) const;

  const int num_threads_;
  std::vector<std::thread> workers_;        // num_threads_ - 1 threads; worker k is thread k + 1
  std::vector<Slot> slots_;                 // [num_threads_], per chunk of the current job
  std::vector<DoneCount> done_;             // [num_threads_], per thread (the caller's unused)
  std::vector<std::exception_ptr> errors_;  // [num_threads_ * kMaxSlices], per slice

  // How long a waiting thread spins before it blocks. Long enough to cover the gap between two
  // VecEnv::Step calls of a rollout, short enough that an idle pool costs nothing measurable.
  static constexpr std::chrono::microseconds kSpinBeforeBlock{50};

  // The current job, written by the caller before generation_'s release store and rewritten only
  // after every slice of it is done. Atomics (relaxed) because a worker that wakes after the job
  // has ended may read them while the caller writes the next job's; it uses them only after a
  // successful claim of that job's generation.
  std::atomic<const RangeFn*> fn_{nullptr};
  std::atomic<int> n_{0};
  std::atomic<int> job_threads_{1};  // active_threads_ of the current job
  std::atomic<int> grain_{0};
  int active_threads_;                   // chunks with work (<= num_threads_); see set_active_threads
  std::atomic<uint64_t> generation_{0};  // incremented once per job
  int total_slices_ = 0;                 // slices of the current job (caller only)
  std::atomic<bool> stop_{false};        // set by the destructor
  std::atomic<int> bursts_{0};           // open Burst scopes; > 0: waits spin up to kBurstSpin

  std::mutex mu_;                             // pairs with the two condition variables
  std::condition_variable work_cv_;           // blocked workers wait here for a job or stop_
  std::condition_variable done_cv_;           // the blocked caller waits here for all slices done
  std::atomic<int> sleeping_workers_{0};      // workers blocked (or about to block) on work_cv_
  std::atomic<bool> caller_sleeping_{false};  // the caller blocked (or about to) on done_cv_
};

}  // namespace greenrl
