#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and shows dnnc at work: the examples validated and
# the CUBA network (4,000 LIF neurons) submitted to a local four-node cluster, whose
# status — nodes, neurons per node, measured link latencies, wait windows — is shown
# before the cluster is taken down again.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
dnnc=build/tools/dnnc
config=examples/cuba/cuba.xml
lead=127.0.0.1:7120

echo
echo "== dnnc validate examples/*/*.xml"
"$dnnc" validate examples/*/*.xml

echo
echo "== dnnc cluster up $config"
"$dnnc" cluster down "$config" > /dev/null 2>&1 || true
"$dnnc" cluster up "$config"
trap '"$dnnc" cluster down "$config"' EXIT

echo
echo "== dnnc submit $config --to $lead"
"$dnnc" submit "$config" --to "$lead"

echo
echo "== dnnc status --lead $lead --links"
"$dnnc" status --lead "$lead" --links

echo
echo "== dnnc cluster down $config"
