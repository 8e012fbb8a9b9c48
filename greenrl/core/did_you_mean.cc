#include "greenrl/core/did_you_mean.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace greenrl {

size_t EditDistance(const std::string& a, const std::string& b) {
  // Three rows of the dynamic programme: i - 2 (for transpositions), i - 1 and i.
  std::vector<size_t> before(b.size() + 1), above(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    before.swap(above);
    above.swap(row);
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] =
          std::min({above[j] + 1, row[j - 1] + 1, above[j - 1] + (a[i - 1] != b[j - 1] ? 1 : 0)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);  // adjacent letters swapped
      }
    }
  }
  return row[b.size()];
}

std::string DidYouMean(const std::string& given, const std::vector<std::string>& candidates) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
  };
  const std::string key = lower(given);
  // Under 4 letters one edit is a different word ("tpu", "cpu"): only the case may differ.
  const size_t limit = given.size() < 4 ? 0 : std::max<size_t>(1, given.size() / 4);
  size_t best = limit;
  std::vector<std::string> closest;
  for (const std::string& candidate : candidates) {
    const std::string name = lower(candidate);
    // An id given without its version ("CartPole" for "CartPole-v1") is compared with the
    // candidate's name before "-v<digits>" too.
    const size_t dash = name.rfind("-v");
    const bool versioned = dash != std::string::npos && dash + 2 < name.size() &&
                           std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dash) + 2,
                                       name.end(), [](char c) { return c >= '0' && c <= '9'; });
    const size_t distance =
        versioned ? std::min(EditDistance(key, name), EditDistance(key, name.substr(0, dash)))
                  : EditDistance(key, name);
    if (distance > limit) continue;
    if (distance < best) {
      best = distance;
      closest.clear();
    }
    if (distance == best) closest.push_back(candidate);
  }
  if (closest.empty()) return "";
  if (closest.size() > 3) closest.resize(3);
  std::string hint = closest.size() == 1 ? "did you mean " : "did you mean one of ";
  for (size_t k = 0; k < closest.size(); ++k) hint += (k ? ", '" : "'") + closest[k] + "'";
  return hint + "? ";
}

std::string OneOfWithHint(const std::string& given, const std::vector<std::string>& candidates) {
  std::string text = DidYouMean(given, candidates) + "one of: ";
  for (size_t k = 0; k < candidates.size(); ++k) text += (k ? ", " : "") + candidates[k];
  return text;
}

}  // namespace greenrl
