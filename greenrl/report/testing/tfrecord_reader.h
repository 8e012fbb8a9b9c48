// tfrecord_reader.h (tests only): an independent TFRecord reader that checks every CRC, to read
// back what TfEventsWriter wrote. Written apart from the writer on purpose: CRC-32C computed bit
// by bit from the polynomial (RFC 3720, B.4), framing parsed from TensorFlow's record_writer.cc
// description, so a shared mistake cannot pass both.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace greenrl::report::testing {

// Bitwise reference CRC-32C: one bit at a time, reflected polynomial 0x82F63B78.
inline uint32_t ReferenceCrc32c(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) {
      const uint32_t lsb = crc & 1u;
      crc >>= 1;
      if (lsb != 0) crc ^= 0x82F63B78u;
    }
  }
  return ~crc;
}

// TensorFlow's mask: rotate right by 15 bits, add 0xa282ead8.
inline uint32_t ReferenceMask(uint32_t crc) {
  const uint32_t rotated = (crc >> 15) | (crc << 17);
  return rotated + 0xa282ead8u;
}

inline uint64_t ReadLittleEndian(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// Every record's data, in order. Throws std::runtime_error on a short record or a CRC mismatch
// (naming the record index).
inline std::vector<std::string> ReadTfRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  size_t at = 0;
  while (at < bytes.size()) {
    const std::string where = "record " + std::to_string(records.size()) + " of " + path;
    if (bytes.size() - at < 12) throw std::runtime_error(where + ": truncated header");
    const uint64_t length = ReadLittleEndian(bytes, at, 8);
    const uint32_t length_crc = static_cast<uint32_t>(ReadLittleEndian(bytes, at + 8, 4));
    if (length_crc != ReferenceMask(ReferenceCrc32c(bytes.substr(at, 8)))) {
      throw std::runtime_error(where + ": length CRC mismatch");
    }
    if (bytes.size() - at - 12 < length + 4) throw std::runtime_error(where + ": truncated data");
    const std::string data = bytes.substr(at + 12, length);
    const uint32_t data_crc = static_cast<uint32_t>(ReadLittleEndian(bytes, at + 12 + length, 4));
    if (data_crc != ReferenceMask(ReferenceCrc32c(data))) {
      throw std::runtime_error(where + ": data CRC mismatch");
    }
    records.push_back(data);
    at += 12 + length + 4;
  }
  return records;
}

}  // namespace greenrl::report::testing
