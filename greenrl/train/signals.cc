#include "greenrl/train/signals.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <utility>

#include "greenrl/core/errors.h"

namespace greenrl::train {

namespace {
// std::atomic (lock-free, so async-signal-safe), not volatile: the handler may run on any of the
// process's threads (env pool, update worker, meter sampler) while the trainer's thread reads
// the flag.
std::atomic<int> g_signal{0};
// CLOCK_MONOTONIC time of the first signal, ns (written in the handler before g_signal).
std::atomic<int64_t> g_first_ns{0};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
              "a signal handler may only use lock-free atomics");
bool g_installed = false;
struct sigaction g_old_int, g_old_term;

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX.1-2008)
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

extern "C" void OnStopSignal(int sig) {
  const int64_t now = MonotonicNs();
  if (g_signal.load() == 0) {
    g_first_ns.store(now);
    g_signal.store(sig);
    return;
  }
  // The same signal again within kDuplicateWindowNs is the same stop request delivered twice:
  // GNU timeout, for one, sends its signal to the child and then to the child's process group.
  if (sig == g_signal.load() && now - g_first_ns.load() < kDuplicateWindowNs) return;
  _exit(128 + sig);  // a second stop request: leave now (async-signal-safe)
}
}  // namespace

StopSignalScope::StopSignalScope() {
  GREENRL_CHECK(!g_installed, "one StopSignalScope at a time");
  g_installed = true;
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // system calls in flight (writes, sleeps) carry on
  // A signal ignored when the process started stays ignored, as POSIX shells and Python leave
  // it: a non-interactive shell starts a background job (`cmd &`) with SIGINT ignored, and
  // `trap '' TERM` asks for the same.
  for (auto [sig, old] : {std::pair{SIGINT, &g_old_int}, std::pair{SIGTERM, &g_old_term}}) {
    sigaction(sig, nullptr, old);
    if (old->sa_handler != SIG_IGN) sigaction(sig, &action, nullptr);
  }
}

bool StopSignalScope::ignored(int sig) const {
  const struct sigaction& old = sig == SIGINT ? g_old_int : g_old_term;
  return (sig == SIGINT || sig == SIGTERM) && old.sa_handler == SIG_IGN;
}

std::vector<std::string> IgnoredStopSignalNotes(const StopSignalScope& scope,
                                                const std::string& what) {
  std::vector<std::string> notes;
  // A non-interactive shell's `cmd &` ignores SIGINT (and SIGQUIT) only; SIGTERM is ignored by a
  // `trap '' TERM` before the command, or by whatever started it.
  const bool both = scope.ignored(SIGINT) && scope.ignored(SIGTERM);
  for (const auto& [sig, name] : {std::pair{SIGINT, "SIGINT"}, std::pair{SIGTERM, "SIGTERM"}}) {
    if (!scope.ignored(sig)) continue;
    notes.push_back(fmt::format(
        "greenrl: {} is ignored: this process started with it ignored ({}) and leaves it so; {}",
        name,
        sig == SIGINT ? "a script's `cmd &` starts it so; `set -m` does not"
                      : "a `trap '' TERM` before the command, or the program that started it, "
                        "ignored it",
        both ? fmt::format("neither SIGINT nor SIGTERM stops the {} with a checkpoint (SIGKILL "
                           "ends it, losing the steps since its last checkpoint)",
                           what)
             : fmt::format("{} stops the {}", sig == SIGINT ? "SIGTERM" : "SIGINT", what)));
  }
  return notes;
}

StopSignalScope::~StopSignalScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed = false;
}

int StopSignalReceived() { return g_signal.load(); }

void ClearStopSignal() { g_signal.store(0); }

}  // namespace greenrl::train
