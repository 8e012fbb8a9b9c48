#include "greenrl/core/shell_word.h"

#include <string_view>

namespace greenrl {

std::string ShellWord(const std::string& arg) {
  bool plain = !arg.empty();
  for (const char c : arg) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      std::string_view("_-.,:=/+@%").find(c) != std::string_view::npos;
    plain = plain && safe;
  }
  if (plain) return arg;
  std::string quoted = "'";
  for (const char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace greenrl
