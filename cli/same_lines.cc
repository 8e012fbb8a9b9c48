#include "cli/same_lines.h"

namespace greenrl::cli {
namespace {

bool StartsMessage(std::string_view text) {
  return text.rfind("greenrl: ", 0) == 0 || text.rfind("greenrl warning: ", 0) == 0;
}

}  // namespace

bool SameLines::SeenFromOther(int rank, const std::string& key) {
  const auto it = first_rank_.find(key);
  if (it == first_rank_.end()) {
    if (first_rank_.size() < kMaxRemembered) first_rank_.emplace(key, rank);
    return false;
  }
  return it->second != rank;
}

std::vector<std::string_view> SameLines::Show(int rank, std::string_view text) {
  if (StartsMessage(text)) {
    Message& m = message_[rank];
    m.first = std::string(text);
    m.first_shown = !SeenFromOther(rank, m.first);
    if (m.first_shown) return {text};
    ++hidden_[rank];
    return {};
  }
  const auto it = message_.find(rank);
  if (it == message_.end()) return {text};  // not in a greenrl message
  Message& m = it->second;
  // A later line's key is its message's first line, a newline, then the line: the same text
  // under another first line is another line.
  if (SeenFromOther(rank, m.first + "\n" + std::string(text))) {
    ++hidden_[rank];
    return {};
  }
  if (m.first_shown) return {text};
  m.first_shown = true;  // shown now, before the line that differs; no longer hidden
  if (--hidden_[rank] == 0) hidden_.erase(rank);
  return {m.first, text};
}

int64_t SameLines::hidden() const {
  int64_t total = 0;
  for (const auto& [rank, count] : hidden_) total += count;
  return total;
}

std::set<int> SameLines::hidden_from() const {
  std::set<int> ranks;
  for (const auto& [rank, count] : hidden_) ranks.insert(rank);
  return ranks;
}

}  // namespace greenrl::cli
