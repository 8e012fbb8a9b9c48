// test_paths.h (tests only; the greenrl_test_paths library every greenrl_add_test target links):
// the paths of this build's programs and test folders. They come from a file CMake generates
// (test_paths.cc.in), not from -D flags, so that the test objects do not depend on the folder
// the checkout is in and ccache shares them between clones (the checkout itself:
// greenrl::SourceTreeDir() in install_paths.h). Each returns an absolute path in static storage.
#pragma once

namespace greenrl::test_paths {

// build/bin/greenrl, the launcher users run.
const char* GreenrlBin();

// build/bin/greenrl_cli, the CLI the launcher execs.
const char* GreenrlCliBin();

// The example that registers its own env before greenrl's CLI (examples/custom_env.cc).
const char* CustomEnvBin();

// The fake libnvidia-ml the NVML tests dlopen (greenrl/energy/testing/fake_nvml.cc).
const char* FakeNvmlLibrary();

// The reference data folder when GREENRL_TESTDATA is unset: CMake's GREENRL_DEFAULT_TESTDATA,
// ../shared/testdata beside the checkout unless the build was configured with another.
const char* DefaultTestdataDir();

// <build>/test-tmp, the TEST_TMPDIR greenrl_test_exec gives every test (test_exec.cc).
const char* TestTmpDir();

}  // namespace greenrl::test_paths
