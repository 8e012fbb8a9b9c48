#include "greenrl/core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace greenrl {

bool FileLockHeld(const std::string& path, std::string* content) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (held && content != nullptr) {
    char buffer[32] = {};
    const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
    *content = n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
    while (!content->empty() && (content->back() == '\n' || content->back() == ' ')) {
      content->pop_back();
    }
  }
  ::close(fd);  // releases the shared lock the probe may have taken
  return held;
}

}  // namespace greenrl
