#include "greenrl/core/cpu_info.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace greenrl {

bool CpuInfo::Has(const std::string& flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

CpuInfo ParseCpuInfo(std::istream& in) {
  CpuInfo cpu;
  bool have_flags = false;
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const auto start = line.find_first_not_of(" \t", colon + 1);
    const std::string value = start == std::string::npos ? "" : line.substr(start);
    if (key == "model name" && cpu.model.empty()) {
      cpu.model = value;
    } else if (key == "vendor_id" && cpu.vendor.empty()) {
      cpu.vendor = value.substr(0, value.find_last_not_of(" \t") + 1);
    } else if ((key == "cpu family" && cpu.family < 0) ||
               (key == "model" && cpu.model_number < 0)) {
      int& number = key == "model" ? cpu.model_number : cpu.family;
      const bool digits = !value.empty() && value.size() < 9 &&
                          value.find_first_not_of("0123456789 \t") == std::string::npos;
      if (digits) number = std::stoi(value);
    } else if (key == "flags" && !have_flags) {
      have_flags = true;
      std::istringstream words(value);
      for (std::string w; words >> w;) cpu.flags.push_back(w);
    }
  }
  return cpu;
}

const CpuInfo& ThisCpu() {
  static const CpuInfo cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    return ParseCpuInfo(in);
  }();
  return cpu;
}

double MachineMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0.0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

std::string DescribeCpu(const CpuInfo& cpu, unsigned logical_cpus) {
  std::string out = cpu.model.empty() ? std::string("unknown CPU") : cpu.model;
  if (cpu.family >= 0 && cpu.model_number >= 0) {
    out += " (family " + std::to_string(cpu.family) + " model " + std::to_string(cpu.model_number) +
           ")";
  }
  out +=
      ", " + std::to_string(logical_cpus) + (logical_cpus == 1 ? " logical CPU" : " logical CPUs");
  if (cpu.flags.empty()) return out;
  // The flags OpenBLAS's kernel choice reads (AVX-512: f, bw, vl, dq, cd for its SkylakeX
  // kernels; bf16 for Cooperlake's) and the ones bf16 and fp16 speed depend on.
  static const char* const kListed[] = {"avx2",        "fma",      "avx512f",  "avx512bw",
                                        "avx512vl",    "avx512dq", "avx512cd", "avx512_bf16",
                                        "avx512_fp16", "amx_bf16"};
  std::string listed, all;
  for (const char* f : kListed) {
    if (cpu.Has(f)) listed += std::string(" ") + f;
    all += (all.empty() ? "" : ", ") + std::string(f);
  }
  return out + ";" + (listed.empty() ? " none of " + all : listed);
}

}  // namespace greenrl
