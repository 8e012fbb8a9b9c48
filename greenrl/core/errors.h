// errors.h: greenrl's error types and the invariant check macro.
//
// One rule per kind of error (../shared/STYLE.md, "Errors"):
// - bad configuration: ConfigError, thrown before any work starts, naming the field, the value
//   given and what is accepted; the CLI maps it to exit code 2;
// - broken invariants: GREENRL_CHECK(cond, msg) throws InternalError with file and line.
#pragma once

#include <stdexcept>
#include <string>

namespace greenrl {

// Bad user input (config file, --set override, CLI argument, checkpoint from another run).
// what() reads "<field>: got '<value>'; <accepted>" so that one line tells the user what to fix.
class ConfigError : public std::runtime_error {
 public:
  // Args: field: dotted config key or CLI flag ("n_steps", "carbon.pue", "--episodes");
  //       value: the value as the user wrote it; accepted: what would have been accepted.
  ConfigError(const std::string& field, const std::string& value, const std::string& accepted);
  // A message that does not fit the field/value/accepted form (e.g. unreadable file).
  explicit ConfigError(const std::string& message);

  const std::string& field() const { return field_; }
  // What would have been accepted (the constructor's `accepted`); empty for the message-only
  // form.
  const std::string& accepted() const { return accepted_; }

  // The same error with its field named as found in `source` (the preset file it came from):
  // "<field> (in <source>): got '<value>'; <accepted>". Returned unchanged when it has no field
  // or already names `source`.
  ConfigError WithSource(const std::string& source) const;
  // The same error with "; <note>" appended to its message (field and accepted kept).
  ConfigError WithNote(const std::string& note) const;

 private:
  std::string field_;
  std::string accepted_;
};

// A broken invariant inside greenrl: a bug, never a user error.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace internal

}  // namespace greenrl

// GREENRL_CHECK(cond, msg): throws greenrl::InternalError("file:line: check 'cond' failed: msg").
#define GREENRL_CHECK(cond, msg)                                                     \
  do {                                                                               \
    if (!(cond)) ::greenrl::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
