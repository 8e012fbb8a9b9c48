// same_lines.h: what `greenrl launch` shows of its ranks' stderr. A greenrl message that every
// rank prints alike (a config error or a preset warning each rank finds on its own) is shown
// once, under the first rank that printed it; the other ranks' copies are counted instead.
// Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace greenrl::cli {

// Decides, line by line, which of the ranks' stderr lines are shown.
//
// A greenrl message starts at a line beginning "greenrl: " (errors, failures and most warnings)
// or "greenrl warning: " (the meters' and CartPole's warnings) and goes on over the rank's next
// lines until its next such line: a LibTorch error's what() (a c10d timeout, say) spans several
// lines after "greenrl: failed: ". A first line is hidden when another rank printed it word for
// word first; a later line of a message is hidden when another rank printed the same line under
// the same first line. When a later line differs from every other rank's (a rank's own frame or
// address), it is shown, and so is its first line once, if that was hidden, so that no line
// stands without the message it belongs to. Lines before a rank's first greenrl line, and a
// rank's repeats of its own lines, are always shown.
class SameLines {
 public:
  // The lines to print for `rank`'s stderr line `text` (without its newline), in order: none
  // (hidden), the line itself, or a hidden first line then this one. Records what it shows.
  // The views are valid until the next call.
  std::vector<std::string_view> Show(int rank, std::string_view text);

  // Lines hidden so far (counted, never printed; a first line shown late is not counted).
  int64_t hidden() const;
  // The ranks whose lines hidden() counts, in increasing order.
  std::set<int> hidden_from() const;

  // Distinct lines remembered at most: past it, new lines are shown without being remembered
  // (a run that prints thousands of distinct greenrl lines does not grow the launcher).
  static constexpr size_t kMaxRemembered = 4096;

 private:
  // The message a rank is in: its first line, and whether that was shown.
  struct Message {
    std::string first;
    bool first_shown = false;
  };

  // Whether `key` was first printed by another rank (true: hide); records it for `rank` when new.
  bool SeenFromOther(int rank, const std::string& key);

  std::map<std::string, int, std::less<>> first_rank_;  // key -> the rank that printed it first
  std::map<int, Message> message_;                      // rank -> its current greenrl message
  std::map<int, int64_t> hidden_;                       // rank -> its lines hidden (> 0)
};

}  // namespace greenrl::cli
