#include "greenrl/nn/small_gemm.h"

#include <immintrin.h>

#include <algorithm>

#include "greenrl/core/errors.h"
#include "greenrl/nn/internal/tanh_rational.h"

namespace greenrl::nn {

namespace {

void Validate(const SmallGemmArgs& g) {
  GREENRL_CHECK(g.m >= 0 && g.n >= 0 && g.k >= 0, "SmallGemm: negative m, n or k");
  if (g.m == 0 || g.n == 0) return;
  GREENRL_CHECK(g.c != nullptr && g.ldc >= g.n, "SmallGemm: c is null or ldc < n");
  if (g.k > 0) {
    GREENRL_CHECK(g.a != nullptr && g.b != nullptr, "SmallGemm: a or b is null");
    GREENRL_CHECK(g.ldb >= g.n, "SmallGemm: ldb < n");
  }
  GREENRL_CHECK(g.init != GemmInit::kBias || g.bias != nullptr, "SmallGemm: kBias without bias");
  if (g.post == GemmPost::kTanhGrad || g.post == GemmPost::kReluGrad) {
    GREENRL_CHECK(g.h != nullptr && g.ldh >= g.n, "SmallGemm: gradient post without h or ldh < n");
  }
}

// ---------------------------------------------------------------------------------------------
// AVX2 + FMA: C in blocks of kMr rows x 16 columns (12 accumulator registers, 2 for B's row,
// 1 for A's broadcast), the inner dimension in chunks of kKc so that a chunk of B (kKc x 16
// floats, 8 KiB) and the A entries it meets stay in L1. Edge blocks: fewer rows (templates for
// 1..kMr), one vector of columns instead of two, and a masked last vector for n % 8.
typedef float Float8 __attribute__((vector_size(32)));
constexpr int kMr = 6;
constexpr int kKc = 128;

__attribute__((target("avx2,fma"), always_inline)) inline __m256 LoadV(const float* p,
                                                                        bool masked,
                                                                        __m256i mask) {
  return masked ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

__attribute__((target("avx2,fma"), always_inline)) inline void StoreV(float* p, __m256 v,
                                                                       bool masked, __m256i mask) {
  if (masked) {
    _mm256_maskstore_ps(p, mask, v);
  } else {
    _mm256_storeu_ps(p, v);
  }
}

// The epilogue on one vector of C; hp points at the matching entries of h. Each lane does the
// same float arithmetic as SmallGemmPortable's scalar epilogue.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 PostV(GemmPost post, __m256 z,
                                                                        const float* hp,
                                                                        bool masked,
                                                                        __m256i mask) {
  const Float8 zero = {0, 0, 0, 0, 0, 0, 0, 0};
  Float8 v = z;
  switch (post) {
    case GemmPost::kNone:
      break;
    case GemmPost::kTanh:  // this kernel runs only where internal::TanhUsesFma()
      v = reinterpret_cast<Float8>(internal::TanhRationalFma8(reinterpret_cast<__m256>(v)));
      break;
    case GemmPost::kRelu:
      v = v > zero ? v : zero;
      break;
    case GemmPost::kTanhGrad: {
      const Float8 h = LoadV(hp, masked, mask);
      v = v * (1.0f - h * h);
      break;
    }
    case GemmPost::kReluGrad: {
      const Float8 h = LoadV(hp, masked, mask);
      v = h > zero ? v : zero;
      break;
    }
  }
  return v;
}

// One block: rows [i0, i0 + MR), columns [j0, j0 + 8 NV) (the last vector masked to `rem`
// lanes when kTail), inner indices [p0, p0 + kc). `first`: start from init (else from C);
// `last`: apply the post before storing.
template <int MR, int NV, bool kTail>
__attribute__((target("avx2,fma"))) void BlockAvx2(const SmallGemmArgs& g, int i0, int j0, int p0,
                                                   int kc, bool first, bool last, int rem) {
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const bool masked = kTail && v == NV - 1;
      if (!first || g.init == GemmInit::kAccumulate) {
        acc[r][v] = LoadV(g.c + (i0 + r) * g.ldc + j0 + 8 * v, masked, mask);
      } else if (g.init == GemmInit::kBias) {
        acc[r][v] = LoadV(g.bias + j0 + 8 * v, masked, mask);
      } else {
        acc[r][v] = _mm256_setzero_ps();
      }
    }
  }
  const float* a = g.a + i0 * g.a_row_stride + p0 * g.a_col_stride;
  const float* b = g.b + p0 * g.ldb + j0;
  const int64_t ars = g.a_row_stride, acs = g.a_col_stride, ldb = g.ldb;
  for (int p = 0; p < kc; ++p) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = LoadV(b + 8 * v, kTail && v == NV - 1, mask);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * ars);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
    }
    a += acs;
    b += ldb;
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const bool masked = kTail && v == NV - 1;
      __m256 z = acc[r][v];
      if (last && g.post != GemmPost::kNone) {
        const float* hp = g.h == nullptr ? nullptr : g.h + (i0 + r) * g.ldh + j0 + 8 * v;
        z = PostV(g.post, z, hp, masked, mask);
      }
      StoreV(g.c + (i0 + r) * g.ldc + j0 + 8 * v, z, masked, mask);
    }
  }
}

using BlockFn = void (*)(const SmallGemmArgs&, int, int, int, int, bool, bool, int);

// [rows - 1][shape]: shape 0 = 16 columns, 1 = 9..15, 2 = 8, 3 = 1..7.
template <int MR>
struct BlockRow {
  static constexpr BlockFn kFns[4] = {BlockAvx2<MR, 2, false>, BlockAvx2<MR, 2, true>,
                                      BlockAvx2<MR, 1, false>, BlockAvx2<MR, 1, true>};
};
const BlockFn* const kBlocks[kMr] = {BlockRow<1>::kFns, BlockRow<2>::kFns, BlockRow<3>::kFns,
                                     BlockRow<4>::kFns, BlockRow<5>::kFns, BlockRow<6>::kFns};

// ---------------------------------------------------------------------------------------------
// AVX-512F: the same kernel with C in blocks of kMr512 rows x 32 columns (24 accumulator
// registers of 16 lanes, 2 for B's row, 1 for A's broadcast), the same kKc chunks, and masked
// loads and stores for the last vector. Every C element is still init, then one FMA per inner
// index p in increasing order, then the post (TanhRationalFma16 is TanhRationalFma8 per lane),
// so the bits equal BlockAvx2's: CPUs with and without AVX-512 compute the same products.
constexpr int kMr512 = 12;

__attribute__((target("avx512f"), always_inline)) inline __m512 LoadV16(const float* p,
                                                                        __mmask16 mask) {
  return _mm512_maskz_loadu_ps(mask, p);
}

// PostV on 16 lanes: the same float operations per lane.
__attribute__((target("avx512f"), always_inline)) inline __m512 PostV16(GemmPost post, __m512 z,
                                                                        const float* hp,
                                                                        __mmask16 mask) {
  const __m512 zero = _mm512_setzero_ps();
  switch (post) {
    case GemmPost::kNone:
      break;
    case GemmPost::kTanh:
      return internal::TanhRationalFma16(z);
    case GemmPost::kRelu:  // z > 0 ? z : 0 (NaN and -0 give +0)
      return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(z, zero, _CMP_GT_OQ), z);
    case GemmPost::kTanhGrad: {
      const __m512 h = LoadV16(hp, mask);
      return _mm512_mul_ps(z, _mm512_sub_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(h, h)));
    }
    case GemmPost::kReluGrad: {
      const __m512 h = LoadV16(hp, mask);
      return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(h, zero, _CMP_GT_OQ), z);
    }
  }
  return z;
}

// One block as BlockAvx2: rows [i0, i0 + MR), columns [j0, j0 + 16 NV) (the last vector masked
// to `rem` lanes when kTail).
template <int MR, int NV, bool kTail>
__attribute__((target("avx512f"))) void BlockAvx512(const SmallGemmArgs& g, int i0, int j0, int p0,
                                                    int kc, bool first, bool last, int rem) {
  const __mmask16 full = 0xFFFF;
  const __mmask16 tail = kTail ? static_cast<__mmask16>((1u << rem) - 1u) : full;
  __m512 acc[MR][NV];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mask = v == NV - 1 ? tail : full;
      if (!first || g.init == GemmInit::kAccumulate) {
        acc[r][v] = LoadV16(g.c + (i0 + r) * g.ldc + j0 + 16 * v, mask);
      } else if (g.init == GemmInit::kBias) {
        acc[r][v] = LoadV16(g.bias + j0 + 16 * v, mask);
      } else {
        acc[r][v] = _mm512_setzero_ps();
      }
    }
  }
  const float* a = g.a + i0 * g.a_row_stride + p0 * g.a_col_stride;
  const float* b = g.b + p0 * g.ldb + j0;
  const int64_t ars = g.a_row_stride, acs = g.a_col_stride, ldb = g.ldb;
  for (int p = 0; p < kc; ++p) {
    __m512 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = LoadV16(b + 16 * v, v == NV - 1 ? tail : full);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * ars]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
    a += acs;
    b += ldb;
  }
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mask = v == NV - 1 ? tail : full;
      __m512 z = acc[r][v];
      if (last && g.post != GemmPost::kNone) {
        const float* hp = g.h == nullptr ? nullptr : g.h + (i0 + r) * g.ldh + j0 + 16 * v;
        z = PostV16(g.post, z, hp, mask);
      }
      _mm512_mask_storeu_ps(g.c + (i0 + r) * g.ldc + j0 + 16 * v, mask, z);
    }
  }
}

// [rows - 1][shape]: shape 0 = 32 columns, 1 = 17..31, 2 = 16, 3 = 1..15.
template <int MR>
struct BlockRow512 {
  static constexpr BlockFn kFns[4] = {BlockAvx512<MR, 2, false>, BlockAvx512<MR, 2, true>,
                                      BlockAvx512<MR, 1, false>, BlockAvx512<MR, 1, true>};
};
const BlockFn* const kBlocks512[kMr512] = {
    BlockRow512<1>::kFns, BlockRow512<2>::kFns,  BlockRow512<3>::kFns,  BlockRow512<4>::kFns,
    BlockRow512<5>::kFns, BlockRow512<6>::kFns,  BlockRow512<7>::kFns,  BlockRow512<8>::kFns,
    BlockRow512<9>::kFns, BlockRow512<10>::kFns, BlockRow512<11>::kFns, BlockRow512<12>::kFns};

// 8 x 8 block transposes (unpack, shuffle, 128-bit permute), scalar edges.
__attribute__((target("avx2"))) void TransposeAvx2(const float* src, int rows, int cols,
                                                   int64_t ld_src, float* dst, int64_t ld_dst) {
  const int rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (int r = 0; r < rows8; r += 8) {
    for (int c = 0; c < cols8; c += 8) {
      const float* s = src + r * ld_src + c;
      const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ld_src),
                   r2 = _mm256_loadu_ps(s + 2 * ld_src), r3 = _mm256_loadu_ps(s + 3 * ld_src),
                   r4 = _mm256_loadu_ps(s + 4 * ld_src), r5 = _mm256_loadu_ps(s + 5 * ld_src),
                   r6 = _mm256_loadu_ps(s + 6 * ld_src), r7 = _mm256_loadu_ps(s + 7 * ld_src);
      const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                   t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                   t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                   t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
                   u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
                   u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
                   u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* d = dst + c * ld_dst + r;
      _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(d + ld_dst, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(d + 2 * ld_dst, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(d + 3 * ld_dst, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(d + 4 * ld_dst, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(d + 5 * ld_dst, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(d + 6 * ld_dst, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(d + 7 * ld_dst, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (int rr = r; rr < r + 8; ++rr) {
      for (int c = cols8; c < cols; ++c) dst[c * ld_dst + rr] = src[rr * ld_src + c];
    }
  }
  for (int r = rows8; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
  }
}

}  // namespace

void TransposeMatrix(const float* src, int rows, int cols, int64_t ld_src, float* dst,
                     int64_t ld_dst) {
  GREENRL_CHECK(rows >= 0 && cols >= 0 && ld_src >= cols && ld_dst >= rows,
                "TransposeMatrix: negative size or a stride below its row length");
  if (SmallGemmHasAvx2Fma()) {
    TransposeAvx2(src, rows, cols, ld_src, dst, ld_dst);
    return;
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
  }
}

bool SmallGemmHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

namespace {
// Runs C in blocks of up to `mr` rows x `cols` columns over kKc chunks of the inner dimension:
// blocks[rows - 1][shape], shape 0 = cols columns, 1 = more than cols / 2, 2 = cols / 2,
// 3 = fewer (the last vector masked to width % (cols / 2) lanes in shapes 1 and 3).
void RunBlocked(const SmallGemmArgs& g, const BlockFn* const* blocks, int mr, int cols) {
  if (g.m == 0 || g.n == 0) return;
  const int half = cols / 2;
  for (int p0 = 0;; p0 += kKc) {
    const int kc = std::min(kKc, g.k - p0);
    const bool first = p0 == 0, last = p0 + kc >= g.k;
    for (int i0 = 0; i0 < g.m; i0 += mr) {
      const BlockFn* fns = blocks[std::min(mr, g.m - i0) - 1];
      for (int j0 = 0; j0 < g.n; j0 += cols) {
        const int width = std::min(cols, g.n - j0);
        const int shape = width == cols ? 0 : width > half ? 1 : width == half ? 2 : 3;
        fns[shape](g, i0, j0, p0, kc, first, last, width % half);
      }
    }
    if (last) break;
  }
}
}  // namespace

void SmallGemmAvx2Fma(const SmallGemmArgs& g) {
  Validate(g);
  GREENRL_CHECK(SmallGemmHasAvx2Fma(), "SmallGemmAvx2Fma called on a CPU without AVX2 and FMA");
  RunBlocked(g, kBlocks, kMr, 16);
}

bool SmallGemmHasAvx512() {
  static const bool has = SmallGemmHasAvx2Fma() && __builtin_cpu_supports("avx512f");
  return has;
}

void SmallGemmAvx512(const SmallGemmArgs& g) {
  Validate(g);
  GREENRL_CHECK(SmallGemmHasAvx512(), "SmallGemmAvx512 called on a CPU without AVX-512F");
  RunBlocked(g, kBlocks512, kMr512, 32);
}

// Row by row: C's row starts from init, gains a(i, p) * B's row p for p in order (a loop over
// j that compilers vectorise), then gets the post. The same order of additions over p as the
// AVX2 kernel; without FMA each multiply-add rounds twice.
void SmallGemmPortable(const SmallGemmArgs& g) {
  Validate(g);
  for (int i = 0; i < g.m; ++i) {
    float* cr = g.c + i * g.ldc;
    if (g.init == GemmInit::kZero) {
      std::fill(cr, cr + g.n, 0.0f);
    } else if (g.init == GemmInit::kBias) {
      std::copy(g.bias, g.bias + g.n, cr);
    }
    for (int p = 0; p < g.k; ++p) {
      const float aip = g.a[i * g.a_row_stride + p * g.a_col_stride];
      const float* br = g.b + p * g.ldb;
      for (int j = 0; j < g.n; ++j) cr[j] += aip * br[j];
    }
    const float* hr = g.h == nullptr ? nullptr : g.h + i * g.ldh;
    switch (g.post) {
      case GemmPost::kNone:
        break;
      case GemmPost::kTanh:
        for (int j = 0; j < g.n; ++j) cr[j] = internal::TanhScalar(cr[j]);
        break;
      case GemmPost::kRelu:
        for (int j = 0; j < g.n; ++j) cr[j] = cr[j] > 0.0f ? cr[j] : 0.0f;
        break;
      case GemmPost::kTanhGrad:
        for (int j = 0; j < g.n; ++j) cr[j] = cr[j] * (1.0f - hr[j] * hr[j]);
        break;
      case GemmPost::kReluGrad:
        for (int j = 0; j < g.n; ++j) cr[j] = hr[j] > 0.0f ? cr[j] : 0.0f;
        break;
    }
  }
}

void SmallGemm(const SmallGemmArgs& args) {
  if (SmallGemmHasAvx512()) {
    SmallGemmAvx512(args);
  } else if (SmallGemmHasAvx2Fma()) {
    SmallGemmAvx2Fma(args);
  } else {
    SmallGemmPortable(args);
  }
}

}  // namespace greenrl::nn
