// schedule.h: hyperparameter schedules as rl-baselines3-zoo writes them in its YAML presets.
//
// A schedule is either a constant (`learning_rate: 0.0003`) or a linear decay to zero written
// `lin_<initial>` or `linear_<initial>` (`learning_rate: lin_2.5e-4`, `clip_range: linear_0.2`).
// Following SB3, a schedule is a function of progress_remaining, which goes from 1 at the start of
// training to 0 at the end. Sources: rl_zoo3/utils.py (linear_schedule, and the "lin_" parsing in
// exp_manager.py) and stable_baselines3/common/base_class.py (_update_current_progress_remaining).
//
// The helpers in namespace internal parse and format numbers the way YAML 1.2 (core schema) does;
// Config shares them so that schedules and float keys accept and print numbers identically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace greenrl {

// A constant or linearly decaying hyperparameter. A plain value type: cheap to copy, immutable
// after construction, safe to read from any thread.
struct Schedule {
  enum class Kind {
    kConstant,  // Value(p) == initial for every p
    kLinear,    // Value(p) == p * initial, p clamped into [0, 1]
  };

  Kind kind = Kind::kConstant;
  // The constant value, or the value at the start of training (progress_remaining == 1).
  double initial = 0.0;

  // Returns: a schedule whose value is always `value`.
  static Schedule Constant(double value);
  // Returns: a schedule decaying linearly from `initial` (at the start) to 0 (at the end).
  static Schedule Linear(double initial);

  // The value at a point of training.
  // Args: progress_remaining: 1 at the start of training, 0 at the end, as SB3 computes it:
  //       1 - num_timesteps / total_timesteps.
  // Returns: `initial` for a constant; progress_remaining * initial for a linear schedule, with
  //       progress_remaining first clamped into [0, 1]. Why clamp: SB3 updates progress_remaining
  //       once per rollout, so when total_timesteps is not a multiple of the rollout size
  //       (n_envs * n_steps) the last rollout runs past the total and 1 - num_timesteps /
  //       total_timesteps goes slightly negative, which would give a negative learning rate or
  //       clip range (gradient ascent on the loss). Clamping keeps the value between 0 and initial.
  //       A NaN progress_remaining is a caller bug and is treated as 0.
  double Value(double progress_remaining) const;

  // Parses rl-zoo schedule text.
  // Args: field: the config key being parsed, used in the error ("learning_rate");
  //       text: a finite number ("0.2", "3e-4") or "lin_" or "linear_" followed by one
  //       ("lin_0.001", "linear_2.5e-4", rl-zoo's two usual spellings); surrounding spaces are
  //       ignored.
  // Returns: the constant or linear schedule.
  // Errors: ConfigError(field, text, internal::kScheduleAccepted) when the text is none of
  //       these, or its number is not finite (.nan, .inf).
  static Schedule Parse(const std::string& field, const std::string& text);

  // Returns: the text Parse reads back into an equal schedule: "lin_0.001" or "0.2", with the
  //       shortest decimal form that round-trips the double exactly.
  std::string ToString() const;

  friend bool operator==(const Schedule& a, const Schedule& b) {
    return a.kind == b.kind && a.initial == b.initial;
  }
  friend bool operator!=(const Schedule& a, const Schedule& b) { return !(a == b); }
};

namespace internal {

// The `accepted` text of Schedule::Parse's ConfigError; Config extends it with ranges.
inline constexpr char kScheduleAccepted[] =
    "a number, or lin_<number> or linear_<number> (linear to 0), e.g. lin_0.001";

// Parses a YAML 1.2 core-schema number: an int ([-+]?[0-9]+) or a float
// ([-+]?(.[0-9]+|[0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?, .inf, -.inf, .nan in any of YAML's three
// casings). Locale-independent. No surrounding spaces, no hex/octal, no "inf"/"nan" without a dot.
// Returns: the value (possibly non-finite), or nullopt when `text` is not such a number.
std::optional<double> ParseYamlNumber(const std::string& text);

// Parses an integer as greenrl's int config keys read one: a YAML 1.2 int ([-+]?[0-9]+), the
// same with digit groups joined by single underscores ("100_000", as Python's int() reads it;
// rl-zoo's PyYAML reads it too, and more forms), or a ParseYamlNumber float with an integral value
// in int64 range ("1e5" and "1.0e5" -> 100000, as rl-zoo writes `n_timesteps: !!float 1e5`).
// Returns nullopt for anything else ("1.5", "1e99", ".inf", "abc", "1__000", "_1").
std::optional<int64_t> ParseYamlInt(const std::string& text);

// Returns: the shortest decimal text of `value` that parses back to the same double
// ("0.001", "2.5e-05", "100000"); ".nan", ".inf", "-.inf" for non-finite values (YAML spelling).
std::string FormatShortestDouble(double value);

}  // namespace internal
}  // namespace greenrl
