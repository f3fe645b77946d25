#!/bin/bash
# What a watching live page costs a free-running network: dnnc run of bench/live/fast.xml on
# 2 local nodes, alternately without a page and with one watched by watch.py (events and
# spikes, as the page reads them). Usage: bench/live/bench_live.sh [ROUNDS] [TICKS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dnnc=${DNNC:-$here/../../build/tools/dnnc}
rounds=${1:-3} ticks=${2:-1000000}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
for round in $(seq "$rounds"); do
  echo "plain:   $("$dnnc" run "$here/fast.xml" --nodes 2 --ticks "$ticks" | head -1)"
  "$dnnc" run "$here/fast.xml" --nodes 2 --ticks "$ticks" --http 0 > "$work/out" 2> "$work/err" &
  run=$!
  for _ in $(seq 200); do grep -q "live page" "$work/err" && break; sleep 0.05; done
  /usr/bin/python3 "$here/watch.py" "$(grep -o 'http://[^ ]*' "$work/err")" > "$work/watch" &
  wait $run
  wait
  echo "watched: $(head -1 "$work/out") ($(cat "$work/watch"))"
done
