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

bool SizeOpenBlasPthreads(int threads) {
  using GetParallelFn = int (*)();
  using SetThreadsFn = void (*)(int);
  const auto get_parallel =
      reinterpret_cast<GetParallelFn>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  const auto set_threads =
      reinterpret_cast<SetThreadsFn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  // openblas_get_parallel: 0 single-threaded build, 1 pthreads, 2 OpenMP (OpenBLAS's cblas.h).
  if (get_parallel == nullptr || set_threads == nullptr || get_parallel() != 1) return false;
  set_threads(threads);
  return true;
}

namespace {
std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
}  // namespace

namespace {

// Whether `lower` (a lower-case core name) is one of the pre-AVX2 cores OpenBLAS falls back to on
// a CPU newer than it knows (SuggestOpenBlasCoreType corrects these).
bool IsGenericFallbackCore(const std::string& lower) {
  static const char* const kFallbacks[] = {"prescott", "core2",        "penryn",    "dunnington",
                                           "nehalem",  "sandybridge",  "atom",      "nano",
                                           "opteron",  "opteron_sse3", "barcelona", "bobcat"};
  return std::any_of(std::begin(kFallbacks), std::end(kFallbacks),
                     [&](const char* f) { return lower == f; });
}

// OpenBLAS's widest x86-64 kernels for `cpu`'s instructions: "Cooperlake", "SkylakeX", "Zen"
// (AVX2 on an AMD, Hygon, Centaur or Zhaoxin CPU), "Haswell" (AVX2 on Intel's and others), or ""
// (older, or flags unknown).
std::string WidestCoreFor(const CpuInfo& cpu) {
  if (!cpu.Has("avx2") || !cpu.Has("fma")) return "";
  const bool avx512 = cpu.Has("avx512f") && cpu.Has("avx512bw") && cpu.Has("avx512vl") &&
                      cpu.Has("avx512dq") && cpu.Has("avx512cd");
  if (avx512) return cpu.Has("avx512_bf16") ? "Cooperlake" : "SkylakeX";
  // OpenBLAS's dynamic dispatch (driver/others/dynamic.c, get_coretype) gives the AVX2 CPUs of
  // AMD and Hygon (one branch), Centaur and Zhaoxin its Zen core (seen on this project's AMD EPYC
  // without AVX-512: "Zen kernels"), Intel's Haswell. Without a vendor_id line, the model name.
  static const char* const kZenVendors[] = {"AuthenticAMD", "HygonGenuine", "CentaurHauls",
                                            "Shanghai"};
  const bool zen = cpu.vendor.empty() ? cpu.model.find("AMD") != std::string::npos
                                      : std::any_of(std::begin(kZenVendors), std::end(kZenVendors),
                                                    [&](const char* v) { return cpu.vendor == v; });
  return zen ? "Zen" : "Haswell";
}

// How wide a kernel set's vectors and instructions are, for comparing two: 1 pre-AVX2, 2 AVX2
// (Haswell, Zen, SkylakeX's and later Intel's AVX2 cores), 3 SkylakeX, 4 Cooperlake, 5
// SapphireRapids; 0 for a name not listed here.
int CoreRank(const std::string& core) {
  const std::string lower = Lower(core);
  static const char* const kAmdPreAvx2[] = {"bulldozer", "piledriver", "steamroller", "excavator"};
  if (IsGenericFallbackCore(lower) || std::any_of(std::begin(kAmdPreAvx2), std::end(kAmdPreAvx2),
                                                  [&](const char* c) { return lower == c; })) {
    return 1;
  }
  if (lower == "haswell" || lower == "zen") return 2;
  if (lower == "skylakex") return 3;
  if (lower == "cooperlake") return 4;
  if (lower == "sapphirerapids") return 5;
  return 0;
}

}  // namespace

bool IsAvx512OpenBlasCore(const std::string& core) { return CoreRank(core) >= 3; }

std::string DescribeBlasFor(const std::string& core, const char* coretype_variable,
                            const char* fallback_variable, const CpuInfo& cpu) {
  if (core.empty()) return "not OpenBLAS";
  std::string out = "OpenBLAS, " + core + " kernels";
  if (coretype_variable == nullptr) return out;
  out += std::string(" (OPENBLAS_CORETYPE=") + coretype_variable;
  if (fallback_variable != nullptr) {
    return out + ", set by greenrl: OpenBLAS chose its generic " + fallback_variable +
           " kernels for this CPU)";
  }
  const std::string widest = WidestCoreFor(cpu);
  const int rank = CoreRank(core);
  if (rank > 0 && CoreRank(widest) > rank) {
    out += "; this CPU can run OpenBLAS's " + widest +
           " kernels, which OpenBLAS chooses when OPENBLAS_CORETYPE is unset";
  }
  return out + ")";
}

std::string SuggestOpenBlasCoreType(const std::string& picked, const CpuInfo& cpu) {
  return IsGenericFallbackCore(Lower(picked)) ? WidestCoreFor(cpu) : "";
}

std::string DescribeBlas() {
  return DescribeBlasFor(OpenBlasCoreName(), std::getenv("OPENBLAS_CORETYPE"),
                         std::getenv(kOpenBlasFallbackVariable), ThisCpu());
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

bool SetPassiveOpenMpWaitPolicy() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return false;
  return setenv("OMP_WAIT_POLICY", "PASSIVE", 0) == 0;
}

std::string SpinningOpenMpWarning(int torch_threads) {
  if (torch_threads <= 1) return "";
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::string value = policy != nullptr ? policy : "";
  for (char& ch : value) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (value == "PASSIVE") return "";
  return "threads.torch " + std::to_string(torch_threads) +
         ": OpenMP's idle threads busy-wait (OMP_WAIT_POLICY " +
         (policy != nullptr ? std::string("is ") + policy : std::string("unset")) +
         "), burning CPU seconds and energy between parallel regions and, beside other work, "
         "slowing the run many times over; set OMP_WAIT_POLICY=PASSIVE (the greenrl launcher, "
         "build/bin/greenrl, sets it where it is unset; greenrl_cli and a program of one's own "
         "through cli::Main do not)";
}

void RestartWithOpenBlasCoreTypeIfNeeded(char** argv, const char* program) {
  const std::string picked = OpenBlasCoreName();
  if (!SetOpenBlasCoreTypeForFallback(picked)) return;
  SetPassiveOpenMpWaitPolicy();  // restarting anyway: libgomp reads it as it loads
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
