// SuggestOpenBlasCoreType on hand-written CPUs, and OpenBlasCoreName without OpenBLAS.
#include "greenrl/core/openblas_core.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace greenrl {
namespace {

CpuInfo Cpu(std::vector<std::string> flags) { return CpuInfo{"Test CPU", std::move(flags), ""}; }

const std::vector<std::string> kAvx2 = {"sse3", "avx", "avx2", "fma"};
const std::vector<std::string> kAvx512 = {"sse3",     "avx",      "avx2",     "fma",     "avx512f",
                                          "avx512bw", "avx512vl", "avx512dq", "avx512cd"};

// The case measured on the Xeon of family 6 model 207: OpenBLAS 0.3.21 said Prescott.
TEST(OpenBlasCoreTest, FallbackOnAnAvx512Bf16CpuGetsCooperlake) {
  std::vector<std::string> flags = kAvx512;
  flags.push_back("avx512_bf16");
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", Cpu(flags)), "Cooperlake");
  EXPECT_EQ(SuggestOpenBlasCoreType("prescott", Cpu(flags)), "Cooperlake");
  EXPECT_EQ(SuggestOpenBlasCoreType("Nehalem", Cpu(flags)), "Cooperlake");
}

TEST(OpenBlasCoreTest, FallbackOnOtherCpusGetsTheirWidestKernels) {
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", Cpu(kAvx512)), "SkylakeX");
  EXPECT_EQ(SuggestOpenBlasCoreType("Sandybridge", Cpu(kAvx2)), "Haswell");
  EXPECT_EQ(SuggestOpenBlasCoreType("Core2", Cpu(kAvx2)), "Haswell");
  // AVX-512 without one of the five extensions OpenBLAS's SkylakeX kernels use: AVX2 kernels.
  std::vector<std::string> no_bw = kAvx512;
  no_bw.erase(no_bw.begin() + 5);  // avx512bw
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", Cpu(no_bw)), "Haswell");
  // On AMD, OpenBLAS calls its AVX2 kernels Zen.
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", CpuInfo{"AMD EPYC", kAvx2, ""}), "Zen");
  // By vendor_id where /proc/cpuinfo has it: Hygon's (whose model names no AMD) and Zhaoxin's
  // AVX2 CPUs get Zen too, as in OpenBLAS's get_coretype; Intel's Haswell.
  EXPECT_EQ(SuggestOpenBlasCoreType(
                "Prescott", CpuInfo{"Hygon C86 7185 32-core Processor", kAvx2, "HygonGenuine"}),
            "Zen");
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", CpuInfo{"ZHAOXIN KX-7000", kAvx2, "Shanghai"}),
            "Zen");
  EXPECT_EQ(
      SuggestOpenBlasCoreType("Prescott", CpuInfo{"Intel(R) Core(TM)", kAvx2, "GenuineIntel"}),
      "Haswell");
}

TEST(OpenBlasCoreTest, ARightOrUnknownChoiceIsLeftAlone) {
  EXPECT_EQ(SuggestOpenBlasCoreType("Haswell", Cpu(kAvx512)), "");
  EXPECT_EQ(SuggestOpenBlasCoreType("Zen", Cpu(kAvx512)), "");
  EXPECT_EQ(SuggestOpenBlasCoreType("SkylakeX", Cpu(kAvx512)), "");
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", Cpu({"sse3", "avx"})), "");  // an old CPU
  EXPECT_EQ(SuggestOpenBlasCoreType("Prescott", Cpu({})), "");               // flags unknown
  EXPECT_EQ(SuggestOpenBlasCoreType("", Cpu(kAvx512)), "");                  // not OpenBLAS
}

TEST(OpenBlasCoreTest, Avx512CoresAreNamed) {
  EXPECT_TRUE(IsAvx512OpenBlasCore("SkylakeX"));
  EXPECT_TRUE(IsAvx512OpenBlasCore("cooperlake"));
  EXPECT_TRUE(IsAvx512OpenBlasCore("SapphireRapids"));
  EXPECT_FALSE(IsAvx512OpenBlasCore("Haswell"));
  EXPECT_FALSE(IsAvx512OpenBlasCore("Zen"));
  EXPECT_FALSE(IsAvx512OpenBlasCore("Prescott"));
  EXPECT_FALSE(IsAvx512OpenBlasCore(""));
}

// The bench header's BLAS line: a user's OPENBLAS_CORETYPE that names kernels narrower than the
// CPU's widest says so (the case of 2026-12-04: Haswell set in the shell on an AMD EPYC with
// avx512_bf16, where OpenBLAS itself chooses Cooperlake).
TEST(OpenBlasCoreTest, DescribeBlasNamesWiderKernelsThanAUsersCoretype) {
  std::vector<std::string> bf16 = kAvx512;
  bf16.push_back("avx512_bf16");
  EXPECT_EQ(DescribeBlasFor("", nullptr, nullptr, Cpu(bf16)), "not OpenBLAS");
  EXPECT_EQ(DescribeBlasFor("Cooperlake", nullptr, nullptr, Cpu(bf16)),
            "OpenBLAS, Cooperlake kernels");
  EXPECT_EQ(DescribeBlasFor("Haswell", "Haswell", nullptr, Cpu(bf16)),
            "OpenBLAS, Haswell kernels (OPENBLAS_CORETYPE=Haswell; this CPU can run OpenBLAS's "
            "Cooperlake kernels, which OpenBLAS chooses when OPENBLAS_CORETYPE is unset)");
  EXPECT_EQ(DescribeBlasFor("Prescott", "prescott", nullptr, Cpu(kAvx2)),
            "OpenBLAS, Prescott kernels (OPENBLAS_CORETYPE=prescott; this CPU can run OpenBLAS's "
            "Haswell kernels, which OpenBLAS chooses when OPENBLAS_CORETYPE is unset)");
  // An AMD EPYC without AVX-512 (2026-12-06): OpenBLAS chooses Zen there, not Haswell.
  EXPECT_EQ(DescribeBlasFor("Prescott", "Prescott", nullptr, CpuInfo{"AMD EPYC", kAvx2, ""}),
            "OpenBLAS, Prescott kernels (OPENBLAS_CORETYPE=Prescott; this CPU can run OpenBLAS's "
            "Zen kernels, which OpenBLAS chooses when OPENBLAS_CORETYPE is unset)");
  // As wide as the CPU allows, or wider, or a name not ranked here: nothing more said.
  EXPECT_EQ(DescribeBlasFor("Haswell", "Haswell", nullptr, Cpu(kAvx2)),
            "OpenBLAS, Haswell kernels (OPENBLAS_CORETYPE=Haswell)");
  EXPECT_EQ(DescribeBlasFor("Zen", "Zen", nullptr, Cpu(kAvx2)),
            "OpenBLAS, Zen kernels (OPENBLAS_CORETYPE=Zen)");
  EXPECT_EQ(DescribeBlasFor("SkylakeX", "SkylakeX", nullptr, Cpu(kAvx2)),
            "OpenBLAS, SkylakeX kernels (OPENBLAS_CORETYPE=SkylakeX)");
  EXPECT_EQ(DescribeBlasFor("ARMV8", "ARMV8", nullptr, Cpu(bf16)),
            "OpenBLAS, ARMV8 kernels (OPENBLAS_CORETYPE=ARMV8)");
  // greenrl's own restart says why it set the variable.
  EXPECT_EQ(DescribeBlasFor("Cooperlake", "Cooperlake", "Prescott", Cpu(bf16)),
            "OpenBLAS, Cooperlake kernels (OPENBLAS_CORETYPE=Cooperlake, set by greenrl: OpenBLAS "
            "chose its generic Prescott kernels for this CPU)");
}

// core_test links no BLAS, so there is no OpenBLAS to ask.
TEST(OpenBlasCoreTest, NoOpenBlasGivesAnEmptyName) { EXPECT_EQ(OpenBlasCoreName(), ""); }

// Under ctest, greenrl_test_exec gives every test binary its environment: one OpenMP and one
// OpenBLAS thread, and TEST_TMPDIR under the build tree (GoogleTest's TempDir()). (Started by
// hand, a binary has the caller's environment: skipped.)
TEST(TestEnvironmentTest, CtestGivesEveryVariable) {
  if (std::getenv("GREENRL_UNDER_CTEST") == nullptr) {
    GTEST_SKIP() << "not started by ctest through greenrl_test_exec";
  }
  ASSERT_NE(std::getenv("OMP_NUM_THREADS"), nullptr);
  EXPECT_EQ(std::string(std::getenv("OMP_NUM_THREADS")), "1");
  ASSERT_NE(std::getenv("OPENBLAS_NUM_THREADS"), nullptr);
  EXPECT_EQ(std::string(std::getenv("OPENBLAS_NUM_THREADS")), "1");
  ASSERT_NE(std::getenv("TEST_TMPDIR"), nullptr);
  const std::string tmp = std::getenv("TEST_TMPDIR");
  EXPECT_EQ(tmp.substr(tmp.size() - 9), "/test-tmp") << tmp;
  EXPECT_EQ(::testing::TempDir().rfind(tmp, 0), 0u) << ::testing::TempDir();
  ASSERT_NE(std::getenv("OMP_WAIT_POLICY"), nullptr);  // PASSIVE, or the environment's own
}

// SetPassiveOpenMpWaitPolicy sets PASSIVE only where the variable is unset; SpinningOpenMpWarning
// speaks for more than one thread under any policy but PASSIVE (in any case).
TEST(OpenMpWaitPolicyTest, PassiveWhereUnsetAndWarnedOtherwise) {
  const char* before = std::getenv("OMP_WAIT_POLICY");
  const std::string saved = before != nullptr ? before : "";
  ::unsetenv("OMP_WAIT_POLICY");
  EXPECT_NE(SpinningOpenMpWarning(2).find("threads.torch 2: OpenMP's idle threads busy-wait "
                                          "(OMP_WAIT_POLICY unset)"),
            std::string::npos);
  EXPECT_TRUE(SetPassiveOpenMpWaitPolicy());
  EXPECT_EQ(std::string(std::getenv("OMP_WAIT_POLICY")), "PASSIVE");
  EXPECT_EQ(SpinningOpenMpWarning(2), "");
  ::setenv("OMP_WAIT_POLICY", "active", 1);
  EXPECT_FALSE(SetPassiveOpenMpWaitPolicy());
  EXPECT_EQ(std::string(std::getenv("OMP_WAIT_POLICY")), "active");
  EXPECT_NE(SpinningOpenMpWarning(2).find("(OMP_WAIT_POLICY is active)"), std::string::npos);
  EXPECT_EQ(SpinningOpenMpWarning(1), "");
  ::setenv("OMP_WAIT_POLICY", "passive", 1);
  EXPECT_EQ(SpinningOpenMpWarning(4), "");
  if (before != nullptr) {
    ::setenv("OMP_WAIT_POLICY", saved.c_str(), 1);
  } else {
    ::unsetenv("OMP_WAIT_POLICY");
  }
}

// SetOpenBlasCoreTypeForFallback sets both variables exactly when SuggestOpenBlasCoreType names
// a core for this CPU, and never overrides a user's OPENBLAS_CORETYPE.
TEST(OpenBlasCoreTest, FallbackSetsTheVariablesOnlyWhenUnsetAndNeeded) {
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kOpenBlasFallbackVariable);
  EXPECT_FALSE(SetOpenBlasCoreTypeForFallback("Haswell"));  // a right choice: nothing set
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);
  EXPECT_FALSE(SetOpenBlasCoreTypeForFallback(""));  // not OpenBLAS
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr);

  const std::string expected = SuggestOpenBlasCoreType("Prescott", ThisCpu());
  EXPECT_EQ(SetOpenBlasCoreTypeForFallback("Prescott"), !expected.empty());
  if (!expected.empty()) {
    ASSERT_NE(std::getenv("OPENBLAS_CORETYPE"), nullptr);
    EXPECT_EQ(std::string(std::getenv("OPENBLAS_CORETYPE")), expected);
    ASSERT_NE(std::getenv(kOpenBlasFallbackVariable), nullptr);
    EXPECT_EQ(std::string(std::getenv(kOpenBlasFallbackVariable)), "Prescott");
  }

  setenv("OPENBLAS_CORETYPE", "Zen", 1);  // a user's choice
  unsetenv(kOpenBlasFallbackVariable);
  EXPECT_FALSE(SetOpenBlasCoreTypeForFallback("Prescott"));
  EXPECT_EQ(std::string(std::getenv("OPENBLAS_CORETYPE")), "Zen");
  EXPECT_EQ(std::getenv(kOpenBlasFallbackVariable), nullptr);
  unsetenv("OPENBLAS_CORETYPE");
}

// Only a pthreads OpenBLAS is sized: this test links no BLAS, or the OpenMP OpenBLAS that
// scripts/install-deps.sh installs, which follows omp_set_num_threads instead. (The pthreads
// build itself was checked by hand; see the header.)
TEST(OpenBlasCoreTest, SizeOpenBlasPthreadsLeavesOtherBuildsAlone) {
  EXPECT_FALSE(SizeOpenBlasPthreads(1));
}

}  // namespace
}  // namespace greenrl
