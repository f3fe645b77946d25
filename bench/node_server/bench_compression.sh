#!/usr/bin/env bash
# Signals compressed on a slow link (docs/node_server.md "Compressed links"): Brunel's network
# at a quarter of its order (examples/brunel/brunel_small.xml, 2,500 iaf_psc_delta neurons)
# on three test hosts (scripts/test_hosts.sh; needs root) in a chain h1 - h2 - h3, host 3's
# link shaped to 10 Mbit/s each way (tc tbf) and its link to h2 carrying a 5 ms delay that
# the nodes emulate. For send="always" (dense packets, mostly zeros) and send="nonzero"
# (the example's own: positions of the neurons that spiked), each with <run compress="never">
# and "auto" (the lead compresses the slow link): ticks per second over `dnnc step TICKS`
# (the lead's time), and the bytes per tick of the packets across h2 - h3, both ways, as
# encoded and as sent (status's packet_bytes and payload_bytes), and whether the fast link
# h1 - h2 is compressed. The outputs of each pair are compared: the same bits.
# Usage: sudo bench/node_server/bench_compression.sh [BUILD_DIR] [TICKS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-2000}
source bench/node_server/test_host_nodes.sh "$build" bcmp 3 3 10mbit
network=$(sed -n '/<network/,/<\/network>/p' examples/brunel/brunel_small.xml)
printf '%-8s %-8s %10s %14s %14s %14s %14s\n' send compress ticks/s "h2-h3 compr." "packet B/tick" "payload B/tick" "h1-h2 compr."
for send in always nonzero; do
  for compress in never auto; do
    cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
$network
  <cluster lead="h1">
$(host_nodes_xml)
    <link from="h1" to="h2"/>
    <link from="h2" to="h3" emulate-delay="5"/>
  </cluster>
  <run sync="lockstep" send="$send" compress="$compress" heartbeat-timeout="15000"/>
</dnnc>
XML
    on_lead submit --replace "$work/net.xml" --to 10.99.0.1:7000 > /dev/null
    seconds=$(on_lead step "$ticks" --json --lead 10.99.0.1:7000 | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_step_seconds"])')
    on_lead output -o "$work/$send-$compress.csv" --lead 10.99.0.1:7000 > /dev/null
    on_lead status --json --lead 10.99.0.1:7000 | python3 -c "
import json, sys
s = json.load(sys.stdin)
link = lambda a, b: next(l for l in s['links'] if {l['from'], l['to']} == {a, b})
yes = lambda l: 'yes' if l['compressed'] else 'no'
l = link('h2', 'h3')
print('%-8s %-8s %10.0f %14s %14.0f %14.0f %14s' % ('$send', '$compress', $ticks / $seconds, yes(l),
      l['packet_bytes'] / $ticks, l['payload_bytes'] / $ticks, yes(link('h1', 'h2'))))"
  done
  cmp -s "$work/$send-never.csv" "$work/$send-auto.csv" && echo "send=$send: outputs identical" || { echo "send=$send: OUTPUTS DIFFER"; exit 1; }
done
