#include "greenrl/report/monitor_csv.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "greenrl/core/atomic_file.h"

namespace greenrl::report {
namespace {

std::string Path(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/greenrl_monitor_" + name + ".csv";
  std::remove(path.c_str());
  return path;
}

// SB3's format: '#' + JSON with t_start and env_id, "r,l,t", then one row per episode with r and
// t rounded to 6 decimals (Python's round(x, 6)), l an integer.
TEST(MonitorCsvTest, WritesSb3sHeaderAndRows) {
  const std::string path = Path("create");
  {
    auto monitor = MonitorCsv::Create(path, "CartPole-v1", 1700000000.5);
    monitor->WriteEpisode(22.0, 22, 1700000001.25);
    monitor->WriteEpisode(-123.4567891, 200, 1700000002.0000004);
    monitor->Flush();
    EXPECT_EQ(ReadFile(path),
              "#{\"t_start\": 1700000000.5, \"env_id\": \"CartPole-v1\"}\nr,l,t\n22,22,0.75\n"
              "-123.456789,200,1.5\n");
  }
}

// A Flush whose write fails (GREENRL_FAIL_APPENDS_AFTER: ENOSPC half-way) throws and leaves the
// file at its last whole row.
TEST(MonitorCsvTest, AFailedFlushThrowsAndLeavesTheLastWholeRow) {
  const std::string path = Path("full_disk");
  auto monitor = MonitorCsv::Create(path, "CartPole-v1", 100.0);
  monitor->WriteEpisode(10.0, 10, 101.0);
  monitor->Flush();
  const std::string whole = ReadFile(path);
  ::setenv("GREENRL_FAIL_APPENDS_AFTER", "0", 1);
  monitor->WriteEpisode(20.0, 20, 102.0);
  monitor->WriteEpisode(30.0, 30, 103.0);
  EXPECT_THROW(monitor->Flush(), std::runtime_error);
  ::unsetenv("GREENRL_FAIL_APPENDS_AFTER");
  EXPECT_EQ(ReadFile(path), whole);
  EXPECT_EQ(whole, "#{\"t_start\": 100, \"env_id\": \"CartPole-v1\"}\nr,l,t\n10,10,1\n");
}

// Resume keeps the header (its t_start) and the first `rows` episodes, then appends; a torn or
// damaged row is dropped and said; a file without SB3's header is moved aside and started anew.
TEST(MonitorCsvTest, ResumeKeepsTheCountedEpisodes) {
  const std::string path = Path("resume");
  {
    auto monitor = MonitorCsv::Create(path, "Pendulum-v1", 100.0);
    monitor->WriteEpisode(-1.0, 200, 101.0);
    monitor->WriteEpisode(-2.0, 200, 102.0);
    monitor->WriteEpisode(-3.0, 200, 103.0);
  }
  {
    auto monitor = MonitorCsv::Resume(path, "Pendulum-v1", 2, 999.0);
    EXPECT_EQ(monitor->t_start_unix_s(), 100.0);
    monitor->WriteEpisode(-4.0, 200, 110.0);
  }
  EXPECT_EQ(ReadFile(path),
            "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n-1,200,1\n-2,200,2\n"
            "-4,200,10\n");
  WriteFileAtomic(path, "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n-1,200,1\n-2,2");
  std::vector<std::string> notes;
  MonitorCsv::Resume(path, "Pendulum-v1", 5, 999.0, &notes).reset();
  EXPECT_EQ(ReadFile(path), "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n-1,200,1\n");
  EXPECT_EQ(notes, std::vector<std::string>{path + ": dropped 1 damaged row (line 4), not r,l,t "
                                                   "numbers"});
  // A damaged row in the middle counts as one of the checkpoint's episodes: the rows after it
  // up to `rows` stay, the later ones go.
  WriteFileAtomic(path,
                  "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n-1,200,1\n-2,2x0,2\n"
                  "-3,200,3\n-4,,4\n-5,200,5\n-6,200,6\n");
  notes.clear();
  MonitorCsv::Resume(path, "Pendulum-v1", 5, 999.0, &notes).reset();
  EXPECT_EQ(ReadFile(path),
            "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n-1,200,1\n"
            "-3,200,3\n-5,200,5\n");
  EXPECT_EQ(notes, std::vector<std::string>{path + ": dropped 2 damaged rows (lines 4, 6), not "
                                                   "r,l,t numbers"});
  // Without SB3's header its rows cannot be kept (no t_start): the file is kept beside, whole.
  std::filesystem::remove(path + ".damaged");
  std::filesystem::remove(path + ".damaged.1");
  WriteFileAtomic(path, "not a monitor file\n-1,200,1\n");
  notes.clear();
  MonitorCsv::Resume(path, "Pendulum-v1", 5, 999.0, &notes).reset();
  EXPECT_EQ(ReadFile(path), "#{\"t_start\": 999, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n");
  EXPECT_EQ(ReadFile(path + ".damaged"), "not a monitor file\n-1,200,1\n");
  EXPECT_EQ(notes, std::vector<std::string>{path +
                                            " has no SB3 Monitor header (#{\"t_start\": ...} then "
                                            "r,l,t): kept as " +
                                            path + ".damaged; a new one starts"});
  // A second one does not replace the first.
  WriteFileAtomic(path, "not a monitor file either\n");
  notes.clear();
  MonitorCsv::Resume(path, "Pendulum-v1", 5, 999.0, &notes).reset();
  EXPECT_EQ(ReadFile(path + ".damaged"), "not a monitor file\n-1,200,1\n");
  EXPECT_EQ(ReadFile(path + ".damaged.1"), "not a monitor file either\n");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("kept as " + path + ".damaged.1; a new one starts"), std::string::npos)
      << notes[0];
  // An empty file (a run stopped before its first write) is started anew without a word.
  WriteFileAtomic(path, "");
  notes.clear();
  MonitorCsv::Resume(path, "Pendulum-v1", 5, 999.0, &notes).reset();
  EXPECT_EQ(ReadFile(path), "#{\"t_start\": 999, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n");
  EXPECT_TRUE(notes.empty());
  // CRLF line ends (Python's csv module) and spaces around cells are read; rows are written back
  // without the CR.
  WriteFileAtomic(path,
                  "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\r\nr,l,t\r\n-1, 200 ,1\r\n"
                  "-2,200,2\r\n");
  MonitorCsv::Resume(path, "Pendulum-v1", 5, 999.0, &notes).reset();
  EXPECT_EQ(ReadFile(path),
            "#{\"t_start\": 100, \"env_id\": \"Pendulum-v1\"}\nr,l,t\n-1, 200 ,1\n"
            "-2,200,2\n");
  EXPECT_TRUE(notes.empty());
}

// rows(): the file's episode rows, pending ones included, from what a resume kept on; what a
// resume checkpoint records so that the next resume keeps exactly those.
TEST(MonitorCsvTest, RowsCountsTheFilesRowsNotTheEpisodes) {
  const std::string path = Path("rows");
  {
    auto monitor = MonitorCsv::Create(path, "CartPole-v1", 100.0);
    monitor->WriteEpisode(10.0, 10, 101.0);
    monitor->WriteEpisode(11.0, 11, 102.0);
    EXPECT_EQ(monitor->rows(), 2);
    monitor->Flush();
    EXPECT_EQ(monitor->rows(), 2);
    monitor->WriteEpisode(12.0, 12, 103.0);
    EXPECT_EQ(monitor->rows(), 3);
  }
  // 3 rows, the second damaged; a checkpoint that counted 3: 2 are kept, and rows() says 2.
  WriteFileAtomic(path,
                  "#{\"t_start\": 100, \"env_id\": \"CartPole-v1\"}\nr,l,t\n10,10,1\nx\n"
                  "12,12,3\n13,13,4\n");
  auto monitor = MonitorCsv::Resume(path, "CartPole-v1", 3, 999.0);
  EXPECT_EQ(monitor->rows(), 2);
  monitor->WriteEpisode(14.0, 14, 105.0);
  EXPECT_EQ(monitor->rows(), 3);
}

}  // namespace
}  // namespace greenrl::report
