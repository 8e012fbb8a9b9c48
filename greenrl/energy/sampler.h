// sampler.h: the sampler thread, which reads every meter of an EnergyMonitor once per period and
// records a power time series per domain (for the report's power-over-time plot, for integrating
// a carbon-intensity time series, and for power-integrating meters such as NVML without an energy
// counter, whose Sample() hook it calls), written incrementally to the run dir's power.csv
// (../shared/DESIGN.md, "Energy and carbon"; issue 3, part 3).
//
// Schedule: ticks at start + k x period_s (k = 1, 2, ...), never drifting. The thread sleeps on a
// condition variable until the next tick (no busy wait). A tick taken more than half a period late
// is a miss: it is counted, warned about once, and the schedule skips to the next future tick
// instead of bursting to catch up. Each row is the average over its actual duration, so rows stay
// correct whatever the lateness.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "greenrl/core/clock.h"
#include "greenrl/energy/monitor.h"

namespace greenrl::energy {

// One sampling period.
struct PowerRow {
  double time_s = 0.0;           // end of the period, s since Start() (the Sampler's clock)
  double unix_time_s = 0.0;      // end of the period, wall-clock s since 1970-01-01 UTC
  double duration_s = 0.0;       // length of the period, s (> 0)
  std::vector<double> energy_j;  // J per domain over the period, EnergyMonitor::domains() order
  std::vector<double> power_w;   // energy_j / duration_s per domain, W
};

// Settings and test seams of a Sampler (all optional).
struct SamplerOptions {
  // Where to write the power time series as CSV ("" = nowhere). Header "time_s,<domain>_w,...",
  // one row per tick, flushed after each row. A file that cannot be opened or written is warned
  // about once; the series is still kept in memory.
  std::string power_csv_path;
  // Append to power_csv_path instead of truncating it (a resumed run); the header is written only
  // when the file is empty. time_s then restarts at 0 with the resumed segment.
  bool append_csv = false;

  // Blocks until the Sampler's clock reaches deadline_s or Stop() is called.
  // Returns: false to end the thread (stop requested), true to take the sample that is due.
  // Empty means a condition-variable wait that Stop() interrupts. Tests inject a function that
  // advances a FakeClock by a script and returns false when the script ends.
  std::function<bool(double deadline_s)> sleep_until;

  // Wall-clock time in s since the Unix epoch, for PowerRow::unix_time_s. Empty means
  // std::chrono::system_clock.
  std::function<double()> unix_time_s;

  // Receives each warning (one line, no newline). Empty means "greenrl warning: <text>" on stderr.
  std::function<void(const std::string& message)> warn;
};

// Samples an EnergyMonitor on a thread of its own.
//
// Thread-safety: Start() and Stop() from one owner thread; the accessors (rows(), missed_ticks(),
// cpu_time_s(), ...) from any thread at any time.
// Errors: an exception thrown while sampling (e.g. a meter's broken invariant) ends the thread;
// it is carried to the owner and rethrown by Stop() (the destructor cannot rethrow: it warns).
class Sampler {
 public:
  // Args: monitor: the monitor to sample; must outlive the sampler.
  //       clock: the schedule's time source, normally the monitor's; must outlive the sampler.
  //       period_s: sampling period, s (default 1 s). Warned about (once, at construction) when
  //         longer than MaxSafePeriodS(), the period at which a RAPL counter could wrap twice.
  //       options: CSV path and test seams.
  // Errors: greenrl::ConfigError (field "energy.sample_period_s") unless period_s is finite and
  //   > 0.
  Sampler(EnergyMonitor& monitor, const Clock& clock, double period_s = 1.0,
          SamplerOptions options = {});

  // Stops the thread (see Stop()); an exception from the thread is warned about, not rethrown.
  ~Sampler();

  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Takes the baseline reading (monitor.SampleAll at the clock's now) on the calling thread,
  // writes the CSV header, and starts the thread.
  // Errors: GREENRL_CHECK when already started (a sampler runs once).
  void Start();

  // Asks the thread to stop, wakes it and joins it, then records the partial period since the
  // last row as a last, shorter row (on the calling thread; not when it is under
  // kMinFinalRowFraction of a period, nor after the thread failed), so the rows add up to the
  // whole run and a run shorter than one period has one row. Idempotent; a no-op before Start().
  // Errors: rethrows (once) an exception the thread ended with.
  void Stop();

  // Returns: the domain names, EnergyMonitor::domains() order (the order of PowerRow vectors).
  const std::vector<std::string>& domain_names() const { return domain_names_; }

  // Returns: the sampling period, s.
  double period_s() const { return period_s_; }

  // Returns: the longest safe period of the monitored meters, s: the minimum over RAPL meters of
  // RaplMeter::MaxSafePollPeriodS(); +infinity when no meter has a wraparound bound.
  double MaxSafePeriodS() const { return max_safe_period_s_; }

  // Returns: a copy of the rows recorded so far, oldest first.
  std::vector<PowerRow> rows() const;

  // Returns: scheduled ticks not sampled within half a period of their time (late or skipped).
  std::int64_t missed_ticks() const { return missed_ticks_.load(); }

  // Returns: CPU time the sampler thread has used so far (CLOCK_THREAD_CPUTIME_ID), s; updated
  // after every tick and when the thread ends. Compare with greenrl::ProcessCpuSeconds() for the
  // sampler's share of a run's CPU time.
  double cpu_time_s() const { return cpu_time_s_.load(); }

  // Returns: whether Stop() has been requested (for injected sleep_until functions).
  bool stop_requested() const;

  // Stop() records the partial period as a last row only when it lasted at least this fraction of
  // period_s.
  static constexpr double kMinFinalRowFraction = 0.01;

 private:
  // The thread body: sleeps until each tick, samples, records.
  void Run();
  // The default sleep_until: a condition-variable wait on the clock, interrupted by Stop().
  bool WaitUntil(double deadline_s);
  // Samples at `now_s` and appends a row (and a CSV line).
  void RecordRow(double now_s);
  // Writes the CSV header; warns once on failure.
  void OpenCsv();
  // Emits a warning through options_.warn or on stderr.
  void Warn(const std::string& message) const;

  EnergyMonitor* monitor_;
  const Clock* clock_;
  const double period_s_;
  SamplerOptions options_;
  std::vector<std::string> domain_names_;
  double max_safe_period_s_;

  // Touched only by the thread after Start() (and by Start() before the thread exists, and by
  // Stop() after it has been joined).
  double start_s_ = 0.0;
  CumulativeReading previous_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> csv_{nullptr, &std::fclose};
  bool final_row_taken_ = false;  // Stop() has handled the partial period

  std::thread thread_;
  bool started_ = false;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;      // guarded by mutex_
  std::vector<PowerRow> rows_;       // guarded by mutex_
  std::exception_ptr thread_error_;  // guarded by mutex_; set when the thread ends by exception
  std::atomic<std::int64_t> missed_ticks_{0};
  std::atomic<double> cpu_time_s_{0.0};
};

}  // namespace greenrl::energy
