#include "greenrl/algo/checkpoint.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "greenrl/core/atomic_file.h"
#include "greenrl/core/errors.h"

namespace greenrl::algo {

namespace {
std::string Join(const std::vector<int64_t>& values) {
  std::string s;
  for (int64_t v : values) s += (s.empty() ? "" : ",") + std::to_string(v);
  return "[" + s + "]";
}
}  // namespace

CheckpointWriter::CheckpointWriter(const std::string& algo, const std::string& env_id,
                                   int64_t format_version) {
  WriteInt("format_version", format_version);
  WriteString("algo", algo);
  WriteString("env_id", env_id);
}

void CheckpointWriter::WriteFloats(const std::string& key, const float* data, int64_t n) {
  archive_.write(key, torch::from_blob(const_cast<float*>(data), {n}, torch::kFloat32).clone());
}

void CheckpointWriter::WriteInts(const std::string& key, const std::vector<int>& values) {
  archive_.write(key, torch::tensor(std::vector<int64_t>(values.begin(), values.end())));
}

void CheckpointWriter::WriteInt(const std::string& key, int64_t value) {
  archive_.write(key, torch::tensor(value));
}

void CheckpointWriter::WriteDouble(const std::string& key, double value) {
  archive_.write(key, torch::tensor(value, torch::kFloat64));
}

void CheckpointWriter::WriteString(const std::string& key, const std::string& value) {
  archive_.write(key, c10::IValue(value));
}

void CheckpointWriter::WriteBytes(const std::string& key, const void* data, int64_t n) {
  archive_.write(key, torch::from_blob(const_cast<void*>(data), {n}, torch::kUInt8).clone());
}

void CheckpointWriter::BorrowFloats(const std::string& key, const float* data, int64_t n) {
  archive_.write(key, torch::from_blob(const_cast<float*>(data), {n}, torch::kFloat32));
}

void CheckpointWriter::BorrowBytes(const std::string& key, const void* data, int64_t n) {
  archive_.write(key, torch::from_blob(const_cast<void*>(data), {n}, torch::kUInt8));
}

void CheckpointWriter::WriteRng(const std::string& key, const Rng& rng) {
  const Rng::State state = rng.GetState();
  std::vector<int64_t> words(state.size());
  std::memcpy(words.data(), state.data(), sizeof(uint64_t) * state.size());
  archive_.write(key, torch::tensor(words));
}

void CheckpointWriter::Save(const std::string& path) const {
  // Streamed into the temp file: a checkpoint with a large replay buffer is not held in memory
  // again as one string (and a copy of it). LibTorch's writer cannot stop midway (a short count
  // makes its destructor throw, which terminates): after a failed piece the sink takes the rest
  // without writing it, and WriteFileAtomicWith throws the failure once save_to returns.
  WriteFileAtomicWith(path, [&](const AtomicFileSink& sink) {
    archive_.save_to([&](const void* data, size_t n) -> size_t {
      sink(data, n);
      return n;
    });
  });
}

namespace {
// The first entry of the zip archive at `path` that cannot be read or fails its CRC-32 check,
// with libzip's reason; "" when every entry reads (or the file is no zip archive at all).
std::string DamagedEntry(const std::string& path) {
  int error = 0;
  std::unique_ptr<zip_t, void (*)(zip_t*)> archive(zip_open(path.c_str(), ZIP_RDONLY, &error),
                                                   zip_discard);
  if (!archive) return "";  // not a zip archive: LibTorch's reader says what it is
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  std::vector<char> chunk(1 << 16);
  for (zip_int64_t i = 0; i < entries; ++i) {
    const char* name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(i), 0);
    const std::string entry = name != nullptr ? name : "#" + std::to_string(i);
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0), zip_fclose);
    if (!file)
      return fmt::format("entry {} cannot be read: {}", entry, zip_strerror(archive.get()));
    zip_int64_t n = 0;
    while ((n = zip_fread(file.get(), chunk.data(), chunk.size())) > 0) {
    }
    // libzip compares the CRC-32 once an entry is read to its end (ZIP_ER_CRC).
    if (n < 0) return fmt::format("entry {}: {}", entry, zip_file_strerror(file.get()));
  }
  return "";
}
}  // namespace

CheckpointReader::CheckpointReader(const std::string& path, const std::string& algo,
                                   const std::string& env_id, int64_t format_version)
    : path_(path) {
  std::string upper = algo;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  accepted_ = "a " + upper + " checkpoint written by greenrl train";
  try {
    archive_.load_from(path);
  } catch (const std::exception& e) {
    std::string what = e.what();
    Fail(what.substr(0, what.find('\n')));
  }
  // LibTorch's reader does not check the entries' CRC-32 (its miniz is built with
  // MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS): a flipped bit would load as a wrong weight.
  if (const std::string damaged = DamagedEntry(path); !damaged.empty()) {
    Fail("the file is damaged: " + damaged);
  }
  const int64_t version = Int("format_version");
  if (version != format_version) {
    throw ConfigError("checkpoint", path_,
                      accepted_ + " of format version " + std::to_string(format_version) +
                          " (this file has version " + std::to_string(version) + ")");
  }
  ExpectString("algo", "algo", algo);
  ExpectString("env", "env_id", env_id);
}

void CheckpointReader::Fail(const std::string& why) const {
  throw ConfigError("checkpoint", path_, accepted_ + " (" + why + ")");
}

torch::Tensor CheckpointReader::ReadTensor(const std::string& key) {
  torch::Tensor t;
  if (!archive_.try_read(key, t)) Fail("no '" + key + "' entry");
  return t.contiguous();
}

int64_t CheckpointReader::Int(const std::string& key) {
  const torch::Tensor t = ReadTensor(key);
  if (t.numel() != 1 || !torch::isIntegralType(t.scalar_type(), /*includeBool=*/false)) {
    Fail("'" + key + "' is not an integer");
  }
  return t.item<int64_t>();
}

double CheckpointReader::Double(const std::string& key) {
  const torch::Tensor t = ReadTensor(key);
  if (t.numel() != 1) Fail("'" + key + "' is not a number");
  return t.item<double>();
}

std::string CheckpointReader::String(const std::string& key) {
  c10::IValue v;
  if (!archive_.try_read(key, v) || !v.isString()) Fail("no '" + key + "' entry");
  return v.toStringRef();
}

void CheckpointReader::ReadFloats(const std::string& key, float* out, int64_t n) {
  const torch::Tensor t = ReadTensor(key);
  if (t.numel() != n || t.scalar_type() != torch::kFloat32) {
    Fail("expected " + std::to_string(n) + " float32 '" + key + "' values, found " +
         std::to_string(t.numel()) + " " + std::string(c10::toString(t.scalar_type())));
  }
  std::copy(t.data_ptr<float>(), t.data_ptr<float>() + n, out);
}

std::string CheckpointReader::Bytes(const std::string& key) {
  const torch::Tensor t = ReadTensor(key);
  if (t.scalar_type() != torch::kUInt8 || t.dim() != 1) Fail("'" + key + "' is not a byte string");
  return std::string(reinterpret_cast<const char*>(t.data_ptr<uint8_t>()),
                     static_cast<size_t>(t.numel()));
}

Rng::State CheckpointReader::RngState(const std::string& key) {
  const torch::Tensor t = ReadTensor(key);
  Rng::State state{};
  if (t.scalar_type() != torch::kInt64 || t.numel() != static_cast<int64_t>(state.size())) {
    Fail("'" + key + "' is not a generator state (int64 [6])");
  }
  std::memcpy(state.data(), t.data_ptr<int64_t>(), sizeof(uint64_t) * state.size());
  return state;
}

bool CheckpointReader::Has(const std::string& key) {
  torch::Tensor t;
  if (archive_.try_read(key, t)) return true;
  c10::IValue v;
  return archive_.try_read(key, v);
}

void CheckpointReader::ExpectString(const std::string& what, const std::string& key,
                                    const std::string& want) {
  const std::string got = String(key);
  if (got != want) {
    throw ConfigError(
        "checkpoint", path_,
        accepted_ + " for " + what + " " + want + " (it was written for " + got + ")");
  }
}

void CheckpointReader::ExpectInts(const std::string& what, const std::string& key,
                                  const std::vector<int>& want) {
  const torch::Tensor t = ReadTensor(key).to(torch::kInt64);
  const std::vector<int64_t> got(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  const std::vector<int64_t> want64(want.begin(), want.end());
  if (got != want64) {
    throw ConfigError("checkpoint", path_,
                      accepted_ + " for " + what + " " + Join(want64) + " (it was written for " +
                          Join(got) + ")");
  }
}

}  // namespace greenrl::algo
