#!/bin/bash
# The cost of a relayed control path (issue #32, item 5): one network on four test hosts
# (scripts/test_hosts.sh; links h1-h2, h1-h4, h2-h3, h3-h4, lead h1), stepped with every
# route in place, then with hosts 1 and 3 cut from each other, so that the lead serves host
# 3 through its sub-lead, host 2 (docs/node_server.md, "Sub-leads"): the clock, tick reports
# and heartbeats of host 3 take one extra hop; signals go over the links as before, and the
# placement is the same (the same document). Prints ticks/s of each, alternately, and their
# ratio.
#
# Usage: sudo bench/node_server/bench_sub_lead.sh [BUILD_DIR] [TICKS] [DOCUMENT] [ROUNDS]
#   defaults: build, 2000, examples/brunel/brunel.xml, 2
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-2000}
doc=${3:-examples/brunel/brunel.xml}
rounds=${4:-2}
[ "$(id -u)" = 0 ] || { echo "bench_sub_lead.sh: test hosts need root" >&2; exit 2; }
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
echo "$doc, $ticks ticks a step, $rounds rounds"
source bench/node_server/test_host_nodes.sh "$build" bsub 4
cluster="<cluster lead=\"h1\">$(host_nodes_xml)"
cluster+='<link from="h1" to="h2"/><link from="h1" to="h4"/><link from="h2" to="h3"/><link from="h3" to="h4"/></cluster>'
network=$(sed -n '/<network/,/<\/network>/p' "$doc")
printf '<dnnc xmlns="urn:dnnc:1">\n%s\n%s\n  <run sync="lockstep" heartbeat-timeout="60000"/>\n</dnnc>\n' \
  "$network" "$cluster" > "$work/net.xml"

# "VIA RATE": the sub-lead host 3 is served through (-: none) and the ticks per second of
# one step after a fresh submit.
step_rate() {
  on_lead submit --replace "$work/net.xml" --to 10.99.0.1:7000 > /dev/null
  on_lead status --json --lead 10.99.0.1:7000 |
    /usr/bin/python3 -c 'import json,sys; print(next(n.get("via", "-") for n in json.load(sys.stdin)["nodes"] if n["id"] == "h3"), end=" ")'
  on_lead step "$ticks" --json --lead 10.99.0.1:7000 |
    /usr/bin/python3 -c "import json,sys; print('%.1f' % ($ticks / json.load(sys.stdin)['last_step_seconds']))"
}
# Routes: every host reaches every other, or hosts 1 and 3 not each other.
direct() {
  for k in 1 3; do
    "$hosts" exec "$name" $k ip route replace 10.99.0.0/24 dev eth0
  done
}
split() {
  "$hosts" exec "$name" 1 ip route del 10.99.0.0/24 dev eth0
  "$hosts" exec "$name" 3 ip route del 10.99.0.0/24 dev eth0
  for k in 2 4; do
    "$hosts" exec "$name" 1 ip route replace 10.99.0.$k/32 dev eth0
    "$hosts" exec "$name" 3 ip route replace 10.99.0.$k/32 dev eth0
  done
}

printf '%-6s %-24s %9s %9s\n' round configuration via ticks/s
declare -a straight relayed
for r in $(seq 1 "$rounds"); do
  direct
  read -r via rate <<< "$(step_rate)"
  straight+=("$rate")
  printf '%-6s %-24s %9s %9s\n' "$r" "h3 reached directly" "$via" "$rate"
  split
  read -r via rate <<< "$(step_rate)"
  relayed+=("$rate")
  printf '%-6s %-24s %9s %9s\n' "$r" "h3 through a sub-lead" "$via" "$rate"
  "$hosts" exec "$name" 1 ip route del 10.99.0.2/32 dev eth0
  "$hosts" exec "$name" 1 ip route del 10.99.0.4/32 dev eth0
  "$hosts" exec "$name" 3 ip route del 10.99.0.2/32 dev eth0
  "$hosts" exec "$name" 3 ip route del 10.99.0.4/32 dev eth0
done
/usr/bin/python3 - "${straight[*]}" "${relayed[*]}" << 'PY'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
print("median ticks/s: direct %.1f, through a sub-lead %.1f; ratio %.3f" % (statistics.median(a), statistics.median(b), statistics.median(b) / statistics.median(a)))
PY
