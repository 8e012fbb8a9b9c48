#include "greenrl/env/spaces.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "greenrl/core/errors.h"
#include "greenrl/core/rng.h"

namespace greenrl::env {

int64_t Box::dim() const {
  int64_t d = 1;
  for (int64_t s : shape) d *= s;
  return d;
}

int64_t EnvSpec::act_dim() const {
  if (const Box* box = std::get_if<Box>(&action_space)) return box->dim();
  return 1;
}

int64_t EnvSpec::num_actions() const {
  const Discrete* discrete = std::get_if<Discrete>(&action_space);
  GREENRL_CHECK(discrete != nullptr, id + " has a Box action space, not a Discrete one");
  return discrete->n;
}

namespace {
// "inf", "-inf" or the shortest round-trip decimal of a float32 bound.
std::string Bound(float v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

// One side of a Box as Gymnasium's Box.__repr__ writes it (spaces/box.py, _short_repr): the
// common value alone when every component is the same, as NumPy prints a float32 scalar ("-1.0",
// "inf"); otherwise the list "[a, b, ...]".
std::string Bounds(const std::vector<float>& v) {
  if (!v.empty() && std::all_of(v.begin(), v.end(), [&](float x) { return x == v[0]; })) {
    std::string scalar = Bound(v[0]);
    if (scalar.find_first_of(".ein") == std::string::npos) scalar += ".0";  // NumPy's "1.0"
    return scalar;
  }
  std::string list;
  for (size_t k = 0; k < v.size(); ++k) list += (k ? ", " : "") + Bound(v[k]);
  return "[" + list + "]";
}

// A shape as Python's tuple repr, as Gymnasium prints it: "()", "(4,)", "(2, 3)".
std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}
}  // namespace

std::string FormatSpace(const Box& box) {
  return fmt::format("Box({}, {}, {}, float32)", Bounds(box.low), Bounds(box.high),
                     ShapeText(box.shape));
}

std::string FormatSpace(const ActionSpace& space) {
  if (const Discrete* d = std::get_if<Discrete>(&space)) return fmt::format("Discrete({})", d->n);
  return FormatSpace(std::get<Box>(space));
}

void CheckSampleable(const std::string& env_id, const ActionSpace& space) {
  if (const Discrete* discrete = std::get_if<Discrete>(&space)) {
    if (discrete->n < 1) {
      throw std::invalid_argument(env_id + ": action space Discrete(" +
                                  std::to_string(discrete->n) +
                                  ") has no action; random actions need n >= 1");
    }
    return;
  }
  const Box& box = std::get<Box>(space);
  if (std::any_of(box.shape.begin(), box.shape.end(), [](int64_t n) { return n < 1; })) {
    throw std::invalid_argument(env_id + ": action space Box has the shape " +
                                ShapeText(box.shape) +
                                "; its entries need to be >= 1 (a shape of () is one value)");
  }
  const size_t dim = static_cast<size_t>(box.dim());
  if (box.low.size() != dim || box.high.size() != dim) {
    std::ostringstream message;
    message << env_id << ": action space Box has " << dim << " components but " << box.low.size()
            << " low and " << box.high.size() << " high bounds";
    throw std::invalid_argument(message.str());
  }
  for (size_t c = 0; c < dim; ++c) {
    const float low = box.low[c], high = box.high[c];
    if (!std::isfinite(low) || !std::isfinite(high) || !(low <= high) ||
        !std::isfinite(high - low)) {  // e.g. [-FLT_MAX, FLT_MAX]: the width overflows float32
      std::ostringstream message;
      message << env_id << ": action space component " << c << " has bounds [" << low << ", "
              << high << "]; random actions need finite bounds low <= high whose width "
              << "high - low is finite in float32";
      throw std::invalid_argument(message.str());
    }
  }
}

void SampleActionRows(const ActionSpace& space, uint64_t key, int begin, int end,
                      int64_t* discrete_actions, float* continuous_actions) {
  if (begin >= end) return;
  if (const Discrete* discrete = std::get_if<Discrete>(&space)) {
    const uint64_t n = static_cast<uint64_t>(discrete->n);
    if (n == 1) {
      for (int i = begin; i < end; ++i) discrete_actions[i] = 0;
    } else if ((n & (n - 1)) == 0) {
      int bits = 0;
      while ((uint64_t{1} << bits) < n) ++bits;
      const int per_word = 64 / bits;
      const uint64_t mask = n - 1;
      for (int i = begin; i < end;) {
        const int w = i / per_word;
        const int word_end = std::min(end, (w + 1) * per_word);
        const uint64_t word = SplitMix64At(key, static_cast<uint64_t>(w));
        for (int j = i; j < word_end; ++j) {
          discrete_actions[j] = static_cast<int64_t>((word >> ((j - w * per_word) * bits)) & mask);
        }
        i = word_end;
      }
    } else {
      for (int i = begin; i < end; ++i) {
        const unsigned __int128 scaled =
            static_cast<unsigned __int128>(SplitMix64At(key, static_cast<uint64_t>(i))) * n;
        discrete_actions[i] = static_cast<int64_t>(scaled >> 64);
      }
    }
    return;
  }
  const Box& box = std::get<Box>(space);
  const int64_t dim = box.dim();
  for (int64_t i = begin; i < end; ++i) {
    for (int64_t c = 0; c < dim; ++c) {
      const uint64_t index = static_cast<uint64_t>(i * dim + c);
      const float u = static_cast<float>(SplitMix64At(key, index) >> 40) * 0x1p-24f;
      continuous_actions[i * dim + c] = box.low[c] + (box.high[c] - box.low[c]) * u;
    }
  }
}

}  // namespace greenrl::env
