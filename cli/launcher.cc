// launcher.cc: build/bin/greenrl, a small torch-free front for build/bin/greenrl_cli (the CLI
// itself, main.cc), so that LibTorch loads once per command.
//
// Debian 12's OpenBLAS picks its kernels when it loads and, on a CPU newer than it knows, falls
// back to slow generic ones; the fix is OPENBLAS_CORETYPE, which it reads only then
// (greenrl/core/openblas_core.h). greenrl_cli, started directly, restarts itself with the variable
// set, which loads Debian's LibTorch and its ~290 shared libraries a second time: `greenrl
// --help` took 1.02-1.22 s instead of 0.67-0.71 s (Xeon family 6 model 207, 2026-12-03). The
// launcher asks OpenBLAS alone (LinkedOpenBlasCoreName: milliseconds), sets the variable where
// greenrl_cli would have, sets OMP_WAIT_POLICY=PASSIVE where unset (libgomp, too, reads it only
// as it loads; SetPassiveOpenMpWaitPolicy: its idle threads then sleep instead of spinning), and
// execs greenrl_cli in place: the same pid, arguments (argv[0] included, so messages still say
// `greenrl`) and otherwise the same environment. greenrl_cli started directly has
// OMP_WAIT_POLICY set only when it restarts (SpinningOpenMpWarning says so where it matters).
// greenrl_cli is looked up beside the launcher's own file (/proc/self/exe, or argv[0] and PATH
// where /proc is not mounted). Exit code: greenrl_cli's; 1 when greenrl_cli is not beside the
// launcher or cannot be started (one line on stderr naming its path).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "greenrl/core/openblas_core.h"

namespace {

// The directory (with a trailing '/') of the file this process runs: /proc/self/exe's target,
// else argv[0]'s directory when it has a '/', else the first PATH entry holding an executable
// argv[0] (as the shell found it); "" when none of these tells.
std::string OwnDirectory(const char* argv0) {
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    const std::string exe(self, static_cast<size_t>(n));
    return exe.substr(0, exe.rfind('/') + 1);
  }
  const std::string name = argv0 != nullptr ? argv0 : "";
  if (name.find('/') != std::string::npos) return name.substr(0, name.rfind('/') + 1);
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (!name.empty() && ::access(candidate.c_str(), X_OK) == 0)
      return candidate.substr(0, candidate.rfind('/') + 1);
    start = end + 1;
  }
  return "";
}

}  // namespace

int main(int, char** argv) {
  greenrl::SetOpenBlasCoreTypeForFallback(greenrl::LinkedOpenBlasCoreName());
  greenrl::SetPassiveOpenMpWaitPolicy();  // libgomp's idle threads sleep instead of spinning
  const std::string program = OwnDirectory(argv[0]) + "greenrl_cli";
  ::execv(program.c_str(), argv);
  std::fprintf(stderr,
               "greenrl: error: cannot start %s (%s); it is built beside build/bin/greenrl by "
               "`make build`\n",
               program.c_str(), std::strerror(errno));
  return 1;
}
