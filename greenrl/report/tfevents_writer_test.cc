// TensorBoard event files: CRC-32C check values, the exact bytes of the file_version record, and
// rows read back with an independent reader (testing/tfrecord_reader.h) and parsed by protobuf.
#include "greenrl/report/tfevents_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "greenrl/report/testing/tfrecord_reader.h"
#include "greenrl/report/tfevents.pb.h"

namespace greenrl::report {
namespace {

namespace fs = std::filesystem;
using testing::ReadTfRecords;
using testing::ReferenceCrc32c;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/tfevents_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Crc32cTest, CheckValues) {
  // RFC 3720 B.4 / the CRC catalogue's CRC-32/ISCSI check value.
  EXPECT_EQ(ReferenceCrc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  // RFC 3720 B.4 test vectors: 32 bytes of zeros, of 0xff, and 0..31 ascending.
  const std::string zeros(32, '\0'), ones(32, '\xff');
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(Crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(ascending.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(ReferenceCrc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // Mask: rotate right 15, add 0xa282ead8 (worked by hand for 0x00000001 and 0xE3069283).
  EXPECT_EQ(MaskCrc32c(0x00000001u), 0x00020000u + 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0xE3069283u), ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0xE3069283u), testing::ReferenceMask(0xE3069283u));
}

TEST(TfEventsWriterTest, FileNameFollowsTensorFlow) {
  EXPECT_EQ(TfEventsFileName(1700000000.75, "node1"), "events.out.tfevents.1700000000.node1");
}

TEST(TfEventsWriterTest, FirstRecordIsFileVersionWithExactBytes) {
  const std::string dir = FreshDir("version");
  std::string path;
  {
    TfEventsWriter writer(dir, [] { return 1700000000.5; });
    path = writer.path();
  }
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(dir));
  EXPECT_EQ(fs::path(path).filename().string().rfind("events.out.tfevents.1700000000.", 0), 0u);
  const auto records = ReadTfRecords(path);
  ASSERT_EQ(records.size(), 1u);
  // Hand-encoded Event: field 1 (wall_time, fixed64: key 0x09) = 1700000000.5 as a little-endian
  // double; step 0 is proto3's default and is not written; field 3 (file_version, length-
  // delimited: key 0x1a), 13 bytes "brain.Event:2".
  std::string expected = "\x09";
  const double wall = 1700000000.5;
  char wall_bytes[8];
  std::memcpy(wall_bytes, &wall, 8);  // x86-64 and aarch64 are little-endian
  expected.append(wall_bytes, 8);
  expected += "\x1a\x0d";
  expected += "brain.Event:2";
  EXPECT_EQ(records[0], expected);
  // The file on disk: 8 + 4 + 24 + 4 bytes.
  EXPECT_EQ(fs::file_size(path), 40u);
}

TEST(TfEventsWriterTest, RowsReadBackAsScalarsWithStepAndTags) {
  const std::string dir = FreshDir("rows");
  double now = 1000.0;
  TfEventsWriter writer(dir, [&now] { return now; });
  now = 1001.25;
  writer.WriteRow({{"global_step", 2048},
                   {"time_s", 1.5},
                   {"charts/episodic_return", 22.5},
                   {"losses/value_loss", NAN},
                   {"energy/total_wh", 0.125}});
  now = 1002.0;
  writer.WriteRow({{"global_step", 4096}, {"charts/episodic_return", -3.25}});
  // Read while the writer is still open: every row is already flushed.
  const auto records = ReadTfRecords(writer.path());
  ASSERT_EQ(records.size(), 3u);

  tfevents::Event first;
  ASSERT_TRUE(first.ParseFromString(records[0]));
  EXPECT_EQ(first.file_version(), "brain.Event:2");
  EXPECT_DOUBLE_EQ(first.wall_time(), 1000.0);

  tfevents::Event e1;
  ASSERT_TRUE(e1.ParseFromString(records[1]));
  EXPECT_EQ(e1.step(), 2048);
  EXPECT_DOUBLE_EQ(e1.wall_time(), 1001.25);
  ASSERT_TRUE(e1.has_summary());
  ASSERT_EQ(e1.summary().value_size(), 3);  // global_step is the step, NaN left out
  EXPECT_EQ(e1.summary().value(0).tag(), "time_s");
  EXPECT_EQ(e1.summary().value(0).simple_value(), 1.5f);
  EXPECT_EQ(e1.summary().value(1).tag(), "charts/episodic_return");
  EXPECT_EQ(e1.summary().value(1).simple_value(), 22.5f);
  EXPECT_EQ(e1.summary().value(2).tag(), "energy/total_wh");
  EXPECT_EQ(e1.summary().value(2).simple_value(), 0.125f);

  tfevents::Event e2;
  ASSERT_TRUE(e2.ParseFromString(records[2]));
  EXPECT_EQ(e2.step(), 4096);
  ASSERT_EQ(e2.summary().value_size(), 1);
  EXPECT_EQ(e2.summary().value(0).simple_value(), -3.25f);
}

TEST(TfEventsWriterTest, ReaderRejectsACorruptedByte) {
  const std::string dir = FreshDir("corrupt");
  std::string path;
  {
    TfEventsWriter writer(dir, [] { return 5.0; });
    writer.WriteRow({{"global_step", 1}, {"charts/SPS", 100.0}});
    path = writer.path();
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[bytes.size() - 6] ^= 0x01;  // inside the last record's data
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  EXPECT_THROW(ReadTfRecords(path), std::runtime_error);
}

// A restart event: SessionLog START (status 1, TensorFlow's event.proto field 7) at its step, and
// a second writer in the same second gets its own file instead of truncating the first.
TEST(TfEventsWriterTest, RestartEventAndSameSecondWritersGetTheirOwnFiles) {
  const std::string dir = FreshDir("restart");
  TfEventsWriter first(dir, [] { return 1000.0; });
  first.WriteRow({{"global_step", 256}, {"charts/SPS", 10.0}});
  TfEventsWriter second(dir, [] { return 1000.0; });
  EXPECT_NE(second.path(), first.path());
  EXPECT_EQ(second.path(), first.path() + ".1");
  second.WriteRestart(257);
  ASSERT_EQ(ReadTfRecords(first.path()).size(), 2u);  // untouched
  const auto records = ReadTfRecords(second.path());
  ASSERT_EQ(records.size(), 2u);
  tfevents::Event restart;
  ASSERT_TRUE(restart.ParseFromString(records[1]));
  EXPECT_EQ(restart.step(), 257);
  ASSERT_TRUE(restart.has_session_log());
  EXPECT_EQ(restart.session_log().status(), tfevents::SessionLog::START);
  EXPECT_EQ(static_cast<int>(tfevents::SessionLog::START), 1);
  // Its bytes: field 1 wall_time (fixed64 1000.0), field 2 step (varint 257), field 7 session_log
  // (length 2: field 1 status, varint 1).
  const std::string expected("\x09\x00\x00\x00\x00\x00\x40\x8f\x40\x10\x81\x02\x3a\x02\x08\x01",
                             16);
  EXPECT_EQ(records[1], expected);
}

TEST(TfEventsWriterTest, UnwritableDirectoryNamesThePath) {
  try {
    TfEventsWriter writer("/nonexistent/greenrl-dir");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/greenrl-dir/events.out.tfevents."),
              std::string::npos);
  }
}

}  // namespace
}  // namespace greenrl::report
