#!/usr/bin/env bash
# What TLS costs a lockstep tick: the network of bench_tick.sh (64 tanh neurons, every node
# exchanging a packet with every other each tick, D = 1) on 2 local nodes brought up with
# `dnnc cluster up`, plain and with TLS (certificates from scripts/tls_certs.sh), in the
# same run; `dnnc step N --json` gives the lead's time for N ticks. Both have a cluster
# secret (every frame tagged). Prints the tick periods and their ratio.
# Usage: bench/node_server/bench_tls.sh [BUILD_DIR] [TICKS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-50000}
rounds=${3:-3}
dnnc=$build/tools/dnnc
cmake --build "$build" --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap '"$dnnc" cluster down "$work/net.xml" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
scripts/tls_certs.sh "$work/certs" node 127.0.0.1 > /dev/null
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
a=$(port) b=$(port)
cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="tick">
    <population id="P" size="64" model="tanh" bias="0.1"/>
    <projection from="P" to="P" kind="random" p="0.5" weight="0.05" delay="1" seed="1"/>
    <output id="y" neurons="P[0]"/>
  </network>
  <cluster lead="a">
    <node id="a" port="$a"/>
    <node id="b" port="$b"/>
    <link from="a" to="b"/>
  </cluster>
</dnnc>
XML
period_us() {  # cluster-up options...
  "$dnnc" cluster up "$work/net.xml" "$@" > /dev/null
  "$dnnc" submit "$work/net.xml" --to "127.0.0.1:$a" > /dev/null
  "$dnnc" step "$ticks" --json --lead "127.0.0.1:$a" |
    python3 -c "import json,sys; p=json.load(sys.stdin); print(1e6 * p['last_step_seconds'] / $ticks)"
  "$dnnc" cluster down "$work/net.xml" > /dev/null
}
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, commit $(git rev-parse --short HEAD), $ticks ticks, 2 nodes, lockstep"
printf '%-6s %16s %16s %8s\n' round "plain period us" "TLS period us" ratio
for round in $(seq 1 "$rounds"); do
  plain=$(period_us)
  tls=$(period_us --tls-cert "$work/certs/node.pem" --tls-key "$work/certs/node.key" --tls-ca "$work/certs/ca.pem")
  python3 -c "print('%-6d %16.2f %16.2f %8.2f' % ($round, $plain, $tls, $tls / $plain))"
done
