// ParseCpuInfo and DescribeCpu on hand-written /proc/cpuinfo text.
#include "greenrl/core/cpu_info.h"

#include <gtest/gtest.h>

#include <sstream>

namespace greenrl {
namespace {

TEST(CpuInfoTest, ParsesModelAndFirstFlagsLine) {
  std::istringstream text(
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "cpu family\t: 6\n"
      "model\t\t: 207\n"
      "model name\t: Intel(R) Xeon(R) Processor\n"
      "flags\t\t: fpu avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 amx_bf16\n"
      "\n"
      "processor\t: 1\n"
      "model\t\t: 1\n"
      "model name\t: Other\n"
      "flags\t\t: fpu\n");
  const CpuInfo cpu = ParseCpuInfo(text);
  EXPECT_EQ(cpu.model, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(cpu.family, 6);
  EXPECT_EQ(cpu.model_number, 207);  // the first "model", not "model name"
  EXPECT_EQ(cpu.vendor, "GenuineIntel");
  std::istringstream zhaoxin("vendor_id\t:   Shanghai  \n");  // Zhaoxin's, padded with spaces
  EXPECT_EQ(ParseCpuInfo(zhaoxin).vendor, "Shanghai");
  EXPECT_TRUE(cpu.Has("amx_bf16"));
  EXPECT_FALSE(cpu.Has("amx"));  // whole words only
  EXPECT_EQ(DescribeCpu(cpu, 2),
            "Intel(R) Xeon(R) Processor (family 6 model 207), 2 logical CPUs; avx2 fma avx512f "
            "avx512bw avx512vl "
            "avx512dq avx512cd avx512_bf16 amx_bf16");
}

TEST(CpuInfoTest, MissingFieldsAreSaidSo) {
  std::istringstream empty("");
  EXPECT_EQ(DescribeCpu(ParseCpuInfo(empty), 4), "unknown CPU, 4 logical CPUs");
  std::istringstream plain("model name : Old\nmodel : x\nflags : fpu sse2\n");  // no family
  const CpuInfo old = ParseCpuInfo(plain);
  EXPECT_EQ(old.model_number, -1);
  EXPECT_EQ(DescribeCpu(old, 1),
            "Old, 1 logical CPU; none of avx2, fma, avx512f, avx512bw, avx512vl, avx512dq, "
            "avx512cd, avx512_bf16, avx512_fp16, amx_bf16");
}

}  // namespace
}  // namespace greenrl
