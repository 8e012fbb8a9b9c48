#include "greenrl/core/clock.h"

#include <time.h>

#include <chrono>

namespace greenrl {

double SteadyClock::NowS() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const SteadyClock& SteadyClock::Instance() {
  static const SteadyClock* clock = new SteadyClock();
  return *clock;
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double UnixNowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace greenrl
