// aligned_vector.h: std::vector whose storage starts on a cache-line boundary.
//
// VecEnv's SoA buffers are split between threads by row range (ThreadPool::ParallelFor). glibc's
// malloc returns 16-byte-aligned blocks, so with std::vector the cache line at a chunk boundary
// is shared by two threads that both write it every step (false sharing: the line moves between
// the cores on every write). With every buffer starting on a 64-byte line, a boundary at a row
// whose byte offset is a multiple of 64 (row 512 of 1024, for every element size from 1 to 16
// bytes) falls between lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace greenrl {

// Bytes per cache line on x86-64 and most AArch64 cores (std::hardware_destructive_interference_size
// where the standard library defines it; GCC 12 warns that its value may vary between builds).
inline constexpr std::size_t kCacheLineBytes = 64;

// A minimal allocator (C++17 Allocator requirements) that aligns every block to kCacheLineBytes
// with the aligned forms of operator new/delete. Errors: std::bad_alloc, as operator new.
template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;

  CacheAlignedAllocator() noexcept = default;
  template <typename U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kCacheLineBytes)));
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete(p, std::align_val_t(kCacheLineBytes));
  }

  template <typename U>
  bool operator==(const CacheAlignedAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const CacheAlignedAllocator<U>&) const noexcept {
    return false;
  }
};

// A std::vector whose data() is a multiple of kCacheLineBytes (when non-empty).
template <typename T>
using CacheAlignedVector = std::vector<T, CacheAlignedAllocator<T>>;

}  // namespace greenrl
