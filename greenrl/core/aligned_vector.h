// aligned_vector.h: std::vector whose storage starts on a cache-line boundary.
//
// VecEnv's SoA buffers are split between threads by row range (ThreadPool::ParallelFor). glibc's
// malloc returns 16-byte-aligned blocks, so with std::vector the cache line at a chunk boundary
// is shared by two threads that both write it every step (false sharing: the line moves between
// the cores on every write). With every buffer starting on a 64-byte line, a boundary at a row
// whose byte offset is a multiple of 64 (row 512 of 1024, for every element size from 1 to 16
// bytes) falls between lines.
//
// Each block also has kGuardBytes of unused memory before and after it. Hardware prefetchers
// fetch the lines next to the ones a core touches (AMD's "up/down" L2 prefetcher, Intel's
// adjacent-line prefetcher), so a thread that steps the last rows of one buffer pulls in the
// first lines of whatever buffer malloc placed right after it, which another thread owns (the
// worker's rows end at the end of every buffer, the caller's begin at the start), and the owner
// then has to fetch them back on its next write. Measured on the AMD EPYC VM (2026-12-04,
// `greenrl_bench_env_scaling`, CartPole-v1, 1,024 envs, builds run in turns): the two-thread
// speed-up's median over eight alternations of `--rounds 40` went from 1.19x to 1.32x, and two
// independent one-thread VecEnvs from 8.2-8.3 to 7.8-7.9 us per step (docs/speed-history.md,
// "2026-12-04, 15:25 UTC"); 1 KiB and 4 KiB guards did no better than 256 bytes.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <vector>

namespace greenrl {

// Bytes per cache line on x86-64 and most AArch64 cores (std::hardware_destructive_interference_size
// where the standard library defines it; GCC 12 warns that its value may vary between builds).
inline constexpr std::size_t kCacheLineBytes = 64;

// Unused bytes on each side of a CacheAlignedAllocator block (four lines: past what the
// adjacent-line prefetchers fetch). A multiple of kCacheLineBytes, so blocks stay aligned.
inline constexpr std::size_t kGuardBytes = 4 * kCacheLineBytes;

// A minimal allocator (C++17 Allocator requirements) that aligns every block to kCacheLineBytes
// with the aligned forms of operator new/delete and surrounds it with kGuardBytes on each side
// (never read or written). Errors: std::bad_alloc, as operator new.
template <typename T>
struct CacheAlignedAllocator {
  using value_type = T;

  CacheAlignedAllocator() noexcept = default;
  template <typename U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    if (n > (std::numeric_limits<std::size_t>::max() - 2 * kGuardBytes) / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    void* block =
        ::operator new(n * sizeof(T) + 2 * kGuardBytes, std::align_val_t(kCacheLineBytes));
    return reinterpret_cast<T*>(static_cast<unsigned char*>(block) + kGuardBytes);
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete(reinterpret_cast<unsigned char*>(p) - kGuardBytes,
                      std::align_val_t(kCacheLineBytes));
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
