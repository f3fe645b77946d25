#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and shows dnnc at work on local multi-node
# clusters: XOR on two nodes fed from a CSV, then one simulated second of the CUBA network
# (4,000 LIF neurons, 0.1 ms ticks) on four nodes of unequal capacity, half a second of the
# Potjans-Diesmann cortical microcircuit (scaled to 7,717 neurons) on four nodes with every
# spike recorded, then the CUBA cluster driven by hand: up with its live page, submit, step,
# status with measured link latencies and the page's URL, a free run to watch there, freeze,
# down.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
dnnc=build/tools/dnnc
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo
echo "== dnnc validate examples/*/*.xml"
"$dnnc" validate examples/*/*.xml

echo
echo "== dnnc run examples/xor/xor.xml --ticks 6 --input examples/xor/inputs.csv --output xor.csv"
"$dnnc" run examples/xor/xor.xml --ticks 6 --input examples/xor/inputs.csv --output "$out/xor.csv"
echo "-- xor.csv (inputs 00, 10, 01, 11 at ticks 0-3; answers two ticks later):"
cat "$out/xor.csv"

echo
echo "== dnnc run examples/cuba/cuba.xml --ticks 10000 --output cuba.csv"
"$dnnc" run examples/cuba/cuba.xml --ticks 10000 --output "$out/cuba.csv"
spikes=$(tail -n +2 "$out/cuba.csv" | tr ',' '\n' | grep -c '^1$' || true)
echo "-- the 100 recorded neurons spiked $spikes times in 1 s of simulated time"

echo
echo "== dnnc run examples/microcircuit/microcircuit_scaled.xml --nodes 4 --ticks 5000 --spikes spikes.csv"
"$dnnc" run examples/microcircuit/microcircuit_scaled.xml --nodes 4 --ticks 5000 --spikes "$out/spikes.csv"
echo "-- $(($(wc -l < "$out/spikes.csv") - 1)) spikes in spikes.csv (t_ms,population,index); the first ones:"
head -4 "$out/spikes.csv"

# The CUBA network as above, paced to one tick per millisecond (a tenth of real time, which
# leaves this machine's cores free for a browser) and recording its spikes for the raster.
config=$out/cuba.xml
sed -e 's|<run |<run tick-period="1" |' -e 's|</network>|  <record/>\n  </network>|' examples/cuba/cuba.xml > "$config"
lead=127.0.0.1:7120
echo
echo "== by hand: dnnc cluster up --http 8120 / submit / step / status / start / freeze / cluster down"
"$dnnc" cluster up "$config" --http 8120
trap '"$dnnc" cluster down "$config" > /dev/null 2>&1 || true; rm -rf "$out"' EXIT
"$dnnc" submit "$config" --to "$lead"
"$dnnc" step 100 --lead "$lead"
"$dnnc" status --lead "$lead" --links

# The network free-runs while the live page (the URL status printed) shows it: a minute,
# or until Enter, at a terminal; a few seconds otherwise. DNNC_DEMO_WATCH sets the seconds.
watch=${DNNC_DEMO_WATCH:-$([ -t 0 ] && echo 60 || echo 3)}
echo
echo "== dnnc start: the network runs for $watch s; watch it on the live page above$([ -t 0 ] && echo ' (Enter stops it sooner)')"
"$dnnc" start --lead "$lead"
if [ -t 0 ]; then read -r -t "$watch" || true; else sleep "$watch"; fi
"$dnnc" freeze --lead "$lead"
"$dnnc" status --lead "$lead" | head -1
"$dnnc" cluster down "$config"
trap 'rm -rf "$out"' EXIT
