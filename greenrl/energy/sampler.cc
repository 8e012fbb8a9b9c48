// sampler.cc: the sampling thread's schedule, rows and power.csv (see sampler.h).
#include "greenrl/energy/sampler.h"

#include <fmt/format.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

#include "greenrl/core/errors.h"
#include "greenrl/energy/rapl_meter.h"

namespace greenrl::energy {
namespace {

// CPU seconds used by the calling thread so far.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double SystemUnixTimeS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Tolerance, in periods, for a tick whose clock reading is a rounding error short of its deadline.
constexpr double kTickEpsilon = 1e-9;

}  // namespace

Sampler::Sampler(EnergyMonitor& monitor, const Clock& clock, double period_s,
                 SamplerOptions options)
    : monitor_(&monitor),
      clock_(&clock),
      period_s_(period_s),
      options_(std::move(options)),
      max_safe_period_s_(std::numeric_limits<double>::infinity()) {
  if (!std::isfinite(period_s) || period_s <= 0.0) {
    throw ConfigError("energy.sample_period_s", fmt::format("{}", period_s),
                      "a finite sampling period in seconds, > 0 (default 1)");
  }
  for (const DomainInfo& info : monitor_->domains()) domain_names_.push_back(info.domain);
  for (const EnergyMeter* meter : monitor_->meters()) {
    if (const auto* rapl = dynamic_cast<const RaplMeter*>(meter)) {
      max_safe_period_s_ = std::min(max_safe_period_s_, rapl->MaxSafePollPeriodS());
    }
  }
  if (period_s_ > max_safe_period_s_) {
    Warn(fmt::format(
        "sampling period {} s is longer than {} s, the longest period at which no RAPL counter "
        "can wrap twice between reads (max_energy_range_uj / max power); energy may be lost: "
        "lower energy.sample_period_s",
        period_s_, max_safe_period_s_));
  }
}

Sampler::~Sampler() {
  try {
    Stop();
  } catch (const std::exception& error) {
    Warn(std::string("sampler thread ended with an error: ") + error.what());
  } catch (...) {
    Warn("sampler thread ended with an unknown error");
  }
}

void Sampler::Warn(const std::string& message) const {
  if (options_.warn) {
    options_.warn(message);
  } else {
    std::fprintf(stderr, "greenrl warning: %s\n", message.c_str());
    std::fflush(stderr);
  }
}

void Sampler::OpenCsv() {
  if (options_.power_csv_path.empty()) return;
  csv_.reset(std::fopen(options_.power_csv_path.c_str(), options_.append_csv ? "a" : "w"));
  std::string header = "time_s";
  for (const std::string& domain : domain_names_) header += "," + domain + "_w";
  header += "\n";
  if (csv_ != nullptr && options_.append_csv && std::ftell(csv_.get()) > 0) header.clear();
  if (csv_ == nullptr || std::fputs(header.c_str(), csv_.get()) < 0 ||
      std::fflush(csv_.get()) != 0) {
    csv_.reset();
    Warn("cannot write " + options_.power_csv_path +
         "; the power time series is kept in memory only");
  }
}

void Sampler::Start() {
  GREENRL_CHECK(!started_, "Sampler::Start() called twice");
  started_ = true;
  start_s_ = clock_->NowS();
  previous_ = monitor_->SampleAll(start_s_);
  OpenCsv();
  thread_ = std::thread([this] { Run(); });
}

void Sampler::Stop() {
  if (!started_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(error, thread_error_);
  }
  if (error) std::rethrow_exception(error);
  // The partial period since the last row, as one more (shorter) row, so the series covers the
  // whole run and a run shorter than one period still has a row. Skipped when it is shorter than
  // kMinFinalRowFraction of a period (a counter read microseconds after the last one says little).
  if (!final_row_taken_) {
    final_row_taken_ = true;
    const double now_s = clock_->NowS();
    if (now_s - previous_.time_s >= kMinFinalRowFraction * period_s_) RecordRow(now_s);
  }
}

bool Sampler::stop_requested() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_requested_;
}

std::vector<PowerRow> Sampler::rows() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return rows_;
}

bool Sampler::WaitUntil(double deadline_s) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_requested_) {
    const double remaining_s = deadline_s - clock_->NowS();
    if (remaining_s <= 0.0) return true;
    wake_.wait_for(lock, std::chrono::duration<double>(remaining_s));
  }
  return false;
}

void Sampler::RecordRow(double now_s) {
  const CumulativeReading reading = monitor_->SampleAll(now_s);
  PowerRow row;
  row.time_s = now_s - start_s_;
  row.unix_time_s = options_.unix_time_s ? options_.unix_time_s() : SystemUnixTimeS();
  row.duration_s = now_s - previous_.time_s;
  row.energy_j.resize(reading.energy_j.size());
  row.power_w.resize(reading.energy_j.size());
  for (size_t i = 0; i < reading.energy_j.size(); ++i) {
    row.energy_j[i] = reading.energy_j[i] - previous_.energy_j[i];
    row.power_w[i] = row.energy_j[i] / row.duration_s;
  }
  previous_ = reading;
  if (csv_ != nullptr) {
    std::string line = fmt::format("{}", row.time_s);
    for (double power_w : row.power_w) line += fmt::format(",{}", power_w);
    line += "\n";
    if (std::fputs(line.c_str(), csv_.get()) < 0 || std::fflush(csv_.get()) != 0) {
      csv_.reset();
      Warn("writing " + options_.power_csv_path +
           " failed; later power rows are kept in memory only");
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  rows_.push_back(std::move(row));
}

void Sampler::Run() {
  try {
    bool warned_miss = false;
    std::int64_t next_tick = 1;  // index k of the next tick, due at start_s_ + k * period_s_
    while (true) {
      const double deadline_s = start_s_ + static_cast<double>(next_tick) * period_s_;
      const bool go_on =
          options_.sleep_until ? options_.sleep_until(deadline_s) : WaitUntil(deadline_s);
      if (!go_on) break;
      const double now_s = clock_->NowS();
      // Index of the latest tick due at now_s.
      const auto last_due =
          static_cast<std::int64_t>(std::floor((now_s - start_s_) / period_s_ + kTickEpsilon));
      if (last_due < next_tick) continue;  // woke early: sleep again
      // Ticks next_tick..last_due are due; this sample serves the latest one if it is at most
      // half a period late, and every other due tick is missed.
      const double late_s = now_s - (start_s_ + static_cast<double>(last_due) * period_s_);
      const std::int64_t missed = (last_due - next_tick + 1) - (late_s <= 0.5 * period_s_ ? 1 : 0);
      RecordRow(now_s);
      if (missed > 0) {
        missed_ticks_ += missed;
        if (!warned_miss) {
          warned_miss = true;
          Warn(fmt::format(
              "energy sampler missed its schedule: the tick due at {} s ran at {} s (period {} "
              "s), {} tick(s) missed; skipping to the next tick. Later misses are counted "
              "(missed_ticks), not warned about",
              static_cast<double>(next_tick) * period_s_, now_s - start_s_, period_s_, missed));
        }
      }
      next_tick = last_due + 1;
      cpu_time_s_.store(ThreadCpuSeconds());
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    thread_error_ = std::current_exception();
  }
  cpu_time_s_.store(ThreadCpuSeconds());
}

}  // namespace greenrl::energy
