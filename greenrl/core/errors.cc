#include "greenrl/core/errors.h"

namespace greenrl {

ConfigError::ConfigError(const std::string& field, const std::string& value,
                         const std::string& accepted)
    : std::runtime_error(field + ": got '" + value + "'; " + accepted),
      field_(field),
      accepted_(accepted) {}

ConfigError::ConfigError(const std::string& message) : std::runtime_error(message) {}

ConfigError ConfigError::WithSource(const std::string& source) const {
  const std::string text = what();
  if (field_.empty() || text.rfind(field_ + ": ", 0) != 0 ||
      text.find(source) != std::string::npos) {
    return *this;
  }
  ConfigError out(field_ + " (in " + source + ")" + text.substr(field_.size()));
  out.field_ = field_;
  out.accepted_ = accepted_;
  return out;
}

ConfigError ConfigError::WithNote(const std::string& note) const {
  ConfigError out(std::string(what()) + "; " + note);
  out.field_ = field_;
  out.accepted_ = accepted_;
  return out;
}

namespace internal {
void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  throw InternalError(std::string(file) + ":" + std::to_string(line) + ": check '" + cond +
                      "' failed: " + msg);
}
}  // namespace internal

}  // namespace greenrl
