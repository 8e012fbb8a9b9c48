// spaces_test.cc: env::SampleActionRows and env::CheckSampleable (spaces.h): the bit layout of
// Discrete(2^k) draws, multiply-shift Discrete(n), Box components in their bounds, the same
// actions however the rows are split, and the refusals. VecEnv::StepRandom is tested in
// vec_env_test.cc.
#include "greenrl/env/spaces.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "greenrl/core/rng.h"

namespace greenrl::env {
namespace {

// Draws rows [0, n) of `space` with `key` in one call and in the pieces cut at `cuts`, and
// expects the same actions (discrete: int64 [n]; Box: float32 [n, dim]).
void ExpectSplitsAgree(const ActionSpace& space, uint64_t key, int n, std::vector<int> cuts) {
  const bool discrete = std::holds_alternative<Discrete>(space);
  const int64_t dim = discrete ? 1 : std::get<Box>(space).dim();
  std::vector<int64_t> whole_d(discrete ? n : 0, -1), pieces_d(discrete ? n : 0, -1);
  std::vector<float> whole_c(discrete ? 0 : n * dim, NAN), pieces_c(discrete ? 0 : n * dim, NAN);
  SampleActionRows(space, key, 0, n, whole_d.data(), whole_c.data());
  cuts.insert(cuts.begin(), 0);
  cuts.push_back(n);
  for (size_t j = 0; j + 1 < cuts.size(); ++j) {
    SampleActionRows(space, key, cuts[j], cuts[j + 1], pieces_d.data(), pieces_c.data());
  }
  EXPECT_EQ(whole_d, pieces_d);
  ASSERT_EQ(whole_c.size(), pieces_c.size());
  for (size_t i = 0; i < whole_c.size(); ++i) ASSERT_EQ(whole_c[i], pieces_c[i]) << i;
}

// Discrete(2): 64 rows per SplitMix64 output, lowest bit first, and any split of the rows gives
// the same actions.
// Gymnasium's Box.__repr__ (spaces/box.py): a side whose components are all equal prints as
// that value ("-1.0", as NumPy prints a float32), any other as the list of bounds.
TEST(FormatSpaceTest, EqualBoundsPrintAsOneValueAsGymnasium) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(FormatSpace(Box{{-1.0f, -1.0f, -1.0f}, {1.0f, 1.0f, 1.0f}, {3}}),
            "Box(-1.0, 1.0, (3,), float32)");
  EXPECT_EQ(FormatSpace(Box{{-kInf, -kInf}, {kInf, kInf}, {2}}), "Box(-inf, inf, (2,), float32)");
  EXPECT_EQ(FormatSpace(Box{{-0.5f}, {100000.0f}, {1}}), "Box(-0.5, 100000.0, (1,), float32)");
  EXPECT_EQ(FormatSpace(Box{{0.0f, 0.0f}, {0.6f, 0.07f}, {2}}),
            "Box(0.0, [0.6, 0.07], (2,), float32)");
  EXPECT_EQ(FormatSpace(Box{{-1.2f, -0.07f}, {0.6f, 0.07f}, {2}}),
            "Box([-1.2, -0.07], [0.6, 0.07], (2,), float32)");
  EXPECT_EQ(FormatSpace(ActionSpace{Discrete{3}}), "Discrete(3)");
  // The shape as Gymnasium's tuple, not flattened: a scalar Box and a 2 x 3 one.
  EXPECT_EQ(FormatSpace(Box{{0.0f}, {1.0f}, {}}), "Box(0.0, 1.0, (), float32)");
  EXPECT_EQ(FormatSpace(Box{std::vector<float>(6, -1.0f), std::vector<float>(6, 1.0f), {2, 3}}),
            "Box(-1.0, 1.0, (2, 3), float32)");
}

TEST(SampleActionRowsTest, DiscreteTwoTakesOneBitPerRow) {
  const ActionSpace space = Discrete{2};
  const int n = 200;
  std::vector<int64_t> whole(n, -1), pieces(n, -1);
  SampleActionRows(space, /*key=*/99, 0, n, whole.data(), nullptr);
  SampleActionRows(space, 99, 0, 37, pieces.data(), nullptr);
  SampleActionRows(space, 99, 37, 130, pieces.data(), nullptr);
  SampleActionRows(space, 99, 130, n, pieces.data(), nullptr);
  EXPECT_EQ(whole, pieces);
  for (int i = 0; i < n; ++i) {
    const uint64_t word = SplitMix64At(99, static_cast<uint64_t>(i / 64));
    ASSERT_EQ(whole[i], static_cast<int64_t>((word >> (i % 64)) & 1)) << "row " << i;
  }
  std::vector<int64_t> many(1 << 16);
  SampleActionRows(space, 5, 0, static_cast<int>(many.size()), many.data(), nullptr);
  int64_t ones = 0;
  for (int64_t a : many) ones += a;
  EXPECT_NEAR(static_cast<double>(ones) / static_cast<double>(many.size()), 0.5, 0.01);
}

// Discrete(4) packs 2 bits per row (32 rows per output); Discrete(3) maps one output per row by
// multiply-shift; Discrete(1) is always 0. Every action lies in the space and each value of
// Discrete(3) comes up about a third of the time.
TEST(SampleActionRowsTest, OtherDiscreteSizes) {
  std::vector<int64_t> a(96);
  SampleActionRows(Discrete{4}, 3, 0, 96, a.data(), nullptr);
  for (int i = 0; i < 96; ++i) {
    const uint64_t word = SplitMix64At(3, static_cast<uint64_t>(i / 32));
    ASSERT_EQ(a[i], static_cast<int64_t>((word >> (2 * (i % 32))) & 3)) << "row " << i;
  }
  const int n = 30000;
  std::vector<int64_t> b(n);
  SampleActionRows(Discrete{3}, 8, 0, n, b.data(), nullptr);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    ASSERT_GE(b[i], 0);
    ASSERT_LT(b[i], 3);
    ++counts[b[i]];
  }
  for (int c : counts) EXPECT_NEAR(c / static_cast<double>(n), 1.0 / 3.0, 0.01);
  // Row 5: floor(SplitMix64At(8, 5) * 3 / 2^64), written out.
  const unsigned __int128 scaled = static_cast<unsigned __int128>(SplitMix64At(8, 5)) * 3u;
  EXPECT_EQ(b[5], static_cast<int64_t>(scaled >> 64));
  std::vector<int64_t> c(10, 7);
  SampleActionRows(Discrete{1}, 8, 0, 10, c.data(), nullptr);
  EXPECT_EQ(c, std::vector<int64_t>(10, 0));
  ExpectSplitsAgree(Discrete{4}, 3, 200, {1, 31, 32, 33, 150});
  ExpectSplitsAgree(Discrete{3}, 8, 200, {5, 64, 100});
  ExpectSplitsAgree(Discrete{8}, 9, 200, {20, 21, 127});  // 3 bits: 21 rows per output
}

// Box: component c of row i is low + (high - low) * (top 24 bits of output i * dim + c) / 2^24,
// inside each component's own bounds.
TEST(SampleActionRowsTest, BoxComponentsLieInTheirBounds) {
  Box box;
  box.low = {-1.0f, 0.0f, -2.0f};
  box.high = {1.0f, 10.0f, -2.0f};  // a degenerate component stays at its bound
  box.shape = {3};
  const ActionSpace space = box;
  const int n = 5000;
  std::vector<float> a(static_cast<size_t>(n) * 3);
  SampleActionRows(space, 21, 0, n, nullptr, a.data());
  double sum[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) {
      const float v = a[i * 3 + c];
      ASSERT_GE(v, box.low[c]);
      ASSERT_LE(v, box.high[c]);
      sum[c] += v;
    }
  }
  EXPECT_NEAR(sum[0] / n, 0.0, 0.03);
  EXPECT_NEAR(sum[1] / n, 5.0, 0.15);
  EXPECT_EQ(sum[2] / n, -2.0);
  const float u = static_cast<float>(SplitMix64At(21, 7 * 3 + 1) >> 40) * 0x1p-24f;
  EXPECT_EQ(a[7 * 3 + 1], 0.0f + 10.0f * u);
  ExpectSplitsAgree(space, 21, 300, {1, 64, 65, 200});
}

TEST(SampleActionRowsTest, UnboundedOrEmptySpacesAreRefusedByName) {
  Box box;
  box.low = {-1.0f, -INFINITY};
  box.high = {1.0f, 1.0f};
  box.shape = {2};
  try {
    CheckSampleable("Custom-v0", box);
    ADD_FAILURE() << "no error for an infinite bound";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Custom-v0: action space component 1 has bounds [-inf, 1]"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("finite bounds low <= high"), std::string::npos) << what;
  }
  Box huge;  // finite bounds whose width overflows float32
  huge.low = {-FLT_MAX};
  huge.high = {FLT_MAX};
  huge.shape = {1};
  EXPECT_THROW(CheckSampleable("Custom-v0", huge), std::invalid_argument);
  Box reversed;
  reversed.low = {1.0f};
  reversed.high = {-1.0f};
  reversed.shape = {1};
  EXPECT_THROW(CheckSampleable("Custom-v0", reversed), std::invalid_argument);
  Box nan_bound;
  nan_bound.low = {NAN};
  nan_bound.high = {1.0f};
  nan_bound.shape = {1};
  EXPECT_THROW(CheckSampleable("Custom-v0", nan_bound), std::invalid_argument);
  Box short_bounds;  // dim() 2 but one bound each: refused before SampleActionRows reads past them
  short_bounds.low = {-1.0f};
  short_bounds.high = {1.0f};
  short_bounds.shape = {2};
  try {
    CheckSampleable("Custom-v0", short_bounds);
    ADD_FAILURE() << "no error for bounds shorter than dim()";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2 components but 1 low and 1 high bounds"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(CheckSampleable("Custom-v0", Discrete{0}), std::invalid_argument);
  Box empty_shape;  // a shape entry below 1: no component to act on (dim() 0, or negative)
  empty_shape.shape = {0};
  try {
    CheckSampleable("Custom-v0", empty_shape);
    ADD_FAILURE() << "no error for a shape of (0,)";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "Custom-v0: action space Box has the shape (0,); its entries need to be >= 1 (a "
              "shape of () is one value)");
  }
  empty_shape.shape = {-1, 2};
  EXPECT_THROW(CheckSampleable("Custom-v0", empty_shape), std::invalid_argument);
  EXPECT_NO_THROW(CheckSampleable("CartPole-v1", Discrete{2}));
}

}  // namespace
}  // namespace greenrl::env
