// clock.h: time behind an interface (../shared/STYLE.md, point 8), so energy windows, the sampler
// and budget logic can be tested with a simulated clock to the exact second.
#pragma once

#include <cstdint>

namespace greenrl {

// A monotonic clock. Thread-safety: implementations are safe to call from several threads.
class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary fixed origin (monotonic, never decreases). Unit: s.
  virtual double NowS() const = 0;
};

// std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  double NowS() const override;
  // A process-wide instance (never destroyed).
  static const SteadyClock& Instance();
};

// A clock that moves only when told to. Not thread-safe: tests drive it from one thread.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(double start_s = 0.0) : now_s_(start_s) {}
  double NowS() const override { return now_s_; }
  // Moves the clock forward by duration_s (>= 0) seconds.
  void AdvanceS(double duration_s) { now_s_ += duration_s; }

 private:
  double now_s_;
};

// CPU seconds consumed by this process so far, all threads, user + system
// (clock_gettime(CLOCK_PROCESS_CPUTIME_ID)). Unit: s.
double ProcessCpuSeconds();

// Wall-clock seconds since the Unix epoch (std::chrono::system_clock; the vDSO's
// clock_gettime, tens of nanoseconds). Unit: s.
double UnixNowS();

}  // namespace greenrl
