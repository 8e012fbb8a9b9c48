// init.h: weight initialisation on flat buffers.
#pragma once

#include <cstdint>

#include "greenrl/core/rng.h"

namespace greenrl::nn {

// Orthogonal initialisation (Saxe et al., 2014; torch.nn.init.orthogonal_): w, float32
// [rows, cols] row-major, becomes gain x a (semi-)orthogonal matrix: orthonormal rows when
// rows <= cols, orthonormal columns otherwise. Drawn from a standard normal matrix with the
// given generator and orthonormalised by modified Gram-Schmidt in float64 (equivalent to
// PyTorch's QR with sign(diag(R)) correction, though not bit-identical to PyTorch's RNG stream).
void OrthogonalInit(float* w, int rows, int cols, double gain, Rng& rng);

}  // namespace greenrl::nn
