#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh) and shows dnnc at work on the examples: every
# example validated, then the CUBA network partitioned onto its four-node cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
dnnc=build/tools/dnnc
echo
echo "== dnnc validate examples/*/*.xml"
"$dnnc" validate examples/*/*.xml
echo
echo "== dnnc partition examples/cuba/cuba.xml (4 nodes, capacities 4:3:2:1)"
"$dnnc" partition examples/cuba/cuba.xml
echo
echo "== dnnc partition examples/tree7/tree7.xml (7 nodes in a tree)"
"$dnnc" partition examples/tree7/tree7.xml
