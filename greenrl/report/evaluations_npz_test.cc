#include "greenrl/report/evaluations_npz.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/install_paths.h"

namespace greenrl::report {
namespace {

std::string Path(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/greenrl_evaluations_" + name + ".npz";
  std::remove(path.c_str());
  return path;
}

std::string Le64(const std::vector<double>& values) {
  std::string bytes(values.size() * 8, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The bytes numpy 1.24.2 writes for np.array([[10.0, 12.5], [200.0, 187.25]]) (np.save, read back
// from np.savez's results.npy with Python's zipfile): magic, version 1.0, header length 0x76 =
// 118, the 59-character header dict padded with 58 spaces and a newline so that the data starts
// at byte 128, then the four float64 values.
TEST(EvaluationsNpzTest, NpyBytesAreNumpys) {
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
  ASSERT_EQ(dict.size(), 59u);
  const std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict +
                               std::string(58, ' ') + "\n" + Le64({10.0, 12.5, 200.0, 187.25});
  const std::string bytes = NpyBytes("<f8", {2, 2}, Le64({10.0, 12.5, 200.0, 187.25}));
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(bytes.size(), 128u + 32u);
  // A 1-d shape is written as Python's one-tuple, "(3,)".
  const std::string one_d = NpyBytes("<i8", {3}, std::string(24, '\0'));
  EXPECT_NE(one_d.find("'shape': (3,), }"), std::string::npos) << one_d;
  EXPECT_EQ(one_d.size(), 128u + 24u);
  EXPECT_THROW(NpyBytes("<f8", {2, 2}, std::string(24, '\0')), std::invalid_argument);
}

// np.savez's archive as numpy 1.24.2 wrote it (zip64 extra fields, stored members) for
// timesteps [1000, 2000], results [[10.0, 12.5], [200.0, 187.25]], ep_lengths [[10, 13],
// [200, 188]] reads back as those values.
TEST(EvaluationsNpzTest, ReadsNumpysArchive) {
  const EvaluationsLog log =
      ReadEvaluationsNpz(SourceTreeDir() + "/greenrl/report/testing/numpy_1_24_evaluations.npz");
  EXPECT_EQ(log.timesteps, (std::vector<int64_t>{1000, 2000}));
  ASSERT_EQ(log.results.size(), 2u);
  EXPECT_EQ(log.results[0], (std::vector<double>{10.0, 12.5}));
  EXPECT_EQ(log.results[1], (std::vector<double>{200.0, 187.25}));
  EXPECT_EQ(log.ep_lengths[0], (std::vector<int64_t>{10, 13}));
  EXPECT_EQ(log.ep_lengths[1], (std::vector<int64_t>{200, 188}));
  EXPECT_EQ(log.episodes(), 2u);
}

// The written archive holds np.savez's three members, stored, each with numpy's NPY bytes, and
// reads back exactly.
TEST(EvaluationsNpzTest, WritesNpSavezsArchive) {
  EvaluationsLog log;
  log.Append(25000, {500.0, 487.5, -0.1}, {500, 488, 7});
  log.Append(50000, {1.0 / 3.0, 2.0, 3.0}, {1, 2, 3});
  const std::string path = Path("write");
  WriteEvaluationsNpz(path, log);
  const std::string file = ReadFile(path);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(file.data(), file.size(), 0, &error);
  ASSERT_NE(source, nullptr);
  zip_t* archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  ASSERT_NE(archive, nullptr) << zip_error_strerror(&error);
  ASSERT_EQ(zip_get_num_entries(archive, 0), 3);
  const std::vector<std::string> names = {"timesteps.npy", "results.npy", "ep_lengths.npy"};
  const std::vector<int64_t> ts = {25000, 50000};
  const std::vector<int64_t> lengths = {500, 488, 7, 1, 2, 3};
  const std::vector<std::string> members = {
      NpyBytes("<i8", {2}, std::string(reinterpret_cast<const char*>(ts.data()), 16)),
      NpyBytes("<f8", {2, 3}, Le64({500.0, 487.5, -0.1, 1.0 / 3.0, 2.0, 3.0})),
      NpyBytes("<i8", {2, 3}, std::string(reinterpret_cast<const char*>(lengths.data()), 48))};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(zip_get_name(archive, i, 0), names[i]);
    zip_stat_t stat;
    ASSERT_EQ(zip_stat_index(archive, i, 0, &stat), 0);
    EXPECT_EQ(stat.comp_method, ZIP_CM_STORE) << names[i];
    std::string bytes(stat.size, '\0');
    zip_file_t* member = zip_fopen_index(archive, i, 0);
    ASSERT_NE(member, nullptr);
    EXPECT_EQ(zip_fread(member, bytes.data(), stat.size), static_cast<int64_t>(stat.size));
    zip_fclose(member);
    EXPECT_EQ(bytes, members[i]) << names[i];
  }
  zip_close(archive);
  const EvaluationsLog back = ReadEvaluationsNpz(path);
  EXPECT_EQ(back.timesteps, log.timesteps);
  EXPECT_EQ(back.results, log.results);
  EXPECT_EQ(back.ep_lengths, log.ep_lengths);
}

// Rows keep one width; a resume keeps the evaluations up to its checkpoint's step.
TEST(EvaluationsNpzTest, AppendAndKeepUpTo) {
  EvaluationsLog log;
  EXPECT_THROW(log.Append(1, {}, {}), std::invalid_argument);
  log.Append(100, {1.0, 2.0}, {3, 4});
  EXPECT_THROW(log.Append(200, {1.0}, {3}), std::invalid_argument);
  EXPECT_THROW(log.Append(200, {1.0, 2.0}, {3}), std::invalid_argument);
  log.Append(200, {5.0, 6.0}, {7, 8});
  log.Append(300, {9.0, 10.0}, {11, 12});
  log.KeepUpTo(250);
  EXPECT_EQ(log.timesteps, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(log.results.back(), (std::vector<double>{5.0, 6.0}));
  EXPECT_EQ(log.ep_lengths.size(), 2u);
  log.KeepUpTo(0);
  EXPECT_EQ(log.episodes(), 0u);
  log.Append(300, {1.0}, {1});  // an empty log takes any width
  EXPECT_EQ(log.episodes(), 1u);
}

// Files that are not evaluation logs give errors naming the path and what is wrong.
TEST(EvaluationsNpzTest, BadFilesAreNamed) {
  const std::string path = Path("bad");
  WriteFileAtomic(path, "not a zip");
  try {
    ReadEvaluationsNpz(path);
    FAIL() << "a text file read as an archive";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not a readable zip archive"), std::string::npos)
        << e.what();
  }
  EvaluationsLog log;
  log.Append(10, {1.0}, {1});
  std::string bytes = EvaluationsNpzBytes(log);
  // Rename the results member ("results.npy" -> "resultz.npy") in both zip headers.
  for (size_t at = bytes.find("results.npy"); at != std::string::npos;
       at = bytes.find("results.npy", at + 1)) {
    bytes[at + 6] = 'z';
  }
  WriteFileAtomic(path, bytes);
  try {
    ReadEvaluationsNpz(path);
    FAIL() << "an archive without results.npy read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no member results.npy"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace greenrl::report
