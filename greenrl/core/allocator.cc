#include "greenrl/core/allocator.h"

#include <malloc.h>

namespace greenrl {

bool KeepFreedMemory() {
  constexpr int kKeep = 256 << 20;    // bytes
  constexpr int kMmapMax = 32 << 20;  // glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
  bool ok = mallopt(M_TRIM_THRESHOLD, kKeep) == 1;
  ok = mallopt(M_TOP_PAD, kKeep) == 1 && ok;
  ok = mallopt(M_MMAP_THRESHOLD, kMmapMax) == 1 && ok;
  return ok;
}

}  // namespace greenrl
