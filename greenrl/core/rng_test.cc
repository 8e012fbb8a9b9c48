#include "greenrl/core/rng.h"

#include <gtest/gtest.h>

namespace greenrl {
namespace {

// Reference outputs of SplitMix64 from seed 1234567 (Vigna's splitmix64.c test vector).
TEST(RngTest, SplitMix64MatchesReference) {
  uint64_t s = 1234567;
  EXPECT_EQ(SplitMix64(s), 6457827717110365317ULL);
  EXPECT_EQ(SplitMix64(s), 3203168211198807973ULL);
  EXPECT_EQ(SplitMix64(s), 9817491932198370423ULL);
}

// SplitMix64At(seed, i) is output i of the sequential generator: the same test vector, and the
// first 1000 outputs of another seed, in any order.
TEST(RngTest, SplitMix64AtIsTheSequentialStreamsOutput) {
  EXPECT_EQ(SplitMix64At(1234567, 0), 6457827717110365317ULL);
  EXPECT_EQ(SplitMix64At(1234567, 2), 9817491932198370423ULL);
  EXPECT_EQ(SplitMix64At(1234567, 1), 3203168211198807973ULL);
  uint64_t s = 0xdeadbeefULL;
  uint64_t sequential[1000];
  for (uint64_t& x : sequential) x = SplitMix64(s);
  for (uint64_t i = 1000; i-- > 0;) {  // backwards: no output depends on the ones before it
    ASSERT_EQ(SplitMix64At(0xdeadbeefULL, i), sequential[i]) << i;
  }
}

TEST(RngTest, SameSeedSameStreamOtherSeedOtherStream) {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.NextU64();
    EXPECT_EQ(x, b.NextU64());
    EXPECT_NE(x, c.NextU64());
  }
  EXPECT_NE(DeriveSeed(1, 0), DeriveSeed(1, 1));
  EXPECT_NE(DeriveSeed(1, 0), DeriveSeed(2, 0));
  EXPECT_EQ(DeriveSeed(7, 3), DeriveSeed(7, 3));
}

TEST(RngTest, RangesAndMoments) {
  Rng rng(1);
  double sum = 0, sum_sq = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const uint64_t k = rng.Below(3);
    ASSERT_LT(k, 3u);
    const double z = rng.Normal();
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0, 0.01);
}

}  // namespace
}  // namespace greenrl
