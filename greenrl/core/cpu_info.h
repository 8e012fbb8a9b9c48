// cpu_info.h: what /proc/cpuinfo says about this machine's CPU, read in one place for the
// emissions report (cpu_model), the precision policy (native bf16) and benchmark output; and the
// machine's memory size (emissions.csv's ram_total_size).
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace greenrl {

struct CpuInfo {
  std::string model;               // the first "model name" value; "" when none
  std::vector<std::string> flags;  // the words of the first "flags" line; empty when none
  // The first "vendor_id" value (GenuineIntel, AuthenticAMD, HygonGenuine, CentaurHauls,
  // Shanghai for Zhaoxin); "" when none.
  std::string vendor;
  // The first "cpu family" and "model" values (e.g. 26 and 2 for the EPYC this project's VM has
  // had, 6 and 207 for a Xeon): what tells one generation of "AMD EPYC" from the next; -1 when
  // none or not a number.
  int family = -1;
  int model_number = -1;
  // Whether `flag` (e.g. "avx512_bf16") is one of flags.
  bool Has(const std::string& flag) const;
};

// Parses /proc/cpuinfo's text format ("key<tabs>: value" lines). Lines it does not know are
// skipped; empty input gives an empty CpuInfo. No errors.
CpuInfo ParseCpuInfo(std::istream& in);

// This machine's CpuInfo, read from /proc/cpuinfo once (empty where it cannot be read).
const CpuInfo& ThisCpu();

// This machine's physical memory, bytes: sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGE_SIZE), which
// on Linux equals /proc/meminfo's MemTotal (psutil.virtual_memory().total, what CodeCarbon's
// ram_total_size reads). 0 where it cannot be read. No errors.
double MachineMemoryBytes();

// For benchmark output: "<model> (family F model M), <logical_cpus> logical CPUs; <flags>",
// where <model> is "unknown CPU" when empty, the part in brackets is left out when either number
// is unknown, and <flags> lists which of avx2, fma, avx512f, avx512bw, avx512vl,
// avx512dq, avx512cd, avx512_bf16, avx512_fp16 and amx_bf16 the CPU has (OpenBLAS's kernel
// choice and bf16's and fp16's speed depend on them), "none of ..." when it has none of them;
// the part after ";" is left out when flags are unknown. E.g. "Intel(R) Xeon(R) Processor (family
// 6 model 207), 2 logical CPUs; avx2 fma avx512f avx512bw avx512vl avx512dq avx512cd avx512_bf16
// amx_bf16" ("1 logical CPU" for one).
std::string DescribeCpu(const CpuInfo& cpu, unsigned logical_cpus);

}  // namespace greenrl
