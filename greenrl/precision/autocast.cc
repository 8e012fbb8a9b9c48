#include "greenrl/precision/autocast.h"

#include <ATen/autocast_mode.h>

#include <fstream>

#include "greenrl/core/errors.h"

namespace greenrl::precision {

Precision ParsePrecision(const std::string& field, const std::string& text) {
  if (text == "fp32") return Precision::kFp32;
  if (text == "bf16") return Precision::kBf16;
  if (text == "fp16") return Precision::kFp16;
  throw ConfigError(field, text, "one of: fp32, bf16, fp16");
}

const char* ToString(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
  }
  return "?";
}

bool CpuHasNativeBf16() {
  std::ifstream in("/proc/cpuinfo");
  std::string word;
  while (in >> word) {
    if (word == "avx512_bf16" || word == "amx_bf16") return true;
  }
  return false;
}

AutocastScope::AutocastScope(Precision precision) {
  if (precision == Precision::kFp32) return;
  if (precision == Precision::kFp16) {
    throw ConfigError("precision", "fp16",
                      "fp32 or bf16 on the CPU (LibTorch 1.13 has no CPU fp16 autocast; fp16 "
                      "needs a CUDA build)");
  }
  previous_enabled_ = at::autocast::is_cpu_enabled();
  at::autocast::set_cpu_enabled(true);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(previous_enabled_);
}

}  // namespace greenrl::precision
