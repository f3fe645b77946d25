#!/usr/bin/env bash
# The dense path on a GPU: builds the engine alone (-DDNNC_ENGINE_ONLY=ON, none of the
# cluster's packages but Xerces-C++, oneTBB, OpenSSL, LZ4, nlohmann-json and Catch2) against
# the CUDA LibTorch of a PyTorch install into build-cuda/, then runs the CUDA tests
# (`ctest -R cuda`) and the dense benchmark on the device (docs/dense.md, "A CUDA build, step
# by step").
# Usage: scripts/cuda-check.sh [more CMake arguments]; PYTHON names the Python that has torch.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
torch_dir="$("${python}" -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch"
cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DDNNC_ENGINE_ONLY=ON -DTorch_DIR="${torch_dir}" "$@"
if ! grep -q test_dense_cuda build-cuda/tests/sim/CTestTestfile.cmake; then
  echo "cuda-check: the LibTorch at ${torch_dir} has no CUDA" >&2
  exit 1
fi
cmake --build build-cuda --target test_dense_cuda test_dense_split bench_dense
(cd build-cuda && ctest -R cuda --output-on-failure)
build-cuda/bench/sim/bench_dense --device cuda
