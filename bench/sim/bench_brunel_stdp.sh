#!/usr/bin/env bash
# Synapses that learn, against Brian2, at scale: Brunel's network (examples/brunel/brunel.xml,
# 12,500 iaf_psc_delta neurons, 15.6M synapses) with its E->E projection (10M synapses)
# under NEST's stdp_synapse (multiplicative, Wmax = J = 0.1 mV, tau_plus = tau_minus = 20 ms,
# lambda 0.01, alpha 1: the document bench_plastic_cost.sh builds), in dnnc on one node and
# in Brian2's C++ standalone mode running the same plastic model (brian_brunel_stdp.py: the
# synapse as NEST's, whole delay dendritic; its own random connectivity of the same
# in-degrees). Same run on both: MS simulated, every spike recorded.
#
# Prints the wall seconds per simulated second of each (dnnc: the lead-measured tick time,
# dnnc run --json "seconds"; Brian2: its own simulation-loop timer, code generation,
# compilation and synapse creation excluded), medians over ROUNDS runs (Brian2 re-runs its
# compiled binary), the ratio dnnc / Brian2 against the target 0.8, and each population's
# rate on both (within 10%?). Brian2 runs its default single-threaded code; dnnc's node uses
# up to all cores through TBB. Exits 1 on a miss.
# Installs Debian's python3-brian if missing; builds dnnc and dnnc-node in build/. The
# default (300 ms, 1 round) takes about 3 minutes on 2 cores, most of it Brian2's build.
# Usage: bench/sim/bench_brunel_stdp.sh [MS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
ms=${1:-300}
rounds=${2:-1}
python=/usr/bin/python3  # Debian's interpreter, the one python3-brian installs into

source scripts/ensure_packages.sh
ensure_packages python3-brian
cmake --build build --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench/sim/plastic_brunel.sh > "$work/plastic.xml"
ticks=$("$python" -c "print(round($ms * 10))")

echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git rev-parse --short HEAD), load average $(cut -d" " -f1-3 /proc/loadavg), $ms ms ($ticks ticks), $rounds round(s)"
for ((r = 0; r < rounds; ++r)); do
  build/tools/dnnc run "$work/plastic.xml" --nodes 1 --ticks "$ticks" --json --spikes "$work/dnnc.csv" > "$work/dnnc-$r.json"
  "$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("dnnc: %.2f s ticks, %.2f s set-up" % (d["seconds"], d["setup_seconds"]))' "$work/dnnc-$r.json"
done
"$python" bench/sim/brian_brunel_stdp.py --ms "$ms" --repeat "$rounds" --spikes "$work/brian.csv" | tee "$work/brian.json"

"$python" - "$work" "$ms" "$rounds" << 'PY'
import csv, json, statistics, sys
work, ms, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
sizes = {"E": 10000, "I": 2500}
def rates(path):
    counts = dict.fromkeys(sizes, 0)
    with open(path) as f:
        for row in csv.DictReader(f):
            counts[row["population"]] += 1
    return {p: counts[p] / sizes[p] / (ms / 1000) for p in sizes}
brian = json.load(open(f"{work}/brian.json"))
dnnc_s = statistics.median(json.load(open(f"{work}/dnnc-{r}.json"))["seconds"] for r in range(rounds))
ours, theirs = rates(f"{work}/dnnc.csv"), rates(f"{work}/brian.csv")
missed = False
print(f"\nBrunel AI, E->E stdp_synapse ({brian['plastic']:,} plastic of {brian['synapses']:,} synapses in Brian2), "
      f"{ms:g} ms simulated")
print(f"{'population':<11}{'dnnc Hz':>9}{'Brian2 Hz':>11}{'ratio':>7}  within 10%")
for p in sizes:
    r = ours[p] / theirs[p]
    ok = abs(r - 1) <= 0.10
    missed |= not ok
    print(f"{p:<11}{ours[p]:>9.2f}{theirs[p]:>11.2f}{r:>7.3f}  {'PASS' if ok else 'MISS'}")
per_s = lambda t: t / (ms / 1000)
ratio = dnnc_s / brian["loop_s"]
missed |= ratio > 0.8
print(f"wall seconds per simulated second (median of {rounds}): dnnc {per_s(dnnc_s):.2f}, Brian2 {per_s(brian['loop_s']):.2f} "
      f"(its build {brian['build_s']:.0f} s not counted); dnnc / Brian2 {ratio:.2f}, target 0.8: "
      + ("met" if ratio <= 0.8 else "MISSED"))
sys.exit(1 if missed else 0)
PY
