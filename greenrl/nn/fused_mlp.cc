#include "greenrl/nn/fused_mlp.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "greenrl/core/errors.h"
#include "greenrl/core/thread_pool.h"
#include "greenrl/nn/internal/tanh_rational.h"
#include "greenrl/nn/small_gemm.h"

extern "C" void omp_set_num_threads(int num_threads);  // libgomp (<omp.h> needs -fopenmp)
extern "C" int omp_get_max_threads();                  // libgomp
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                       const int* k, const float* alpha, const float* a, const int* lda,
                       const float* b, const int* ldb, const float* beta, float* c, const int* ldc);

namespace greenrl::nn {

Activation ParseActivation(const std::string& field, const std::string& text) {
  if (text == "tanh" || text == "nn.Tanh") return Activation::kTanh;
  if (text == "relu" || text == "nn.ReLU") return Activation::kReLU;
  throw ConfigError(field, text, "one of: tanh, relu, nn.Tanh, nn.ReLU");
}

const char* ToString(Activation activation) {
  return activation == Activation::kTanh ? "tanh" : "relu";
}

int64_t MlpSpec::num_params() const { return weight_offset(num_layers()); }

int64_t MlpSpec::UpdateFlops(int batch) const {
  int64_t flops = 0;
  for (int l = 0; l < num_layers(); ++l) {
    const int64_t mac = static_cast<int64_t>(batch) * sizes[l] * sizes[l + 1];
    flops += 2 * mac * (l == 0 ? 2 : 3);
  }
  return flops;
}

int64_t MlpSpec::weight_offset(int layer) const {
  int64_t offset = 0;
  for (int l = 0; l < layer; ++l) {
    offset += static_cast<int64_t>(sizes[l + 1]) * (sizes[l] + 1);
  }
  return offset;
}

int64_t MlpSpec::bias_offset(int layer) const {
  return weight_offset(layer) + static_cast<int64_t>(sizes[layer + 1]) * sizes[layer];
}

namespace {
using internal::TanhRational;  // internal/tanh_rational.h: without FMA
using internal::TanhRationalFma16;  // with AVX-512F too (internal::TanhUsesAvx512())
using internal::TanhRationalFma8;   // with AVX2 and FMA (internal::TanhUsesFma())

typedef float Float4 __attribute__((vector_size(16)));  // SSE, baseline on x86-64
typedef float Float8 __attribute__((vector_size(32)));  // AVX

// y[0..n) = tanh(y[0..n)), 4 lanes at a time (SSE2, every x86-64), for CPUs without AVX2 and
// FMA (the tail's TanhApprox then uses the same TanhRational).
void TanhInPlaceSse(float* y, size_t n) {
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    Float4 v;
    std::memcpy(&v, y + j, sizeof(v));
    v = TanhRational(v);
    std::memcpy(y + j, &v, sizeof(v));
  }
  for (; j < n; ++j) y[j] = TanhApprox(y[j]);
}

// The same, 8 lanes at a time, for CPUs with AVX2 and FMA (chosen at run time), with the FMA
// evaluation; the tail's TanhApprox uses its scalar twin, so every element gets the same bits.
__attribute__((target("avx2,fma"))) void TanhInPlaceAvx2(float* y, size_t n) {
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(y + j, TanhRationalFma8(_mm256_loadu_ps(y + j)));
  }
  for (; j < n; ++j) y[j] = TanhApprox(y[j]);
}

// The same, 16 lanes at a time, for CPUs with AVX-512F as well (TanhRationalFma16 is
// TanhRationalFma8 per lane, so the bits are the same as TanhInPlaceAvx2's).
__attribute__((target("avx512f"))) void TanhInPlaceAvx512(float* y, size_t n) {
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    _mm512_storeu_ps(y + j, TanhRationalFma16(_mm512_loadu_ps(y + j)));
  }
  for (; j < n; ++j) y[j] = TanhApprox(y[j]);
}

// delta[j] *= 1 - h[j]^2 (tanh' from its output), vectorised for AVX2 (or AVX-512) where the
// CPU has it; the same multiply, subtract and multiply per element whatever the width.
__attribute__((target_clones("avx512f", "avx2", "default"))) void TanhBackwardInPlace(
    const float* h, float* delta, size_t n) {
  for (size_t j = 0; j < n; ++j) delta[j] *= 1.0f - h[j] * h[j];
}

// Thin layers (few inputs, like an observation of 4, or few outputs, like 2 logits or 1 value)
// leave BLAS little to block and much to pack; plain loops vectorised over the wide dimension
// are faster there. kThin is the width at or below which a dimension counts as thin.
constexpr int kThin = 8;

// The AVX2 passes here also use FMA (ForwardThinInAvx2's tanh), so they need both: the same
// test as SmallGemm's and the tanh evaluation's (internal::TanhUsesFma).
bool HasAvx2Fma() { return SmallGemmHasAvx2Fma(); }
// The 16-lane forms (AVX-512F, bit-identical to the 8-lane ones) need AVX-512F as well.
bool HasAvx512() { return SmallGemmHasAvx512(); }

// y [B, out] = b + x [B, in] W^T for in <= kThin; wt: W^T, float32 [in, out].
__attribute__((target_clones("avx2", "default"))) void ForwardThinIn(const float* x,
                                                                     const float* wt,
                                                                     const float* b, float* y,
                                                                     int batch, int in, int out) {
  for (int i = 0; i < batch; ++i) {
    float* yr = y + static_cast<size_t>(i) * out;
    const float* xr = x + static_cast<size_t>(i) * in;
    for (int o = 0; o < out; ++o) yr[o] = b[o];
    for (int k = 0; k < in; ++k) {
      const float xk = xr[k];
      const float* wk = wt + static_cast<size_t>(k) * out;
      for (int o = 0; o < out; ++o) yr[o] += xk * wk[o];
    }
  }
}

// y [B, out] = b + x [B, in] W^T for out <= kThin: one dot product of length `in` per output,
// with 8 partial sums so the loop vectorises.
__attribute__((target_clones("avx2", "default"))) void ForwardThinOut(const float* x,
                                                                      const float* w,
                                                                      const float* b, float* y,
                                                                      int batch, int in, int out) {
  for (int i = 0; i < batch; ++i) {
    const float* xr = x + static_cast<size_t>(i) * in;
    for (int o = 0; o < out; ++o) {
      const float* wo = w + static_cast<size_t>(o) * in;
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int k = 0;
      for (; k + 8 <= in; k += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += xr[k + j] * wo[k + j];
      }
      float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
      for (; k < in; ++k) sum += xr[k] * wo[k];
      y[static_cast<size_t>(i) * out + o] = b[o] + sum;
    }
  }
}

// For out <= kThin: gw [out, in] += delta^T h and, when dx is non-null, dx [B, in] = delta W,
// then, when tanh_h is non-null, dx *= 1 - tanh_h^2 (tanh' of the layer below, from its output
// h; the same arithmetic as TanhBackwardInPlace, so bit-identical to a separate pass).
// gw is accumulated in blocks of kGwBlock inputs held in registers over the whole batch (rows in
// order, so each entry sees the same additions in the same order as row by row), then dx row by
// row.
constexpr int kGwBlock = 64;
__attribute__((target_clones("avx512f", "avx2", "default"))) void BackwardThinOut(
    const float* h, const float* w, const float* delta, float* gw, float* dx, const float* tanh_h,
    int batch, int in, int out) {
  for (int o = 0; o < out; ++o) {
    float* g = gw + static_cast<size_t>(o) * in;
    int k0 = 0;
    for (; k0 + kGwBlock <= in; k0 += kGwBlock) {
      float acc[kGwBlock];
      for (int k = 0; k < kGwBlock; ++k) acc[k] = g[k0 + k];
      for (int i = 0; i < batch; ++i) {
        const float d = delta[static_cast<size_t>(i) * out + o];
        const float* hr = h + static_cast<size_t>(i) * in + k0;
        for (int k = 0; k < kGwBlock; ++k) acc[k] += d * hr[k];
      }
      for (int k = 0; k < kGwBlock; ++k) g[k0 + k] = acc[k];
    }
    for (int i = 0; i < batch && k0 < in; ++i) {  // the last in % kGwBlock inputs
      const float d = delta[static_cast<size_t>(i) * out + o];
      const float* hr = h + static_cast<size_t>(i) * in;
      for (int k = k0; k < in; ++k) g[k] += d * hr[k];
    }
  }
  if (dx == nullptr) return;
  for (int i = 0; i < batch; ++i) {
    const float* dr = delta + static_cast<size_t>(i) * out;
    // dx row = sum_o d_o w_o: the first output writes, the others add (no zeroing pass).
    float* xr = dx + static_cast<size_t>(i) * in;
    const float d0 = dr[0];
    for (int k = 0; k < in; ++k) xr[k] = d0 * w[k];
    for (int o = 1; o < out; ++o) {
      const float d = dr[o];
      const float* wo = w + static_cast<size_t>(o) * in;
      for (int k = 0; k < in; ++k) xr[k] += d * wo[k];
    }
    if (tanh_h == nullptr) continue;
    const float* tr = tanh_h + static_cast<size_t>(i) * in;
    for (int k = 0; k < in; ++k) xr[k] *= 1.0f - tr[k] * tr[k];
  }
}

// AVX2 forms of the thin-input loops for out % 8 == 0 (hidden widths): eight output columns
// stay in one register while the short `in` (or the batch) runs. Each output element sees the
// same additions in the same order as the plain loops, so results are bit-identical.
// The activation is applied in registers before the store, bit-identical to a separate pass and
// one pass over y fewer: tanh as TanhInPlaceAvx2 (TanhRationalFma8); ReLU as max(y, +0), which
// is the plain loop's `y > 0 ? y : 0` (MAXPS returns its second operand, +0, for a NaN or a
// zero of either sign).
// IN (= in, 1..kThin) is a template argument so the k loop unrolls and the row's inputs stay in
// registers; the output blocks are independent chains the core overlaps.
enum class ThinAct { kNone, kTanh, kReLU };
template <int IN, ThinAct ACT>
__attribute__((target("avx2,fma"))) void ForwardThinInAvx2(const float* x, const float* wt,
                                                           const float* b, float* y, int batch,
                                                           int out) {
  for (int i = 0; i < batch; ++i) {
    const float* xr = x + static_cast<size_t>(i) * IN;
    float* yr = y + static_cast<size_t>(i) * out;
    __m256 xk[IN];
    for (int k = 0; k < IN; ++k) xk[k] = _mm256_set1_ps(xr[k]);
    for (int o = 0; o < out; o += 8) {
      __m256 acc = _mm256_loadu_ps(b + o);
      for (int k = 0; k < IN; ++k) {
        // mul then add, as the plain loop (no FMA contraction: -ffp-contract=off)
        acc = _mm256_add_ps(acc, _mm256_mul_ps(xk[k], _mm256_loadu_ps(wt + k * out + o)));
      }
      if constexpr (ACT == ThinAct::kTanh) acc = TanhRationalFma8(acc);
      if constexpr (ACT == ThinAct::kReLU) acc = _mm256_max_ps(acc, _mm256_setzero_ps());
      _mm256_storeu_ps(yr + o, acc);
    }
  }
}
// ForwardThinInAvx2 with 16 output columns per register, for out % 16 == 0 on CPUs with
// AVX-512F: per element the same multiplies and adds in the same order, and the activation as
// TanhRationalFma16 (TanhRationalFma8 per lane) or max(y, +0), so the bits are the same.
template <int IN, ThinAct ACT>
__attribute__((target("avx512f"))) void ForwardThinInAvx512(const float* x, const float* wt,
                                                            const float* b, float* y, int batch,
                                                            int out) {
  for (int i = 0; i < batch; ++i) {
    const float* xr = x + static_cast<size_t>(i) * IN;
    float* yr = y + static_cast<size_t>(i) * out;
    __m512 xk[IN];
    for (int k = 0; k < IN; ++k) xk[k] = _mm512_set1_ps(xr[k]);
    for (int o = 0; o < out; o += 16) {
      __m512 acc = _mm512_loadu_ps(b + o);
      for (int k = 0; k < IN; ++k) {
        acc = _mm512_add_ps(acc, _mm512_mul_ps(xk[k], _mm512_loadu_ps(wt + k * out + o)));
      }
      if constexpr (ACT == ThinAct::kTanh) acc = TanhRationalFma16(acc);
      // MAXPS as in the AVX2 kernel; the zero-masked form with every lane selected is the same
      // instruction without _mm512_max_ps's undefined pass-through (GCC 12 warns about it).
      if constexpr (ACT == ThinAct::kReLU) {
        acc = _mm512_maskz_max_ps(0xFFFF, acc, _mm512_setzero_ps());
      }
      _mm512_storeu_ps(yr + o, acc);
    }
  }
}
using ForwardThinInFn = void (*)(const float*, const float*, const float*, float*, int, int);
template <ThinAct ACT>
constexpr ForwardThinInFn kForwardThinInFor[kThin] = {
    ForwardThinInAvx2<1, ACT>, ForwardThinInAvx2<2, ACT>, ForwardThinInAvx2<3, ACT>,
    ForwardThinInAvx2<4, ACT>, ForwardThinInAvx2<5, ACT>, ForwardThinInAvx2<6, ACT>,
    ForwardThinInAvx2<7, ACT>, ForwardThinInAvx2<8, ACT>};
template <ThinAct ACT>
constexpr ForwardThinInFn kForwardThinIn16For[kThin] = {
    ForwardThinInAvx512<1, ACT>, ForwardThinInAvx512<2, ACT>, ForwardThinInAvx512<3, ACT>,
    ForwardThinInAvx512<4, ACT>, ForwardThinInAvx512<5, ACT>, ForwardThinInAvx512<6, ACT>,
    ForwardThinInAvx512<7, ACT>, ForwardThinInAvx512<8, ACT>};
// The kernel for `in` inputs (1..kThin), the activation applied in the store, and `out` (a
// multiple of 8): 16 lanes where out % 16 == 0 and the CPU has AVX-512F, else 8.
ForwardThinInFn ForwardThinInKernel(int in, ThinAct act, int out) {
  const bool wide = out % 16 == 0 && HasAvx512();
  switch (act) {
    case ThinAct::kTanh:
      return (wide ? kForwardThinIn16For<ThinAct::kTanh>
                   : kForwardThinInFor<ThinAct::kTanh>)[in - 1];
    case ThinAct::kReLU:
      return (wide ? kForwardThinIn16For<ThinAct::kReLU>
                   : kForwardThinInFor<ThinAct::kReLU>)[in - 1];
    case ThinAct::kNone:
      break;
  }
  return (wide ? kForwardThinIn16For<ThinAct::kNone> : kForwardThinInFor<ThinAct::kNone>)[in - 1];
}

// gw [out, in] += delta^T x and gb [out] += column sums of delta, for in = IN <= kThin and
// out % 8 == 0: for each block of eight outputs, IN + 1 registers accumulate over the batch, so
// delta is read once. Every entry sees the same additions in the same order as the plain loops
// (gw: 0 + x d over rows, then added; gb: gb + d over rows), so results are bit-identical.
template <int IN>
__attribute__((target("avx2"))) void BackwardThinInBiasAvx2(const float* x, const float* delta,
                                                            float* gw, float* gb, int batch,
                                                            int out) {
  for (int o = 0; o < out; o += 8) {
    Float8 acc[IN];
    for (int k = 0; k < IN; ++k) acc[k] = Float8{0, 0, 0, 0, 0, 0, 0, 0};
    Float8 bacc;
    std::memcpy(&bacc, gb + o, sizeof(bacc));
    for (int i = 0; i < batch; ++i) {
      Float8 d;
      std::memcpy(&d, delta + static_cast<size_t>(i) * out + o, sizeof(d));
      bacc += d;
      const float* xr = x + static_cast<size_t>(i) * IN;
      for (int k = 0; k < IN; ++k) acc[k] += xr[k] * d;
    }
    std::memcpy(gb + o, &bacc, sizeof(bacc));
    for (int k = 0; k < IN; ++k) {
      for (int j = 0; j < 8; ++j) gw[static_cast<size_t>(o + j) * IN + k] += acc[k][j];
    }
  }
}

// BackwardThinInBiasAvx2 with 16 outputs per register, for out % 16 == 0 on CPUs with
// AVX-512F; the same additions in the same order per entry, so the same bits.
template <int IN>
__attribute__((target("avx512f"))) void BackwardThinInBiasAvx512(const float* x, const float* delta,
                                                                 float* gw, float* gb, int batch,
                                                                 int out) {
  for (int o = 0; o < out; o += 16) {
    __m512 acc[IN];
    for (int k = 0; k < IN; ++k) acc[k] = _mm512_setzero_ps();
    __m512 bacc = _mm512_loadu_ps(gb + o);
    for (int i = 0; i < batch; ++i) {
      const __m512 d = _mm512_loadu_ps(delta + static_cast<size_t>(i) * out + o);
      bacc = _mm512_add_ps(bacc, d);
      const float* xr = x + static_cast<size_t>(i) * IN;
      for (int k = 0; k < IN; ++k) {
        acc[k] = _mm512_add_ps(acc[k], _mm512_mul_ps(_mm512_set1_ps(xr[k]), d));
      }
    }
    _mm512_storeu_ps(gb + o, bacc);
    for (int k = 0; k < IN; ++k) {
      alignas(64) float a[16];
      _mm512_store_ps(a, acc[k]);
      for (int j = 0; j < 16; ++j) gw[static_cast<size_t>(o + j) * IN + k] += a[j];
    }
  }
}

using BackwardThinInBiasFn = void (*)(const float*, const float*, float*, float*, int, int);
constexpr BackwardThinInBiasFn kBackwardThinInBias[kThin] = {
    BackwardThinInBiasAvx2<1>, BackwardThinInBiasAvx2<2>, BackwardThinInBiasAvx2<3>,
    BackwardThinInBiasAvx2<4>, BackwardThinInBiasAvx2<5>, BackwardThinInBiasAvx2<6>,
    BackwardThinInBiasAvx2<7>, BackwardThinInBiasAvx2<8>};
constexpr BackwardThinInBiasFn kBackwardThinInBias16[kThin] = {
    BackwardThinInBiasAvx512<1>, BackwardThinInBiasAvx512<2>, BackwardThinInBiasAvx512<3>,
    BackwardThinInBiasAvx512<4>, BackwardThinInBiasAvx512<5>, BackwardThinInBiasAvx512<6>,
    BackwardThinInBiasAvx512<7>, BackwardThinInBiasAvx512<8>};
// The kernel for `in` inputs (1..kThin) and `out` (a multiple of 8): 16 lanes where
// out % 16 == 0 and the CPU has AVX-512F, else 8.
BackwardThinInBiasFn BackwardThinInBiasKernel(int in, int out) {
  const bool wide = out % 16 == 0 && HasAvx512();
  return (wide ? kBackwardThinInBias16 : kBackwardThinInBias)[in - 1];
}

// gb [out] += column sums of delta [B, out] for out % 8 == 0, in registers.
// Columns in groups of 64 (eight independent registers per row) where out allows, then eight.
__attribute__((target("avx2"))) void BiasGradAvx2(const float* delta, float* gb, int batch,
                                                  int out) {
  int o = 0;
  for (; o + 64 <= out; o += 64) {
    Float8 acc[8];
    std::memcpy(&acc, gb + o, sizeof(acc));
    for (int i = 0; i < batch; ++i) {
      const float* dr = delta + static_cast<size_t>(i) * out + o;
      for (int v = 0; v < 8; ++v) {
        Float8 d;
        std::memcpy(&d, dr + 8 * v, sizeof(d));
        acc[v] += d;
      }
    }
    std::memcpy(gb + o, &acc, sizeof(acc));
  }
  for (; o < out; o += 8) {
    Float8 acc;
    std::memcpy(&acc, gb + o, sizeof(acc));
    for (int i = 0; i < batch; ++i) {
      Float8 d;
      std::memcpy(&d, delta + static_cast<size_t>(i) * out + o, sizeof(d));
      acc += d;
    }
    std::memcpy(gb + o, &acc, sizeof(acc));
  }
}

// For in <= kThin: gw [out, in] += delta^T x, accumulated transposed in gt (float32 [in, out],
// zeroed here) so the inner loop runs over the wide `out`.
__attribute__((target_clones("avx2", "default"))) void BackwardThinIn(const float* x,
                                                                      const float* delta, float* gw,
                                                                      float* gt, int batch, int in,
                                                                      int out) {
  for (int j = 0; j < in * out; ++j) gt[j] = 0.0f;
  for (int i = 0; i < batch; ++i) {
    const float* xr = x + static_cast<size_t>(i) * in;
    const float* dr = delta + static_cast<size_t>(i) * out;
    for (int k = 0; k < in; ++k) {
      const float xk = xr[k];
      float* g = gt + static_cast<size_t>(k) * out;
      for (int o = 0; o < out; ++o) g[o] += xk * dr[o];
    }
  }
  for (int o = 0; o < out; ++o) {
    for (int k = 0; k < in; ++k)
      gw[static_cast<size_t>(o) * in + k] += gt[static_cast<size_t>(k) * out + o];
  }
}

void TanhInPlace(float* y, size_t n) {
  if (internal::TanhUsesAvx512()) {
    TanhInPlaceAvx512(y, n);
  } else if (internal::TanhUsesFma()) {
    TanhInPlaceAvx2(y, n);
  } else {
    TanhInPlaceSse(y, n);
  }
}
}  // namespace

float TanhApprox(float x) {
  // The same arithmetic as the vector lanes of this process (internal/tanh_rational.h).
  return internal::TanhScalar(x);
}

namespace blas {
void Sgemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  sgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
}

void OneThreadHere() { omp_set_num_threads(1); }

ScopedOneThread::ScopedOneThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
ScopedOneThread::~ScopedOneThread() { omp_set_num_threads(saved_); }
}  // namespace blas

FusedMlp::FusedMlp(MlpSpec spec, int max_batch) : spec_(std::move(spec)), max_batch_(max_batch) {
  GREENRL_CHECK(spec_.sizes.size() >= 2, "an MLP needs at least [in, out] sizes");
  GREENRL_CHECK(max_batch_ >= 1, "max_batch must be >= 1");
  int max_width = 0;
  for (int s : spec_.sizes) {
    GREENRL_CHECK(s >= 1, "layer sizes must be >= 1");
    max_width = std::max(max_width, s);
  }
  act_.resize(spec_.num_layers());
  for (int l = 0; l < spec_.num_layers(); ++l) {
    act_[l].assign(static_cast<size_t>(max_batch_) * spec_.sizes[l + 1], 0.0f);
  }
  delta_a_.assign(static_cast<size_t>(max_batch_) * max_width, 0.0f);
  size_t thin = 0;
  for (int l = 0; l < spec_.num_layers(); ++l) {
    thin = std::max(thin, static_cast<size_t>(spec_.sizes[l]) * spec_.sizes[l + 1]);
  }
  thin_.assign(thin, 0.0f);
  delta_b_.assign(static_cast<size_t>(max_batch_) * max_width, 0.0f);
}

// Row-major Y [B, out] = X [B, in] W^T + b. Viewed column-major, Y^T = W X^T with W^T stored as
// an [in, out] column-major matrix: sgemm('T', 'N', out, B, in).
void FusedMlp::set_thread_pool(ThreadPool* pool, ThreadedPasses passes) {
  pool_ = pool;
  threaded_forward_ = passes == ThreadedPasses::kForwardAndBackward;
  if (!slice_fn_) {
    // Slice s of T covers C's rows [m * s / T, m * (s + 1) / T) rounded down to a multiple of
    // 16 (OpenBLAS's sgemm kernels work on 16-row panels on AVX2).
    slice_fn_ = [this](int begin, int end) {
      const int parts = pool_->num_threads();
      auto bound = [&](int s) { return s == parts ? job_.m : (job_.m * s / parts) / 16 * 16; };
      RunGemmRows(job_, bound(begin), bound(end));
    };
    pair_fn_ = [this](int begin, int end) {
      for (int task = begin; task < end; ++task) {
        const GemmJob& job = task == 0 ? job_ : job2_;  // 'N' jobs: RunSmallGemm uses no scratch
        if (!RunSmallGemm(job)) RunGemmRows(job, 0, job.m);
      }
    };
  }
}

void FusedMlp::RunGemmRows(const GemmJob& j, int m0, int m1) const {
  if (m1 <= m0) return;
  const int rows = m1 - m0;
  if (j.bias != nullptr) {
    for (int col = 0; col < j.n; ++col) {
      std::memcpy(j.c + static_cast<size_t>(col) * j.ldc + m0, j.bias + m0, rows * sizeof(float));
    }
  }
  const float* a = j.ta == 'N' ? j.a + m0 : j.a + static_cast<size_t>(m0) * j.lda;
  blas::Sgemm(j.ta, j.tb, rows, j.n, j.k, 1.0f, a, j.lda, j.b, j.ldb, j.beta, j.c + m0, j.ldc);
  if (j.post == Post::kNone) return;
  for (int col = 0; col < j.n; ++col) {
    float* y = j.c + static_cast<size_t>(col) * j.ldc + m0;
    if (j.post == Post::kActivation) {
      if (spec_.activation == Activation::kTanh) {
        TanhInPlace(y, rows);
      } else {
        for (int r = 0; r < rows; ++r) y[r] = y[r] > 0.0f ? y[r] : 0.0f;
      }
    } else {
      const float* h = j.h + static_cast<size_t>(col) * j.ldc + m0;
      if (spec_.activation == Activation::kTanh) {
        TanhBackwardInPlace(h, y, rows);
      } else {
        for (int r = 0; r < rows; ++r) y[r] = h[r] > 0.0f ? y[r] : 0.0f;
      }
    }
  }
}

void FusedMlp::RunGemm(const GemmJob& job, bool threaded) {
  job_ = job;
  const int64_t macs = static_cast<int64_t>(job.m) * job.n * job.k;
  if (!threaded || pool_ == nullptr || pool_->num_threads() < 2 || macs < kParallelMacs ||
      job.m < 32) {
    if (!RunSmallGemm(job)) RunGemmRows(job_, 0, job.m);
  } else {
    pool_->ParallelFor(pool_->num_threads(), slice_fn_);
  }
}

void FusedMlp::RunGemmPair(const GemmJob& first, const GemmJob& second) {
  job_ = first;
  job2_ = second;
  const int64_t macs = static_cast<int64_t>(first.m) * first.n * first.k;
  if (pool_ == nullptr || pool_->num_threads() < 2 || macs < kParallelMacs) {
    // On one thread each job runs as RunGemm's would (SmallGemm where it applies), so one
    // thread's Backward does not depend on whether a pool is set.
    if (!RunSmallGemm(job_)) RunGemmRows(job_, 0, job_.m);
    if (!RunSmallGemm(job2_)) RunGemmRows(job2_, 0, job2_.m);
  } else {
    // Two tasks. With 2 threads, task 0 is the calling thread's chunk and task 1 the worker's;
    // with more, ParallelFor's chunking gives them to two of the workers.
    pool_->ParallelFor(2, pair_fn_);
  }
}

// The column-major job C[m x n] = op(A) op(B) is, read row-major, C' [n, m] = op(B)^T op(A)^T:
// SmallGemm's A'(r, p) = op(B)(p, r) (two strides, no copy) and B'(p, c) = op(A)(c, p), which
// is a row-major matrix for ta 'N' and needs W^T in thin_ for ta 'T' (the forward layers).
bool FusedMlp::RunSmallGemm(const GemmJob& j) {
  // Wherever the CPU has AVX2 and FMA, whichever kernels OpenBLAS runs: OpenBLAS's AVX-512
  // kernels beat the AVX2 SmallGemm on the Xeon of 2026-12-03 (PPO CartPole 1e5 steps: 1.98 s
  // against 3.16 s), but SmallGemm's AVX-512 kernel beats them there (1.91 s against 2.10 s
  // median, 6 single-seed runs each in turns), and OpenBLAS runs AVX-512 kernels only
  // on CPUs that have AVX-512F. So every AVX2+FMA CPU computes these products with the same bits
  // (SmallGemmAvx512 equals SmallGemmAvx2Fma bit for bit).
  if (!SmallGemmHasAvx2Fma() || static_cast<int64_t>(j.m) * j.n * j.k > kSmallGemmMaxMacs) {
    return false;
  }
  SmallGemmArgs g;
  g.m = j.n;
  g.n = j.m;
  g.k = j.k;
  g.a = j.b;
  g.a_row_stride = j.tb == 'N' ? j.ldb : 1;
  g.a_col_stride = j.tb == 'N' ? 1 : j.ldb;
  if (j.ta == 'N') {
    g.b = j.a;
    g.ldb = j.lda;
  } else if (j.frozen_layer >= 0) {
    g.b = FrozenTranspose(j.frozen_layer, j.a, j.m, j.k, j.lda);
    g.ldb = j.m;
  } else {
    float* t = thin_.data();  // [k, m]: t[p * m + c] = A(p, c) = a[c * lda + p]
    TransposeMatrix(j.a, /*rows=*/j.m, /*cols=*/j.k, /*ld_src=*/j.lda, t, /*ld_dst=*/j.m);
    g.b = t;
    g.ldb = j.m;
  }
  g.c = j.c;
  g.ldc = j.ldc;
  g.init = j.bias != nullptr ? GemmInit::kBias
                             : (j.beta == 0.0f ? GemmInit::kZero : GemmInit::kAccumulate);
  g.bias = j.bias;
  const bool tanh = spec_.activation == Activation::kTanh;
  if (j.post == Post::kActivation) {
    g.post = tanh ? GemmPost::kTanh : GemmPost::kRelu;
  } else if (j.post == Post::kActivationGrad) {
    g.post = tanh ? GemmPost::kTanhGrad : GemmPost::kReluGrad;
    g.h = j.h;
    g.ldh = j.ldc;
  }
  SmallGemm(g);
  return true;
}

void FusedMlp::FreezeWeights(const float* params) {
  GREENRL_CHECK(params != nullptr, "FreezeWeights: params is null");
  if (frozen_wt_.empty()) {
    frozen_wt_.resize(spec_.num_layers());
    frozen_made_.assign(spec_.num_layers(), 0);
  }
  std::fill(frozen_made_.begin(), frozen_made_.end(), 0);
  frozen_params_ = params;
}

void FusedMlp::ThawWeights() { frozen_params_ = nullptr; }

const float* FusedMlp::FrozenTranspose(int layer, const float* a, int m, int k, int lda) {
  std::vector<float>& t = frozen_wt_[layer];
  if (!frozen_made_[layer]) {
    t.resize(static_cast<size_t>(m) * k);  // allocates at the first freeze only
    TransposeMatrix(a, /*rows=*/m, /*cols=*/k, /*ld_src=*/lda, t.data(), /*ld_dst=*/m);
    frozen_made_[layer] = 1;
  }
  return t.data();
}

const float* FusedMlp::LayerOutput(int layer) const {
  GREENRL_CHECK(layer >= 0 && layer < spec_.num_layers(), "layer outside [0, num_layers)");
  return act_[layer].data();
}

const float* FusedMlp::Forward(const float* params, const float* x, int batch) {
  GREENRL_CHECK(batch >= 1 && batch <= max_batch_, "batch outside [1, max_batch]");
  batch_ = batch;
  x_ = x;
  const float* input = x;
  const int last = spec_.num_layers() - 1;
  for (int l = 0; l <= last; ++l) {
    const int in = spec_.sizes[l];
    const int out = spec_.sizes[l + 1];
    const float* w = params + spec_.weight_offset(l);
    const float* b = params + spec_.bias_offset(l);
    float* y = act_[l].data();
    if (in <= kThin) {
      for (int o = 0; o < out; ++o) {
        for (int k = 0; k < in; ++k) thin_[static_cast<size_t>(k) * out + o] = w[o * in + k];
      }
      if (HasAvx2Fma() && out % 8 == 0) {
        const ThinAct act = l == last                               ? ThinAct::kNone
                            : spec_.activation == Activation::kTanh ? ThinAct::kTanh
                                                                    : ThinAct::kReLU;
        ForwardThinInKernel(in, act, out)(input, thin_.data(), b, y, batch, out);
        input = y;  // activation applied in the store
        continue;
      } else {
        ForwardThinIn(input, thin_.data(), b, y, batch, in, out);
      }
    } else if (out <= kThin) {
      ForwardThinOut(input, w, b, y, batch, in, out);
    } else {
      // y^T[out x batch] = bias + W^T' x^T, then the activation, in row slices of y^T.
      RunGemm(GemmJob{'T', 'N', out, batch, in, w, input, in, in, 1.0f, y, out, b,
                      l < last ? Post::kActivation : Post::kNone, nullptr,
                      frozen_params_ == params ? l : -1},
              threaded_forward_);
      input = y;
      continue;
    }
    if (l < last) {
      const size_t n = static_cast<size_t>(batch) * out;
      if (spec_.activation == Activation::kTanh) {
        TanhInPlace(y, n);
      } else {
        for (size_t j = 0; j < n; ++j) y[j] = y[j] > 0.0f ? y[j] : 0.0f;
      }
    }
    input = y;
  }
  return act_[last].data();
}

// For each layer from the last: dW += dY^T X (sgemm('N', 'T', in, out, B) column-major),
// db += column sums of dY, dX = dY W (sgemm('N', 'N', in, B, out)), then the activation's
// derivative: tanh' = 1 - h^2, relu' = [h > 0].
void FusedMlp::Backward(const float* params, const float* grad_y, float* grads) {
  GREENRL_CHECK(batch_ >= 1 && x_ != nullptr, "Backward called before Forward");
  const int batch = batch_;
  const float* delta = grad_y;
  float* next_delta = delta_a_.data();
  for (int l = spec_.num_layers() - 1; l >= 0; --l) {
    const int in = spec_.sizes[l];
    const int out = spec_.sizes[l + 1];
    const float* input = l == 0 ? x_ : act_[l - 1].data();
    float* gw = grads + spec_.weight_offset(l);
    float* gb = grads + spec_.bias_offset(l);
    const float* w = params + spec_.weight_offset(l);
    const bool thin_in_avx2 = in <= kThin && out > kThin && HasAvx2Fma() && out % 8 == 0;
    if (thin_in_avx2) {
      // dW and db in one pass over delta (below).
    } else if (HasAvx2Fma() && out % 8 == 0) {
      BiasGradAvx2(delta, gb, batch, out);
    } else {
      for (int i = 0; i < batch; ++i) {
        const float* row = delta + static_cast<size_t>(i) * out;
        for (int j = 0; j < out; ++j) gb[j] += row[j];
      }
    }
    if (out <= kThin) {
      // tanh' of the layer below is applied in the same pass (ReLU' in the pass after the loop).
      const bool fuse_tanh = l > 0 && spec_.activation == Activation::kTanh;
      BackwardThinOut(input, w, delta, gw, l == 0 ? nullptr : next_delta,
                      fuse_tanh ? act_[l - 1].data() : nullptr, batch, in, out);
      if (l == 0) break;
      if (fuse_tanh) {
        delta = next_delta;
        next_delta = (next_delta == delta_a_.data()) ? delta_b_.data() : delta_a_.data();
        continue;
      }
    } else {
      const bool thin_in = in <= kThin;
      const GemmJob dw{'N', 'T', in, out, batch, input, delta, in, out, 1.0f, gw, in};
      if (thin_in) {
        if (thin_in_avx2) {
          BackwardThinInBiasKernel(in, out)(input, delta, gw, gb, batch, out);
        } else {
          BackwardThinIn(input, delta, gw, thin_.data(), batch, in, out);
        }
      }
      if (l == 0) {
        if (!thin_in) RunGemm(dw, /*threaded=*/true);
        break;
      }
      // dX^T[in x batch] = W^T' dY^T, then the activation's derivative: beside dW when dW is a
      // GEMM too, else in row slices.
      GemmJob dx{'N', 'N', in, batch, out, w, delta, in, out, 0.0f, next_delta, in};
      dx.post = Post::kActivationGrad;
      dx.h = act_[l - 1].data();
      if (thin_in) {
        RunGemm(dx, /*threaded=*/true);
      } else {
        RunGemmPair(dx, dw);
      }
      delta = next_delta;
      next_delta = (next_delta == delta_a_.data()) ? delta_b_.data() : delta_a_.data();
      continue;
    }
    ActivationGradInPlace(l, next_delta);
    delta = next_delta;
    next_delta = (next_delta == delta_a_.data()) ? delta_b_.data() : delta_a_.data();
  }
}

void FusedMlp::ActivationGradInPlace(int layer, float* delta) const {
  const float* h = act_[layer - 1].data();  // the activation's output
  const size_t n = static_cast<size_t>(batch_) * spec_.sizes[layer];
  if (spec_.activation == Activation::kTanh) {
    TanhBackwardInPlace(h, delta, n);
  } else {
    for (size_t j = 0; j < n; ++j) delta[j] = h[j] > 0.0f ? delta[j] : 0.0f;
  }
}

void FusedMlp::BackwardInput(const float* params, const float* grad_y, float* grad_x) {
  GREENRL_CHECK(batch_ >= 1 && x_ != nullptr, "BackwardInput called before Forward");
  const int batch = batch_;
  const float* delta = grad_y;
  float* next_delta = delta_a_.data();
  for (int l = spec_.num_layers() - 1; l >= 0; --l) {
    const int in = spec_.sizes[l];
    const int out = spec_.sizes[l + 1];
    const float* w = params + spec_.weight_offset(l);
    float* dx = l == 0 ? grad_x : next_delta;  // float32 [batch, in] = delta [batch, out] W
    if (out <= kThin) {
      for (int i = 0; i < batch; ++i) {
        float* row = dx + static_cast<size_t>(i) * in;
        const float* d = delta + static_cast<size_t>(i) * out;
        for (int c = 0; c < in; ++c) row[c] = 0.0f;
        for (int j = 0; j < out; ++j) {
          const float dj = d[j];
          const float* wj = w + static_cast<size_t>(j) * in;
          for (int c = 0; c < in; ++c) row[c] += dj * wj[c];
        }
      }
    } else {
      blas::Sgemm('N', 'N', in, batch, out, 1.0f, w, in, delta, out, 0.0f, dx, in);
    }
    if (l == 0) break;
    ActivationGradInPlace(l, next_delta);
    delta = next_delta;
    next_delta = (next_delta == delta_a_.data()) ? delta_b_.data() : delta_a_.data();
  }
}

}  // namespace greenrl::nn
