// Checks SmallGemm (both the AVX2+FMA kernel and the portable loop) against a float64 reference
// GEMM on odd shapes, edge sizes (1, 0, the 6-row and 16-column block edges, the 128 inner
// chunk) and dims that are not multiples of 8, in every init and post mode, with A read
// directly and transposed; plus hand-computed products.
#include "greenrl/nn/small_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "greenrl/core/rng.h"

namespace greenrl::nn {
namespace {

using GemmFn = void (*)(const SmallGemmArgs&);

struct Shape {
  int m, n, k;
};

// float64 reference of post(init + A B), with the tanh of libm.
double RefPost(GemmPost post, double z, double h) {
  switch (post) {
    case GemmPost::kNone:
      return z;
    case GemmPost::kTanh:
      return std::tanh(z);
    case GemmPost::kRelu:
      return z > 0 ? z : 0;
    case GemmPost::kTanhGrad:
      return z * (1.0 - h * h);
    case GemmPost::kReluGrad:
      return h > 0 ? z : 0;
  }
  return 0;
}

std::vector<GemmFn> Implementations() {
  std::vector<GemmFn> fns = {&SmallGemmPortable};
  if (SmallGemmHasAvx2Fma()) fns.push_back(&SmallGemmAvx2Fma);
  if (SmallGemmHasAvx512()) fns.push_back(&SmallGemmAvx512);
  return fns;
}

// The operands of one case from Rng(seed): A [m, k] (or A^T stored, a_transposed) ~ N(0, 1) x
// a_scale, B [k, n] ~ N(0, 1) x b_scale, C ~ N(0, 1) x c_scale, bias ~ N(0, 1), h ~ U(h_lo,
// h_lo + h_width); rows padded (ldb = n + 3, ldc = n + 5, ldh = n + 1) so strides are honoured;
// and the SmallGemmArgs over them, with c pointing at `c`.
struct Operands {
  int ldb, ldc, ldh;
  std::vector<float> a, b, c, bias, h;
  SmallGemmArgs g;
  Operands(Shape s, bool a_transposed, GemmInit init, GemmPost post, uint64_t seed, double a_scale,
           double b_scale, double c_scale, double h_lo, double h_width)
      : ldb(s.n + 3), ldc(s.n + 5), ldh(s.n + 1) {
    Rng rng(seed);
    a.resize(static_cast<size_t>(std::max(1, s.m * s.k)));
    b.resize(static_cast<size_t>(std::max(1, s.k * ldb)));
    c.resize(static_cast<size_t>(s.m) * ldc);
    bias.resize(s.n);
    h.resize(static_cast<size_t>(s.m) * ldh);
    for (float& x : a) x = static_cast<float>(rng.Normal() * a_scale);
    for (float& x : b) x = static_cast<float>(rng.Normal() * b_scale);
    for (float& x : c) x = static_cast<float>(rng.Normal() * c_scale);
    for (float& x : bias) x = static_cast<float>(rng.Normal());
    for (float& x : h) x = static_cast<float>(rng.Uniform() * h_width + h_lo);
    g.m = s.m;
    g.n = s.n;
    g.k = s.k;
    g.a = a.data();
    // A(i, p) from a row-major [m, k] array, or from a row-major [k, m] one (A^T stored).
    g.a_row_stride = a_transposed ? 1 : s.k;
    g.a_col_stride = a_transposed ? s.m : 1;
    g.b = b.data();
    g.ldb = ldb;
    g.c = c.data();
    g.ldc = ldc;
    g.init = init;
    g.bias = bias.data();
    g.post = post;
    g.h = h.data();
    g.ldh = ldh;
  }
};

// Runs one case and compares each C entry with the reference: |got - want| <= 1e-5 x (sum of
// |a b| over k + |init| + 1), which bounds float32 rounding of a length-k sum (tanh and the
// gradient posts are 1-Lipschitz here: |h| < 1), plus 1e-6 for the tanh approximation.
void CheckCase(GemmFn fn, Shape s, bool a_transposed, GemmInit init, GemmPost post,
               uint64_t seed) {
  Operands o(s, a_transposed, init, post, seed, 1.0, 0.3, 1.0, -0.99, 1.98);
  const std::vector<float> c0 = o.c;
  const std::vector<float>&a = o.a, &b = o.b, &c = o.c, &bias = o.bias, &h = o.h;
  const int ldb = o.ldb, ldc = o.ldc, ldh = o.ldh;
  const SmallGemmArgs& g = o.g;
  fn(g);
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double z = 0.0, bound = 1.0;
      if (init == GemmInit::kBias) z = bias[j];
      if (init == GemmInit::kAccumulate) z = c0[static_cast<size_t>(i) * ldc + j];
      bound += std::fabs(z);
      for (int p = 0; p < s.k; ++p) {
        const double ap = a[a_transposed ? static_cast<size_t>(p) * s.m + i
                                         : static_cast<size_t>(i) * s.k + p];
        const double prod = ap * b[static_cast<size_t>(p) * ldb + j];
        z += prod;
        bound += std::fabs(prod);
      }
      const double want = RefPost(post, z, h[static_cast<size_t>(i) * ldh + j]);
      ASSERT_NEAR(c[static_cast<size_t>(i) * ldc + j], want, 1e-5 * bound + 1e-6)
          << "m " << s.m << " n " << s.n << " k " << s.k << " at (" << i << ", " << j
          << ") init " << static_cast<int>(init) << " post " << static_cast<int>(post)
          << (a_transposed ? " A^T" : " A");
    }
    // Padding between rows is left alone.
    for (int j = s.n; j < ldc; ++j) {
      ASSERT_EQ(c[static_cast<size_t>(i) * ldc + j], c0[static_cast<size_t>(i) * ldc + j]);
    }
  }
}

TEST(SmallGemmTest, MatchesFloat64ReferenceOnOddAndEdgeShapes) {
  const Shape shapes[] = {{1, 1, 1},   {1, 7, 3},    {6, 16, 8},   {7, 17, 5},   {5, 9, 129},
                          {13, 15, 1}, {2, 8, 128},  {12, 33, 64}, {3, 1, 257}, {8, 64, 64},
                          {256, 64, 4}, {64, 63, 256}, {4, 2, 0}};
  const GemmInit inits[] = {GemmInit::kZero, GemmInit::kBias, GemmInit::kAccumulate};
  const GemmPost posts[] = {GemmPost::kNone, GemmPost::kTanh, GemmPost::kRelu,
                            GemmPost::kTanhGrad, GemmPost::kReluGrad};
  uint64_t seed = 1;
  for (GemmFn fn : Implementations()) {
    for (const Shape& s : shapes) {
      for (GemmInit init : inits) {
        for (GemmPost post : posts) {
          for (bool transposed : {false, true}) {
            CheckCase(fn, s, transposed, init, post, ++seed);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

// The PPO update's three orientations at its exact shapes (batch 256, [64, 64] layers):
// forward X W^T + b with tanh, dX = delta W with tanh', dW += delta^T X.
TEST(SmallGemmTest, MatchesReferenceAtPpoShapes) {
  for (GemmFn fn : Implementations()) {
    CheckCase(fn, {256, 64, 64}, false, GemmInit::kBias, GemmPost::kTanh, 11);
    CheckCase(fn, {256, 64, 64}, false, GemmInit::kZero, GemmPost::kTanhGrad, 12);
    CheckCase(fn, {64, 64, 256}, true, GemmInit::kAccumulate, GemmPost::kNone, 13);
  }
}

// Integers small enough that every float32 operation is exact, so both kernels must give these
// hand-computed values exactly: [[1, 2, 3], [4, 5, 6]] x [[7, 8], [9, 10], [11, 12]] =
// [[58, 64], [139, 154]]; with bias [1, -1]: [[59, 63], [140, 153]].
TEST(SmallGemmTest, HandComputedProductIsExact) {
  const float a[] = {1, 2, 3, 4, 5, 6};
  const float b[] = {7, 8, 9, 10, 11, 12};
  const float bias[] = {1, -1};
  for (GemmFn fn : Implementations()) {
    float c[4] = {100, 100, 100, 100};
    SmallGemmArgs g;
    g.m = 2;
    g.n = 2;
    g.k = 3;
    g.a = a;
    g.a_row_stride = 3;
    g.b = b;
    g.ldb = 2;
    g.c = c;
    g.ldc = 2;
    fn(g);
    EXPECT_EQ(c[0], 58.0f);
    EXPECT_EQ(c[1], 64.0f);
    EXPECT_EQ(c[2], 139.0f);
    EXPECT_EQ(c[3], 154.0f);
    g.init = GemmInit::kBias;
    g.bias = bias;
    fn(g);
    EXPECT_EQ(c[0], 59.0f);
    EXPECT_EQ(c[1], 63.0f);
    EXPECT_EQ(c[2], 140.0f);
    EXPECT_EQ(c[3], 153.0f);
    g.init = GemmInit::kAccumulate;  // C += A B: [[59 + 58, 63 + 64], ...]
    g.bias = nullptr;
    fn(g);
    EXPECT_EQ(c[0], 117.0f);
    EXPECT_EQ(c[1], 127.0f);
    EXPECT_EQ(c[2], 279.0f);
    EXPECT_EQ(c[3], 307.0f);
    // ReLU' with h = [[1, -1], [0, 2]] keeps only the entries where h > 0.
    const float h[] = {1, -1, 0, 2};
    g.init = GemmInit::kZero;
    g.post = GemmPost::kReluGrad;
    g.h = h;
    g.ldh = 2;
    fn(g);
    EXPECT_EQ(c[0], 58.0f);
    EXPECT_EQ(c[1], 0.0f);
    EXPECT_EQ(c[2], 0.0f);
    EXPECT_EQ(c[3], 154.0f);
  }
}

// With k = 0 the result is post(init) alone: the AVX2 epilogue must then equal the portable
// scalar one bit for bit (same tanh arithmetic per lane), on a width with a masked tail.
TEST(SmallGemmTest, EpilogueIsBitIdenticalAcrossImplementations) {
  if (!SmallGemmHasAvx2Fma()) GTEST_SKIP() << "no AVX2+FMA on this CPU: one implementation only";
  const int m = 40, n = 21;  // 840 values: the 8-lane FMA tanh against its scalar twin
  Rng rng(5);
  std::vector<float> c0(m * n), h(m * n);
  for (float& x : c0) x = static_cast<float>(rng.Normal() * 4.0);
  for (float& x : h) x = static_cast<float>(rng.Uniform() * 2.0 - 1.0);
  c0[4] = 12.0f;  // beyond the rational's clamp at 9
  c0[5] = -0.0f;
  c0[6] = 9.0f;  // at the clamp
  c0[7] = -30.0f;
  for (GemmPost post : {GemmPost::kTanh, GemmPost::kRelu, GemmPost::kTanhGrad,
                        GemmPost::kReluGrad}) {
    std::vector<float> c1 = c0, c2 = c0;
    SmallGemmArgs g;
    g.m = m;
    g.n = n;
    g.k = 0;
    g.ldb = n;
    g.ldc = n;
    g.init = GemmInit::kAccumulate;
    g.post = post;
    g.h = h.data();
    g.ldh = n;
    g.c = c1.data();
    SmallGemmPortable(g);
    g.c = c2.data();
    SmallGemmAvx2Fma(g);
    for (int i = 0; i < m * n; ++i) {
      ASSERT_EQ(c1[i], c2[i]) << "post " << static_cast<int>(post) << " index " << i;
    }
  }
}

// A transpose only moves values: exact, on block multiples, edges and padded strides.
TEST(SmallGemmTest, TransposeIsExact) {
  for (const auto& [rows, cols] : std::vector<std::pair<int, int>>{
           {1, 1}, {8, 8}, {64, 64}, {3, 17}, {17, 9}, {16, 5}, {24, 40}}) {
    const int ld_src = cols + 2, ld_dst = rows + 3;
    std::vector<float> src(static_cast<size_t>(rows) * ld_src);
    std::vector<float> dst(static_cast<size_t>(cols) * ld_dst, -1.0f);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f;
    TransposeMatrix(src.data(), rows, cols, ld_src, dst.data(), ld_dst);
    for (int c = 0; c < cols; ++c) {
      for (int r = 0; r < ld_dst; ++r) {
        const float want = r < rows ? src[static_cast<size_t>(r) * ld_src + c] : -1.0f;
        ASSERT_EQ(dst[static_cast<size_t>(c) * ld_dst + r], want)
            << rows << " x " << cols << " at (" << c << ", " << r << ")";
      }
    }
  }
}

// The AVX-512 kernel (12 x 32 blocks) gives the AVX2 kernel's bits (6 x 16 blocks) for every
// init and post, on shapes that cross both kernels' row, column and kKc (128) block edges, with
// A plain and transposed and padded strides, and with NaN, infinite and saturating inputs.
TEST(SmallGemmTest, Avx512IsBitIdenticalToAvx2) {
  if (!SmallGemmHasAvx512()) GTEST_SKIP() << "no AVX-512F on this CPU: nothing to compare";
  const Shape shapes[] = {{1, 1, 1},     {13, 33, 7},   {12, 32, 128}, {25, 47, 129}, {7, 15, 300},
                          {256, 64, 64}, {64, 64, 256}, {30, 100, 3},  {5, 17, 0}};
  const GemmInit inits[] = {GemmInit::kZero, GemmInit::kBias, GemmInit::kAccumulate};
  const GemmPost posts[] = {GemmPost::kNone, GemmPost::kTanh, GemmPost::kRelu, GemmPost::kTanhGrad,
                            GemmPost::kReluGrad};
  uint64_t seed = 500;
  for (const Shape& s : shapes) {
    for (bool transposed : {false, true}) {
      ++seed;
      for (GemmInit init : inits) {
        for (GemmPost post : posts) {
          Operands o(s, transposed, init, post, seed, 3.0, 1.0, 4.0, -1.0, 2.0);
          o.c[0] = NAN;
          if (o.c.size() > 2) o.c[2] = INFINITY;
          if (o.c.size() > 3) o.c[3] = -0.0f;
          const std::vector<float> c0 = o.c;
          SmallGemmArgs g = o.g;
          std::vector<float> c2 = c0, c5 = c0;
          g.c = c2.data();
          SmallGemmAvx2Fma(g);
          g.c = c5.data();
          SmallGemmAvx512(g);
          ASSERT_EQ(std::memcmp(c2.data(), c5.data(), c2.size() * sizeof(float)), 0)
              << s.m << " x " << s.n << " x " << s.k << (transposed ? " A^T" : "") << " init "
              << static_cast<int>(init) << " post " << static_cast<int>(post);
        }
      }
    }
  }
}

// Same inputs, same bits (no run-to-run or block-order dependence).
TEST(SmallGemmTest, Deterministic) {
  Rng rng(9);
  std::vector<float> a(37 * 70), b(70 * 29);
  for (float& x : a) x = static_cast<float>(rng.Normal());
  for (float& x : b) x = static_cast<float>(rng.Normal());
  std::vector<float> c1(37 * 29), c2(37 * 29);
  SmallGemmArgs g;
  g.m = 37;
  g.n = 29;
  g.k = 70;
  g.a = a.data();
  g.a_row_stride = 70;
  g.b = b.data();
  g.ldb = 29;
  g.ldc = 29;
  g.c = c1.data();
  SmallGemm(g);
  g.c = c2.data();
  SmallGemm(g);
  EXPECT_EQ(c1, c2);
}

}  // namespace
}  // namespace greenrl::nn
