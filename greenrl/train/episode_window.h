// episode_window.h: the finished training episodes behind SB3's rollout/ep_rew_mean and
// rollout/ep_len_mean, for one process or a data-parallel job. SB3 keeps the last 100 in
// BaseAlgorithm.ep_info_buffer (a deque of maxlen stats_window_size, default 100; SB3 2.4.1).
//
// Data-parallel: each rank packs its iteration's episodes into a block of the iteration's
// metrics all-reduce (a sum over ranks; each rank fills only its own block, the others are
// zero), and every rank unpacks the same job-wide list, so every rank keeps the same window and
// checkpoints it. The ranks step their envs in lockstep, one vec step each per rollout step, so
// the job's episodes are ordered as one process stepping all ranks' envs would append them:
// by the rollout step that ended them (EpisodeRecord::rollout_step), then by rank, then in the
// rank's own order (its env order within a step). Torch-free.
#pragma once

#include <cstddef>
#include <vector>

#include "greenrl/algo/algorithm.h"

namespace greenrl::train {

// Episodes behind rollout/ep_rew_mean (SB3's stats_window_size default).
inline constexpr int kEpisodeWindow = 100;

// Doubles in one rank's block: [n, return_0, length_0, rollout_step_0, ..., return_99,
// length_99, rollout_step_99].
inline constexpr size_t kEpisodeBlockSize = 1 + 3 * static_cast<size_t>(kEpisodeWindow);

// Writes `episodes` (one rank's finished episodes of one iteration, in the order they finished)
// into `block` (kEpisodeBlockSize doubles): n = episodes.size(), then the last min(n, 100) as
// (episode_return, episode_length, rollout_step) triples, zeros after them. Only those can be
// among the job's last 100: an episode with 100 of its own rank's episodes after it has at
// least 100 after it in the job's order too.
void PackEpisodeBlock(const std::vector<algo::EpisodeRecord>& episodes, double* block);

// Reads `world_size` blocks (world_size * kEpisodeBlockSize doubles, rank q's at
// q * kEpisodeBlockSize, as PackEpisodeBlock wrote them and the all-reduce summed them) and
// returns the job's last min(total, 100) episodes of the iteration in the job's order (rollout
// step, rank, the rank's own order), oldest first.
// Errors: InternalError (GREENRL_CHECK) when a block's n is negative or not an integer.
std::vector<algo::EpisodeRecord> UnpackEpisodesInJobOrder(const double* blocks, int world_size);

}  // namespace greenrl::train
