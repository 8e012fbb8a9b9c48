// file_lock.h: probing a flock(2) held on a file by another open file description, without
// taking it for longer than the probe. train.lock (train/checkpointing.h RunDirLock) is held
// this way by a training process; `greenrl report` and dry runs ask whether it is. Torch-free.
#pragma once

#include <string>

namespace greenrl {

// Whether a flock is held on `path` now by another open file description (another process, or
// another open() of this one): a shared flock(LOCK_SH | LOCK_NB) that would block says so. The
// probe opens the file read-only, takes the shared lock when it is free and releases it at once
// (microseconds: a process taking the exclusive lock then retries, as RunDirLock does), and
// creates and writes nothing.
// Args: path: the lock file; content: when non-null and the lock is held, receives the file's
//       text up to 31 bytes without trailing newlines and spaces (RunDirLock writes the
//       holder's pid there), "" when it cannot be read.
// Returns: false when the file does not exist, cannot be opened, or nobody holds a lock on it.
// Errors: none.
bool FileLockHeld(const std::string& path, std::string* content = nullptr);

}  // namespace greenrl
