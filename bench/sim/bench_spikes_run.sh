#!/usr/bin/env bash
# What recording every spike costs a distributed run, end to end: CUBA (examples/cuba,
# 4,000 lif neurons) for TICKS ticks on `dnnc run --nodes 2`, with `--spikes FILE` (every
# spike goes node -> lead -> client -> CSV while the run goes) and without, alternating
# (and alternating which goes first), REPEATS runs of each; each side keeps its fastest run (the lead's own time for the ticks,
# "seconds" of --json). Limit: recording adds at most 10%.
# Usage: bench/sim/bench_spikes_run.sh [BUILD_DIR] [TICKS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-20000}
repeats=${3:-3}
dnnc=$build/tools/dnnc
cmake --build "$build" --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
doc=examples/cuba/cuba.xml

seconds() { python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'; }
run_plain() { "$dnnc" run "$doc" --nodes 2 --ticks "$ticks" --json | seconds; }
run_recording() { "$dnnc" run "$doc" --nodes 2 --ticks "$ticks" --json --spikes "$work/spikes.csv" | seconds; }
plain=() recording=()
for ((r = 0; r < repeats; ++r)); do
  # Which goes first alternates: a run slows the one after it a little (its nodes going down).
  if ((r % 2 == 0)); then
    plain+=("$(run_plain)")
    recording+=("$(run_recording)")
  else
    recording+=("$(run_recording)")
    plain+=("$(run_plain)")
  fi
done
spikes=$(($(wc -l < "$work/spikes.csv") - 1))
python3 - "$ticks" "$spikes" "${plain[*]}" "${recording[*]}" << 'PY'
import json, sys
ticks, spikes = int(sys.argv[1]), int(sys.argv[2])
plain = [float(x) for x in sys.argv[3].split()]
recording = [float(x) for x in sys.argv[4].split()]
cost = min(recording) / min(plain) - 1
print(json.dumps({"nodes": 2, "ticks": ticks, "spikes": spikes, "plain_s": plain, "recording_s": recording,
                  "cost": round(cost, 4), "limit": 0.10, "within_limit": cost <= 0.10}))
sys.exit(0 if cost <= 0.10 else 1)
PY
