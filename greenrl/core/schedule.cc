#include "greenrl/core/schedule.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "greenrl/core/errors.h"

namespace greenrl {
namespace {

constexpr char kLinearPrefix[] = "lin_";
// rl-zoo's other common spelling (rl-zoo reads any "<word>_<value>" as linear; greenrl takes these
// two outside rl-zoo files, and ZooScheduleText maps the rest inside them).
constexpr char kLinearLongPrefix[] = "linear_";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// True when `s` matches YAML 1.2's core-schema int or float regex (finite forms only).
bool MatchesYamlFiniteNumber(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < n && IsDigit(s[i])) ++i, ++int_digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && IsDigit(s[i])) ++i, ++frac_digits;
    // YAML 1.2 allows "1." but not "." alone; ".5" needs a digit after the dot.
    if (int_digits == 0 && frac_digits == 0) return false;
  } else if (int_digits == 0) {
    return false;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < n && IsDigit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == n;
}

// For a text that MatchesYamlFiniteNumber and is not zero: roughly log10 of its magnitude
// (the position of its first significant digit plus its exponent). Only its sign matters here:
// it tells an overflowing number from an underflowing one.
long DecimalExponent(const std::string& s) {
  size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  long position = 0;
  bool seen_significant = false;
  bool after_dot = false;
  for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') {
      after_dot = true;
    } else if (!seen_significant && s[i] == '0') {
      if (after_dot) --position;
    } else {
      if (!seen_significant && after_dot) --position;
      seen_significant = true;
      if (!after_dot) ++position;
    }
  }
  long exponent = 0;
  if (i < s.size()) {
    const std::string digits = s.substr(i + 1);
    // Saturate: anything past 100000 over- or underflows a double either way.
    const bool negative_exponent = !digits.empty() && digits[0] == '-';
    for (char c : digits) {
      if (IsDigit(c) && exponent < 100000) exponent = exponent * 10 + (c - '0');
    }
    if (negative_exponent) exponent = -exponent;
  }
  return position + exponent;
}

}  // namespace

namespace internal {

std::optional<double> ParseYamlNumber(const std::string& text) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  for (const char* inf : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}) {
    if (text == inf) return kInf;
  }
  for (const char* inf : {"-.inf", "-.Inf", "-.INF"}) {
    if (text == inf) return -kInf;
  }
  if (!MatchesYamlFiniteNumber(text)) return std::nullopt;
  // from_chars is locale-independent but rejects a leading '+'.
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    // Overflow ("1e999") reads as infinity and is rejected by callers as non-finite; underflow
    // ("1e-999") reads as zero, as in YAML parsers built on strtod.
    const bool negative = text[0] == '-';
    const bool overflow = DecimalExponent(text) > 0;
    return overflow ? (negative ? -kInf : kInf) : (negative ? -0.0 : 0.0);
  }
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseYamlInt(const std::string& text) {
  // Digit groups joined by single underscores ("100_000"), as Python's int() reads them (PEP 515;
  // PyYAML, rl-zoo's parser, reads them too, and more forms): the digits without them.
  if (text.find('_') != std::string::npos) {
    const size_t start = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
    std::string digits = text.substr(0, start);
    bool after_digit = false;
    for (size_t i = start; i < text.size(); ++i) {
      const char c = text[i];
      if (c >= '0' && c <= '9') {
        digits += c, after_digit = true;
      } else if (c == '_' && after_digit && i + 1 < text.size()) {
        after_digit = false;
      } else {
        return std::nullopt;
      }
    }
    return after_digit ? ParseYamlInt(digits) : std::nullopt;
  }
  const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* last = text.data() + text.size();
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc() && ptr == last && first != last) return value;
  const std::optional<double> number = ParseYamlNumber(text);
  // 2^63 is exactly representable; every double below it in magnitude fits int64_t.
  constexpr double kTwoPow63 = 9223372036854775808.0;
  if (!number || !std::isfinite(*number) || std::trunc(*number) != *number ||
      *number >= kTwoPow63 || *number < -kTwoPow63) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*number);
}

std::string FormatShortestDouble(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  // Fixed notation where it reads naturally (0.0001 .. 1e15), scientific outside; both are the
  // shortest digits that round-trip (std::to_chars without a precision).
  const double magnitude = std::abs(value);
  const bool fixed = magnitude == 0.0 || (magnitude >= 1e-4 && magnitude < 1e15);
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof(buffer), value,
                    fixed ? std::chars_format::fixed : std::chars_format::scientific);
  return std::string(buffer, result.ptr);
}

}  // namespace internal

Schedule Schedule::Constant(double value) { return Schedule{Kind::kConstant, value}; }

Schedule Schedule::Linear(double initial) { return Schedule{Kind::kLinear, initial}; }

double Schedule::Value(double progress_remaining) const {
  if (kind == Kind::kConstant) return initial;
  // See the header: SB3's progress_remaining dips below 0 on the last rollout when
  // total_timesteps is not a multiple of n_envs * n_steps.
  double p = progress_remaining;
  if (!(p >= 0.0)) p = 0.0;  // also maps NaN to 0
  if (p > 1.0) p = 1.0;
  return p * initial;
}

Schedule Schedule::Parse(const std::string& field, const std::string& text) {
  const std::string trimmed = Trim(text);
  size_t prefix = 0;
  if (trimmed.rfind(kLinearPrefix, 0) == 0) prefix = sizeof(kLinearPrefix) - 1;
  if (trimmed.rfind(kLinearLongPrefix, 0) == 0) prefix = sizeof(kLinearLongPrefix) - 1;
  const bool linear = prefix > 0;
  const std::string number = trimmed.substr(prefix);
  const std::optional<double> value = internal::ParseYamlNumber(number);
  if (!value || !std::isfinite(*value)) throw ConfigError(field, text, internal::kScheduleAccepted);
  return linear ? Linear(*value) : Constant(*value);
}

std::string Schedule::ToString() const {
  const std::string number = internal::FormatShortestDouble(initial);
  return kind == Kind::kLinear ? kLinearPrefix + number : number;
}

}  // namespace greenrl
