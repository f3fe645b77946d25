#!/usr/bin/env bash
# Simulation benchmarks, peers and limits measured in the same run (results: BENCHMARKS.md):
#  a. the CUBA network on one engine (bench_cuba) against Brian2's C++ standalone mode
#     (bench/sim/brian_cuba.py), 10,000 ticks of 0.1 ms, compile time excluded on both sides:
#     dnnc's compute() time over Brian2's simulation-loop time, and both mean firing rates;
#     each with 1 thread and with 2 (TBB here, OpenMP for Brian2);
#  b. the 100k-neuron, 10M-synapse rate network (bench_rate): synaptic updates per second per
#     core against the memory-bandwidth bound it measures itself.
# Installs Debian's python3-brian if missing and builds the two targets in $BUILD_DIR (build/).
# CUBA cases are `neurons:p` pairs, by default "4000:0.02 40000:0.02 40000:0.002"; the
# 40,000-neuron case at p = 0.02 (32M synapses) takes most of the run's ~25 minutes on 2 cores.
# Usage: [BUILD_DIR=build] [CASES="4000:0.02"] [THREADS="1 2"] scripts/bench-sim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cases=${CASES:-"4000:0.02 40000:0.02 40000:0.002"}
thread_counts=${THREADS:-"1 2"}
python=/usr/bin/python3  # Debian's interpreter, the one python3-brian installs into

source scripts/ensure_packages.sh
ensure_packages python3-brian

[ -f "$build/build.ninja" ] || [ -f "$build/Makefile" ] \
  || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$build" --target bench_cuba bench_rate

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo), commit $(git rev-parse --short HEAD)"

for c in $cases; do
  n=${c%%:*} p=${c##*:}
  for t in $thread_counts; do
    # Brian2's own default is single-threaded code; more threads mean OpenMP.
    brian_threads=$t
    [ "$t" -gt 1 ] || brian_threads=0
    echo "== CUBA $n neurons, p = $p, $t thread(s): Brian2"
    "$python" bench/sim/brian_cuba.py --neurons "$n" --p "$p" --threads "$brian_threads" 2> /dev/null \
      | tee -a "$results/brian.jsonl"
    echo "== CUBA $n neurons, p = $p, $t thread(s): dnnc"
    "$build/bench/sim/bench_cuba" --neurons "$n" --p "$p" --threads "$t" | tee -a "$results/dnnc.jsonl"
  done
done
for t in $thread_counts; do
  echo "== rate network, $t thread(s)"
  "$build/bench/sim/bench_rate" --threads "$t" | tee -a "$results/rate.jsonl"
done

"$python" - "$results" << 'PY'
import json, sys
folder = sys.argv[1]
load = lambda name: [json.loads(line) for line in open(f"{folder}/{name}") if line.strip()]
brian, ours = load("brian.jsonl"), load("dnnc.jsonl")
print()
print("CUBA, 1 s simulated (0.1 ms ticks); times exclude setup and compilation")
print(f"{'neurons':>8} {'synapses':>11} {'thr':>3} {'Brian2 s':>9} {'dnnc s':>9} {'ratio':>7}"
      f" {'Brian2 Hz':>9} {'dnnc Hz':>8} {'rate diff':>9}")
for b, d in zip(brian, ours):
    ratio = d["compute_s"] / b["loop_s"]
    diff = (d["rate_hz"] - b["rate_hz"]) / b["rate_hz"]
    print(f"{d['neurons']:>8} {d['synapses']:>11} {d['threads']:>3} {b['loop_s']:>9.3f} {d['compute_s']:>9.3f}"
          f" {ratio:>7.2f} {b['rate_hz']:>9.3f} {d['rate_hz']:>8.3f} {diff:>+9.1%}")
print()
print("Rate network: synaptic updates per second per core against the read-bandwidth bound")
print(f"{'synapses':>10} {'thr':>3} {'updates/s/core':>14} {'read GB/s':>9} {'bound/core':>10} {'of bound':>8}"
      f" {'footprint GB/s':>14} {'of it':>6}")
for r in load("rate.jsonl"):
    print(f"{r['synapses']:>10} {r['threads']:>3} {r['updates_per_s_per_core']:>14.3g} {r['read_gb_s']:>9.2f}"
          f" {r['bound_per_s_per_core']:>10.3g} {r['fraction_of_bound']:>8.1%} {r['footprint_gb_s']:>14.2f}"
          f" {r['fraction_of_footprint_bound']:>6.1%}")
PY
