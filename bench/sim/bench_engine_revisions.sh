#!/usr/bin/env bash
# The engine of this checkout against the engine of another commit, in the same run: the
# lead-measured tick time (dnnc run --json "seconds": the ticks alone, not the set-up) of
# Brunel's network (12,500 iaf_psc_delta neurons, 15.6M synapses) and of the scaled
# microcircuit (7,717 iaf_psc_exp neurons, 3.0M synapses with drawn weights and delays) on
# one node, the two builds taking turns (A B A B ...) so that a drift of the machine's speed
# falls on both. Prints each round's times and the median ratio (this / base) per network
# against a limit (default 1.03: the static path no more than 3% slower).
# Usage: bench/sim/bench_engine_revisions.sh BASE [ROUNDS] [LIMIT]
#   BASE: a commit (built into a temporary worktree, with ccache when it is installed), or a
#   folder that holds the base's dnnc and dnnc-node.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: bench_engine_revisions.sh BASE [ROUNDS] [LIMIT]}
rounds=${2:-7}
limit=${3:-1.03}
cmake --build build --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
cleanup() {
  [ ! -d "$work/tree" ] || git worktree remove --force "$work/tree"
  rm -rf "$work"
}
trap cleanup EXIT
if [ -x "$base/dnnc" ]; then
  base_bin=$base
else
  git worktree add --detach "$work/tree" "$base" > /dev/null
  launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S "$work/tree" -B "$work/tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" > /dev/null
  cmake --build "$work/tree/build" --target dnnc dnnc-node > /dev/null
  base_bin=$work/tree/build/tools
fi
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');" \
     "this: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- sim || echo ' (sim changed)'), base: $base"
seconds() {  # dnnc document ticks
  "$1" run "$2" --nodes 1 --ticks "$3" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'
}
for net in brunel:examples/brunel/brunel.xml:10000 microcircuit_scaled:examples/microcircuit/microcircuit_scaled.xml:10000; do
  IFS=: read -r name doc ticks <<< "$net"
  this=() based=()
  for ((r = 0; r < rounds; ++r)); do
    this+=("$(seconds build/tools/dnnc "$doc" "$ticks")")
    based+=("$(seconds "$base_bin/dnnc" "$doc" "$ticks")")
  done
  /usr/bin/python3 - "$name" "$ticks" "$limit" "${this[*]}" "${based[*]}" << 'PY'
import statistics, sys
name, ticks, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
this = [float(x) for x in sys.argv[4].split()]
base = [float(x) for x in sys.argv[5].split()]
ratios = [a / b for a, b in zip(this, base)]
print(f"{name}, {ticks} ticks, seconds this: {' '.join(f'{x:.3f}' for x in this)}")
print(f"{name}, {ticks} ticks, seconds base: {' '.join(f'{x:.3f}' for x in base)}")
r = statistics.median(ratios)
print(f"{name}: median this/base {r:.3f} (pairs {min(ratios):.3f}..{max(ratios):.3f}); limit {limit}: {'met' if r <= limit else 'MISSED'}")
PY
done
