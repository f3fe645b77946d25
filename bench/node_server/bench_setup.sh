#!/usr/bin/env bash
# Set-up of a large network on local nodes (issue targets: a 100M-synapse network on 4 local
# nodes reaches its first tick <= 10 s after it is submitted, with all processes together at
# <= 16 bytes per synapse at peak; a network of the cortical microcircuit's size — 77,169
# neurons, 0.3G synapses — runs on 4 local nodes of a 24 GB machine).
# Prints the time of each step (nodes up, submit: plan + probes + fan-out + every node
# building its rows, first tick), memory at peak, in bytes per synapse against the limit, two
# ways: the sum of every process's own peak (the nodes' VmHWM and the client's maximum RSS),
# which counts the pages of shared libraries once per process, and the peak of the processes'
# proportional set sizes summed (PSS, sampled every 50 ms; shared pages counted once), which
# is what the machine holds; and the tick rate of a short run.
# Usage: bench/node_server/bench_setup.sh [BUILD_DIR] [NEURONS] [SYNAPSES] [NODES] [TICKS]
#   the microcircuit's size: bench/node_server/bench_setup.sh build 77169 300000000 4 200
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
neurons=${2:-100000}
synapses=${3:-100000000}
nodes=${4:-4}
ticks=${5:-2000}
dnnc=$build/tools/dnnc
work=$(mktemp -d)
trap '"$dnnc" cluster down "$work/net.xml" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT

exc=$((neurons * 4 / 5)) inh=$((neurons - neurons * 4 / 5))
p=$(python3 -c "print(f'{$synapses / ($neurons * $neurons):.9f}')")
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
{
  cat << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="setup$neurons">
    <population id="E" size="$exc" model="lif" seed="1" v-init="-60" v-init-max="-50"/>
    <population id="I" size="$inh" model="lif" seed="2" v-init="-60" v-init-max="-50"/>
    <projection from="E" to="E" kind="random" p="$p" weight="0.05" seed="11"/>
    <projection from="E" to="I" kind="random" p="$p" weight="0.05" seed="12"/>
    <projection from="I" to="E" kind="random" p="$p" weight="-0.2" seed="13"/>
    <projection from="I" to="I" kind="random" p="$p" weight="-0.2" seed="14"/>
    <output id="y" neurons="E[0:4] I[0:4]"/>
  </network>
  <cluster lead="n0">
XML
  for ((i = 0; i < nodes; ++i)); do echo "    <node id=\"n$i\" port=\"$(port)\"/>"; done
  for ((i = 0; i < nodes; ++i)); do for ((j = i + 1; j < nodes; ++j)); do echo "    <link from=\"n$i\" to=\"n$j\"/>"; done; done
  echo '  </cluster>'
  echo '  <run probes="4" send="nonzero"/>'
  echo '</dnnc>'
} > "$work/net.xml"
lead=127.0.0.1:$(sed -n 's/.*<node id="n0" port="\([0-9]*\)".*/\1/p' "$work/net.xml")

seconds() { python3 -c "import time; print(time.time())"; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, commit $(git rev-parse --short HEAD)"
echo "network: $neurons neurons, p = $p ($synapses synapses expected), $nodes local nodes"
# The peak of the summed PSS of every dnnc process, until $work/stop appears.
python3 - "$work" << 'PY' &
import os, sys, time
work, peak = sys.argv[1], 0
while not os.path.exists(work + "/stop"):
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if b"dnnc" not in open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0]: continue
            for line in open(f"/proc/{pid}/smaps_rollup"):
                if line.startswith("Pss:"): total += int(line.split()[1])
        except OSError:
            pass
    peak = max(peak, total)
    time.sleep(0.05)
open(work + "/pss_kb", "w").write(str(peak))
PY
sampler=$!
t0=$(seconds); "$dnnc" cluster up "$work/net.xml" --log-level warn > /dev/null; t1=$(seconds)
record=$(ls -d "${XDG_RUNTIME_DIR:-/tmp}"/dnnc-cluster-"$(id -u)"-*/cluster.json | xargs ls -t | head -1)
/usr/bin/time -f '%M' -o "$work/client_kb" "$dnnc" submit "$work/net.xml" --to "$lead" > "$work/submit.txt"; t2=$(seconds)
"$dnnc" step 1 --lead "$lead" > /dev/null; t3=$(seconds)
node_kb=0 each=""
for pid in $(python3 -c "import json,sys; print(' '.join(str(n['pid']) for n in json.load(open(sys.argv[1]))['nodes']))" "$record"); do
  kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  node_kb=$((node_kb + kb)) each="$each $((kb / 1024))"
done
client_kb=$(cat "$work/client_kb")
touch "$work/stop"; wait "$sampler"; pss_kb=$(cat "$work/pss_kb")
echo "nodes up $(elapsed "$t0" "$t1") s; submit (plan, probes, fan-out, rows built on the nodes) $(elapsed "$t1" "$t2") s; first tick $(elapsed "$t2" "$t3") s"
python3 -c "s = $t3 - $t1; print(f'submit to first tick: {s:.2f} s = {s / 10:.2f}x the limit (10 s)')"
echo "each node's peak (MiB, the lead first):$each"
python3 -c "b = ($node_kb + $client_kb) * 1024; print(f'each process\'s own peak, summed: nodes {$node_kb / 1048576:.2f} GiB + client {$client_kb / 1024:.0f} MiB = {b / $synapses:.1f} bytes/synapse = {b / $synapses / 16:.2f}x the limit (16)')"
python3 -c "b = $pss_kb * 1024; print(f'peak of the summed PSS of every process: {b / 2**30:.2f} GiB = {b / $synapses:.1f} bytes/synapse = {b / $synapses / 16:.2f}x the limit (16)')"
"$dnnc" step "$ticks" --lead "$lead" > /dev/null; t4=$(seconds)
python3 -c "print(f'$ticks more ticks: {$t4 - $t3:.2f} s, {$ticks / ($t4 - $t3):.0f} ticks/s')"
