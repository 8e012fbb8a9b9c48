#include "greenrl/dist/running_moments.h"

#include <algorithm>
#include <stdexcept>

namespace greenrl::dist {

namespace {
void CheckDims(const Moments& a, const Moments& b) {
  if (a.mean.size() != b.mean.size() || a.var.size() != a.mean.size() ||
      b.var.size() != b.mean.size()) {
    throw std::invalid_argument("moments of different dimensions: " +
                                std::to_string(a.mean.size()) + " and " +
                                std::to_string(b.mean.size()));
  }
}
}  // namespace

Moments MergeMoments(const Moments& a, const Moments& b) {
  CheckDims(a, b);
  if (b.count <= 0.0) return a;
  if (a.count <= 0.0) return b;
  const double n = a.count + b.count;
  Moments m{n, a.mean, a.var};
  for (size_t k = 0; k < a.mean.size(); ++k) {
    const double d = b.mean[k] - a.mean[k];
    m.mean[k] = a.mean[k] + d * b.count / n;
    m.var[k] = (a.var[k] * a.count + b.var[k] * b.count + d * d * a.count * b.count / n) / n;
  }
  return m;
}

Moments SubtractMoments(const Moments& whole, const Moments& part) {
  CheckDims(whole, part);
  const size_t dim = whole.mean.size();
  const double n = whole.count;
  const double nd = n - part.count;
  if (nd <= 0.0) return Moments{0.0, std::vector<double>(dim, 0.0), std::vector<double>(dim, 0.0)};
  Moments r{nd, std::vector<double>(dim), std::vector<double>(dim)};
  for (size_t k = 0; k < dim; ++k) {
    r.mean[k] = (n * whole.mean[k] - part.count * part.mean[k]) / nd;
    const double d = r.mean[k] - part.mean[k];
    const double m2 = n * whole.var[k] - part.count * part.var[k] - d * d * part.count * nd / n;
    r.var[k] = std::max(0.0, m2 / nd);
  }
  return r;
}

}  // namespace greenrl::dist
