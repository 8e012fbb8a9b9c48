// running_moments.h: count, mean and variance of a stream of vectors, merged across ranks with
// Chan, Golub and LeVeque's parallel formula ("Updating formulae and a pairwise algorithm for
// computing sample variances", 1979; the form SB3's RunningMeanStd.update_from_moments uses).
// The trainer merges the observation normaliser's statistics (env::RunningMeanStd) across ranks
// with these after every rollout. Torch-free.
#pragma once

#include <vector>

namespace greenrl::dist {

struct Moments {
  double count = 0.0;        // samples (may be fractional: SB3 starts at 1e-4)
  std::vector<double> mean;  // float64 [dim]
  std::vector<double> var;   // float64 [dim], population variance
};

// The moments of the union of the samples of a and b:
//   n = na + nb, d = mb - ma, mean = ma + d nb / n, var = (va na + vb nb + d^2 na nb / n) / n.
// An empty side (count 0) returns the other. Errors: std::invalid_argument for different dims.
Moments MergeMoments(const Moments& a, const Moments& b);

// The inverse of MergeMoments: the moments of the samples `whole` holds beyond `part`, given
// whole = MergeMoments(part, rest). Returns count 0 (and zero mean/var) when whole has no more
// samples than part; a variance that rounding drives below 0 is returned as 0.
// Errors: std::invalid_argument for different dims.
Moments SubtractMoments(const Moments& whole, const Moments& part);

}  // namespace greenrl::dist
