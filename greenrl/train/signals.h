// signals.h: graceful stop of `greenrl train` on SIGINT and SIGTERM (README "Checkpoints, resume
// and signals"). The first signal only sets a flag: the trainer finishes the current iteration,
// writes a resume checkpoint and the reports, and the CLI exits 128 + signal (130 for SIGINT,
// 143 for SIGTERM, the shell's convention). A second signal exits at once with 128 + its number
// (_exit, no cleanup): the last good checkpoint is intact because every checkpoint is written to
// a temp file and renamed into place (core/atomic_file.h). The same signal arriving again within
// kDuplicateWindowNs of the first is one request delivered twice and is ignored: GNU timeout
// signals the child and then its process group, and a job scheduler may do the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace greenrl::train {

// A repeat of the first stop signal sooner than this (ns) after it is a duplicate delivery.
constexpr int64_t kDuplicateWindowNs = 100'000'000;  // 100 ms

// Installs the handlers for SIGINT and SIGTERM while alive and restores the previous ones on
// destruction; a signal ignored (SIG_IGN) when the scope starts stays ignored (a background job
// of a non-interactive shell has SIGINT ignored). One at a time per process (GREENRL_CHECK).
class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  // Whether `sig` (SIGINT or SIGTERM) was ignored when the scope started, and stays so.
  bool ignored(int sig) const;
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;
};

// One line per stop signal that `scope` found ignored at its start (a script's `cmd &` starts a
// command so), for the command to print on stderr: "greenrl: SIGINT is ignored: this process
// started with it ignored (...) and leaves it so; SIGTERM stops the <what>". Empty when none is.
std::vector<std::string> IgnoredStopSignalNotes(const StopSignalScope& scope,
                                                const std::string& what);

// The first stop signal received (SIGINT or SIGTERM), or 0. Async-signal-safe reads.
int StopSignalReceived();

// Clears the flag (tests; a new StopSignalScope also clears it).
void ClearStopSignal();

}  // namespace greenrl::train
