#!/usr/bin/env bash
# Lockstep tick rate of a small network on 2 and 4 local nodes against the raw loopback
# round trip measured in the same run (issue target: tick period <= 2x one round trip; the
# round trip with both ends polling, see bench_loopback.cpp),
# with cross-node delay D = 1 and D = 4 (whether ticks batch when D > 1).
# The network: 64 tanh neurons, each pair joined with probability 0.5, so every node
# exchanges a packet with every other node each tick. `dnnc run --nodes K --ticks N
# --json` gives ticks per second over the run (timed by the lead); the tick period is its
# inverse. 50,000 ticks by default: shorter runs spread widely.
# Usage: bench/node_server/bench_tick.sh [BUILD_DIR] [TICKS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-50000}
dnnc=$build/tools/dnnc
cmake --build "$build" --target bench_loopback dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

loopback=$("$build/bench/node_server/bench_loopback")
rtt=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["median_us"])' "$loopback")
blocking=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["blocking_median_us"])' "$loopback")
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, commit $(git rev-parse --short HEAD); loopback round trip (median)" \
     "${rtt} us polled (the limit's), ${blocking} us with blocking reads"
printf '%-6s %-4s %12s %14s %18s\n' nodes D ticks/s "tick period us" "period / (2 x RTT)"
for delay in 1 4; do
  cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="tick">
    <population id="P" size="64" model="tanh" bias="0.1"/>
    <projection from="P" to="P" kind="random" p="0.5" weight="0.05" delay="$delay" seed="1"/>
    <output id="y" neurons="P[0]"/>
  </network>
</dnnc>
XML
  for nodes in 2 4; do
    tps=$("$dnnc" run "$work/net.xml" --nodes "$nodes" --ticks "$ticks" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ticks_per_second"])')
    python3 -c "
tps = $tps; rtt = $rtt
period = 1e6 / tps
print(f'{$nodes:<6} {$delay:<4} {tps:12.0f} {period:14.1f} {period / (2 * rtt):18.2f}')"
  done
done
