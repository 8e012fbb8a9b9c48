// episode_window.h: the finished training episodes behind SB3's rollout/ep_rew_mean and
// rollout/ep_len_mean, for one process or a data-parallel job. SB3 keeps the last 100 in
// BaseAlgorithm.ep_info_buffer (a deque of maxlen stats_window_size, default 100; SB3 2.4.1).
//
// Data-parallel: each rank packs its iteration's episodes into a block of the iteration's
// metrics all-reduce (a sum over ranks; each rank fills only its own block, the others are
// zero), and every rank unpacks the same job-wide list, so every rank keeps the same window and
// checkpoints it. Within one iteration the ranks' episodes are taken in turns: each rank's first
// episode (rank order), then each rank's second, and so on, the order a single process would
// see if the ranks stepped in lockstep. Torch-free.
#pragma once

#include <cstddef>
#include <vector>

#include "greenrl/algo/algorithm.h"

namespace greenrl::train {

// Episodes behind rollout/ep_rew_mean (SB3's stats_window_size default).
inline constexpr int kEpisodeWindow = 100;

// Doubles in one rank's block: [n, return_0, length_0, ..., return_99, length_99].
inline constexpr size_t kEpisodeBlockSize = 1 + 2 * static_cast<size_t>(kEpisodeWindow);

// Writes `episodes` (one rank's finished episodes of one iteration, in the order they finished)
// into `block` (kEpisodeBlockSize doubles): n = episodes.size(), then the last min(n, 100) as
// (episode_return, episode_length) pairs, zeros after them. Only those can be among the job's
// last 100 in turn order: an episode with 100 of its own rank's episodes after it has at least
// 100 after it in the job's order too.
void PackEpisodeBlock(const std::vector<algo::EpisodeRecord>& episodes, double* block);

// Reads `world_size` blocks (world_size * kEpisodeBlockSize doubles, rank q's at
// q * kEpisodeBlockSize, as PackEpisodeBlock wrote them and the all-reduce summed them) and
// returns the job's last min(total, 100) episodes of the iteration in turn order (position
// within its rank's iteration first, rank second), oldest first.
// Errors: InternalError (GREENRL_CHECK) when a block's n is negative or not an integer.
std::vector<algo::EpisodeRecord> UnpackEpisodesInTurns(const double* blocks, int world_size);

}  // namespace greenrl::train
