// small_gemm.h: a float32 matrix product for the small, fixed shapes of RL networks (e.g. the
// [256, 64] x [64, 64] products of a PPO minibatch update), with the bias, the activation or the
// activation's derivative applied in the same pass over the output (the GEMM's epilogue).
//
// Why not BLAS: at these shapes OpenBLAS's sgemm spends a large share of its time on per-call
// work (argument checks, buffer set-up, packing both operands into panels) that a product of
// 1 M multiply-adds cannot amortise, and it needs separate passes for the bias and the
// activation. The operands here fit the L1/L2 caches, so this kernel reads them in place
// (no packing), keeps a 6 x 16 block of C in 12 AVX registers over the inner dimension with FMA,
// and writes each C element once. CPUs without AVX2 and FMA (checked at run time) take a
// portable loop with the same semantics. fused_mlp.h calls it for its single-thread GEMMs;
// small_gemm_test.cc checks it against a float64 reference on odd shapes.
#pragma once

#include <cstdint>

namespace greenrl::nn {

// What C starts from before the product is added.
enum class GemmInit {
  kZero,        // C = A B
  kBias,        // C = bias + A B, bias float32 [n] added to every row
  kAccumulate,  // C += A B
};

// What is applied to each element z of C (after init and product) before it is stored.
// Sources: tanh as internal::TanhRational (Eigen's rational approximation); tanh' from the
// activation's output h as 1 - h^2; ReLU' as [h > 0].
enum class GemmPost {
  kNone,      // z
  kTanh,      // tanh(z)
  kRelu,      // z > 0 ? z : 0 (NaN -> 0)
  kTanhGrad,  // z * (1 - h^2)
  kReluGrad,  // h > 0 ? z : 0
};

// C [m, n] = post(init + A [m, k] B [k, n]), all float32 and row-major (C and B), with A given
// by two strides so that A or A^T of a row-major matrix can be passed without a copy:
// A(i, p) = a[i * a_row_stride + p * a_col_stride]. B(p, j) = b[p * ldb + j], C(i, j) =
// c[i * ldc + j], h(i, j) = h[i * ldh + j] (only read by kTanhGrad / kReluGrad). C must not
// overlap A, B, bias or h. k = 0 gives post(init).
struct SmallGemmArgs {
  int m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t a_row_stride = 0, a_col_stride = 1;
  const float* b = nullptr;
  int64_t ldb = 0;
  float* c = nullptr;
  int64_t ldc = 0;
  GemmInit init = GemmInit::kZero;
  const float* bias = nullptr;  // float32 [n], for kBias
  GemmPost post = GemmPost::kNone;
  const float* h = nullptr;  // float32 [m, ldh], for kTanhGrad and kReluGrad
  int64_t ldh = 0;
};

// Runs the AVX-512 kernel where the CPU has AVX-512F, else the AVX2+FMA kernel where it has
// both, else the portable one. The AVX-512 and AVX2+FMA kernels give the same bits; those and
// the portable one differ only in float rounding (FMA rounds once per multiply-add); each is
// deterministic: the same inputs give the same bits, and the summation order over k does not depend
// on m or n. Errors: GREENRL_CHECK on negative sizes, null pointers that the mode reads, or strides
// smaller than the rows they step over (ldb, ldc < n; ldh < n for the gradient posts).
// Thread-safety: reentrant (no state).
void SmallGemm(const SmallGemmArgs& args);

// dst[c * ld_dst + r] = src[r * ld_src + c] for r < rows, c < cols (float32, row-major): the
// transpose of a [rows, cols] matrix, in 8 x 8 AVX blocks where the CPU has AVX2 (exact either
// way: it only moves values). E.g. W [out, in] -> W^T [in, out] for SmallGemm's B operand.
// Errors: GREENRL_CHECK on negative sizes or strides below the rows they step over.
void TransposeMatrix(const float* src, int rows, int cols, int64_t ld_src, float* dst,
                     int64_t ld_dst);

// The implementations, for tests and benchmarks. SmallGemmAvx2Fma must only be called when
// SmallGemmHasAvx2Fma() is true, SmallGemmAvx512 when SmallGemmHasAvx512() is (GREENRL_CHECK
// otherwise). SmallGemmAvx512 (blocks of 12 rows x 32 columns in 16-lane registers) gives the
// same bits as SmallGemmAvx2Fma: per element the same FMA chain over k in the same order and
// the same epilogue per lane. SmallGemm runs it where the CPU has AVX-512F.
void SmallGemmPortable(const SmallGemmArgs& args);
void SmallGemmAvx2Fma(const SmallGemmArgs& args);
void SmallGemmAvx512(const SmallGemmArgs& args);
bool SmallGemmHasAvx2Fma();
// True when the CPU has AVX-512F as well as AVX2 and FMA.
bool SmallGemmHasAvx512();

}  // namespace greenrl::nn
