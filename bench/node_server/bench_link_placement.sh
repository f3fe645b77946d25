#!/usr/bin/env bash
# Capacity-aware placement against capacity-blind placement on test hosts (issue #32 item 5):
# four test hosts (scripts/test_hosts.sh; needs root), linked h1 - h2, h1 - h3, h2 - h3 and
# h3 - h4, host 4's port shaped to 10 Mbit/s each way (tc tbf), so that the h3 - h4 link, the
# only one host 4 has, is 10 Mbit/s; its delay is 5 ms, the others' 0.2 ms, emulated by the
# nodes (emulate-delay). Each network is submitted twice: with the slow link's bandwidth
# declared (`bandwidth="10Mbit"`, the others "1Gbit": placement keeps traffic off the slow
# link, docs/partitioner.md "Link capacities in placement") and with none declared (the
# placement blind to capacities); then stepped TICKS ticks, with the examples' own
# send="nonzero" (packets of the neurons that spiked) and with send="always" and
# compress="never" (dense packets, uncompressed: a tick's packets then take milliseconds on the
# slow link). Prints ticks per second (the lead's time over `dnnc step`), the neurons on each
# host, the values sent across h3 - h4 per tick, and aware / blind; the two runs' outputs are
# compared (the same bits).
# Usage: sudo bench/node_server/bench_link_placement.sh [BUILD_DIR] [TICKS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-2000}
source bench/node_server/test_host_nodes.sh "$build" blpl 4 4 10mbit

echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
printf '%-28s %-8s %-8s %9s %-28s %16s\n' network send placement ticks/s "neurons h1 h2 h3 h4" "h3-h4 values/tick"
for doc in examples/brunel/brunel_small.xml examples/microcircuit/microcircuit_scaled.xml; do
 network=$(sed -n '/<network/,/<\/network>/p' "$doc")
 for send in nonzero always; do
  declare -A rate=()
  for placement in aware blind; do
    fast="" slow=""
    [ $placement = aware ] && fast=' bandwidth="1Gbit"' slow=' bandwidth="10Mbit"'
    cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
$network
  <cluster lead="h1">
$(host_nodes_xml)
    <link from="h1" to="h2" emulate-delay="0.2"$fast/>
    <link from="h1" to="h3" emulate-delay="0.2"$fast/>
    <link from="h2" to="h3" emulate-delay="0.2"$fast/>
    <link from="h3" to="h4" emulate-delay="5"$slow/>
  </cluster>
  <run sync="lockstep" send="$send" compress="never" heartbeat-timeout="15000"/>
</dnnc>
XML
    on_lead submit --replace "$work/net.xml" --to 10.99.0.1:7000 > /dev/null
    seconds=$(on_lead step "$ticks" --json --lead 10.99.0.1:7000 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["last_step_seconds"])')
    on_lead output -o "$work/$placement.csv" --lead 10.99.0.1:7000 > /dev/null
    rate[$placement]=$(/usr/bin/python3 -c "print($ticks / $seconds)")
    on_lead status --json --lead 10.99.0.1:7000 | /usr/bin/python3 -c "
import json, sys
s = json.load(sys.stdin)
neurons = ' '.join(str(n['neurons']) for n in s['nodes'])
l = next(l for l in s['links'] if {l['from'], l['to']} == {'h3', 'h4'})
print('%-28s %-8s %-8s %9.0f %-28s %16.1f' % ('$(basename "$doc" .xml)', '$send', '$placement', ${rate[$placement]}, neurons,
      l.get('signals_sent', 0) / $ticks))"
  done
  cmp -s "$work/aware.csv" "$work/blind.csv" && echo "  outputs identical" || { echo "  OUTPUTS DIFFER"; exit 1; }
  /usr/bin/python3 -c "print('  aware / blind: %.2f' % (${rate[aware]} / ${rate[blind]}))"
 done
done
