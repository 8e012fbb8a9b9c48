#include "greenrl/train/episode_window.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "greenrl/core/errors.h"

namespace greenrl::train {

void PackEpisodeBlock(const std::vector<algo::EpisodeRecord>& episodes, double* block) {
  std::fill(block, block + kEpisodeBlockSize, 0.0);
  const size_t n = episodes.size();
  const size_t kept = std::min(n, static_cast<size_t>(kEpisodeWindow));
  block[0] = static_cast<double>(n);
  for (size_t j = 0; j < kept; ++j) {
    const algo::EpisodeRecord& e = episodes[n - kept + j];
    block[1 + 3 * j] = e.episode_return;
    block[2 + 3 * j] = static_cast<double>(e.episode_length);
    block[3 + 3 * j] = static_cast<double>(e.rollout_step);
  }
}

std::vector<algo::EpisodeRecord> UnpackEpisodesInJobOrder(const double* blocks, int world_size) {
  std::vector<std::tuple<int64_t, int, size_t>> order;  // (rollout step, rank, index in block)
  for (int q = 0; q < world_size; ++q) {
    const double* block = blocks + static_cast<size_t>(q) * kEpisodeBlockSize;
    const double n = block[0];
    GREENRL_CHECK(n >= 0 && std::floor(n) == n,
                  "episode block of rank " + std::to_string(q) + " holds a bad count");
    const size_t kept = std::min(static_cast<size_t>(n), static_cast<size_t>(kEpisodeWindow));
    for (size_t j = 0; j < kept; ++j) {
      order.emplace_back(static_cast<int64_t>(block[3 + 3 * j]), q, j);
    }
  }
  std::sort(order.begin(), order.end());
  const size_t first = order.size() > static_cast<size_t>(kEpisodeWindow)
                           ? order.size() - static_cast<size_t>(kEpisodeWindow)
                           : 0;
  std::vector<algo::EpisodeRecord> out;
  out.reserve(order.size() - first);
  for (size_t i = first; i < order.size(); ++i) {
    const auto& [step, q, j] = order[i];
    const double* block = blocks + static_cast<size_t>(q) * kEpisodeBlockSize;
    out.push_back({block[1 + 3 * j], static_cast<int64_t>(block[2 + 3 * j]), step});
  }
  return out;
}

}  // namespace greenrl::train
