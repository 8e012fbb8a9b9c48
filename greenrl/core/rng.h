// rng.h: small, fast, explicitly seeded random number generators. No global RNG anywhere in
// greenrl (../shared/STYLE.md, point 2): every env, sampler and shuffler owns one.
#pragma once

#include <array>
#include <cstdint>

namespace greenrl {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014):
// used to derive independent seeds from (seed, stream index).
uint64_t SplitMix64(uint64_t& state);

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
  // Uniform integer in [0, n), n >= 1 (Lemire's nearly divisionless method, 2019).
  uint64_t Below(uint64_t n);
  // Standard normal N(0, 1) (Marsaglia polar method).
  double Normal();

  // The full generator state for checkpoints: the four xoshiro words, the polar method's spare
  // flag (0 or 1) and the spare normal's bits. SetState(State()) continues the same stream.
  using State = std::array<uint64_t, 6>;
  State GetState() const;
  void SetState(const State& state);

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace greenrl
