// The job-wide window behind rollout/ep_rew_mean: blocks packed per rank, summed as the metrics
// all-reduce sums them, unpacked in turns (episode_window.h). Hand-built episode lists.
#include "greenrl/train/episode_window.h"

#include <gtest/gtest.h>

#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl::train {
namespace {

// `n` episodes with returns first, first + 1, ... and length 10 + their index.
std::vector<algo::EpisodeRecord> Episodes(int n, double first) {
  std::vector<algo::EpisodeRecord> out;
  for (int i = 0; i < n; ++i) out.push_back({first + i, 10 + i});
  return out;
}

// What every rank sees after the all-reduce: rank q's block packed by rank q, zeros elsewhere.
std::vector<double> Summed(const std::vector<std::vector<algo::EpisodeRecord>>& per_rank) {
  std::vector<double> sums(per_rank.size() * kEpisodeBlockSize, 0.0);
  for (size_t q = 0; q < per_rank.size(); ++q) {
    std::vector<double> own(per_rank.size() * kEpisodeBlockSize, 0.0);
    PackEpisodeBlock(per_rank[q], &own[q * kEpisodeBlockSize]);
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += own[i];
  }
  return sums;
}

std::vector<double> Returns(const std::vector<algo::EpisodeRecord>& episodes) {
  std::vector<double> out;
  for (const auto& e : episodes) out.push_back(e.episode_return);
  return out;
}

TEST(EpisodeWindowTest, BlockHoldsCountAndLastHundredPairs) {
  std::vector<double> block(kEpisodeBlockSize, -1.0);
  PackEpisodeBlock(Episodes(3, 5.0), block.data());
  EXPECT_EQ(block[0], 3.0);
  EXPECT_EQ((std::vector<double>(block.begin() + 1, block.begin() + 7)),
            (std::vector<double>{5, 10, 6, 11, 7, 12}));
  EXPECT_EQ(block[7], 0.0);  // the rest is zeroed, so the all-reduce sums only rank q's block
  EXPECT_EQ(block.back(), 0.0);
  PackEpisodeBlock(Episodes(130, 0.0), block.data());
  EXPECT_EQ(block[0], 130.0);  // every episode counted, the last 100 kept: returns 30..129
  EXPECT_EQ(block[1], 30.0);
  EXPECT_EQ(block[2], 40.0);
  EXPECT_EQ(block[kEpisodeBlockSize - 2], 129.0);
  EXPECT_EQ(block[kEpisodeBlockSize - 1], 139.0);
}

TEST(EpisodeWindowTest, OneRankKeepsItsOrder) {
  const auto out = UnpackEpisodesInTurns(Summed({Episodes(3, 1.0)}).data(), 1);
  EXPECT_EQ(Returns(out), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out[2].episode_length, 12);
  EXPECT_TRUE(UnpackEpisodesInTurns(Summed({{}, {}}).data(), 2).empty());
}

TEST(EpisodeWindowTest, RanksTakeTurnsByPosition) {
  // rank 0: 1, 2, 3; rank 1: 100. Positions 0: (1, 100), 1: (2), 2: (3).
  const auto out = UnpackEpisodesInTurns(Summed({Episodes(3, 1.0), Episodes(1, 100.0)}).data(), 2);
  EXPECT_EQ(Returns(out), (std::vector<double>{1, 100, 2, 3}));
  EXPECT_EQ(out[1].episode_length, 10);
}

TEST(EpisodeWindowTest, LastHundredOfTheJobAcrossRanks) {
  // rank 0: 120 episodes (returns 0..119), rank 1: 110 (returns 1000..1109). In turns the job's
  // iteration is pairs (i, 1000 + i) for positions 0..109, then 110..119 alone: its last 100 are
  // the pairs of positions 65..109 (90 episodes) and 110..119.
  const auto out =
      UnpackEpisodesInTurns(Summed({Episodes(120, 0.0), Episodes(110, 1000.0)}).data(), 2);
  std::vector<double> expected;
  for (int i = 65; i < 110; ++i) {
    expected.push_back(i);
    expected.push_back(1000 + i);
  }
  for (int i = 110; i < 120; ++i) expected.push_back(i);
  EXPECT_EQ(Returns(out), expected);
  EXPECT_EQ(out.front().episode_length, 75);
  EXPECT_EQ(out.back().episode_length, 129);

  // rank 0: 150 episodes, rank 1: 30: rank 1's are all at positions 0..29, before rank 0's last
  // 100 (positions 50..149), so none of them is in the window.
  const auto skewed =
      UnpackEpisodesInTurns(Summed({Episodes(150, 0.0), Episodes(30, 1000.0)}).data(), 2);
  ASSERT_EQ(skewed.size(), 100u);
  EXPECT_EQ(skewed.front().episode_return, 50.0);
  EXPECT_EQ(skewed.back().episode_return, 149.0);
}

TEST(EpisodeWindowTest, BadCountIsABug) {
  std::vector<double> blocks(kEpisodeBlockSize, 0.0);
  blocks[0] = 1.5;
  EXPECT_THROW(UnpackEpisodesInTurns(blocks.data(), 1), InternalError);
  blocks[0] = -1.0;
  EXPECT_THROW(UnpackEpisodesInTurns(blocks.data(), 1), InternalError);
}

}  // namespace
}  // namespace greenrl::train
