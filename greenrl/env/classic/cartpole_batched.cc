// The vectors below never cross a call: every helper that takes or returns one is
// always_inline (here and CartPole::EulerStep and OutOfBounds), at -O0 too, so GCC's note that
// passing 32-byte vectors by value has a different ABI with and without AVX does not apply. (A
// helper left to the optimiser was called out of line in an unoptimised build, from StepBlock's
// AVX2 clone with the AVX ABI into a baseline body, and crashed.)
#pragma GCC diagnostic ignored "-Wpsabi"

#include "greenrl/env/classic/cartpole_batched.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace greenrl::env {
namespace {

constexpr int kObsDim = CartPole::kObsDim;
// Rows per block: sincos for the block first (a libm call per row, which clobbers every vector
// register), then the block's arithmetic four rows at a time.
constexpr int kBlock = 16;

static_assert(std::is_trivially_copyable_v<Rng>, "SaveState copies Rng as bytes");

// GCC/Clang vectors of four rows: IEEE operations per lane, the same bits as scalar code.
using V4d = double __attribute__((vector_size(32)));    // float64 x4
using V4l = int64_t __attribute__((vector_size(32)));   // int64 x4
using V4f = float __attribute__((vector_size(16)));     // float32 x4
using V4i = int32_t __attribute__((vector_size(16)));   // int32 x4
using V16b = uint8_t __attribute__((vector_size(16)));  // uint8 x16, a V4i's bytes

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ToBytes takes each lane's low byte");

// The low byte of each int32 lane (lanes hold 0 or 1), as four bytes: one byte shuffle.
__attribute__((always_inline)) inline uint32_t ToBytes(V4i v) {
  const V16b b = (V16b)v;  // a vector cast keeps the bits
  const V16b packed =
      __builtin_shufflevector(b, b, 0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  uint32_t out;
  std::memcpy(&out, &packed, sizeof(out));
  return out;
}

template <typename V, typename T>
__attribute__((always_inline)) inline V Load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V, typename T>
__attribute__((always_inline)) inline void Store(T* p, const V& v) {
  std::memcpy(p, &v, sizeof(V));
}

// The buffers StepRows writes (VecBuffers plus the SoA state), non-aliasing.
struct Rows {
  const int64_t* __restrict action;  // int64 [N], validated to {0, 1}
  double* __restrict x;              // float64 [N] each
  double* __restrict x_dot;
  double* __restrict theta;
  double* __restrict theta_dot;
  int32_t* __restrict elapsed;  // int32 [N]
  float* __restrict obs;        // float32 [N, 4]
  float* __restrict final_obs;  // float32 [N, 4]
  float* __restrict reward;     // float32 [N]
  uint8_t* __restrict terminated;
  uint8_t* __restrict truncated;
  float* __restrict episode_return;
  int32_t* __restrict episode_length;
};

// Steps row i alone (the same arithmetic as four rows in StepBlock), given sin and cos of its
// theta. Returns: 1 when the row ended (terminated or truncated), else 0.
inline uint32_t StepOneRow(const Rows& r, int i, double sintheta, double costheta) {
  const double force = r.action[i] == 1 ? CartPole::kForceMag : -CartPole::kForceMag;
  double x = r.x[i], x_dot = r.x_dot[i], theta = r.theta[i], theta_dot = r.theta_dot[i];
  CartPole::EulerStep<double>(force, sintheta, costheta, x, x_dot, theta, theta_dot);
  r.x[i] = x;
  r.x_dot[i] = x_dot;
  r.theta[i] = theta;
  r.theta_dot[i] = theta_dot;
  const float o[4] = {static_cast<float>(x), static_cast<float>(x_dot), static_cast<float>(theta),
                      static_cast<float>(theta_dot)};
  std::memcpy(r.final_obs + static_cast<int64_t>(i) * kObsDim, o, sizeof(o));
  std::memcpy(r.obs + static_cast<int64_t>(i) * kObsDim, o, sizeof(o));
  const int32_t term = CartPole::OutOfBounds<double>(x, theta);
  const int32_t steps = r.elapsed[i] + 1;
  const int32_t trunc = steps >= CartPole::kMaxEpisodeSteps;
  const int32_t done = term | trunc;
  r.elapsed[i] = done ? 0 : steps;
  r.episode_length[i] = done ? steps : 0;
  r.episode_return[i] = static_cast<float>(r.episode_length[i]);
  r.reward[i] = 1.0f;
  r.terminated[i] = static_cast<uint8_t>(term);
  r.truncated[i] = static_cast<uint8_t>(trunc);
  return static_cast<uint32_t>(done);
}

// Steps rows [b, b + m), m <= kBlock: physics, observations (written to final_obs and obs),
// reward, flags, TimeLimit counter and episode statistics. Returns: bit j set where row b + j
// ended (its obs row then still needs the reset observation).
// Built twice, for AVX2 and for baseline x86-64, chosen at load time; no FMA either way.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GREENRL_CARTPOLE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GREENRL_CARTPOLE_CLONES
#endif
GREENRL_CARTPOLE_CLONES uint32_t StepBlock(const Rows& rows, int b, int m) {
  const Rows r = rows;  // a local copy: stores through its pointers cannot change them
  // glibc's sincos, the same call CartPole::Step makes (bit-identical to Python's math.sin and
  // math.cos on glibc).
  double sintheta[kBlock], costheta[kBlock];
  for (int j = 0; j < m; ++j) ::sincos(r.theta[b + j], &sintheta[j], &costheta[j]);

  uint32_t done_rows = 0;
  int j = 0;
  for (; j + 4 <= m; j += 4) {
    const int i = b + j;
    // force = +10 N for action 1, -10 N for action 0: -kForceMag with its sign bit flipped by
    // the action (actions are 0 or 1 here).
    const V4l minus_force_bits = (V4l)(V4d{} - CartPole::kForceMag);
    const V4d force = (V4d)(minus_force_bits ^ (Load<V4l>(r.action + i) << 63));
    V4d x = Load<V4d>(r.x + i), x_dot = Load<V4d>(r.x_dot + i);
    V4d theta = Load<V4d>(r.theta + i), theta_dot = Load<V4d>(r.theta_dot + i);
    CartPole::EulerStep<V4d>(force, Load<V4d>(sintheta + j), Load<V4d>(costheta + j), x, x_dot,
                             theta, theta_dot);
    Store(r.x + i, x);
    Store(r.x_dot + i, x_dot);
    Store(r.theta + i, theta);
    Store(r.theta_dot + i, theta_dot);

    // Observations: four float32 columns transposed into four rows [x, x_dot, theta, theta_dot].
    const V4f c0 = __builtin_convertvector(x, V4f), c1 = __builtin_convertvector(x_dot, V4f);
    const V4f c2 = __builtin_convertvector(theta, V4f);
    const V4f c3 = __builtin_convertvector(theta_dot, V4f);
    const V4f lo01 = __builtin_shufflevector(c0, c1, 0, 4, 1, 5);  // x0 xd0 x1 xd1
    const V4f lo23 = __builtin_shufflevector(c2, c3, 0, 4, 1, 5);  // t0 td0 t1 td1
    const V4f hi01 = __builtin_shufflevector(c0, c1, 2, 6, 3, 7);  // x2 xd2 x3 xd3
    const V4f hi23 = __builtin_shufflevector(c2, c3, 2, 6, 3, 7);  // t2 td2 t3 td3
    const V4f row[4] = {__builtin_shufflevector(lo01, lo23, 0, 1, 4, 5),
                        __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7),
                        __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5),
                        __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7)};
    for (int k = 0; k < 4; ++k) {
      Store(r.final_obs + static_cast<int64_t>(i + k) * kObsDim, row[k]);
      Store(r.obs + static_cast<int64_t>(i + k) * kObsDim, row[k]);  // replaced where it ended
    }

    // Flags and statistics as lane masks (-1 or 0).
    const V4i term = __builtin_convertvector(CartPole::OutOfBounds<V4d>(x, theta), V4i);
    const V4i steps = Load<V4i>(r.elapsed + i) + 1;
    const V4i trunc = steps >= CartPole::kMaxEpisodeSteps;
    const V4i done = term | trunc;
    Store(r.elapsed + i, steps & ~done);
    const V4i length = steps & done;  // the ended episode's length, else 0
    Store(r.episode_length + i, length);
    Store(r.episode_return + i, __builtin_convertvector(length, V4f));  // a sum of rewards 1.0
    Store(r.reward + i, V4f{1.0f, 1.0f, 1.0f, 1.0f});
    Store(r.terminated + i, ToBytes(-term));
    Store(r.truncated + i, ToBytes(-trunc));
    // Four 0/1 bytes to four bits: bytes * 0x01020408 sums b0 + 2 b1 + 4 b2 + 8 b3 in byte 3.
    done_rows |= ((ToBytes(-done) * 0x01020408u) >> 24 & 0xfu) << j;
  }

  for (; j < m; ++j) {  // the last rows of the range, one at a time, same arithmetic
    done_rows |= StepOneRow(r, b + j, sintheta[j], costheta[j]) << j;
  }
  return done_rows;
}

}  // namespace

CartPoleBatched::CartPoleBatched(int num_envs)
    : x_(num_envs, 0.0),
      x_dot_(num_envs, 0.0),
      theta_(num_envs, 0.0),
      theta_dot_(num_envs, 0.0),
      elapsed_steps_(num_envs, 0),
      rng_(num_envs) {}

std::unique_ptr<BatchedEnv> CartPoleBatched::Make(int num_envs) {
  return std::make_unique<CartPoleBatched>(num_envs);
}

void CartPoleBatched::ResetRow(int i, float* obs_row) {
  const CartPole::State s = CartPole::DrawResetState(rng_[i]);
  x_[i] = s[0];
  x_dot_[i] = s[1];
  theta_[i] = s[2];
  theta_dot_[i] = s[3];
  elapsed_steps_[i] = 0;
  for (int k = 0; k < kObsDim; ++k) obs_row[k] = static_cast<float>(s[k]);
}

void CartPoleBatched::ResetRows(int begin, int end, uint64_t seed, const VecBuffers& buffers) {
  for (int i = begin; i < end; ++i) {
    rng_[i].Seed(DeriveSeed(seed, i));
    float* obs_row = buffers.obs + static_cast<int64_t>(i) * kObsDim;
    ResetRow(i, obs_row);
    std::copy(obs_row, obs_row + kObsDim, buffers.final_obs + static_cast<int64_t>(i) * kObsDim);
    buffers.reward[i] = 0.0f;
    buffers.terminated[i] = 0;
    buffers.truncated[i] = 0;
    buffers.episode_return[i] = 0.0f;
    buffers.episode_length[i] = 0;
  }
}

void CartPoleBatched::StepRows(int begin, int end, const VecBuffers& buffers) {
  const int64_t* __restrict action = buffers.discrete_actions;
  // Validate the whole range first: nonzero iff some action is outside {0, 1} (negative ones
  // included, as uint64).
  uint64_t invalid = 0;
  for (int i = begin; i < end; ++i) invalid |= static_cast<uint64_t>(action[i]) >> 1;
  if (invalid != 0) {
    for (int i = begin; i < end; ++i) {
      if (action[i] != 0 && action[i] != 1) CartPole::ThrowInvalidAction(action[i]);
    }
  }

  const Rows rows{action,
                  x_.data(),
                  x_dot_.data(),
                  theta_.data(),
                  theta_dot_.data(),
                  elapsed_steps_.data(),
                  buffers.obs,
                  buffers.final_obs,
                  buffers.reward,
                  buffers.terminated,
                  buffers.truncated,
                  buffers.episode_return,
                  buffers.episode_length};
  for (int b = begin; b < end; b += kBlock) {
    const int m = std::min(kBlock, end - b);
    uint32_t done;
    if (m >= 4) {
      done = StepBlock(rows, b, m);
    } else {  // fewer rows than one vector (e.g. N = 1): no block set-up
      done = 0;
      for (int j = 0; j < m; ++j) {
        double sintheta, costheta;
        ::sincos(theta_[b + j], &sintheta, &costheta);
        done |= StepOneRow(rows, b + j, sintheta, costheta) << j;
      }
    }
    // Same-step autoreset of the rows that ended, from each row's own generator.
    for (; done != 0; done &= done - 1) {
      const int i = b + __builtin_ctz(done);
      ResetRow(i, buffers.obs + static_cast<int64_t>(i) * kObsDim);
    }
  }
}

bool CartPoleBatched::SaveState(std::string* bytes) const {
  AppendVector(bytes, x_);
  AppendVector(bytes, x_dot_);
  AppendVector(bytes, theta_);
  AppendVector(bytes, theta_dot_);
  AppendVector(bytes, elapsed_steps_);
  AppendVector(bytes, rng_);
  return true;
}

void CartPoleBatched::LoadState(const std::string& bytes, size_t* offset) {
  ReadVector(bytes, offset, &x_);
  ReadVector(bytes, offset, &x_dot_);
  ReadVector(bytes, offset, &theta_);
  ReadVector(bytes, offset, &theta_dot_);
  ReadVector(bytes, offset, &elapsed_steps_);
  ReadVector(bytes, offset, &rng_);
}

void CartPoleBatched::SetRowState(int i, const CartPole::State& state) {
  x_[i] = state[0];
  x_dot_[i] = state[1];
  theta_[i] = state[2];
  theta_dot_[i] = state[3];
}

CartPole::State CartPoleBatched::row_state(int i) const {
  return {x_[i], x_dot_[i], theta_[i], theta_dot_[i]};
}

}  // namespace greenrl::env
