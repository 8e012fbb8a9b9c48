#include "greenrl/core/rng.h"

#include <cmath>
#include <cstring>

namespace greenrl {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t DeriveSeed(uint64_t seed, uint64_t stream) {
  uint64_t s = seed;
  uint64_t a = SplitMix64(s);
  uint64_t t = a ^ (stream * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL);
  return SplitMix64(t);
}

void Rng::Seed(uint64_t seed) {
  uint64_t s = seed;
  for (auto& w : s_) w = SplitMix64(s);
  has_spare_ = false;
}

static inline uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t Rng::NextU64() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

float Rng::UniformF() { return static_cast<float>(NextU64() >> 40) * 0x1.0p-24f; }

uint64_t Rng::Below(uint64_t n) {
  // Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 2019.
  unsigned __int128 m = static_cast<unsigned __int128>(NextU64()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(NextU64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

double Rng::Normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, s;
  do {
    u = 2.0 * Uniform() - 1.0;
    v = 2.0 * Uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

Rng::State Rng::GetState() const {
  uint64_t spare_bits;
  std::memcpy(&spare_bits, &spare_, sizeof(spare_bits));
  return {s_[0], s_[1], s_[2], s_[3], has_spare_ ? 1u : 0u, spare_bits};
}

void Rng::SetState(const State& state) {
  for (int i = 0; i < 4; ++i) s_[i] = state[i];
  has_spare_ = state[4] != 0;
  std::memcpy(&spare_, &state[5], sizeof(spare_));
}

}  // namespace greenrl
