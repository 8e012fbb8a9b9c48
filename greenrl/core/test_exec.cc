// test_exec.cc: build/bin/greenrl_test_exec PROGRAM [ARGS...], the command ctest starts every
// test binary through (CMakeLists.txt, greenrl_add_test: the binaries' CROSSCOMPILING_EMULATOR).
// It sets OPENBLAS_CORETYPE where Debian's OpenBLAS would fall back to its generic kernels, as
// build/bin/greenrl's launcher does (openblas_core.h: SetOpenBlasCoreTypeForFallback of
// LinkedOpenBlasCoreName), then execs PROGRAM in place with ARGS. So tests run on the BLAS
// kernels `greenrl` runs on (on the Xeon of 2026-12-03 the test binaries had run OpenBLAS's
// Prescott kernels while greenrl ran its Cooperlake ones), for the cost of one small exec.
// A variable the environment already sets is left alone, as in the launcher.
// Exit code: PROGRAM's; 2 without a PROGRAM; 1 when it cannot be started (one line on stderr).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "greenrl/core/openblas_core.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: greenrl_test_exec PROGRAM [ARGS...]\n");
    return 2;
  }
  greenrl::SetOpenBlasCoreTypeForFallback(greenrl::LinkedOpenBlasCoreName());
  ::execv(argv[1], argv + 1);
  std::fprintf(stderr, "greenrl_test_exec: cannot start %s (%s)\n", argv[1], std::strerror(errno));
  return 1;
}
