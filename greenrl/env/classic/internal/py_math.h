// py_math.h: float64 operations spelled the way Gymnasium's Python code computes them, where C++'s
// natural spelling can round differently. Internal to env/classic.
#pragma once

#include <cmath>

namespace greenrl::env::internal {

// x**2 as NumPy (float64 scalar `x ** 2`) and Python (`math.pow(x, 2)`) compute it: libm's
// pow(x, 2.0). glibc's pow is not correctly rounded (< 0.52 ulp), so in rare cases it differs
// from x * x by one ulp; Acrobot-v1's golden trajectories hit two such cases. The exponent is read
// through a volatile so the compiler cannot fold pow(x, 2.0) into x * x.
inline double PowSquare(double x) {
  static const volatile double kTwo = 2.0;
  return std::pow(x, kTwo);
}

}  // namespace greenrl::env::internal
