#!/usr/bin/env bash
# Snapshot and restore of a 100,000-neuron, 10M-synapse network on a local two-node
# cluster (issue target: binary snapshot + restore <= 3 s). Prints, for the binary (.dnncs)
# and XML forms: snapshot time, restore time onto the same cluster (the lead reuses its
# partition: probes, fan-out, expansion on the nodes, state install), file size, bytes per
# synapse, and the nodes' peak memory (VmHWM), with the ratio to the limit; then a binary
# restore onto a different cluster (the same two nodes with capacities 2:1), which
# re-partitions.
# Usage: bench/node_server/bench_snapshot.sh [BUILD_DIR] [NEURONS] [P]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
neurons=${2:-100000}
p=${3:-0.001}
dnnc=$build/tools/dnnc
work=$(mktemp -d)
trap '"$dnnc" cluster down "$work/net.xml" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
a=$(port) b=$(port)
cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="big">
    <population id="P" size="$neurons" model="tanh"/>
    <projection from="P" to="P" kind="random" p="$p" weight="0.01" seed="3"/>
    <output id="y" neurons="P[0:8]"/>
  </network>
  <cluster lead="a">
    <node id="a" port="$a"/><node id="b" port="$b"/><link from="a" to="b"/>
  </cluster>
  <run probes="4"/>
</dnnc>
XML
seconds() { python3 -c "import time; print(time.time())"; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }
peak_mb() { local total=0; for pid in $(python3 -c "import json,sys; print(' '.join(str(n['pid']) for n in json.load(open(sys.argv[1]))['nodes']))" "$1"); do
    kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status"); total=$((total + kb)); done; echo $((total / 1024)); }

synapses=$("$dnnc" validate --json "$work/net.xml" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["synapses"])')
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, commit $(git rev-parse --short HEAD): $neurons neurons, $synapses synapses, 2 local nodes"
"$dnnc" cluster up "$work/net.xml" --log-level ${LOG_LEVEL:-warn} > /dev/null
record=$(ls -d "${XDG_RUNTIME_DIR:-/tmp}"/dnnc-cluster-"$(id -u)"-*/cluster.json | xargs ls -t | head -1)
t0=$(seconds); "$dnnc" submit "$work/net.xml" --to "127.0.0.1:$a" > /dev/null; t1=$(seconds)
echo "submit (partition, probes, fan-out): $(elapsed "$t0" "$t1") s"
"$dnnc" step 5 --lead "127.0.0.1:$a" > /dev/null
for form in dnncs xml; do
  file="$work/snap.$form"
  t0=$(seconds); "$dnnc" snapshot --lead "127.0.0.1:$a" -o "$file" > /dev/null; t1=$(seconds)
  "$dnnc" restore "$file" --replace --to "127.0.0.1:$a" > /dev/null; t2=$(seconds)
  size=$(stat -c %s "$file")
  snap=$(elapsed "$t0" "$t1"); rest=$(elapsed "$t1" "$t2"); total=$(elapsed "$t0" "$t2")
  python3 -c "print(f'$form: snapshot {$snap} s, restore {$rest} s, total {$total} s ({$total}/3 s = {$total / 3:.2f}x the limit); file {$size / 1e6:.1f} MB = {$size / $synapses:.3f} bytes/synapse')"
done
sed -e 's/<node id="a" port="[0-9]*"/& capacity="2"/' "$work/net.xml" > "$work/other.xml"
t0=$(seconds); "$dnnc" restore "$work/snap.dnncs" --cluster "$work/other.xml" --replace --to "127.0.0.1:$a" > /dev/null; t1=$(seconds)
echo "dnncs restore onto the cluster with capacities 2:1 (re-partitioned): $(elapsed "$t0" "$t1") s"
echo "peak memory of the two nodes together: $(peak_mb "$record") MB"
