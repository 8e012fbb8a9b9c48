// internal/tanh_rational.h: the branch-free rational tanh shared by fused_mlp.cc's activation
// passes and small_gemm.cc's fused GEMM epilogue, so both give bit-identical activations.
// Not part of greenrl's public API.
#pragma once

namespace greenrl::nn::internal {

// Eigen's generic_fast_tanh_float (Eigen/src/Core/MathFunctionsImpl.h): a 13/6-degree rational
// interpolant, "accurate up to a couple of ulp in the range [-9, 9], outside of which
// tanh(x) = +/-1" in float32. Same coefficients, our own evaluation. T is float or a GCC vector
// of floats; the clamp is written as selects (x > 9 ? 9 : x keeps NaN) so it has no branches.
// The arithmetic is the same per lane whatever T (the project builds with -ffp-contract=off, so
// no FMA contraction), so scalar, 4-lane and 8-lane results are equal.
// GCC warns that passing 32-byte vectors by value changes the ABI without AVX; TanhRational is
// always inlined, so no such call exists.
#pragma GCC diagnostic ignored "-Wpsabi"  // internal header: its includers pass 8-lane vectors too
template <typename T>
inline __attribute__((always_inline)) T TanhRational(T x) {
  constexpr float kAlpha1 = 4.89352455891786e-03f, kAlpha3 = 6.37261928875436e-04f,
                  kAlpha5 = 1.48572235717979e-05f, kAlpha7 = 5.12229709037114e-08f,
                  kAlpha9 = -8.60467152213735e-11f, kAlpha11 = 2.00018790482477e-13f,
                  kAlpha13 = -2.76076847742355e-16f;
  constexpr float kBeta0 = 4.89352518554385e-03f, kBeta2 = 2.26843463243900e-03f,
                  kBeta4 = 1.18534705686654e-04f, kBeta6 = 1.19825839466702e-06f;
  const T hi = x - x + 9.0f;  // 9 broadcast (NaN lanes stay NaN through the selects below)
  T c = x > hi ? hi : x;
  c = c < -hi ? -hi : c;
  const T x2 = c * c;
  T p = x2 * kAlpha13 + kAlpha11;
  p = x2 * p + kAlpha9;
  p = x2 * p + kAlpha7;
  p = x2 * p + kAlpha5;
  p = x2 * p + kAlpha3;
  p = x2 * p + kAlpha1;
  p = c * p;
  T q = x2 * kBeta6 + kBeta4;
  q = x2 * q + kBeta2;
  q = x2 * q + kBeta0;
  return p / q;
}

}  // namespace greenrl::nn::internal
