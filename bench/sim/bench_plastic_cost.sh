#!/usr/bin/env bash
# What plasticity costs: Brunel's network (examples/brunel/brunel.xml, 12,500 iaf_psc_delta
# neurons, 15.6M synapses) with its E->E projection (10M synapses) under NEST's stdp_synapse
# (multiplicative, Wmax = J = 0.1 mV, so weights can only fall and the rates stay near the
# static network's), against the same network static, in turns on one node: the lead's tick
# time (dnnc run --json "seconds") and the rates. Prints the median plastic / static ratio
# (the issue's aim: at most 2).
# Usage: bench/sim/bench_plastic_cost.sh [ROUNDS] [TICKS]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
ticks=${2:-2000}
cmake --build build --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench/sim/plastic_brunel.sh > "$work/plastic.xml"
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git rev-parse --short HEAD), $ticks ticks"
run() {  # document
  build/tools/dnnc run "$1" --nodes 1 --ticks "$ticks" --json --spikes "$work/s.csv" |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["seconds"], " ".join("%s=%.1fHz" % (p["id"], p["rate_hz"]) for p in d["populations"]))'
}
ratios=()
for ((r = 0; r < rounds; ++r)); do
  read -r plastic plastic_rates <<< "$(run "$work/plastic.xml")"
  read -r static static_rates <<< "$(run examples/brunel/brunel.xml)"
  echo "plastic ${plastic} s (${plastic_rates}), static ${static} s (${static_rates})"
  ratios+=("$(/usr/bin/python3 -c "print($plastic / $static)")")
done
/usr/bin/python3 -c "
import statistics, sys
r = [float(x) for x in sys.argv[1:]]
m = statistics.median(r)
print(f'median plastic / static {m:.1f} (rounds {min(r):.1f}..{max(r):.1f}); aim 2: ' + ('met' if m <= 2 else 'MISSED'))" "${ratios[@]}"
