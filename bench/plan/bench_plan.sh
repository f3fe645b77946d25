#!/usr/bin/env bash
# Planning without expanding (issue target: a 1.2M-neuron network with 10^9 rule-based
# synapses planned on 8 nodes by `dnnc partition FILE --cluster FILE` in <= 10 s and
# <= 1 GiB peak). Prints the wall time and peak resident memory of dnnc partition, each
# with its ratio to the limit, and the partition's quality.
# Usage: bench/plan/bench_plan.sh [BUILD_DIR] [NEURONS] [SYNAPSES] [NODES]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
neurons=${2:-1200000}
synapses=${3:-1000000000}
nodes=${4:-8}
dnnc=$build/tools/dnnc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Four random projections between an excitatory (80%) and an inhibitory (20%) population,
# p chosen so that the expected synapse count is $synapses.
exc=$((neurons * 4 / 5)) inh=$((neurons - neurons * 4 / 5))
p=$(python3 -c "print(f'{$synapses / ($neurons * $neurons):.9f}')")
cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="plan$neurons">
    <population id="E" size="$exc" model="lif"/>
    <population id="I" size="$inh" model="lif"/>
    <projection from="E" to="E" kind="random" p="$p" weight="0.27" seed="1"/>
    <projection from="E" to="I" kind="random" p="$p" weight="0.27" seed="2"/>
    <projection from="I" to="E" kind="random" p="$p" weight="-4.5" seed="3"/>
    <projection from="I" to="I" kind="random" p="$p" weight="-4.5" seed="4"/>
  </network>
</dnnc>
XML
{
  echo '<dnnc xmlns="urn:dnnc:1"><cluster lead="n0">'
  for ((i = 0; i < nodes; ++i)); do echo "<node id=\"n$i\" port=\"$((7100 + i))\"/>"; done
  for ((i = 0; i < nodes; ++i)); do for ((j = i + 1; j < nodes; ++j)); do echo "<link from=\"n$i\" to=\"n$j\"/>"; done; done
  echo '</cluster></dnnc>'
} > "$work/cluster.xml"

echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), commit $(git rev-parse --short HEAD)"
echo "network: $neurons neurons, p = $p ($synapses synapses expected), $nodes nodes"
/usr/bin/time -f '%e %M' -o "$work/time" "$dnnc" partition "$work/net.xml" --cluster "$work/cluster.xml" --json > "$work/report.json"
read -r seconds kb < "$work/time"
python3 - "$work/report.json" "$seconds" "$kb" "$synapses" << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
seconds, kb, synapses = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"planning graph: {r['vertices']} units ({r['chunk']} neurons a chunk), {r['edges']} edges; "
      f"edge cut {r['edge_cut'] / synapses:.4f} of the synapses, max imbalance {r['max_imbalance']:.4f}")
print(f"dnnc partition: {seconds:.2f} s = {seconds / 10:.2f}x the limit (10 s); "
      f"peak {kb / 1024:.0f} MiB = {kb / 1024 / 1024:.3f}x the limit (1 GiB)")
PY
