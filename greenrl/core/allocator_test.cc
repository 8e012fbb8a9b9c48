// KeepFreedMemory: glibc accepts the settings, and afterwards a 1 MiB block (above glibc's
// default 128 KiB mmap threshold) comes from the heap, not from its own mapping.
#include "greenrl/core/allocator.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace greenrl {
namespace {

TEST(AllocatorTest, LargeBlocksComeFromTheHeapAfterKeepFreedMemory) {
  ASSERT_TRUE(KeepFreedMemory());
  ASSERT_TRUE(KeepFreedMemory());  // idempotent
  const size_t mapped_before = mallinfo2().hblks;
  void* block = std::malloc(1 << 20);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, 1 << 20);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);  // no new mmap-ed chunk
  std::free(block);
}

}  // namespace
}  // namespace greenrl
