#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and shows dnnc at work on local multi-node
# clusters: XOR on two nodes fed from a CSV, then one simulated second of the CUBA network
# (4,000 LIF neurons, 0.1 ms ticks) on four nodes of unequal capacity, half a second of the
# Potjans-Diesmann cortical microcircuit (scaled to 7,717 neurons) on four nodes with every
# spike recorded, then the CUBA cluster driven by hand: up, submit, status with measured
# link latencies, down.
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

config=examples/cuba/cuba.xml
lead=127.0.0.1:7120
echo
echo "== by hand: dnnc cluster up / submit / status / cluster down"
"$dnnc" cluster up "$config"
trap '"$dnnc" cluster down "$config" > /dev/null 2>&1 || true; rm -rf "$out"' EXIT
"$dnnc" submit "$config" --to "$lead"
"$dnnc" step 100 --lead "$lead"
"$dnnc" status --lead "$lead" --links
"$dnnc" cluster down "$config"
trap 'rm -rf "$out"' EXIT
