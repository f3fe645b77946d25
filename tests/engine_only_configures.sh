#!/bin/sh
# The engine-only build (cmake/DnncEngineOnly.cmake, for GPU hosts without the cluster's
# packages) configures, has the engine's tests and benchmarks, and links nothing of the
# partitioner, server, tools, Boost or MPI. Usage: engine_only_configures.sh SOURCE_DIR GENERATOR
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake -S "$1" -B "$dir" -G "$2" -DDNNC_ENGINE_ONLY=ON > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
grep -q test_dense_split "$dir/tests/sim/CTestTestfile.cmake"
# The build rules (Ninja's build.ninja, or the Makefiles' link.txt of each target).
rules="--include=build.ninja --include=link.txt --include=Makefile"
grep -r -q $rules bench_dense "$dir"
if grep -r -l $rules -E "dnnc_partitioner|dnnc_node_server|dnnc_client|boost|libmpi" "$dir"; then
  echo "the engine-only build reaches beyond the engine"
  exit 1
fi
