#include "greenrl/core/openblas_core.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace greenrl {

std::string OpenBlasCoreName() {
  using CoreNameFn = char* (*)();
  const auto fn = reinterpret_cast<CoreNameFn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = fn != nullptr ? fn() : nullptr;
  return name != nullptr ? std::string(name) : std::string();
}

namespace {
std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

bool IsAvx512OpenBlasCore(const std::string& core) {
  const std::string lower = Lower(core);
  return lower == "skylakex" || lower == "cooperlake" || lower == "sapphirerapids";
}

std::string SuggestOpenBlasCoreType(const std::string& picked, const CpuInfo& cpu) {
  const std::string lower = Lower(picked);
  static const char* const kFallbacks[] = {"prescott", "core2",        "penryn",    "dunnington",
                                           "nehalem",  "sandybridge",  "atom",      "nano",
                                           "opteron",  "opteron_sse3", "barcelona", "bobcat"};
  const bool fallback = std::any_of(std::begin(kFallbacks), std::end(kFallbacks),
                                    [&](const char* f) { return lower == f; });
  if (!fallback || !cpu.Has("avx2") || !cpu.Has("fma")) return "";
  const bool avx512 = cpu.Has("avx512f") && cpu.Has("avx512bw") && cpu.Has("avx512vl") &&
                      cpu.Has("avx512dq") && cpu.Has("avx512cd");
  if (avx512) return cpu.Has("avx512_bf16") ? "Cooperlake" : "SkylakeX";
  return "Haswell";
}

std::string DescribeBlas() {
  const std::string core = OpenBlasCoreName();
  if (core.empty()) return "not OpenBLAS";
  const char* env = std::getenv("OPENBLAS_CORETYPE");
  const char* fallback = std::getenv(kOpenBlasFallbackVariable);
  std::string out = "OpenBLAS, " + core + " kernels";
  if (env != nullptr) out += std::string(" (OPENBLAS_CORETYPE=") + env;
  if (env != nullptr && fallback != nullptr) {
    out += std::string(", set by greenrl: OpenBLAS chose its generic ") + fallback +
           " kernels for this CPU";
  }
  return env != nullptr ? out + ")" : out;
}

std::string LinkedOpenBlasCoreName() {
  void* blas = dlopen("libblas.so.3", RTLD_LAZY | RTLD_LOCAL);
  if (blas == nullptr) return "";
  using CoreNameFn = char* (*)();
  const auto fn = reinterpret_cast<CoreNameFn>(dlsym(blas, "openblas_get_corename"));
  const char* name = fn != nullptr ? fn() : nullptr;
  std::string core = name != nullptr ? std::string(name) : std::string();
  dlclose(blas);
  return core;
}

bool SetOpenBlasCoreTypeForFallback(const std::string& picked) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return false;
  const std::string core = SuggestOpenBlasCoreType(picked, ThisCpu());
  if (core.empty()) return false;
  if (setenv("OPENBLAS_CORETYPE", core.c_str(), 1) != 0 ||
      setenv(kOpenBlasFallbackVariable, picked.c_str(), 1) != 0) {
    unsetenv("OPENBLAS_CORETYPE");
    return false;
  }
  return true;
}

void RestartWithOpenBlasCoreTypeIfNeeded(char** argv, const char* program) {
  const std::string picked = OpenBlasCoreName();
  if (!SetOpenBlasCoreTypeForFallback(picked)) return;
  const std::string core = std::getenv("OPENBLAS_CORETYPE");
  std::fflush(stdout);
  std::fflush(stderr);
  execv("/proc/self/exe", argv);
  std::fprintf(stderr,
               "%s: OpenBLAS chose its generic %s kernels for this CPU; restarting with "
               "OPENBLAS_CORETYPE=%s failed (%s), so BLAS runs about 5x slower\n",
               program, picked.c_str(), core.c_str(), std::strerror(errno));
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kOpenBlasFallbackVariable);
}

}  // namespace greenrl
