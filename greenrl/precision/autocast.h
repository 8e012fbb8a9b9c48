// autocast.h: precision as a setting. `precision: fp32 | bf16 | fp16` selects the dtype of the
// forward pass under LibTorch autocast (CPU: bf16 only in LibTorch 1.13; CUDA: fp16 or bf16),
// with float32 master weights, gradients and optimiser state throughout; the loss is computed
// from float32 copies of the forward's outputs, outside autocast.
#pragma once

#include <string>

namespace greenrl::precision {

enum class Precision { kFp32, kBf16, kFp16 };

// Parses "fp32" / "bf16" / "fp16". Errors: ConfigError(field, text, "one of: fp32, bf16, fp16").
Precision ParsePrecision(const std::string& field, const std::string& text);
const char* ToString(Precision precision);

// Whether this CPU computes bf16 natively (avx512_bf16 or amx_bf16 in /proc/cpuinfo). Without
// it, bf16 autocast converts on every op and costs more time and energy than float32.
bool CpuHasNativeBf16();

// Where an autocast region runs: LibTorch's CPU or CUDA autocast.
enum class AutocastDevice { kCpu, kCuda };

// RAII autocast region: bf16 (CPU or CUDA) or fp16 (CUDA) enables LibTorch's autocast for that
// device with that dtype and restores the previous state (enabled flag, dtype and cache flag, as
// PyTorch's autocast.__exit__) at scope exit; fp32 does nothing.
// cache_enabled = false turns off autocast's weight-cast cache inside the region, as PyTorch
// requires for a region captured in a CUDA graph (torch.cuda.graph docs: "autocast caching must
// be disabled"). Works with LibTorch 1.13 (per-device setters) and >= 2.4 (device-type API).
// Errors: ConfigError("precision", "fp16", ...) on the CPU (no CPU fp16 autocast in 1.13).
class AutocastScope {
 public:
  explicit AutocastScope(Precision precision, AutocastDevice device = AutocastDevice::kCpu,
                         bool cache_enabled = true);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  AutocastDevice device_ = AutocastDevice::kCpu;
  bool previous_enabled_ = false;
  bool previous_cache_enabled_ = true;
  int previous_dtype_ = 0;  // at::ScalarType of the device's autocast dtype before the scope
};

}  // namespace greenrl::precision
