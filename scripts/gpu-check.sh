#!/usr/bin/env bash
# gpu-check.sh: build greenrl against the CUDA LibTorch of an installed PyTorch package and run
# the GPU checks: the CUDA tests (ppo_device_test), the NVML meter, and the PPO CartPole bench
# on the GPU (CUDA graph on and off, fp16, bf16) beside the CPU fused path. See README, "GPU".
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (default build-cuda)
# Environment:
#   GREENRL_DEPS_PREFIX  a prefix holding the Debian packages' files (yaml-cpp, fmt, CLI11,
#                        nlohmann-json, GoogleTest, Google Benchmark, OpenBLAS) when they are not
#                        installed system-wide, e.g. from `dpkg -x pkg.deb PREFIX` (PREFIX/usr/...)
#   PYTHON               the Python whose torch to build against (default python3)
#   LOG_DIR              where build and test logs go (default BUILD_DIR)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
python=${PYTHON:-python3}
log=${LOG_DIR:-$build}
mkdir -p "$build" "$log"
torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)') || {
  echo "gpu-check: $python has no torch package" >&2; exit 2; }
"$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "available", torch.cuda.is_available())'
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit --format=csv || true

prefix_path="$torch_prefix"
extra=()
if [ -n "${GREENRL_DEPS_PREFIX:-}" ]; then
  lib="$GREENRL_DEPS_PREFIX/usr/lib/x86_64-linux-gnu"
  prefix_path="$prefix_path;$GREENRL_DEPS_PREFIX/usr"
  export LD_LIBRARY_PATH="$lib:$lib/openblas-openmp:${LD_LIBRARY_PATH:-}"
  extra+=(-DGREENRL_BLAS_LIBRARY="$lib/openblas-openmp/libblas.so.3"
          -DCMAKE_CXX_FLAGS="-isystem $GREENRL_DEPS_PREFIX/usr/include"
          -DCMAKE_EXE_LINKER_FLAGS="-L$lib -Wl,-rpath,$lib:$lib/openblas-openmp")
fi
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
echo "== configure"
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix_path" "${extra[@]}" > "$log/cmake.txt" 2>&1 || {
  tail -40 "$log/cmake.txt"; exit 1; }
grep -E "greenrl:" "$log/cmake.txt"
echo "== build"
cmake --build "$build" -j "$(nproc)" --target greenrl nn_test precision_test algo_test \
  ppo_device_test -- -k 0 > "$log/build.txt" 2>&1 || {
  grep -E "error" -A4 "$log/build.txt" | head -80; exit 1; }
echo "== tests"
status=0
for t in ppo_device_test nn_test precision_test algo_test; do
  OMP_NUM_THREADS=1 "$build/tests/$t" --gtest_brief=1 || status=1
done
g="$build/bin/greenrl"
echo "== meters"; "$g" meters
echo "== bench: GPU, CUDA graph";  "$g" bench ppo-cartpole --seeds 5 --set device=cuda
echo "== bench: GPU, eager";       "$g" bench ppo-cartpole --seeds 1 --set device=cuda --set cuda_graph=false
echo "== bench: GPU, fp16";        "$g" bench ppo-cartpole --seeds 1 --set device=cuda --set precision=fp16
echo "== bench: GPU, bf16";        "$g" bench ppo-cartpole --seeds 1 --set device=cuda --set precision=bf16
echo "== bench: CPU fused";        "$g" bench ppo-cartpole --seeds 1
echo "== train on the GPU with the NVML meter and a dry-run power-limit plan"
"$g" train --config configs/ppo/cartpole.yaml --set device=cuda --set energy.power_limit=dry-run \
  --out "$build/gpu-run" || status=1
exit $status
