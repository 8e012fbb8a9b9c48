// test_exec.cc: build/bin/greenrl_test_exec PROGRAM [ARGS...], the command ctest starts every
// test binary through (CMakeLists.txt, greenrl_add_test: the binaries' CROSSCOMPILING_EMULATOR),
// for listing its tests and for running each one. It sets the tests' environment, then execs
// PROGRAM in place with ARGS:
//   - OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1 (one BLAS thread unless a test asks for
//     more), TEST_TMPDIR=<build>/test-tmp (GoogleTest's TempDir(), so two checkouts running
//     their suites at once do not share /tmp/greenrl_* paths) and GREENRL_UNDER_CTEST=1. These
//     were gtest_discover_tests' ENVIRONMENT property, of which CMake 3.25 passed on only the
//     first entry (its PROPERTIES list is split at every ';').
//   - OPENBLAS_CORETYPE where Debian's OpenBLAS would fall back to its generic kernels, as
//     build/bin/greenrl's launcher does (openblas_core.h: SetOpenBlasCoreTypeForFallback of
//     LinkedOpenBlasCoreName; a value the environment already sets is left alone). So tests
//     run on the BLAS kernels `greenrl` runs (on the Xeon of 2026-12-03 the test binaries had
//     run OpenBLAS's Prescott kernels while greenrl ran its Cooperlake ones).
//   - OMP_WAIT_POLICY=PASSIVE where unset, as the launcher sets it (SetPassiveOpenMpWaitPolicy).
// Exit code: PROGRAM's; 2 without a PROGRAM; 1 when it cannot be started (one line on stderr).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "greenrl/core/openblas_core.h"
#include "greenrl/core/test_paths.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: greenrl_test_exec PROGRAM [ARGS...]\n");
    return 2;
  }
  if (setenv("OMP_NUM_THREADS", "1", 1) != 0 || setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0 ||
      setenv("TEST_TMPDIR", greenrl::test_paths::TestTmpDir(), 1) != 0 ||
      setenv("GREENRL_UNDER_CTEST", "1", 1) != 0) {
    std::fprintf(stderr, "greenrl_test_exec: cannot set the test environment (%s)\n",
                 std::strerror(errno));
    return 1;
  }
  greenrl::SetOpenBlasCoreTypeForFallback(greenrl::LinkedOpenBlasCoreName());
  greenrl::SetPassiveOpenMpWaitPolicy();
  ::execv(argv[1], argv + 1);
  std::fprintf(stderr, "greenrl_test_exec: cannot start %s (%s)\n", argv[1], std::strerror(errno));
  return 1;
}
