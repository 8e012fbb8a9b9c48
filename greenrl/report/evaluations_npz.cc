#include "greenrl/report/evaluations_npz.h"

#include <fmt/format.h>
#include <zip.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "greenrl/core/atomic_file.h"

namespace greenrl::report {

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // numpy/lib/format.py MAGIC_PREFIX (6 bytes)
constexpr size_t kArrayAlign = 64;      // numpy/lib/format.py ARRAY_ALIGN

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + ")";
}

template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  static_assert(sizeof(T) == 8, "NPY members here are 8-byte int64 or float64");
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <typename T>
std::string RowBytes(const std::vector<std::vector<T>>& rows) {
  std::string bytes;
  for (const auto& row : rows) bytes += RawBytes(row);
  return bytes;
}

// zip_t and zip_source_t owners.
struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct SourceFreer {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;
using SourcePtr = std::unique_ptr<zip_source_t, SourceFreer>;

std::string ZipErrorText(zip_error_t* error) {
  std::string text = zip_error_strerror(error);
  zip_error_fini(error);
  return text;
}

// One parsed NPY member: its descr, shape and data bytes.
struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
};

// Parses the header dict's value of `key` ("'descr': '<f8'" -> "<f8", "'shape': (2, 5)" ->
// "2, 5", "'fortran_order': False" -> "False").
std::string HeaderValue(const std::string& header, const std::string& key) {
  const std::string quoted = "'" + key + "':";
  const size_t at = header.find(quoted);
  if (at == std::string::npos) return "";
  size_t begin = header.find_first_not_of(' ', at + quoted.size());
  if (begin == std::string::npos) return "";
  char close = ',';
  if (header[begin] == '\'') close = '\'';
  if (header[begin] == '(') close = ')';
  if (close != ',') ++begin;
  const size_t end = header.find(close, begin);
  if (end == std::string::npos) return "";
  return header.substr(begin, end - begin);
}

NpyArray ParseNpy(const std::string& bytes, const std::string& where) {
  auto fail = [&](const std::string& what) {
    return std::runtime_error(fmt::format("{}: {}", where, what));
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) {
    throw fail("not an NPY array (no \\x93NUMPY magic)");
  }
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | static_cast<size_t>(uint8_t(bytes[9])) << 8;
    header_at = 10;
  } else if (major == 2 && bytes.size() >= 12) {
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(uint8_t(bytes[8 + i])) << 8 * i;
    header_at = 12;
  } else {
    throw fail(fmt::format("NPY format version {} (accepted: 1.0, 2.0)", major));
  }
  if (bytes.size() < header_at + header_len) throw fail("NPY header runs past the member's end");
  const std::string header = bytes.substr(header_at, header_len);
  NpyArray array;
  array.descr = HeaderValue(header, "descr");
  if (HeaderValue(header, "fortran_order") != "False") {
    throw fail("fortran_order is not False (accepted: C-order arrays)");
  }
  const std::string shape = HeaderValue(header, "shape");
  size_t pos = 0;
  while (pos < shape.size()) {
    const size_t comma = shape.find(',', pos);
    const std::string item = shape.substr(pos, comma == std::string::npos ? comma : comma - pos);
    if (item.find_first_not_of(' ') != std::string::npos) {
      try {
        array.shape.push_back(std::stoll(item));
      } catch (const std::exception&) {
        throw fail(fmt::format("NPY shape ({}) is not a tuple of integers", shape));
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  array.data = bytes.substr(header_at + header_len);
  return array;
}

// Reads member `name` of an open archive whole.
std::string ReadMember(zip_t* archive, const std::string& name, const std::string& path) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat(archive, name.c_str(), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE)) {
    throw std::runtime_error(
        fmt::format("{}: no member {} (an evaluations.npz holds "
                    "timesteps.npy, results.npy and ep_lengths.npy)",
                    path, name));
  }
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(zip_fopen(archive, name.c_str(), 0),
                                                         zip_fclose);
  if (stat.size > (uint64_t{1} << 30)) {  // a damaged header, not an evaluation log
    throw std::runtime_error(fmt::format("{}: member {} claims {} bytes", path, name, stat.size));
  }
  std::string bytes(stat.size, '\0');
  if (!file || zip_fread(file.get(), bytes.data(), stat.size) != int64_t(stat.size)) {
    throw std::runtime_error(
        fmt::format("{}: cannot read member {}: {}", path, name, zip_strerror(archive)));
  }
  return bytes;
}

template <typename T>
std::vector<T> Values(const NpyArray& array, const std::string& descr, size_t count,
                      const std::string& where) {
  if (array.descr != descr || array.data.size() != count * sizeof(T)) {
    throw std::runtime_error(
        fmt::format("{}: dtype {} with {} bytes of data (expected {}, {} "
                    "values)",
                    where, array.descr, array.data.size(), descr, count));
  }
  std::vector<T> values(count);
  std::memcpy(values.data(), array.data.data(), array.data.size());
  return values;
}

}  // namespace

void EvaluationsLog::Append(int64_t timestep, const std::vector<double>& returns,
                            const std::vector<int64_t>& lengths) {
  if (returns.empty() || lengths.size() != returns.size()) {
    throw std::invalid_argument(fmt::format(
        "EvaluationsLog::Append: {} returns and {} lengths (one of each per episode, >= 1)",
        returns.size(), lengths.size()));
  }
  if (!results.empty() && returns.size() != episodes()) {
    throw std::invalid_argument(
        fmt::format("EvaluationsLog::Append: {} episodes where the log's "
                    "rows have {}",
                    returns.size(), episodes()));
  }
  timesteps.push_back(timestep);
  results.push_back(returns);
  ep_lengths.push_back(lengths);
}

void EvaluationsLog::KeepUpTo(int64_t step) {
  size_t keep = 0;
  while (keep < timesteps.size() && timesteps[keep] <= step) ++keep;
  timesteps.resize(keep);
  results.resize(keep);
  ep_lengths.resize(keep);
}

std::string NpyBytes(const std::string& descr, const std::vector<int64_t>& shape,
                     const std::string& data) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (static_cast<int64_t>(data.size()) != count * 8) {
    throw std::invalid_argument(fmt::format("NpyBytes: {} bytes for shape {} of 8-byte values",
                                            data.size(), ShapeText(shape)));
  }
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                   descr, ShapeText(shape));
  // numpy's _wrap_header: pad with spaces so that magic (6) + version (2) + length (2) + header
  // + the closing newline is a multiple of ARRAY_ALIGN.
  const size_t unpadded = 10 + header.size() + 1;
  header += std::string((kArrayAlign - unpadded % kArrayAlign) % kArrayAlign, ' ') + "\n";
  std::string bytes(kMagic, 6);
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

std::string EvaluationsNpzBytes(const EvaluationsLog& log) {
  const auto n = static_cast<int64_t>(log.timesteps.size());
  const auto width = static_cast<int64_t>(log.episodes());
  // The member bytes outlive zip_close, which reads them.
  const std::vector<std::pair<std::string, std::string>> members = {
      {"timesteps.npy", NpyBytes("<i8", {n}, RawBytes(log.timesteps))},
      {"results.npy", NpyBytes("<f8", {n, width}, RowBytes(log.results))},
      {"ep_lengths.npy", NpyBytes("<i8", {n, width}, RowBytes(log.ep_lengths))},
  };
  zip_error_t error;
  zip_error_init(&error);
  SourcePtr buffer(zip_source_buffer_create(nullptr, 0, 0, &error));
  if (!buffer) throw std::runtime_error("evaluations.npz: libzip: " + ZipErrorText(&error));
  ZipPtr archive(zip_open_from_source(buffer.get(), ZIP_TRUNCATE, &error));
  if (!archive) throw std::runtime_error("evaluations.npz: libzip: " + ZipErrorText(&error));
  zip_source_keep(buffer.get());  // the archive's close must leave the buffer to read back
  for (const auto& [name, bytes] : members) {
    zip_source_t* source = zip_source_buffer(archive.get(), bytes.data(), bytes.size(), 0);
    const zip_int64_t index =
        source ? zip_file_add(archive.get(), name.c_str(), source, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (source) zip_source_free(source);
      throw std::runtime_error(
          fmt::format("evaluations.npz: libzip: adding {}: {}", name, zip_strerror(archive.get())));
    }
    zip_set_file_compression(archive.get(), index, ZIP_CM_STORE, 0);  // np.savez stores
  }
  if (zip_close(archive.get()) != 0) {
    throw std::runtime_error(std::string("evaluations.npz: libzip: ") +
                             zip_strerror(archive.get()));
  }
  archive.release();  // closed
  zip_stat_t stat;
  zip_stat_init(&stat);
  std::string bytes;
  if (zip_source_stat(buffer.get(), &stat) == 0 && zip_source_open(buffer.get()) == 0) {
    bytes.resize(stat.size);
    const zip_int64_t got = zip_source_read(buffer.get(), bytes.data(), stat.size);
    zip_source_close(buffer.get());
    if (got == static_cast<zip_int64_t>(stat.size)) return bytes;
  }
  throw std::runtime_error("evaluations.npz: libzip: cannot read the archive back from memory");
}

void WriteEvaluationsNpz(const std::string& path, const EvaluationsLog& log) {
  WriteFileAtomic(path, EvaluationsNpzBytes(log));
}

EvaluationsLog ReadEvaluationsNpz(const std::string& path) {
  const std::string file = ReadFile(path);
  zip_error_t error;
  zip_error_init(&error);
  SourcePtr buffer(zip_source_buffer_create(file.data(), file.size(), 0, &error));
  if (!buffer) throw std::runtime_error(path + ": libzip: " + ZipErrorText(&error));
  ZipPtr archive(zip_open_from_source(buffer.get(), ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    throw std::runtime_error(
        fmt::format("{}: not a readable zip archive: {}", path, ZipErrorText(&error)));
  }
  zip_source_keep(buffer.get());  // the archive does not own it past zip_discard
  const NpyArray timesteps =
      ParseNpy(ReadMember(archive.get(), "timesteps.npy", path), path + " timesteps.npy");
  const NpyArray results =
      ParseNpy(ReadMember(archive.get(), "results.npy", path), path + " results.npy");
  const NpyArray lengths =
      ParseNpy(ReadMember(archive.get(), "ep_lengths.npy", path), path + " ep_lengths.npy");
  if (timesteps.shape.size() != 1 || results.shape.size() != 2 || lengths.shape != results.shape ||
      results.shape[0] != timesteps.shape[0]) {
    throw std::runtime_error(fmt::format(
        "{}: shapes timesteps {}, results {}, ep_lengths {} (expected (n,), (n, k), (n, k))", path,
        ShapeText(timesteps.shape), ShapeText(results.shape), ShapeText(lengths.shape)));
  }
  if (results.shape[0] < 0 || results.shape[1] < 0 ||
      (results.shape[0] > 0 && results.shape[1] == 0)) {
    throw std::runtime_error(fmt::format("{}: results of shape {} (evaluations of >= 1 episode)",
                                         path, ShapeText(results.shape)));
  }
  const auto n = static_cast<size_t>(results.shape[0]);
  const auto k = static_cast<size_t>(results.shape[1]);
  EvaluationsLog log;
  log.timesteps = Values<int64_t>(timesteps, "<i8", n, path + " timesteps.npy");
  const auto returns = Values<double>(results, "<f8", n * k, path + " results.npy");
  const auto steps = Values<int64_t>(lengths, "<i8", n * k, path + " ep_lengths.npy");
  for (size_t i = 0; i < n; ++i) {
    log.results.emplace_back(returns.begin() + i * k, returns.begin() + (i + 1) * k);
    log.ep_lengths.emplace_back(steps.begin() + i * k, steps.begin() + (i + 1) * k);
  }
  return log;
}

}  // namespace greenrl::report
