// Command lines in greenrl's messages (resume hints, rl-zoo flag hints) that a user pastes into a
// POSIX shell.
#pragma once

#include <string>

namespace greenrl {

// Returns: `arg` as one POSIX shell word: unchanged when it holds only characters no shell splits
// or expands (letters, digits and _-.,:=/+@%), else single-quoted, with each ' written '\''
// ("my run" -> 'my run'; "" -> ''). No errors.
std::string ShellWord(const std::string& arg);

}  // namespace greenrl
