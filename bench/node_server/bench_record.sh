#!/usr/bin/env bash
# What state recording costs: a 10,000-neuron iaf_cond_exp network (8,000 excitatory, 2,000
# inhibitory, 100 inputs each, Poisson drive) run on 2 local nodes with and without
# <record neurons="P[0:100]" variables="V_m g_ex g_in" interval-ms="1"/> and
# `--record-file`, alternately, REPEATS times each; the lead's time for the ticks
# (`dnnc run --json` "seconds") of each, and the cost of recording as the ratio of the
# fastest runs, measured in this run (the fastest: the other work on a shared machine only
# slows a run down; issue target: <= 10% of the ticks' time).
# Usage: bench/node_server/bench_record.sh [BUILD_DIR] [TICKS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-5000}
repeats=${3:-3}
dnnc=$build/tools/dnnc
cmake --build "$build" --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

network() {  # $1: extra elements inside <network>
  cat << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="record" dt="0.1">
    <population id="P" size="10000" model="iaf_cond_exp" seed="1" v-init="-70" v-init-max="-55"/>
    <projection from="P[0:8000]" to="P" kind="fixed-indegree" indegree="80" weight="2" delay-ms="1.5" seed="3"/>
    <projection from="P[8000:10000]" to="P" kind="fixed-indegree" indegree="20" weight="-10" delay-ms="1.5" seed="4"/>
    <poisson to="P" rate="9000" weight="3" seed="5"/>
    $1
  </network>
  <run send="nonzero"/>
</dnnc>
XML
}
network "" > "$work/plain.xml"
network '<record neurons="P[0:100]" variables="V_m g_ex g_in" interval-ms="1"/>' > "$work/recorded.xml"

seconds() { python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'; }
plain=() recorded=()
for ((r = 0; r < repeats; ++r)); do
  plain+=("$("$dnnc" run "$work/plain.xml" --nodes 2 --ticks "$ticks" --json | seconds)")
  recorded+=("$("$dnnc" run "$work/recorded.xml" --nodes 2 --ticks "$ticks" --json --record-file "$work/v.csv" | seconds)")
done
rows=$(($(wc -l < "$work/v.csv") - 1))
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, commit $(git rev-parse --short HEAD); 10,000 iaf_cond_exp neurons," \
     "2 nodes, $ticks ticks; recorded: 100 neurons x 3 variables every 1 ms ($rows values)"
python3 - "${plain[*]}" "${recorded[*]}" << 'PY'
import sys
plain = [float(x) for x in sys.argv[1].split()]
recorded = [float(x) for x in sys.argv[2].split()]
p, r = min(plain), min(recorded)
print(f"ticks' time without recording: {p:.3f} s (fastest of {' '.join(f'{x:.3f}' for x in plain)})")
print(f"ticks' time with recording:    {r:.3f} s (fastest of {' '.join(f'{x:.3f}' for x in recorded)})")
print(f"recording costs {100 * (r - p) / p:+.1f}% of the ticks' time (target <= 10%)")
PY
