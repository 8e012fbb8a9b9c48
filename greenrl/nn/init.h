// init.h: weight initialisation on flat buffers.
#pragma once

#include <cstdint>

#include "greenrl/core/rng.h"
#include "greenrl/nn/fused_mlp.h"

namespace greenrl::nn {

// Orthogonal initialisation (Saxe et al., 2014; torch.nn.init.orthogonal_): w, float32
// [rows, cols] row-major, becomes gain x a (semi-)orthogonal matrix: orthonormal rows when
// rows <= cols, orthonormal columns otherwise. Drawn from a standard normal matrix with the
// given generator and orthonormalised by modified Gram-Schmidt in float64 (equivalent to
// PyTorch's QR with sign(diag(R)) correction, though not bit-identical to PyTorch's RNG stream).
// Errors: greenrl::InternalError (GREENRL_CHECK) for rows or cols < 1, or a drawn matrix whose
// column norm falls below 1e-12 (probability 0 in practice).
void OrthogonalInit(float* w, int rows, int cols, double gain, Rng& rng);

// Initialises every layer of an MLP in its flat layout (MlpSpec: weight [out, in] then bias
// [out] per layer), layer by layer: ortho: OrthogonalInit with gain_hidden for hidden layers and
// gain_out for the last, biases 0 (SB3's ortho_init); else PyTorch's nn.Linear default
// (reset_parameters: kaiming_uniform_(a = sqrt(5)) == U(-1/sqrt(in), 1/sqrt(in)) for weights,
// the same bound for biases), weights then biases of each layer from `rng`.
// params: float32 [spec.num_params()].
void InitMlp(const MlpSpec& spec, float* params, bool ortho, double gain_hidden, double gain_out,
             Rng& rng);

}  // namespace greenrl::nn
