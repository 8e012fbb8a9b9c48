#!/usr/bin/env bash
# install-deps.sh: installs greenrl's build and run dependencies from Debian 12 packages.
#
# Idempotent: packages already installed are not fetched again, and `apt-get update` runs only
# when something is missing. Works as root or through sudo. Debian packages only, nothing is
# downloaded from anywhere else (see README.md, "Two commands").
set -euo pipefail

# Build tools and libraries. libmujoco-dev (MuJoCo 2.2.2) runs the MuJoCo envs in
# greenrl/env/mujoco (eleven tasks, each as v4 and v5: `greenrl envs` lists them).
# libopenblas0-openmp replaces Debian's reference BLAS under LibTorch: a 256x64 by 64x64 matmul
# took 650 us with the reference BLAS and 24 us with OpenBLAS, measured on the 2-core CI machine.
PACKAGES=(
  build-essential cmake ccache pkg-config
  libtorch-dev libopenblas0-openmp
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libgloo-dev  # Gloo headers: LibTorch's ProcessGroupGloo.hpp includes them (greenrl/dist)
  libmujoco-dev
  # TensorBoard event files (greenrl/report/tfevents.proto).
  protobuf-compiler libprotobuf-dev
  # evaluations.npz, SB3's evaluation log (greenrl/report/evaluations_npz.cc).
  libzip-dev
  # `greenrl report`: Chart.js inlined into the HTML page; headless Chromium for its render test.
  libjs-chart.js chromium
  # `make fuzz`: libFuzzer, ASan and UBSan.
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-deps: missing packages (${missing[*]}) and not root; rerun as root or install sudo" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
