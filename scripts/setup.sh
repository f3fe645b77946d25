#!/usr/bin/env bash
# Installs what dnnc needs from Debian 12's packages (only what is missing) and builds it
# into build/ (Release). Safe to run again: installs nothing twice, rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# libopenblas0-pthread: LibTorch (libtorch-dev) takes its BLAS from libblas.so.3, which
# becomes OpenBLAS instead of the reference BLAS (dense products 6-24x faster; docs/dense.md).
packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libboost-graph-dev libxerces-c-dev libtorch-dev libopenblas0-pthread libtbb-dev catch2
  nlohmann-json3-dev libcli11-dev libssl-dev openssl libopenmpi-dev openmpi-bin
)

source scripts/ensure_packages.sh
ensure_packages "${packages[@]}"

# A CUDA LibTorch can be used instead with: TORCH_DIR=/path/to/share/cmake/Torch scripts/setup.sh
extra=()
[ -z "${TORCH_DIR:-}" ] || extra+=("-DTorch_DIR=${TORCH_DIR}")
echo "== configuring and building (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" > build-configure.log 2>&1 \
  || { cat build-configure.log; exit 1; }
rm -f build-configure.log
cmake --build build -j "$(nproc)"
