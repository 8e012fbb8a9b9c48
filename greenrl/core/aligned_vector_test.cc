// CacheAlignedVector: every buffer starts on a cache line, and any two buffers' elements are at
// least 2 * kGuardBytes apart (each block keeps kGuardBytes unused on each side).
#include "greenrl/core/aligned_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

namespace greenrl {
namespace {

TEST(CacheAlignedVectorTest, BuffersStartOnALineAndStayGuardBytesApart) {
  EXPECT_EQ(kGuardBytes, 256u);  // four 64-byte lines (aligned_vector.h says why)
  // The sizes of VecEnv's CartPole buffers at 1,024 envs and a few odd ones, allocated back to
  // back as VecEnv allocates them.
  std::vector<CacheAlignedVector<uint8_t>> bytes;
  std::vector<CacheAlignedVector<float>> floats;
  std::vector<CacheAlignedVector<double>> doubles;
  for (size_t n : {1, 7, 64, 1000, 1024, 4096}) {
    bytes.emplace_back(n, uint8_t{1});
    floats.emplace_back(n, 2.0f);
    doubles.emplace_back(n, 3.0);
  }
  struct Range {
    uintptr_t begin, end;
  };
  std::vector<Range> ranges;
  auto add = [&](const auto& v) {
    const auto begin = reinterpret_cast<uintptr_t>(v.data());
    EXPECT_EQ(begin % kCacheLineBytes, 0u);
    ranges.push_back({begin, begin + v.size() * sizeof(v[0])});
  };
  for (const auto& v : bytes) add(v);
  for (const auto& v : floats) add(v);
  for (const auto& v : doubles) add(v);
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_GE(ranges[i].begin - ranges[i - 1].end, uintptr_t{512})
        << "buffers " << i - 1 << ", " << i;
  }
  // The elements are intact (the guards lie outside them).
  for (const auto& v : doubles)
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x == 3.0; }));
}

TEST(CacheAlignedVectorTest, ATooLargeSizeThrowsBadArrayNewLength) {
  CacheAlignedAllocator<double> allocator;
  EXPECT_THROW(allocator.allocate(std::numeric_limits<size_t>::max() / sizeof(double)),
               std::bad_array_new_length);
}

}  // namespace
}  // namespace greenrl
