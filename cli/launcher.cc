// launcher.cc: build/bin/greenrl, a small torch-free front for build/bin/greenrl_cli (the CLI
// itself, main.cc), so that LibTorch loads once per command.
//
// Debian 12's OpenBLAS picks its kernels when it loads and, on a CPU newer than it knows, falls
// back to slow generic ones; the fix is OPENBLAS_CORETYPE, which it reads only then
// (greenrl/core/openblas_core.h). greenrl_cli, started directly, restarts itself with the variable
// set, which loads Debian's LibTorch and its ~290 shared libraries a second time: `greenrl
// --help` took 1.02-1.22 s instead of 0.67-0.71 s (Xeon family 6 model 207, 2026-12-03). The
// launcher asks OpenBLAS alone (LinkedOpenBlasCoreName: milliseconds), sets the variable where
// greenrl_cli would have, and execs greenrl_cli in place: the same pid, arguments (argv[0]
// included, so messages still say `greenrl`) and otherwise the same environment. Nothing else
// differs from starting greenrl_cli directly. Exit code: greenrl_cli's; 1 when greenrl_cli is
// not beside the launcher or cannot be started (one line on stderr naming its path).
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "greenrl/core/openblas_core.h"

int main(int, char** argv) {
  greenrl::SetOpenBlasCoreTypeForFallback(greenrl::LinkedOpenBlasCoreName());
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string program = "greenrl_cli";  // without /proc: the working directory's
  if (n > 0) {
    const std::string exe(self, static_cast<size_t>(n));
    program = exe.substr(0, exe.rfind('/') + 1) + program;
  }
  ::execv(program.c_str(), argv);
  std::fprintf(stderr,
               "greenrl: error: cannot start %s (%s); it is built beside build/bin/greenrl by "
               "`make build`\n",
               program.c_str(), std::strerror(errno));
  return 1;
}
