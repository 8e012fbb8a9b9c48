#include "greenrl/precision/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "greenrl/core/cpu_info.h"
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

bool CpuHasNativeBf16() { return ThisCpu().Has("avx512_bf16") || ThisCpu().Has("amx_bf16"); }

namespace {
// LibTorch 2.4 replaced the per-device autocast setters with device-type ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
c10::DeviceType ToDeviceType(AutocastDevice d) {
  return d == AutocastDevice::kCpu ? c10::DeviceType::CPU : c10::DeviceType::CUDA;
}
bool IsEnabled(AutocastDevice d) { return at::autocast::is_autocast_enabled(ToDeviceType(d)); }
void SetEnabled(AutocastDevice d, bool on) {
  at::autocast::set_autocast_enabled(ToDeviceType(d), on);
}
void SetDtype(AutocastDevice d, at::ScalarType t) {
  at::autocast::set_autocast_dtype(ToDeviceType(d), t);
}
at::ScalarType GetDtype(AutocastDevice d) {
  return at::autocast::get_autocast_dtype(ToDeviceType(d));
}
#else
bool IsEnabled(AutocastDevice d) {
  return d == AutocastDevice::kCpu ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
}
void SetEnabled(AutocastDevice d, bool on) {
  if (d == AutocastDevice::kCpu) {
    at::autocast::set_cpu_enabled(on);
  } else {
    at::autocast::set_enabled(on);
  }
}
void SetDtype(AutocastDevice d, at::ScalarType t) {
  if (d == AutocastDevice::kCpu) {
    at::autocast::set_autocast_cpu_dtype(t);
  } else {
    at::autocast::set_autocast_gpu_dtype(t);
  }
}
at::ScalarType GetDtype(AutocastDevice d) {
  return d == AutocastDevice::kCpu ? at::autocast::get_autocast_cpu_dtype()
                                   : at::autocast::get_autocast_gpu_dtype();
}
#endif
}  // namespace

AutocastScope::AutocastScope(Precision precision, AutocastDevice device, bool cache_enabled)
    : device_(device) {
  if (precision == Precision::kFp32) return;
  if (precision == Precision::kFp16 && device == AutocastDevice::kCpu) {
    throw ConfigError("precision", "fp16",
                      "fp32 or bf16 on the CPU (LibTorch 1.13 has no CPU fp16 autocast; fp16 "
                      "needs a CUDA build)");
  }
  previous_enabled_ = IsEnabled(device);
  previous_cache_enabled_ = at::autocast::is_autocast_cache_enabled();
  previous_dtype_ = static_cast<int>(GetDtype(device));
  SetEnabled(device, true);
  SetDtype(device, precision == Precision::kBf16 ? at::kBFloat16 : at::kHalf);
  at::autocast::set_autocast_cache_enabled(cache_enabled);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(device_, previous_enabled_);
  SetDtype(device_, static_cast<at::ScalarType>(previous_dtype_));  // as autocast.__exit__
  at::autocast::set_autocast_cache_enabled(previous_cache_enabled_);
}

}  // namespace greenrl::precision
