// The job-wide window behind rollout/ep_rew_mean: blocks packed per rank, summed as the metrics
// all-reduce sums them, unpacked in the job's order (episode_window.h). Hand-built episode lists.
#include "greenrl/train/episode_window.h"

#include <gtest/gtest.h>

#include <vector>

#include "greenrl/core/errors.h"

namespace greenrl::train {
namespace {

// `n` episodes with returns first, first + 1, ..., length 10 + their index, ended at rollout
// steps first_step, first_step + step_stride, ...
std::vector<algo::EpisodeRecord> Episodes(int n, double first, int64_t first_step = 0,
                                          int64_t step_stride = 1) {
  std::vector<algo::EpisodeRecord> out;
  for (int i = 0; i < n; ++i) out.push_back({first + i, 10 + i, first_step + step_stride * i});
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

TEST(EpisodeWindowTest, BlockHoldsCountAndLastHundredTriples) {
  std::vector<double> block(kEpisodeBlockSize, -1.0);
  PackEpisodeBlock(Episodes(3, 5.0, 4, 2), block.data());
  EXPECT_EQ(block[0], 3.0);
  EXPECT_EQ((std::vector<double>(block.begin() + 1, block.begin() + 10)),
            (std::vector<double>{5, 10, 4, 6, 11, 6, 7, 12, 8}));
  EXPECT_EQ(block[10], 0.0);  // the rest is zeroed, so the all-reduce sums only rank q's block
  EXPECT_EQ(block.back(), 0.0);
  PackEpisodeBlock(Episodes(130, 0.0), block.data());
  EXPECT_EQ(block[0], 130.0);  // every episode counted, the last 100 kept: returns 30..129
  EXPECT_EQ(block[1], 30.0);
  EXPECT_EQ(block[2], 40.0);
  EXPECT_EQ(block[3], 30.0);
  EXPECT_EQ(block[kEpisodeBlockSize - 3], 129.0);
  EXPECT_EQ(block[kEpisodeBlockSize - 2], 139.0);
  EXPECT_EQ(block[kEpisodeBlockSize - 1], 129.0);
}

TEST(EpisodeWindowTest, OneRankKeepsItsOrder) {
  const auto out = UnpackEpisodesInJobOrder(Summed({Episodes(3, 1.0, 2, 3)}).data(), 1);
  EXPECT_EQ(Returns(out), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out[2].episode_length, 12);
  EXPECT_EQ(out[2].rollout_step, 8);
  EXPECT_TRUE(UnpackEpisodesInJobOrder(Summed({{}, {}}).data(), 2).empty());
}

TEST(EpisodeWindowTest, RanksMergeByRolloutStepThenRank) {
  // Rank 0 ends episodes 1, 2, 3, 4 at steps 5, 10, 15, 20; rank 1 ends 100 and 101 at steps 10
  // and 30. One process would append: 1 (5), 2 (10, rank 0), 100 (10, rank 1), 3, 4, 101.
  const auto out = UnpackEpisodesInJobOrder(
      Summed({Episodes(4, 1.0, 5, 5), Episodes(2, 100.0, 10, 20)}).data(), 2);
  EXPECT_EQ(Returns(out), (std::vector<double>{1, 2, 100, 3, 4, 101}));
  EXPECT_EQ(out[2].episode_length, 10);
  EXPECT_EQ(out[5].rollout_step, 30);
}

TEST(EpisodeWindowTest, LastHundredOfTheJobAcrossRanks) {
  // Rank 0: 120 episodes (returns 0..119) at steps 0..119; rank 1: 110 (returns 1000..1109) at
  // steps 0..109. The job's iteration is pairs (s, 1000 + s) for steps 0..109, then 110..119
  // alone: its last 100 are the pairs of steps 65..109 (90 episodes) and 110..119.
  const auto out =
      UnpackEpisodesInJobOrder(Summed({Episodes(120, 0.0), Episodes(110, 1000.0)}).data(), 2);
  std::vector<double> expected;
  for (int i = 65; i < 110; ++i) {
    expected.push_back(i);
    expected.push_back(1000 + i);
  }
  for (int i = 110; i < 120; ++i) expected.push_back(i);
  EXPECT_EQ(Returns(out), expected);
  EXPECT_EQ(out.front().episode_length, 75);
  EXPECT_EQ(out.back().episode_length, 129);

  // Rank 1's 30 episodes all end at the last step, 149, after rank 0's there: the last 100 are
  // rank 0's of steps 80..149 and then all of rank 1's.
  const auto late = UnpackEpisodesInJobOrder(
      Summed({Episodes(150, 0.0), Episodes(30, 1000.0, 149, 0)}).data(), 2);
  expected.clear();
  for (int i = 80; i < 150; ++i) expected.push_back(i);
  for (int i = 0; i < 30; ++i) expected.push_back(1000 + i);
  EXPECT_EQ(Returns(late), expected);

  // The same 30 at steps 0..29 end before rank 0's last 100 (steps 50..149): none is kept.
  const auto early =
      UnpackEpisodesInJobOrder(Summed({Episodes(150, 0.0), Episodes(30, 1000.0)}).data(), 2);
  ASSERT_EQ(early.size(), 100u);
  EXPECT_EQ(early.front().episode_return, 50.0);
  EXPECT_EQ(early.back().episode_return, 149.0);
}

TEST(EpisodeWindowTest, BadCountIsABug) {
  std::vector<double> blocks(kEpisodeBlockSize, 0.0);
  blocks[0] = 1.5;
  EXPECT_THROW(UnpackEpisodesInJobOrder(blocks.data(), 1), InternalError);
  blocks[0] = -1.0;
  EXPECT_THROW(UnpackEpisodesInJobOrder(blocks.data(), 1), InternalError);
}

}  // namespace
}  // namespace greenrl::train
