#!/usr/bin/env bash
# The full-scale cortical microcircuit (examples/microcircuit/microcircuit.xml: 77,169
# neurons, 3·10⁸ synapses with drawn weights and delays) on 4 local nodes, as its readme
# runs it. It must set up and run however long building each node's share takes on the
# machine at hand (a fixed limit on the lead's calls once failed it when four nodes shared
# two cores); too heavy for the test suite (about 3 GB of memory, minutes on 2 cores), so CI
# runs it as a benchmark. Prints the wall time of the whole `dnnc run`, the set-up time (the
# lead's submit: plan, probes, every node building its share) and the run's ticks; exits
# non-zero when the run fails.
# Usage: bench/node_server/bench_microcircuit_nodes.sh [BUILD_DIR] [TICKS] [DOCUMENT]
#   the scaled model, to try the path: ... build 200 examples/microcircuit/microcircuit_scaled.xml
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-1000}
doc=${3:-examples/microcircuit/microcircuit.xml}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "$doc on 4 local nodes, $ticks ticks"
start=$(date +%s.%N)
"$build/tools/dnnc" run "$doc" --nodes 4 --ticks "$ticks" --json > "$work/summary.json"
end=$(date +%s.%N)
/usr/bin/python3 - "$work/summary.json" "$start" "$end" << 'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"wall time {wall:.1f} s; set-up (submit) {s['setup_seconds']:.1f} s; "
      f"{s['ticks']} ticks in {s['seconds']:.1f} s ({s['ticks_per_second']:.0f} ticks/s); nodes "
      + " ".join(f"{n['id']}:{n['neurons']}" for n in s["nodes"]))
PY
