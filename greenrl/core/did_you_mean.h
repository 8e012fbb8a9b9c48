// did_you_mean.h: "did you mean" hints for a mistyped name among known ones (config keys, env
// ids, algorithm ids, enumerated values), as Gymnasium's gym.make gives for an env id.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace greenrl {

// Edit distance between a and b with insertions, deletions, substitutions and transpositions of
// two adjacent letters each costing 1 (the optimal string alignment distance, Damerau's typo
// classes: "bset" is one edit from "best"), case sensitive. O(|a| |b|) time, O(|b|) memory.
size_t EditDistance(const std::string& a, const std::string& b);

// The hint for `given`, a name that is none of `candidates`: "did you mean 'X'? " for the
// closest candidate (or "did you mean one of 'X', 'Y'? " for up to three as close, in the order
// given) when it is close: at most max(1, given.size() / 4) edits apart (0 below 4 letters:
// "tpu" is not a typo of "cpu"), compared without regard to case (so "cartpole-v1" finds
// "CartPole-v1", "CartPol-v1" finds it too, and "CPU" finds "cpu"); a candidate id ending in
// "-v<digits>" is also compared without that suffix, so "CartPole" and "hopper" find
// "CartPole-v1" and "Hopper-v4"; "" when none is close.
// The trailing space lets callers prefix it to the list of accepted values.
std::string DidYouMean(const std::string& given, const std::vector<std::string>& candidates);

// ConfigError's `accepted` text for a name that is none of `candidates`: DidYouMean's hint, then
// "one of: a, b, c" (every candidate, in order), e.g. "did you mean 'ppo'? one of: ppo, dqn, sac".
std::string OneOfWithHint(const std::string& given, const std::vector<std::string>& candidates);

}  // namespace greenrl
