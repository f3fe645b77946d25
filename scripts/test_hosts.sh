#!/bin/bash
# Test hosts on this machine (tests and benchmarks; needs root and Debian's iproute2): each
# host a network namespace NAME-hK with one address, 10.99.0.K/24, on a veth pair into a
# bridge that lives in a namespace of its own, NAME-sw. Nothing is added to the machine's
# own namespace, so hosts of different NAMEs never see each other, and the same addresses
# serve every set.
#
#   test_hosts.sh up NAME N              make hosts 1..N (a set of that NAME left over goes first)
#   test_hosts.sh down NAME              remove the set (its namespaces, veths and bridge)
#   test_hosts.sh shape NAME K RATE      limit host K's link to RATE each way (tc tbf: 10mbit, 1gbit, ...)
#   test_hosts.sh link NAME K up|down    take host K's link down or bring it back
#   test_hosts.sh only NAME K J...       host K has routes to hosts J... only (none to the others)
#   test_hosts.sh exec NAME K CMD...     run CMD on host K
#
# The kernel of these machines has no netem: a link's delay is emulated by the nodes
# (<link latency-ms>), not here.
set -euo pipefail

usage() {
    sed -n '7,12p' "$0" >&2
    exit 2
}

[ $# -ge 2 ] || usage
command=$1 name=$2
shift 2
[[ $name =~ ^[a-z0-9]{1,8}$ ]] || { echo "test_hosts.sh: NAME must be 1 to 8 of a-z0-9 (it names interfaces)" >&2; exit 2; }
switch=$name-sw

host_number() {
    [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 200 ] || { echo "test_hosts.sh: host numbers are 1..200" >&2; exit 2; }
}

down() {
    local ns
    for ns in $(ip netns list | awk '{print $1}'); do
        case $ns in "$name"-h*|"$switch") ip netns del "$ns" 2>/dev/null || true ;; esac
    done
}

case $command in
up)
    [ $# -eq 1 ] || usage
    host_number "$1"
    down
    ip netns add "$switch"
    ip -n "$switch" link add br0 type bridge
    ip -n "$switch" link set br0 up
    for k in $(seq 1 "$1"); do
        host=$name-h$k
        ip netns add "$host"
        ip -n "$host" link set lo up
        # The veth is made in the host and its other end moved into the switch.
        ip -n "$host" link add eth0 type veth peer name "p$k"
        ip -n "$host" link set "p$k" netns "$switch"
        ip -n "$switch" link set "p$k" master br0
        ip -n "$switch" link set "p$k" up
        ip -n "$host" addr add "10.99.0.$k/24" dev eth0
        ip -n "$host" link set eth0 up
    done
    ;;
down)
    [ $# -eq 0 ] || usage
    down
    ;;
shape)
    [ $# -eq 2 ] || usage
    host_number "$1"
    # Both directions: the host's sending side and the switch port's (towards the host).
    ip netns exec "$name-h$1" tc qdisc replace dev eth0 root tbf rate "$2" burst 32kbit latency 50ms
    ip netns exec "$switch" tc qdisc replace dev "p$1" root tbf rate "$2" burst 32kbit latency 50ms
    ;;
link)
    [ $# -eq 2 ] || usage
    host_number "$1"
    [[ $2 == up || $2 == down ]] || usage
    ip -n "$switch" link set "p$1" "$2"
    ;;
only)
    [ $# -ge 2 ] || usage
    host_number "$1"
    host=$name-h$1
    shift
    ip -n "$host" route del 10.99.0.0/24 dev eth0
    for j in "$@"; do
        host_number "$j"
        ip -n "$host" route add "10.99.0.$j/32" dev eth0
    done
    ;;
exec)
    [ $# -ge 2 ] || usage
    host_number "$1"
    host=$name-h$1
    shift
    exec ip netns exec "$host" "$@"
    ;;
*)
    usage
    ;;
esac
