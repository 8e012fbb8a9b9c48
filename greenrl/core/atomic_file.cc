#include "greenrl/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace greenrl {

namespace {
std::runtime_error IoError(const std::string& what, const std::string& path, int err) {
  return std::runtime_error("cannot " + what + " '" + path + "': " + std::strerror(err));
}

std::string DirName(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}
}  // namespace

namespace {
// GREENRL_FAIL_WRITES_AFTER (see the header): whether this call is one to fail.
// Calls are counted while the variable is set; a call without it resets the count.
bool InjectedFailure(const char* variable, std::atomic<long long>& calls) {
  const char* after = std::getenv(variable);
  if (after == nullptr || *after == '\0') {
    calls = 0;
    return false;
  }
  return ++calls > std::atoll(after);
}

bool InjectedWriteFailure() {
  static std::atomic<long long> calls{0};
  return InjectedFailure("GREENRL_FAIL_WRITES_AFTER", calls);
}

// The file a write to `path` replaces: `path`, or the file a symlink there points to (followed
// through every link), so the link stays a link, as editors keep it. A dangling link resolves to
// itself (weakly_canonical stops at the last existing part) and is replaced.
std::string WriteTarget(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) return path;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : resolved.string();
}
}  // namespace

void WriteFileAtomic(const std::string& path, const std::string& bytes) {
  WriteFileAtomicWith(path, [&](const AtomicFileSink& sink) {
    if (bytes.empty()) return;
    const size_t half = bytes.size() / 2;
    if (sink(bytes.data(), half)) sink(bytes.data() + half, bytes.size() - half);
  });
}

void WriteFileAtomicWith(const std::string& path,
                         const std::function<void(const AtomicFileSink&)>& produce) {
  const std::string target = WriteTarget(path);
  const std::string tmp = target + ".tmp." + std::to_string(::getpid());
  const bool inject_failure = InjectedWriteFailure();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("create", path, errno);  // the file asked for: its folder, its rights
  int write_error = 0;
  int pieces = 0;
  const AtomicFileSink sink = [&](const void* data, size_t n) {
    if (write_error != 0) return false;
    if (inject_failure && ++pieces == 2) {
      write_error = ENOSPC;
      return false;
    }
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        write_error = errno;
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  };
  try {
    produce(sink);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    if (write_error != 0) throw IoError("write", tmp, write_error);
    throw;
  }
  if (write_error != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError("write", tmp, write_error);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError("fsync", tmp, err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw IoError("close", tmp, err);
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw IoError("rename to", path, err);
  }
  SyncDirectory(DirName(target));
}

void SyncDirectory(const std::string& dir) {
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void AppendWhole(int fd, const std::string& path, const std::string& text) {
  static std::atomic<long long> calls{0};
  const bool inject_failure = InjectedFailure("GREENRL_FAIL_APPENDS_AFTER", calls);
  const off_t before = ::lseek(fd, 0, SEEK_END);
  if (before < 0) throw IoError("write", path, errno);
  size_t written = 0;
  int err = 0;
  while (written < text.size()) {
    const size_t limit = inject_failure ? text.size() / 2 : text.size();
    if (written >= limit) {
      err = ENOSPC;
      break;
    }
    const ssize_t n = ::write(fd, text.data() + written, limit - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (err == 0) return;
  if (::ftruncate(fd, before) != 0 || ::lseek(fd, before, SEEK_SET) < 0) {
    const int cut_err = errno;
    throw std::runtime_error(
        "cannot write '" + path + "': " + std::strerror(err) +
        " (and cutting it back to its last whole row failed: " + std::strerror(cut_err) + ")");
  }
  throw IoError("write", path, err);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("read", path, errno);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace greenrl
