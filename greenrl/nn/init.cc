#include "greenrl/nn/init.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl::nn {

void OrthogonalInit(float* w, int rows, int cols, double gain, Rng& rng) {
  GREENRL_CHECK(rows >= 1 && cols >= 1, "matrix dimensions must be >= 1");
  // Orthonormalise the shorter dimension's vectors: k vectors of length len.
  const bool by_rows = rows <= cols;
  const int k = by_rows ? rows : cols;
  const int len = by_rows ? cols : rows;
  std::vector<double> q(static_cast<size_t>(k) * len);
  for (double& x : q) x = rng.Normal();
  for (int i = 0; i < k; ++i) {
    double* qi = &q[static_cast<size_t>(i) * len];
    for (int j = 0; j < i; ++j) {
      const double* qj = &q[static_cast<size_t>(j) * len];
      double dot = 0.0;
      for (int t = 0; t < len; ++t) dot += qi[t] * qj[t];
      for (int t = 0; t < len; ++t) qi[t] -= dot * qj[t];
    }
    double norm = 0.0;
    for (int t = 0; t < len; ++t) norm += qi[t] * qi[t];
    norm = std::sqrt(norm);
    GREENRL_CHECK(norm > 1e-12, "degenerate random matrix in orthogonal init");
    for (int t = 0; t < len; ++t) qi[t] /= norm;
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const double v =
          by_rows ? q[static_cast<size_t>(r) * len + c] : q[static_cast<size_t>(c) * len + r];
      w[static_cast<size_t>(r) * cols + c] = static_cast<float>(gain * v);
    }
  }
}

void InitMlp(const MlpSpec& spec, float* params, bool ortho, double gain_hidden, double gain_out,
             Rng& rng) {
  for (int l = 0; l < spec.num_layers(); ++l) {
    const int in = spec.sizes[l];
    const int out = spec.sizes[l + 1];
    float* w = params + spec.weight_offset(l);
    float* b = params + spec.bias_offset(l);
    if (ortho) {
      OrthogonalInit(w, out, in, l + 1 == spec.num_layers() ? gain_out : gain_hidden, rng);
      std::fill(b, b + out, 0.0f);
    } else {
      // torch.nn.Linear.reset_parameters: kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(in),
      // 1/sqrt(in)).
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      for (int i = 0; i < out * in; ++i) w[i] = static_cast<float>(rng.Uniform(-bound, bound));
      for (int i = 0; i < out; ++i) b[i] = static_cast<float>(rng.Uniform(-bound, bound));
    }
  }
}

}  // namespace greenrl::nn
