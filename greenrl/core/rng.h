// rng.h: small, fast, explicitly seeded random number generators. No global RNG anywhere in
// greenrl (../shared/STYLE.md, point 2): every env, sampler and shuffler owns one.
#pragma once

#include <array>
#include <cstdint>

namespace greenrl {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
// used to derive independent seeds from (seed, stream index).
uint64_t SplitMix64(uint64_t& state);

// The output number `index` (0-based) of SplitMix64 seeded with `seed`, computed directly: the
// state after index + 1 steps is seed + (index + 1) * 0x9e3779b97f4a7c15 (Steele et al. 2014, the
// same constants as SplitMix64 above), so SplitMix64At(s, i) equals the (i + 1)-th call of
// SplitMix64 on a state that started at s. Counter-based: any thread can compute any index, in any
// order (VecEnv::StepRandom draws each row's action this way).
inline uint64_t SplitMix64At(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Derives a 64-bit seed for stream `stream` (e.g. env index) from a user seed. The same
// (seed, stream) always gives the same value; nearby inputs give unrelated outputs.
uint64_t DeriveSeed(uint64_t seed, uint64_t stream);

// xoshiro256** 1.0 (Blackman and Vigna, 2018, https://prng.di.unimi.it/). Not thread-safe: one
// generator per thread or per env.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { Seed(seed); }
  // Re-seeds the four state words from SplitMix64(seed).
  void Seed(uint64_t seed);
  // Next 64 random bits.
  uint64_t NextU64();
  // Uniform double in [0, 1) with 53 random bits.
  double Uniform();
  // Uniform double in [low, high).
  double Uniform(double low, double high) { return low + (high - low) * Uniform(); }
  // Uniform float in [0, 1) with 24 random bits.
  float UniformF();
  // Uniform integer in [0, n), n >= 1 (Lemire's nearly divisionless method, 2019); n = 0 gives 0
  // (and draws one number).
  uint64_t Below(uint64_t n);
  // Standard normal N(0, 1) (Marsaglia polar method).
  double Normal();

  // The full generator state for checkpoints: the four xoshiro words, the polar method's spare
  // flag (0 or 1) and the spare normal's bits. SetState(GetState()) continues the same stream.
  using State = std::array<uint64_t, 6>;
  State GetState() const;
  void SetState(const State& state);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace greenrl
