#include "greenrl/train/signals.h"

#include <unistd.h>

#include <csignal>

#include "greenrl/core/errors.h"

namespace greenrl::train {

namespace {
volatile std::sig_atomic_t g_signal = 0;
bool g_installed = false;
struct sigaction g_old_int, g_old_term;

extern "C" void OnStopSignal(int sig) {
  if (g_signal != 0) _exit(128 + sig);  // second signal: leave now (async-signal-safe)
  g_signal = sig;
}
}  // namespace

StopSignalScope::StopSignalScope() {
  GREENRL_CHECK(!g_installed, "one StopSignalScope at a time");
  g_installed = true;
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // system calls in flight (writes, sleeps) carry on
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed = false;
}

int StopSignalReceived() { return g_signal; }

void ClearStopSignal() { g_signal = 0; }

}  // namespace greenrl::train
