// atomic_file.h: files that are either fully written or not there at all, so a run that fails
// (crash, full disk, signal) never leaves a half-written checkpoint or report behind.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace greenrl {

// Writes `bytes` to `path` atomically: a temp file beside it (path + ".tmp.<pid>"), fsync,
// rename over `path`, fsync of the directory. Either the old content or the new one survives.
// When `path` is a symlink to a file (through any chain of links), that file is replaced (temp
// file beside it) and the link stays; a dangling link is replaced by the file.
// Errors: std::runtime_error naming the path and strerror(errno) when any step fails (the temp
// file is removed and `path` is untouched).
// Fault injection for tests and drills: with the environment variable GREENRL_FAIL_WRITES_AFTER=N
// set, every WriteFileAtomic call after the first N made while it is set fails as a full disk
// does (ENOSPC once half the bytes are in the temp file; the temp file is removed, `path`
// untouched). A call while it is unset resets the count.
void WriteFileAtomic(const std::string& path, const std::string& bytes);

// What WriteFileAtomicWith hands its producer: appends n bytes at `data` to the temp file; false
// when the write failed (the producer should stop: WriteFileAtomicWith then throws the error).
using AtomicFileSink = std::function<bool(const void* data, size_t n)>;
// WriteFileAtomic for bytes made piece by piece: `produce` passes each piece to the sink, in
// order, so a large file (a checkpoint with its replay buffer) is never held in memory whole.
// Same temp file, fsync, rename and directory fsync; GREENRL_FAIL_WRITES_AFTER fails the call's
// second piece (WriteFileAtomic's bytes are two pieces, their halves).
// Errors: as WriteFileAtomic's, and when a piece failed to write, that error (whatever `produce`
// then threw); any other exception from `produce` passes through. The temp file is removed and
// `path` untouched in every case.
void WriteFileAtomicWith(const std::string& path,
                         const std::function<void(const AtomicFileSink&)>& produce);

// Fsyncs the directory `dir`, so that a file renamed or created in it stays after a crash (what
// WriteFileAtomic does after its rename). Best effort: no errors.
void SyncDirectory(const std::string& dir);

// Appends `text` at the end of the file open as `fd`, whole or not at all: when a write fails (a
// full disk), the file is cut back to the length it had before the call, so a CSV log never ends
// in part of a row. With the environment variable GREENRL_FAIL_APPENDS_AFTER=N set, every call
// after the first N made while it is set fails as a full disk does (ENOSPC once half the bytes
// are written; the file is cut back), for tests and drills; a call while it is unset resets the
// count.
// Errors: std::runtime_error naming `path` and strerror(errno) when a write fails (the file as it
// was, unless cutting it back failed too, which the message then says).
void AppendWhole(int fd, const std::string& path, const std::string& text);

// Reads a whole file. Errors: std::runtime_error naming the path when it cannot be read.
std::string ReadFile(const std::string& path);

}  // namespace greenrl
