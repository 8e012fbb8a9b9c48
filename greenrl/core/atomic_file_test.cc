// WriteFileAtomic: the old content or the new one, never a part; a symlink is written through.
// AppendWhole: appended text is whole or not there.
#include "greenrl/core/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace greenrl {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/greenrl_atomic_file_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFileTest, ReplacesTheContentAndLeavesNoTempFile) {
  const std::string dir = FreshDir("replace");
  WriteFileAtomic(dir + "/a.json", "first");
  WriteFileAtomic(dir + "/a.json", "second, longer");
  EXPECT_EQ(ReadFile(dir + "/a.json"), "second, longer");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

// A failure half-way (GREENRL_FAIL_WRITES_AFTER, a full disk's ENOSPC) keeps the old content.
TEST(AtomicFileTest, AFailedWriteKeepsTheOldContent) {
  const std::string dir = FreshDir("fail");
  WriteFileAtomic(dir + "/a.json", "old");
  ::setenv("GREENRL_FAIL_WRITES_AFTER", "0", 1);
  EXPECT_THROW(WriteFileAtomic(dir + "/a.json", "new content"), std::runtime_error);
  ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
  EXPECT_EQ(ReadFile(dir + "/a.json"), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

// WriteFileAtomicWith writes the pieces in order; a piece that fails (the injected full disk
// fails the second) or an exception from the producer keeps the old content and leaves no temp
// file, and the failed write's error is the one thrown.
TEST(AtomicFileTest, WriteWithPiecesAndItsFailures) {
  const std::string dir = FreshDir("pieces");
  const std::string path = dir + "/a.pt";
  WriteFileAtomicWith(path, [](const AtomicFileSink& sink) {
    EXPECT_TRUE(sink("ab", 2));
    EXPECT_TRUE(sink("", 0));
    EXPECT_TRUE(sink("cde", 3));
  });
  EXPECT_EQ(ReadFile(path), "abcde");
  ::setenv("GREENRL_FAIL_WRITES_AFTER", "0", 1);
  int pieces_taken = 0;
  try {
    WriteFileAtomicWith(path, [&](const AtomicFileSink& sink) {
      for (const char* piece : {"x", "y", "z"}) {
        if (!sink(piece, 1)) throw std::runtime_error("the producer's own error");
        ++pieces_taken;
      }
    });
    ADD_FAILURE() << "the injected failure did not fail the write";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write '" + path + ".tmp.", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos) << e.what();
  }
  ::unsetenv("GREENRL_FAIL_WRITES_AFTER");
  EXPECT_EQ(pieces_taken, 1);
  EXPECT_THROW(WriteFileAtomicWith(path,
                                   [](const AtomicFileSink& sink) {
                                     sink("partial", 7);
                                     throw std::logic_error("producer failed");
                                   }),
               std::logic_error);
  EXPECT_EQ(ReadFile(path), "abcde");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

// A symlink (`greenrl report --out ~/www/report.html` where that is a link) stays a link, and
// the file it points to, through a chain of links, gets the new content.
TEST(AtomicFileTest, ASymlinkIsWrittenThroughAndStaysALink) {
  const std::string dir = FreshDir("symlink");
  fs::create_directories(dir + "/www");
  WriteFileAtomic(dir + "/www/report.html", "old report");
  fs::create_symlink("www/report.html", dir + "/link1");
  fs::create_symlink(dir + "/link1", dir + "/link2");
  WriteFileAtomic(dir + "/link2", "new report");
  EXPECT_TRUE(fs::is_symlink(dir + "/link2"));
  EXPECT_TRUE(fs::is_symlink(dir + "/link1"));
  EXPECT_EQ(ReadFile(dir + "/www/report.html"), "new report");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "/www"), fs::directory_iterator()), 1);
}

// AppendWhole: text is appended whole; a failed write is cut back to the length before the call.
TEST(AtomicFileTest, AppendWholeCutsAFailedWriteBack) {
  const std::string dir = FreshDir("append");
  const std::string path = dir + "/log.csv";
  WriteFileAtomic(path, "a,b\n");
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  AppendWhole(fd, path, "1,2\n");
  ::setenv("GREENRL_FAIL_APPENDS_AFTER", "0", 1);
  EXPECT_THROW(AppendWhole(fd, path, "3,4444444\n"), std::runtime_error);
  ::unsetenv("GREENRL_FAIL_APPENDS_AFTER");
  EXPECT_EQ(ReadFile(path), "a,b\n1,2\n");
  AppendWhole(fd, path, "5,6\n");
  ::close(fd);
  EXPECT_EQ(ReadFile(path), "a,b\n1,2\n5,6\n");
}

}  // namespace
}  // namespace greenrl
