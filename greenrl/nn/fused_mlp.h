// fused_mlp.h: a multilayer perceptron evaluated and differentiated by hand on flat float32
// buffers with direct BLAS calls (sgemm_), for the small networks of RL (e.g. SB3's MlpPolicy,
// [64, 64] tanh). LibTorch eager costs several microseconds of dispatch per op, and a PPO update
// of two such networks is ~60 ops. This path runs one BLAS GEMM per wide layer and direction,
// and thin layers (<= 8 inputs or outputs: the observation layer, the logit and value heads) as
// vectorised loops (bench/: ~0.4 ms per batch-256 PPO minibatch update against ~1.5 ms for
// LibTorch autograd on the 2-core CI machine). fused_mlp_test.cc checks it against LibTorch
// autograd.
//
// Parameter layout (the same as a stack of torch::nn::Linear, so LibTorch modules can view it):
//   for each layer l: W_l float32 [out_l, in_l] row-major, then b_l float32 [out_l].
// Hidden layers apply the activation; the last layer is linear.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace greenrl {
class ThreadPool;  // greenrl/core/thread_pool.h
}  // namespace greenrl

namespace greenrl::nn {

// Hidden-layer activation. Source: SB3 MlpPolicy's activation_fn (default nn.Tanh).
enum class Activation { kTanh, kReLU };

// The names policy_kwargs.activation_fn accepts: greenrl's "tanh" and "relu", and SB3's class
// names "nn.Tanh" and "nn.ReLU" (as SB3 users write activation_fn=nn.ReLU).
inline const std::vector<std::string>& ActivationNames() {
  static const std::vector<std::string> names = {"tanh", "relu", "nn.Tanh", "nn.ReLU"};
  return names;
}

// Parses one of ActivationNames(); throws greenrl::ConfigError(field, text, "one of: tanh,
// relu, nn.Tanh, nn.ReLU") for any other text.
Activation ParseActivation(const std::string& field, const std::string& text);
const char* ToString(Activation activation);

// The shape of an MLP: sizes = [in, hidden..., out] (at least [in, out]).
struct MlpSpec {
  std::vector<int> sizes;
  Activation activation = Activation::kTanh;

  int num_layers() const { return static_cast<int>(sizes.size()) - 1; }
  int in_dim() const { return sizes.front(); }
  int out_dim() const { return sizes.back(); }
  // Number of float32 parameters (weights and biases).
  int64_t num_params() const;
  // Matrix-multiply FLOPs (2 per multiply-add) of one forward and backward pass over `batch`
  // rows: forward 2 B sum(in x out); backward the same for dW, and again for dX of every layer
  // but the first. Elementwise work (bias, activation) is not counted.
  int64_t UpdateFlops(int batch) const;
  // Offset of W_l and of b_l in the flat parameter buffer.
  int64_t weight_offset(int layer) const;
  int64_t bias_offset(int layer) const;
};

// Forward and backward of one MLP for batches of up to max_batch rows. Owns its activation
// workspace (allocated once, in the constructor); parameters and gradients live outside.
// Thread-safety: one instance per thread (the workspace is mutable state).
class FusedMlp {
 public:
  // Errors: GREENRL_CHECK on an MlpSpec with fewer than 2 sizes, a size < 1 or max_batch < 1.
  FusedMlp(MlpSpec spec, int max_batch);

  const MlpSpec& spec() const { return spec_; }
  int max_batch() const { return max_batch_; }

  // y = MLP(x). params: float32 [num_params]; x: float32 [batch, in_dim], which must stay
  // valid and unchanged until Backward. Returns float32 [batch, out_dim] inside the workspace,
  // valid until the next Forward. Errors: GREENRL_CHECK when batch is not in [1, max_batch].
  const float* Forward(const float* params, const float* x, int batch);

  // Frozen weights: from FreezeWeights(params) to ThawWeights(), a Forward(params, ...) with
  // this same params pointer multiplies by the transposed copy of each wide layer's W (float32
  // [in, out]) made at the first such call, instead of transposing W again on every call. At
  // batch 1 the transpose of a [256, 256] W costs several times its product (PPO Hopper-v4's
  // rollout: 17% of a run's time before). Outputs equal an unfrozen Forward's bit for bit: the
  // copy holds the same values, multiplied in the same order. The caller promises that the
  // weights at params do not change while frozen (PPO's rollout: they change only in Update);
  // Forward with another pointer runs as unfrozen. The first freeze allocates the copies, later
  // ones nothing. FreezeWeights again (any pointer) drops the copies made so far.
  // Errors: greenrl::InternalError (GREENRL_CHECK) for a null params.
  void FreezeWeights(const float* params);
  void ThawWeights();
  // Freezes `mlp`'s weights at `params` (FreezeWeights) for this object's lifetime.
  class FrozenWeights {
   public:
    FrozenWeights(FusedMlp& mlp, const float* params) : mlp_(mlp) { mlp_.FreezeWeights(params); }
    ~FrozenWeights() { mlp_.ThawWeights(); }
    FrozenWeights(const FrozenWeights&) = delete;
    FrozenWeights& operator=(const FrozenWeights&) = delete;

   private:
    FusedMlp& mlp_;
  };

  // The output of layer `layer` (after its activation for a hidden layer) from the last
  // Forward: float32 [batch, sizes[layer + 1]], valid until the next Forward. E.g. layer
  // num_layers() - 2 is the last hidden layer (gSDE's features). Errors: GREENRL_CHECK when
  // layer is not in [0, num_layers()).
  const float* LayerOutput(int layer) const;
  // Which passes set_thread_pool's pool takes part in.
  enum class ThreadedPasses { kForwardAndBackward, kBackward };
  // Spreads the wide layers' GEMMs over `pool`'s threads; nullptr (the default) runs everything
  // on the calling thread. GEMMs with fewer than kParallelMacs multiply-adds always stay on the
  // calling thread.
  // - Forward (passes == kForwardAndBackward): each GEMM, with its bias and activation passes,
  //   as pool->num_threads() slices of output rows. OpenBLAS may choose another kernel for a
  //   slice's size, so results agree with one thread's up to float rounding (fused_mlp_test.cc
  //   checks 1e-5 of the largest entry).
  // - Backward: a hidden layer's two GEMMs are independent (dW = dY^T X and dX = dY W), so they
  //   run as two tasks at once: dX and the activation derivative on the calling thread, dW on a
  //   worker, each one whole call (SmallGemm where it applies, as on one thread, else BLAS; no
  //   slicing: a 64-row batch's GEMM loses ~15% of its rate in halves) and one hand-off per
  //   layer. Results equal one thread's bit for bit. A
  //   layer with only a dW GEMM (the first, when it is wide) is sliced as in Forward.
  // kBackward leaves Forward on the calling thread, so Forward may be called from inside one of
  // the pool's own jobs (DQN runs the online and target forward passes as two such tasks).
  // The pool must outlive this MLP (or the next set_thread_pool call) and is used from the
  // calling thread only.
  void set_thread_pool(ThreadPool* pool,
                       ThreadedPasses passes = ThreadedPasses::kForwardAndBackward);
  // GEMMs smaller than this many multiply-adds (about 15 us at one core's sgemm rate) stay on
  // one thread: splitting them costs more in hand-off than it saves.
  static constexpr int64_t kParallelMacs = 1 << 20;
  // Backpropagates dL/dy (float32 [batch, out_dim], batch as in the last Forward) and ADDS
  // dL/dparams into grads (float32 [num_params]). Does not compute dL/dx.
  // Errors: greenrl::InternalError (GREENRL_CHECK) when called before any Forward.
  void Backward(const float* params, const float* grad_y, float* grads);
  // Backpropagates dL/dy (float32 [batch, out_dim], batch as in the last Forward) to the input:
  // writes dL/dx float32 [batch, in_dim] into grad_x, and no parameter gradient (SAC's actor
  // loss differentiates the critics with respect to the action only). Runs on the calling thread
  // (dX = dY W per layer: BLAS for wide layers, loops for layers of <= 8 outputs).
  // Errors: GREENRL_CHECK when called before Forward.
  void BackwardInput(const float* params, const float* grad_y, float* grad_x);

 private:
  // delta (float32 [batch, sizes[layer]], the gradient at layer's input) times the derivative
  // of the activation whose output act_[layer - 1] is, in place; layer >= 1.
  void ActivationGradInPlace(int layer, float* delta) const;

  MlpSpec spec_;
  int max_batch_;
  int batch_ = 0;
  const float* x_ = nullptr;
  std::vector<std::vector<float>> act_;   // per layer l: float32 [max_batch, out_l]
  std::vector<float> delta_a_, delta_b_;  // float32 [max_batch, max width]
  // float32 [largest in x out]: W^T or dW^T scratch of thin layers, W^T for SmallGemm.
  std::vector<float> thin_;
  // Frozen weights (FreezeWeights): the params pointer (null when not frozen) and per layer
  // W^T, float32 [in, out], with whether it has been made since the freeze.
  const float* frozen_params_ = nullptr;
  std::vector<std::vector<float>> frozen_wt_;
  std::vector<uint8_t> frozen_made_;
  // W^T of layer `layer` (W = a, float32 [m, k] with rows lda apart, m = out, k = in) from the
  // frozen copies, made at the first call since the freeze.
  const float* FrozenTranspose(int layer, const float* a, int m, int k, int lda);

  // One GEMM in BLAS's column-major terms, C[m x n] = alpha op(A) op(B) + beta C, with what
  // runs on C's rows [m0, m1) around it: `bias` (float32 [m]) copied into every column first
  // (then beta must be 1), and afterwards `post` over those rows: the hidden activation, or its
  // derivative given the activation output h (same layout as C).
  enum class Post { kNone, kActivation, kActivationGrad };
  struct GemmJob {
    char ta, tb;
    int m, n, k;
    const float *a, *b;
    int lda, ldb;
    float beta;
    float* c;
    int ldc;
    const float* bias = nullptr;
    Post post = Post::kNone;
    const float* h = nullptr;
    // ta 'T' only: the layer whose W `a` is, when its weights are frozen (FreezeWeights), so
    // that SmallGemm reads the frozen transposed copy; -1 otherwise.
    int frozen_layer = -1;
  };
  // Runs `job` whole with SmallGemm (small_gemm.h: AVX-512 or AVX2+FMA kernels, the same bits,
  // with the bias and post in its epilogue) and returns true, when the CPU has AVX2 and FMA and
  // the job has at most kSmallGemmMaxMacs multiply-adds; returns false (nothing done) otherwise.
  bool RunSmallGemm(const GemmJob& job);
  static constexpr int64_t kSmallGemmMaxMacs = 1 << 20;
  // Runs `job` on rows [m0, m1) of C.
  void RunGemmRows(const GemmJob& job, int m0, int m1) const;
  // Runs `job` on the pool in row slices (or whole, see kParallelMacs).
  void RunGemm(const GemmJob& job, bool threaded);
  // Runs two independent jobs of the same size: `first` on the calling thread, `second` on a
  // worker (or both here, see kParallelMacs).
  void RunGemmPair(const GemmJob& first, const GemmJob& second);
  ThreadPool* pool_ = nullptr;
  bool threaded_forward_ = false;  // the pool also slices Forward's GEMMs
  GemmJob job_{}, job2_{};
  std::function<void(int, int)> slice_fn_;  // built once: runs slices [begin, end) of job_
  std::function<void(int, int)> pair_fn_;   // built once: task 0 runs job_, task 1 job2_
};

// tanh in float32 within a few ulp of the correctly rounded value, branch-free so loops over
// it vectorise (glibc's tanhf is scalar and made the fused update 3x slower): Eigen's rational
// interpolant, evaluated with FMA where the CPU has AVX2 and FMA, equal bit for bit to the fused
// MLP's and SmallGemm's vector tanh in the same process. Returns +/-1 beyond |x| > 9 and NaN
// for NaN.
float TanhApprox(float x);

namespace blas {
// C = alpha * op(A) * op(B) + beta * C in BLAS's column-major convention (Fortran sgemm_).
void Sgemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);
// Keeps BLAS calls made from the calling thread on that thread. OpenBLAS's OpenMP build sizes
// its team from the calling thread's OpenMP setting, which in a thread not started by OpenMP is
// the process default (all cores), whatever threads.torch set on the main thread; a pool worker
// calling sgemm_ would otherwise start a team of its own on cores already busy.
void OneThreadHere();
// OneThreadHere for a scope: the calling thread's OpenMP thread count is restored at its end.
// For a thread that drives a ThreadPool's workers through sgemm calls of their own (DQN's two
// update threads): OpenBLAS's OpenMP build copies the caller's count into a process-wide
// setting on every call, so a caller at 2 threads and a worker at 1 make each other's
// products split by whichever wrote last (results then vary from run to run).
class ScopedOneThread {
 public:
  ScopedOneThread();
  ~ScopedOneThread();
  ScopedOneThread(const ScopedOneThread&) = delete;
  ScopedOneThread& operator=(const ScopedOneThread&) = delete;

 private:
  int saved_;
};
}  // namespace blas

}  // namespace greenrl::nn
