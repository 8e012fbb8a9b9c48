// Checks the fused MLP (hand-written forward/backward over BLAS) against LibTorch autograd on
// the same flat parameters.
#include "greenrl/nn/fused_mlp.h"

#include <gtest/gtest.h>
#include <immintrin.h>
#include <torch/torch.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "greenrl/core/errors.h"
#include "greenrl/core/openblas_core.h"
#include "greenrl/core/rng.h"
#include "greenrl/core/thread_pool.h"
#include "greenrl/nn/actor_critic.h"
#include "greenrl/nn/actor_critic_module.h"
#include "greenrl/nn/categorical.h"
#include "greenrl/nn/init.h"
#include "greenrl/nn/internal/tanh_rational.h"

extern "C" int omp_get_max_threads();  // libgomp (<omp.h> needs -fopenmp)
extern "C" void omp_set_num_threads(int num_threads);

namespace greenrl::nn {
namespace {

torch::Tensor FromVec(std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(v.data(), shape, torch::kFloat32);
}

void ExpectClose(const float* a, const float* b, int64_t n, double tol) {
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(a[i], b[i], tol * std::max(1.0, std::fabs(static_cast<double>(b[i]))))
        << "index " << i;
  }
}

// greenrl's names and SB3's class names, and nothing else.
TEST(ActivationTest, ParsesGreenrlAndSb3Names) {
  EXPECT_EQ(ParseActivation("act", "tanh"), Activation::kTanh);
  EXPECT_EQ(ParseActivation("act", "nn.Tanh"), Activation::kTanh);
  EXPECT_EQ(ParseActivation("act", "relu"), Activation::kReLU);
  EXPECT_EQ(ParseActivation("act", "nn.ReLU"), Activation::kReLU);
  EXPECT_EQ(ActivationNames().size(), 4u);
  try {
    ParseActivation("act", "ReLU");
    ADD_FAILURE() << "ReLU parsed";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "act: got 'ReLU'; one of: tanh, relu, nn.Tanh, nn.ReLU");
  }
}

TEST(MlpSpecTest, LayoutMatchesLinearStack) {
  MlpSpec spec{{4, 64, 64, 2}, Activation::kTanh};
  EXPECT_EQ(spec.num_params(), 4 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2);
  EXPECT_EQ(spec.weight_offset(1), 4 * 64 + 64);
  EXPECT_EQ(spec.bias_offset(2), 4 * 64 + 64 + 64 * 64 + 64 + 64 * 2);
}

class FusedVsAutogradTest : public ::testing::TestWithParam<Activation> {};

TEST_P(FusedVsAutogradTest, ForwardAndGradientsMatch) {
  ActorCriticSpec spec;
  spec.obs_dim = 4;
  spec.num_actions = 3;
  spec.activation = GetParam();
  ActorCriticParams params(spec);
  Rng rng(7);
  params.Initialize(rng);
  // Larger action-head weights than SB3's 0.01 gain so the test is not dominated by zeros.
  for (int64_t i = params.actor_num_params() - 3 * 64 - 3; i < params.actor_num_params(); ++i) {
    params.params()[i] = static_cast<float>(rng.Normal() * 0.3);
  }
  const int batch = 37;
  std::vector<float> obs(batch * 4), r_logits(batch * 3), r_values(batch);
  for (float& x : obs) x = static_cast<float>(rng.Normal());
  for (float& x : r_logits) x = static_cast<float>(rng.Normal());
  for (float& x : r_values) x = static_cast<float>(rng.Normal());

  // Autograd: L = sum(logits * r_logits) + sum(values * r_values).
  ActorCriticModule module(params);
  params.ZeroGrads();
  auto [logits, values] = module->forward(FromVec(obs, {batch, 4}));
  auto loss =
      (logits * FromVec(r_logits, {batch, 3})).sum() + (values * FromVec(r_values, {batch})).sum();
  loss.backward();
  std::vector<float> torch_grads(params.grads(), params.grads() + params.num_params());
  std::vector<float> torch_logits(logits.data_ptr<float>(), logits.data_ptr<float>() + batch * 3);

  // Fused.
  params.ZeroGrads();
  FusedMlp actor(spec.actor_spec(), 64), critic(spec.critic_spec(), 64);
  const float* y = actor.Forward(params.actor_params(), obs.data(), batch);
  ExpectClose(y, torch_logits.data(), batch * 3, 1e-5);
  const float* v = critic.Forward(params.critic_params(), obs.data(), batch);
  for (int i = 0; i < batch; ++i) EXPECT_NEAR(v[i], values[i].item<float>(), 1e-5);
  actor.Backward(params.actor_params(), r_logits.data(), params.actor_grads());
  critic.Backward(params.critic_params(), r_values.data(), params.critic_grads());
  ExpectClose(params.grads(), torch_grads.data(), params.num_params(), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Activations, FusedVsAutogradTest,
                         ::testing::Values(Activation::kTanh, Activation::kReLU));

// The GEMMs spread over a 2-thread pool (Forward: rows of each output sliced, each slice one BLAS
// call over the full k range; Backward: dW on the worker beside dX) give the one-thread results
// up to float rounding (OpenBLAS may pick another kernel for a slice's size, so the last bit can
// differ): forward output and every gradient of a [4, 256, 256, 2] MLP (DQN's preset shape) at
// batches that split (64, 2048) and one that does not (3: below kParallelMacs, so bitwise
// equal), with both activations. With ThreadedPasses::kBackward (Forward on one thread, dW and dX
// as two whole BLAS calls on two threads) everything is bitwise equal.
TEST(FusedMlpThreadsTest, TwoThreadsMatchOneThread) {
  auto expect_close = [](const float* a, const float* b, size_t n, const std::string& what,
                         bool exact) {
    float scale = 0.0f;
    for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(a[i]));
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const float tol = exact ? 0.0f : 1e-5f * scale;
      if (!(std::fabs(a[i] - b[i]) <= tol) && bad++ < 3) {
        ADD_FAILURE() << what << " [" << i << "]: " << a[i] << " vs " << b[i];
      }
    }
  };
  for (Activation activation : {Activation::kTanh, Activation::kReLU}) {
    for (int batch : {3, 64, 2048}) {
      MlpSpec spec{{4, 256, 256, 2}, activation};
      Rng rng(5);
      std::vector<float> params(spec.num_params());
      InitMlp(spec, params.data(), /*ortho=*/true, std::sqrt(2.0), 1.0, rng);
      std::vector<float> x(static_cast<size_t>(batch) * 4), dy(static_cast<size_t>(batch) * 2);
      for (float& v : x) v = static_cast<float>(rng.Normal());
      for (float& v : dy) v = static_cast<float>(rng.Normal());
      FusedMlp serial(spec, batch), parallel(spec, batch);
      ThreadPool pool(2);
      parallel.set_thread_pool(&pool);
      const std::string what = std::string(ToString(activation)) + " batch " + std::to_string(batch);
      const bool exact = batch == 3;
      const float* ys = serial.Forward(params.data(), x.data(), batch);
      const float* yp = parallel.Forward(params.data(), x.data(), batch);
      expect_close(ys, yp, static_cast<size_t>(batch) * 2, what + " output", exact);
      std::vector<float> gs(params.size(), 0.0f), gp(params.size(), 0.0f);
      serial.Backward(params.data(), dy.data(), gs.data());
      parallel.Backward(params.data(), dy.data(), gp.data());
      expect_close(gs.data(), gp.data(), gs.size(), what + " gradient", exact);

      FusedMlp backward_only(spec, batch);
      backward_only.set_thread_pool(&pool, FusedMlp::ThreadedPasses::kBackward);
      const float* yb = backward_only.Forward(params.data(), x.data(), batch);
      expect_close(ys, yb, static_cast<size_t>(batch) * 2, what + " output (kBackward)", true);
      std::vector<float> gb(params.size(), 0.0f);
      backward_only.Backward(params.data(), dy.data(), gb.data());
      expect_close(gs.data(), gb.data(), gs.size(), what + " gradient (kBackward)", true);
    }
  }
}

TEST(OrthogonalInitTest, RowsOrColumnsAreOrthonormalTimesGain) {
  Rng rng(3);
  std::vector<float> w(64 * 4);
  nn::OrthogonalInit(w.data(), 64, 4, 2.0, rng);  // tall: orthonormal columns x 2
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      double dot = 0;
      for (int r = 0; r < 64; ++r) dot += double(w[r * 4 + a]) * w[r * 4 + b];
      EXPECT_NEAR(dot, a == b ? 4.0 : 0.0, 1e-5);
    }
  }
  std::vector<float> u(2 * 64);
  nn::OrthogonalInit(u.data(), 2, 64, 0.01, rng);  // wide: orthonormal rows x 0.01
  double dot01 = 0, dot00 = 0;
  for (int c = 0; c < 64; ++c) {
    dot00 += double(u[c]) * u[c];
    dot01 += double(u[c]) * u[64 + c];
  }
  EXPECT_NEAR(dot00, 1e-4, 1e-9);
  EXPECT_NEAR(dot01, 0.0, 1e-9);
}

TEST(CategoricalTest, LogSoftmaxEntropyAndSampling) {
  const float logits[3] = {1.0f, 2.0f, 0.5f};
  float logp[3];
  const double entropy = LogSoftmaxRow(logits, 3, logp);
  auto t = torch::log_softmax(torch::tensor({1.0f, 2.0f, 0.5f}), 0);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(logp[k], t[k].item<float>(), 1e-6);
  const double h = -(t.exp() * t).sum().item<double>();
  EXPECT_NEAR(entropy, h, 1e-6);
  EXPECT_EQ(ArgmaxRow(logits, 3), 1);
  Rng rng(11);
  int counts[3] = {0, 0, 0};
  const int n = 100000;
  for (int i = 0; i < n; ++i) ++counts[SampleCategorical(logp, 3, rng)];
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(counts[k] / double(n), std::exp(logp[k]), 0.01);
}

}  // namespace
}  // namespace greenrl::nn

namespace greenrl::nn {
namespace {
TEST(TanhApproxTest, WithinAFewUlpOfLibm) {
  double max_err = 0.0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = static_cast<float>(i) * 1e-4f;  // [-20, 20]
    const double exact = std::tanh(static_cast<double>(x));
    max_err =
        std::max(max_err, std::fabs(TanhApprox(x) - exact) / std::max(std::fabs(exact), 1e-30));
  }
  EXPECT_LT(max_err, 4e-7);  // a few float32 ulp (2^-23 = 1.2e-7)
  EXPECT_EQ(TanhApprox(0.0f), 0.0f);
  EXPECT_EQ(TanhApprox(30.0f), 1.0f);
  EXPECT_EQ(TanhApprox(-30.0f), -1.0f);
  EXPECT_TRUE(std::isnan(TanhApprox(NAN)));
}
}  // namespace
}  // namespace greenrl::nn

namespace greenrl::nn {
namespace {
// The thin-layer loops (inputs or outputs <= 8) with the activation, its derivative and the
// bias gradient applied in the same pass (tanh in the thin-input forward's store, tanh' in the
// thin-output backward's dX, db beside dW of a thin-input layer), for every thin input width
// 1..8 and a few output widths, against a float64 reference of the same MLP:
// y = W2 act(W1 act(W0 x + b0) + b1) + b2 and the gradients of L = sum(y * r), with respect to
// the parameters (Backward) and to x (BackwardInput).
TEST(FusedMlpThinLayersTest, MatchFloat64ReferenceForEveryThinWidth) {
  for (Activation activation : {Activation::kTanh, Activation::kReLU}) {
    for (int in = 1; in <= 8; ++in) {
      for (int out : {1, 2, 5}) {
        const MlpSpec spec{{in, 24, 16, out}, activation};
        const int batch = 13;
        Rng rng(100 + in * 10 + out);
        std::vector<float> params(spec.num_params()), x(batch * in), r(batch * out);
        for (float& v : params) v = static_cast<float>(rng.Normal() * 0.4);
        for (float& v : x) v = static_cast<float>(rng.Normal());
        for (float& v : r) v = static_cast<float>(rng.Normal());
        // Float64 reference: forward keeping each layer's output, then backward.
        const bool tanh = activation == Activation::kTanh;
        std::vector<std::vector<double>> h(spec.num_layers() + 1);
        h[0].assign(x.begin(), x.end());
        for (int l = 0; l < spec.num_layers(); ++l) {
          const int n_in = spec.sizes[l], n_out = spec.sizes[l + 1];
          const float* w = params.data() + spec.weight_offset(l);
          const float* b = params.data() + spec.bias_offset(l);
          h[l + 1].assign(static_cast<size_t>(batch) * n_out, 0.0);
          for (int i = 0; i < batch; ++i) {
            for (int o = 0; o < n_out; ++o) {
              double z = b[o];
              for (int k = 0; k < n_in; ++k) z += double(w[o * n_in + k]) * h[l][i * n_in + k];
              if (l + 1 < spec.num_layers()) z = tanh ? std::tanh(z) : std::max(z, 0.0);
              h[l + 1][i * n_out + o] = z;
            }
          }
        }
        std::vector<double> ref_grads(params.size(), 0.0);
        std::vector<double> delta(r.begin(), r.end());
        for (int l = spec.num_layers() - 1; l >= 0; --l) {
          const int n_in = spec.sizes[l], n_out = spec.sizes[l + 1];
          const float* w = params.data() + spec.weight_offset(l);
          std::vector<double> prev(static_cast<size_t>(batch) * n_in, 0.0);
          for (int i = 0; i < batch; ++i) {
            for (int o = 0; o < n_out; ++o) {
              const double d = delta[i * n_out + o];
              ref_grads[spec.bias_offset(l) + o] += d;
              for (int k = 0; k < n_in; ++k) {
                ref_grads[spec.weight_offset(l) + o * n_in + k] += d * h[l][i * n_in + k];
                prev[i * n_in + k] += d * w[o * n_in + k];
              }
            }
          }
          for (size_t j = 0; j < prev.size() && l > 0; ++j) {
            const double a = h[l][j];
            prev[j] *= tanh ? 1.0 - a * a : (a > 0.0 ? 1.0 : 0.0);
          }
          delta = std::move(prev);
        }  // delta is now dL/dx, float64 [batch, in]

        FusedMlp mlp(spec, batch);
        const float* y = mlp.Forward(params.data(), x.data(), batch);
        const std::string what = std::string(ToString(activation)) + " in " +
                                 std::to_string(in) + " out " + std::to_string(out);
        for (int j = 0; j < batch * out; ++j) {
          ASSERT_NEAR(y[j], h.back()[j], 1e-5 * std::max(1.0, std::fabs(h.back()[j]))) << what;
        }
        std::vector<float> grads(params.size(), 0.5f);  // Backward adds: start from 0.5
        mlp.Backward(params.data(), r.data(), grads.data());
        for (size_t j = 0; j < grads.size(); ++j) {
          const double expected = 0.5 + ref_grads[j];
          ASSERT_NEAR(grads[j], expected, 1e-4 * std::max(1.0, std::fabs(expected)))
              << what << " gradient " << j;
        }
        // BackwardInput: dL/dx of the same Forward, no parameter gradient.
        std::vector<float> grad_x(static_cast<size_t>(batch) * in, NAN);
        mlp.BackwardInput(params.data(), r.data(), grad_x.data());
        for (size_t j = 0; j < grad_x.size(); ++j) {
          ASSERT_NEAR(grad_x[j], delta[j], 1e-4 * std::max(1.0, std::fabs(delta[j])))
              << what << " input gradient " << j;
        }
      }
    }
  }
}

// The thin-input forward (ForwardThinInAvx2, ForwardThinInAvx512 where out % 16 == 0 and the CPU
// has AVX-512F) gives, bit for bit, the scalar arithmetic it stands for: b + x_0 w_0 + x_1 w_1
// + ... in that order (multiply, then add), then TanhApprox or max(., +0). Hidden widths 8 and
// 24 take 8 lanes, 16, 32 and 64 take 16 where the CPU allows, so the two agree with each
// other and with CPUs without AVX-512.
// Frozen weights (FreezeWeights): the same outputs as an unfrozen Forward, bit for bit, over
// repeated calls (the transposed copies made once); a Forward with other weights while frozen
// uses those weights; a new freeze after the weights changed uses the new ones.
TEST(FusedMlpFrozenWeightsTest, OutputsEqualUnfrozenBitForBit) {
  for (Activation activation : {Activation::kTanh, Activation::kReLU}) {
    for (int batch : {1, 8}) {
      // Hopper's actor (11 inputs, both wide layers transposed) and a thin-input first layer.
      for (const std::vector<int>& sizes : {std::vector<int>{11, 256, 256, 3}, {4, 64, 64, 2}}) {
        const MlpSpec spec{sizes, activation};
        const int in = sizes.front(), out = sizes.back();
        const std::string what = std::string(ToString(activation)) + " batch " +
                                 std::to_string(batch) + " in " + std::to_string(in);
        Rng rng(11 + batch);
        std::vector<float> params(spec.num_params()), other(spec.num_params());
        InitMlp(spec, params.data(), /*ortho=*/false, 1.0, 1.0, rng);
        InitMlp(spec, other.data(), /*ortho=*/false, 1.0, 1.0, rng);
        FusedMlp plain(spec, batch), frozen(spec, batch);
        auto expect_same = [&](const float* p, const float* x, const std::string& when) {
          const float* y = plain.Forward(p, x, batch);
          const std::vector<float> want(y, y + batch * out);
          const float* got = frozen.Forward(p, x, batch);
          for (int j = 0; j < batch * out; ++j) {
            ASSERT_EQ(got[j], want[j]) << what << ", " << when << ", output " << j;
          }
        };
        std::vector<float> x(static_cast<size_t>(batch) * in);
        {
          FusedMlp::FrozenWeights scope(frozen, params.data());
          for (int call = 0; call < 3; ++call) {
            for (float& v : x) v = static_cast<float>(rng.Normal());
            expect_same(params.data(), x.data(), "frozen call " + std::to_string(call));
          }
          expect_same(other.data(), x.data(), "other weights while frozen");
          expect_same(params.data(), x.data(), "frozen again after other weights");
        }
        // The weights change between freezes (PPO's Update): the next freeze uses them.
        for (size_t i = 0; i < params.size(); ++i) params[i] = 0.5f * params[i] + other[i];
        FusedMlp::FrozenWeights scope(frozen, params.data());
        expect_same(params.data(), x.data(), "a new freeze after the weights changed");
        expect_same(params.data(), x.data(), "its second call");
      }
    }
  }
}

TEST(FusedMlpThinLayersTest, ThinInputForwardIsTheScalarArithmeticBitForBit) {
  for (Activation activation : {Activation::kTanh, Activation::kReLU}) {
    for (int in = 1; in <= 8; ++in) {
      for (int hidden : {8, 16, 24, 32, 64}) {
        const MlpSpec spec{{in, hidden, 1}, activation};
        const int batch = 9;
        Rng rng(7 + in * 100 + hidden);
        std::vector<float> params(spec.num_params()), x(batch * in);
        for (float& v : params) v = static_cast<float>(rng.Normal() * 2.0);
        for (float& v : x) v = static_cast<float>(rng.Normal() * 2.0);
        x[0] = 40.0f;  // saturates tanh beyond the rational's clamp at 9
        FusedMlp mlp(spec, batch);
        mlp.Forward(params.data(), x.data(), batch);
        const float* h = mlp.LayerOutput(0);
        const float* w = params.data() + spec.weight_offset(0);
        const float* b = params.data() + spec.bias_offset(0);
        for (int i = 0; i < batch; ++i) {
          for (int o = 0; o < hidden; ++o) {
            float z = b[o];
            for (int k = 0; k < in; ++k) z = z + x[i * in + k] * w[o * in + k];
            const float expected =
                activation == Activation::kTanh ? TanhApprox(z) : (z > 0.0f ? z : 0.0f);
            ASSERT_EQ(h[i * hidden + o], expected)
                << ToString(activation) << " in " << in << " hidden " << hidden << " row " << i
                << " unit " << o;
          }
        }
      }
    }
  }
}

// The thin-output backward's weight gradient (BackwardThinOut, which holds blocks of 64 inputs
// in registers over the batch) is, bit for bit, the row-by-row sum it stands for:
// gw = ((g + d_0 h_0) + d_1 h_1) + ..., for input widths below, at and beyond one block.
TEST(FusedMlpThinLayersTest, ThinOutputWeightGradientIsTheRowSumBitForBit) {
  for (int hidden : {16, 64, 72, 136}) {
    for (int out : {1, 2, 5}) {
      const MlpSpec spec{{3, hidden, out}, Activation::kTanh};
      const int batch = 11;
      Rng rng(31 + hidden + out);
      std::vector<float> params(spec.num_params()), x(batch * 3), r(batch * out);
      for (float& v : params) v = static_cast<float>(rng.Normal() * 0.7);
      for (float& v : x) v = static_cast<float>(rng.Normal());
      for (float& v : r) v = static_cast<float>(rng.Normal());
      FusedMlp mlp(spec, batch);
      mlp.Forward(params.data(), x.data(), batch);
      std::vector<float> grads(params.size(), 0.25f);
      mlp.Backward(params.data(), r.data(), grads.data());
      const float* h = mlp.LayerOutput(0);
      const float* gw = grads.data() + spec.weight_offset(1);
      for (int o = 0; o < out; ++o) {
        for (int k = 0; k < hidden; ++k) {
          float expected = 0.25f;
          for (int i = 0; i < batch; ++i) expected = expected + r[i * out + o] * h[i * hidden + k];
          ASSERT_EQ(gw[o * hidden + k], expected)
              << "hidden " << hidden << " out " << out << " o " << o << " k " << k;
        }
      }
    }
  }
}

// tanh's 16-lane (AVX-512F), 8-lane and one-lane FMA evaluations agree bit for bit, over a sweep
// of [-20, 20] and the edge values (the clamp at +/-9, beyond it, signed zeros, infinities, NaN);
// on a CPU with AVX2 and FMA but no AVX-512F, the 8-lane and one-lane ones.
__attribute__((target("avx2,fma"))) void Tanh8(const float* x, float* y, int n) {
  for (int j = 0; j < n; j += 8) {
    _mm256_storeu_ps(y + j, internal::TanhRationalFma8(_mm256_loadu_ps(x + j)));
  }
}
__attribute__((target("avx512f"))) void Tanh16(const float* x, float* y, int n) {
  for (int j = 0; j < n; j += 16) {
    _mm512_storeu_ps(y + j, internal::TanhRationalFma16(_mm512_loadu_ps(x + j)));
  }
}
TEST(TanhApproxTest, SixteenEightAndOneLaneEvaluationsAgree) {
  if (!SmallGemmHasAvx2Fma()) GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  // Without AVX-512F the 16-lane evaluation cannot run: the 8-lane one against the one-lane.
  const bool avx512 = internal::TanhUsesAvx512();
  std::vector<float> x;
  for (int i = -200000; i <= 200000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  for (float v : {9.0f, -9.0f, std::nextafter(9.0f, 10.0f), std::nextafter(-9.0f, -10.0f), 0.0f,
                  -0.0f, 1e-30f, -1e-30f, INFINITY, -INFINITY, NAN}) {
    x.push_back(v);
  }
  while (x.size() % 16 != 0) x.push_back(0.5f);
  const int n = static_cast<int>(x.size());
  std::vector<float> y8(n), y16(n);
  Tanh8(x.data(), y8.data(), n);
  if (avx512) {
    Tanh16(x.data(), y16.data(), n);
  } else {
    y16 = y8;
  }
  for (int j = 0; j < n; ++j) {
    const float y1 = internal::TanhRationalFma1(x[j]);
    if (std::isnan(x[j])) {
      EXPECT_TRUE(std::isnan(y8[j]) && std::isnan(y16[j]) && std::isnan(y1));
      continue;
    }
    ASSERT_EQ(std::memcmp(&y16[j], &y8[j], sizeof(float)), 0) << "x = " << x[j];
    ASSERT_EQ(std::memcmp(&y1, &y8[j], sizeof(float)), 0) << "x = " << x[j];
  }
}

// ScopedOneThread: BLAS calls in its scope run on one OpenMP thread; the caller's count returns
// at its end.
TEST(BlasThreadsTest, ScopedOneThreadRestoresTheCallersCount) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);
  {
    blas::ScopedOneThread one;
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before);
}

// Under ctest, test binaries start through greenrl_test_exec and so run the BLAS kernels
// `greenrl` runs: never a generic fallback greenrl would have corrected, and the kernels named by
// OPENBLAS_CORETYPE when it is set. (Started by hand, a binary may run the fallback: skipped.)
TEST(BlasThreadsTest, TestsRunGreenrlsKernels) {
  const std::string core = OpenBlasCoreName();
  if (std::getenv("GREENRL_UNDER_CTEST") == nullptr) {
    GTEST_SKIP() << "not started by ctest (greenrl_test_exec); OpenBLAS runs " << core;
  }
  EXPECT_EQ(SuggestOpenBlasCoreType(core, ThisCpu()), "")
      << "OpenBLAS runs its generic " << core << " kernels in a test binary";
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (set != nullptr && !core.empty()) {
    std::string a = core, b = set;
    for (char& c : a) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(a, b) << "OPENBLAS_CORETYPE=" << set << " but OpenBLAS runs " << core;
  }
}

// The launcher's question (LinkedOpenBlasCoreName: libblas.so.3 loaded on its own) gets the
// answer this process's BLAS gives: here libblas.so.3 is already loaded under LibTorch.
TEST(BlasThreadsTest, LinkedOpenBlasIsTheOneLoaded) {
  EXPECT_EQ(LinkedOpenBlasCoreName(), OpenBlasCoreName());
}
}  // namespace
}  // namespace greenrl::nn
