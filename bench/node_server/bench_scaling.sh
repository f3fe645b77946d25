#!/usr/bin/env bash
# Scaling with nodes (issue #33 item 3): the full-scale microcircuit
# (examples/microcircuit/microcircuit.xml, 77,169 neurons, 3·10⁸ synapses, lockstep,
# send="nonzero") stepped TICKS ticks on
#   - 1 node pinned to one core (taskset), the reference;
#   - 1 node on both cores;
#   - 2 local nodes, each pinned to a core of its own;
#   - 4 test hosts (scripts/test_hosts.sh, run as root; skipped otherwise), unpinned: four
#     processes share the two cores.
# For each: the submit's time (plan, probes, every node building its share), ticks per second
# over `dnnc step` (the lead's time) and wall ms per tick. Efficiency is a configuration's
# ticks/s over the reference's times its cores (1.0: perfect scaling); the overhead is its ms
# per tick less the reference's divided by its cores: what running split costs a tick beyond
# perfect scaling (the lockstep exchange of spikes between the nodes, and any imbalance).
# Usage: [sudo] bench/node_server/bench_scaling.sh [BUILD_DIR] [TICKS] [DOCUMENT]
#   the scaled model, to try the path: ... build 200 examples/microcircuit/microcircuit_scaled.xml
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-1000}
doc=${3:-examples/microcircuit/microcircuit.xml}
dnnc=$(realpath "$build/tools/dnnc")
node=$(realpath "$build/tools/dnnc-node")
hosts=scripts/test_hosts.sh
name=bscl$$
name=${name:0:8}
work=$(mktemp -d)
pids=()
stop_nodes() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  pids=()
}
cleanup() {
  stop_nodes
  [ "$(id -u)" = 0 ] && "$hosts" down "$name" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/secret"
chmod 600 "$work/secret"
network=$(sed -n '/<network/,/<\/network>/p' "$doc")
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
echo "$doc, $ticks ticks after the submit"
printf '%-28s %6s %9s %9s %8s %12s %10s\n' configuration cores submit_s ticks/s ms/tick overhead_ms efficiency
reference=""

# run LABEL CORES CLUSTER_XML [EXEC_PREFIX]: submits to the cluster's first node and steps.
run() {
  local label=$1 cores=$2 cluster=$3 prefix=${4:-}
  printf '<dnnc xmlns="urn:dnnc:1">\n%s\n%s\n  <run sync="lockstep" send="nonzero" heartbeat-timeout="60000"/>\n</dnnc>\n' \
    "$network" "$cluster" > "$work/net.xml"
  local lead
  lead=$(sed -n 's/.*<node id="[^"]*" host="\([^"]*\)" port="\([0-9]*\)".*/\1:\2/p' <<< "$cluster" | head -1)
  local start end
  start=$(date +%s.%N)
  $prefix "$dnnc" submit "$work/net.xml" --to "$lead" --secret-file "$work/secret" > /dev/null
  end=$(date +%s.%N)
  $prefix "$dnnc" step "$ticks" --json --lead "$lead" --secret-file "$work/secret" > "$work/step.json"
  local line
  line=$(/usr/bin/python3 - "$work/step.json" "$label" "$cores" "$start" "$end" "$ticks" "$reference" << 'PY'
import json, sys
step = json.load(open(sys.argv[1]))
label, cores, start, end, ticks, reference = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
rate = ticks / step["last_step_seconds"]
per_core = float(reference) if reference else rate / cores  # the reference's ticks/s per core
print("%-28s %6d %9.1f %9.1f %8.2f %12.2f %10.2f|%f" % (
    label, cores, end - start, rate, 1e3 / rate, 1e3 / rate - 1e3 / (per_core * cores), rate / (per_core * cores), rate / cores))
PY
)
  echo "${line%|*}"
  [ -n "$reference" ] || reference=${line##*|}
}

# Local nodes on loopback: CPUS is a taskset list per node.
local_nodes() {
  local label=$1 cores=$2
  shift 2
  local cluster='<cluster lead="n0">' k=0 links=""
  for cpus in "$@"; do
    local port
    port=$(free_port)
    taskset -c "$cpus" "$node" --bind 127.0.0.1 --port "$port" --secret-file "$work/secret" \
      --state-dir "$work/state$k" --log-level warn > "$work/node$k.log" 2>&1 &
    pids+=($!)
    cluster+="<node id=\"n$k\" host=\"127.0.0.1\" port=\"$port\"/>"
    for ((j = 0; j < k; j++)); do links+="<link from=\"n$j\" to=\"n$k\"/>"; done
    k=$((k + 1))
  done
  sleep 1
  run "$label" "$cores" "$cluster$links</cluster>"
  stop_nodes
}

local_nodes "1 node, 1 core" 1 0
local_nodes "1 node, 2 cores" 2 0,1
local_nodes "2 local nodes, 1 core each" 2 0 1

if [ "$(id -u)" = 0 ]; then
  "$hosts" up "$name" 4
  cluster='<cluster lead="h1">'
  for k in 1 2 3 4; do
    "$hosts" exec "$name" $k "$node" --bind 10.99.0.$k --port 7000 --secret-file "$work/secret" \
      --state-dir "$work/host$k" --log-level warn > "$work/host$k.log" 2>&1 &
    pids+=($!)
    cluster+="<node id=\"h$k\" host=\"10.99.0.$k\" port=\"7000\"/>"
  done
  cluster+='<link from="h1" to="h2"/><link from="h1" to="h3"/><link from="h1" to="h4"/><link from="h2" to="h3"/><link from="h2" to="h4"/><link from="h3" to="h4"/></cluster>'
  sleep 1
  run "4 test hosts, 2 cores" 2 "$cluster" "$hosts exec $name 1"
else
  echo "4 test hosts: skipped (scripts/test_hosts.sh needs root)"
fi
