#!/usr/bin/env bash
# Partition quality and speed of strategy `multilevel` against METIS (gpmetis) and Scotch
# (scotch_gpart), run on the same graphs in the same run: 4elt (../shared/data), a random
# geometric graph, a Delaunay-like triangulation and a stochastic block model, k = 2..32 at 3%
# imbalance; then the million-edge graphs (time and peak memory). Installs the Debian packages
# `metis` and `scotch` when missing. Output is Markdown, as pasted into BENCHMARKS.md.
# Usage: scripts/bench-partitioner.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"

missing=()
for p in metis scotch; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" --target bench_partition_quality -j "$(nproc)"

bench="$build/bench/partitioner/bench_partition_quality"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GB, $(date -u +%Y-%m-%d)"
echo
"$bench" --work "$work" --gpmetis "$(command -v gpmetis)" --scotch "$(command -v scotch_gpart)" \
  --gcv "$(command -v gcv)" --parts 2,4,8,16,32 --repeat 3
echo
"$bench" --work "$work" --gpmetis "$(command -v gpmetis)" --repeat 3 --large
