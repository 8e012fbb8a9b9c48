// FileLockHeld: a lock another open file description holds is seen, with the file's text; a free
// lock, a missing file and the probe itself leave nothing held.
#include "greenrl/core/file_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>

#include "greenrl/core/atomic_file.h"

namespace greenrl {
namespace {

TEST(FileLockTest, HeldLockIsSeenWithItsHolderAndProbesTakeNothing) {
  const std::string path = ::testing::TempDir() + "/greenrl_file_lock_test.lock";
  WriteFileAtomic(path, "4242\n");
  EXPECT_FALSE(FileLockHeld(path));
  EXPECT_FALSE(FileLockHeld(path + ".missing"));
  const int holder = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);  // the probes above released theirs
  std::string content = "unchanged";
  EXPECT_TRUE(FileLockHeld(path, &content));
  EXPECT_EQ(content, "4242");
  ::close(holder);  // the lock goes with its descriptor
  content = "unchanged";
  EXPECT_FALSE(FileLockHeld(path, &content));
  EXPECT_EQ(content, "unchanged");
}

}  // namespace
}  // namespace greenrl
