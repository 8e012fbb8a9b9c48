// openblas_core.h: which kernels OpenBLAS chose for this CPU, and a way round its fallback on CPUs
// newer than it knows. Debian 12's OpenBLAS 0.3.21 (a DYNAMIC_ARCH build) picks its kernels from
// the CPU's family and model at load time; on a model it does not know (measured: an Intel Xeon,
// family 6 model 207, with AVX-512 and avx512_bf16) it falls back to its generic SSE3 "Prescott"
// kernels. There the one-thread sgemm of [256, 64] x [64, 64] ran at 17.2 GFLOP/s, and at
// 83-111 GFLOP/s with OPENBLAS_CORETYPE=Cooperlake or SkylakeX (70 with Haswell): DQN's and
// SAC's updates, which run on OpenBLAS, took about 3x as long. OpenBLAS reads OPENBLAS_CORETYPE
// only when it loads, so the fix sets it before: in greenrl's launcher (cli/launcher.cc), or by
// restarting the process. Torch-free.
#pragma once

#include <string>

#include "greenrl/core/cpu_info.h"

namespace greenrl {

// The kernel set the loaded OpenBLAS uses (openblas_get_corename(), e.g. "Haswell", "SkylakeX",
// "Prescott"), looked up at run time; "" when the process's BLAS is not OpenBLAS. No errors.
std::string OpenBlasCoreName();

// Sizes the thread pool of a pthreads OpenBLAS (Debian's libopenblas0-pthread, whose
// alternative outranks the OpenMP build's when both are installed: priority 100 against 95) to
// `threads`, with openblas_set_num_threads looked up at run time; returns true when it did. An
// OpenMP OpenBLAS (openblas_get_parallel() == 2) follows omp_set_num_threads, which LibTorch's
// at::set_num_threads and greenrl's fused paths call, and is left alone (false), as are a
// single-threaded build and a BLAS that is not OpenBLAS. Unsized, the pthreads build runs a
// thread per core: measured 2026-12-06 on this project's 2-core AMD EPYC VM (Debian's 0.3.21
// pthreads library through LD_LIBRARY_PATH), the DQN CartPole preset's first 10,240 steps took
// 1.79 s wall and 3.57 CPU s unsized, 2.34 s and 2.33 CPU s sized to threads.torch (1).
// Errors: none.
bool SizeOpenBlasPthreads(int threads);

// The OPENBLAS_CORETYPE that gives `cpu` the kernels its instructions allow when OpenBLAS chose
// `picked`, or "" when picked is already right or no better one applies. Only a fallback is
// corrected: picked must be one of OpenBLAS's pre-AVX2 cores (Prescott, Core2, Penryn,
// Dunnington, Nehalem, Sandybridge, Atom, Nano, Opteron, Opteron_SSE3, Barcelona, Bobcat; any
// case) while cpu has avx2 and fma. Then: avx512f, avx512bw, avx512vl, avx512dq and avx512cd with
// avx512_bf16 give "Cooperlake", without it "SkylakeX" (OpenBLAS's AVX-512 kernels need all five);
// otherwise "Zen" on an AMD CPU (a model name with "AMD"), as OpenBLAS names its AVX2 kernels
// there, and "Haswell" on others. No errors.
std::string SuggestOpenBlasCoreType(const std::string& picked, const CpuInfo& cpu);

// Whether `core` (an openblas_get_corename() value, any case) is one of OpenBLAS's AVX-512 kernel
// sets: SkylakeX, Cooperlake, SapphireRapids. No errors.
bool IsAvx512OpenBlasCore(const std::string& core);

// Set, for the restarted process, to the kernels OpenBLAS chose before the restart.
inline constexpr char kOpenBlasFallbackVariable[] = "GREENRL_OPENBLAS_FALLBACK";

// For benchmark output: "OpenBLAS, <core> kernels", with " (OPENBLAS_CORETYPE=<value>)" when
// that variable is set (", set by greenrl: OpenBLAS chose its generic <fallback> kernels for this
// CPU" inside the parentheses when RestartWithOpenBlasCoreTypeIfNeeded set it; when the user's
// environment set it to kernels narrower than the CPU's widest, "; this CPU can run OpenBLAS's
// <widest> kernels, which OpenBLAS chooses when OPENBLAS_CORETYPE is unset": on 2026-12-04 a
// shell's OPENBLAS_CORETYPE=Haswell made the DQN preset take 10.15 s on an AMD EPYC instead of
// 6.92 s with the Cooperlake kernels OpenBLAS chooses there), or "not OpenBLAS" (e.g. the
// reference BLAS). No errors.
std::string DescribeBlas();

// DescribeBlas for given inputs: core (openblas_get_corename(), "" when not OpenBLAS), the values
// of OPENBLAS_CORETYPE and kOpenBlasFallbackVariable (null when unset), and the CPU whose widest
// kernels (Cooperlake, SkylakeX, Zen or Haswell, as SuggestOpenBlasCoreType picks them) are
// compared with core. No errors.
std::string DescribeBlasFor(const std::string& core, const char* coretype_variable,
                            const char* fallback_variable, const CpuInfo& cpu);

// The kernel set that the OpenBLAS behind libblas.so.3 (the BLAS LibTorch and greenrl link;
// scripts/install-deps.sh points it at OpenBLAS) chooses for this CPU, asked from that library
// alone, dlopen'ed privately (a few milliseconds, no LibTorch): for greenrl's launcher
// (cli/launcher.cc), which must decide before the process that loads LibTorch starts. "" when
// libblas.so.3 cannot be loaded or is not OpenBLAS (e.g. the reference BLAS). No errors.
std::string LinkedOpenBlasCoreName();

// Sets OMP_WAIT_POLICY=PASSIVE when it is unset (a user's value is left alone), for a program
// about to exec one that loads LibTorch: GNU libgomp, the OpenMP runtime behind Debian's LibTorch
// and OpenBLAS's OpenMP build, reads it only when it loads, and unset its idle threads busy-wait
// (300,000 spins, GOMP_SPINCOUNT's default, before they sleep; GCC's libgomp manual,
// "OMP_WAIT_POLICY" and "GOMP_SPINCOUNT"). A reviewer's runs on the 2-core AMD EPYC VM,
// 2026-12-07, DQN CartPole with threads.torch 2, 6,000 steps: idle, 1.94 s wall and 3.55 CPU s
// with libgomp's default, 2.35 s and 2.87 CPU s passive (one thread: 1.35 s, 1.34 CPU s); beside
// other work the spinning worker made it 10-37 s, passive 1.7-2.1 s. (ACTIVE, spinning for good,
// was faster than passive on the idle VM: README "Threads".) Returns whether it set it. No errors.
bool SetPassiveOpenMpWaitPolicy();

// A warning for `torch_threads` > 1 when OMP_WAIT_POLICY is not PASSIVE (any case) in this
// process's environment (greenrl_cli started without the launcher, or a user's ACTIVE): "" when
// torch_threads <= 1 or the policy is passive. No errors.
std::string SpinningOpenMpWarning(int torch_threads);

// When OPENBLAS_CORETYPE is unset and SuggestOpenBlasCoreType(picked, ThisCpu()) names a core,
// sets OPENBLAS_CORETYPE to it and kOpenBlasFallbackVariable to `picked` (the core OpenBLAS
// chose) and returns true, for a program about to exec one that loads OpenBLAS. Otherwise sets
// nothing and returns false: a user's own OPENBLAS_CORETYPE is always left alone. No errors.
bool SetOpenBlasCoreTypeForFallback(const std::string& picked);

// Called first thing in main(), before any thread starts: when
// SetOpenBlasCoreTypeForFallback(OpenBlasCoreName()) sets the variables, restarts the program
// in place, silently (execv of /proc/self/exe with the same argv: the pid, the arguments and the
// rest of the environment stay; DescribeBlas, in `greenrl bench`'s header, tells). The restart
// loads every shared library again (LibTorch's ~290: ~0.45 s on the Xeon of 2026-12-03), which
// is why `greenrl` is a launcher that sets the variable before LibTorch loads
// (cli/launcher.cc); this restart remains for greenrl_cli started directly and for
// greenrl_bench_micro. If the restart fails the process goes on with the slow kernels after one
// line on stderr naming `program`; it never throws.
void RestartWithOpenBlasCoreTypeIfNeeded(char** argv, const char* program);

}  // namespace greenrl
