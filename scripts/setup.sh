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
  nlohmann-json3-dev libcli11-dev libssl-dev liblz4-dev openssl libopenmpi-dev openmpi-bin slurm-wlm
  python3 python3-dev pybind11-dev python3-numpy python3-pytest python3-matplotlib
  python3-pynn  # PyNN 0.10.1, for its backend pyNN.dnnc (docs/pynn.md)
  python3-venv python3-wheel  # pip install --no-build-isolation ./python into a venv (docs/python.md)
  chromium libpng-dev  # the live page's browser test (tests/tools/test_cli_live.cpp) and its screenshots
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

# `import dnnc` and `import pyNN.dnnc` with no environment variables: a .pth file in the
# system Python's site-packages names build/python, where the build assembles the package,
# and imports the hook that makes pyNN.dnnc load dnnc/pynn/ from there (docs/python.md,
# docs/pynn.md).
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
pth="${site}/dnnc.pth"
lines="$(pwd)/build/python
import dnnc_pynn_hook"
if [ "$(cat "${pth}" 2>/dev/null)" != "${lines}" ]; then
  echo "== making 'import dnnc' and 'import pyNN.dnnc' find $(pwd)/build/python (${pth})"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" mkdir -p "${site}"
  echo "${lines}" | "${sudo_cmd[@]}" tee "${pth}" > /dev/null
fi
