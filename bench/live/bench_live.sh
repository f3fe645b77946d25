#!/bin/bash
# What a watching live page costs a free-running network: dnnc run of bench/live/fast.xml on
# 2 local nodes, alternately without a page and with one watched by watch.py (events and
# spikes, as the page reads them). Usage: bench/live/bench_live.sh [ROUNDS] [TICKS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dnnc=${DNNC:-$here/../../build/tools/dnnc}
rounds=${1:-3} ticks=${2:-1000000}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
rate() { grep -o '[0-9]* ticks/s' <<< "$1" | cut -d' ' -f1; }
for round in $(seq "$rounds"); do
  plain=$("$dnnc" run "$here/fast.xml" --nodes 2 --ticks "$ticks" | head -1)
  echo "plain:   $plain"
  "$dnnc" run "$here/fast.xml" --nodes 2 --ticks "$ticks" --http 0 > "$work/out" 2> "$work/err" &
  run=$!
  for _ in $(seq 200); do grep -q "live page" "$work/err" && break; sleep 0.05; done
  /usr/bin/python3 "$here/watch.py" "$(grep -o 'http://[^ ]*' "$work/err")" > "$work/watch" &
  wait $run
  wait
  echo "watched: $(head -1 "$work/out") ($(cat "$work/watch"))"
  echo "$(rate "$plain") $(rate "$(head -1 "$work/out")")" >> "$work/rates"
done
# Slower by: 1 - watched / plain, per round and over all rounds' ticks/s, against the target.
awk '{ printf "round %d: slower by %.1f%%\n", NR, 100 * (1 - $2 / $1); p += $1; w += $2 }
     END { printf "all rounds: %.0f ticks/s without a page, %.0f watched: slower by %.1f%% (target: at most 2%%)\n", p / NR, w / NR, 100 * (1 - w / p) }' "$work/rates"
