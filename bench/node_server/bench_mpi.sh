#!/usr/bin/env bash
# Signals over MPI against TCP: the lockstep tick period of bench_tick.sh's network (64 tanh
# neurons, every node exchanging a packet with every other each tick, D = 1) on 2 ranks of
# `mpirun -np 2 dnnc-node --mpi --run` with --transport tcp and --transport mpi, alternating
# in the same run, against the loopback round trip bench_loopback measures (the limit of
# bench_tick.sh: a tick period of at most 2 round trips). Open MPI's ranks on one machine
# use its shared-memory path. --bind-to none: a rank bound to one core (mpirun's default for
# 2 ranks) runs its node's threads on that core alone, about 50x slower (docs/mpi.md).
# Usage: bench/node_server/bench_mpi.sh [BUILD_DIR] [TICKS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
ticks=${2:-50000}
rounds=${3:-3}
cmake --build "$build" --target bench_loopback dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI machines run as root
rtt=$("$build/bench/node_server/bench_loopback" | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_us"])')
cat > "$work/net.xml" << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="tick">
    <population id="P" size="64" model="tanh" bias="0.1"/>
    <projection from="P" to="P" kind="random" p="0.5" weight="0.05" delay="1" seed="1"/>
    <output id="y" neurons="P[0]"/>
  </network>
</dnnc>
XML
period_us() {  # transport
  mpirun --bind-to none -np 2 "$build/tools/dnnc-node" --mpi --transport "$1" --run "$work/net.xml" --ticks "$ticks" --json |
    python3 -c 'import json,sys; print(1e6 / json.load(sys.stdin)["ticks_per_second"])'
}
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, commit $(git rev-parse --short HEAD), $ticks ticks, 2 ranks, lockstep;" \
     "loopback round trip ${rtt} us (limit 2 x RTT = $(python3 -c "print(2 * $rtt)") us)"
printf '%-6s %14s %14s %10s %14s\n' round "TCP period us" "MPI period us" "MPI / TCP" "MPI / (2 RTT)"
for round in $(seq 1 "$rounds"); do
  tcp=$(period_us tcp)
  mpi=$(period_us mpi)
  python3 -c "print('%-6d %14.2f %14.2f %10.2f %14.2f' % ($round, $tcp, $mpi, $mpi / $tcp, $mpi / (2 * $rtt)))"
done
