#!/usr/bin/python3
"""What moving neurons costs a running network (issue #31): the scaled microcircuit
(7,717 neurons, 2,988,807 synapses) runs on K local nodes; then, while it runs,
1. `dnnc rebalance --capacity n0=2`: node n0 is told it is twice as capable, and neurons move
   to it from where they are;
2. `dnnc join` of a (K+1)-th node that was up and serving nothing: it takes its share;
3. `dnnc drain` of that node again;
4. `dnnc rebalance --capacity n0=1 --capacity n1=2`: n0 and n1 trade neurons while the other
   nodes keep theirs, and with them their engines (only n0 and n1 are rebuilt).
Printed for each: the neurons moved, the synapses they hold (their share of the network's),
the pause (the lead's paused_ms), the planning inside it (the lead's log: "planned and
partitioned in") and the pause per million synapses moved, against the time
the same cluster took to install the whole network at submit, measured in the same run (the
limit of a move that rebuilds every node), the nodes that kept their engines and those that
had theirs built ahead (the moves of a running network build them before the freeze), the
command's wall time (for the join: the time until the new node carries its share, building
ahead included); and the wall time per simulated second before and after.
Usage: bench_rebalance.py [--nodes K] [--ticks T] [--dnnc PATH]"""
import json
import re
import time

from local_microcircuit import NEURONS, SYNAPSES, LocalCluster, arguments


def main():
    args = arguments(__doc__, 3)
    joining = f"n{args.nodes}"
    with LocalCluster(args.dnnc, args.nodes, spare=1) as cluster:
        call, lead = cluster.call, cluster.lead
        install = cluster.submit()
        before = cluster.timed_step(args.ticks)
        call("start", *lead)
        time.sleep(1)
        moves = []
        for name, words in [("rebalance --capacity n0=2", ["rebalance", "--capacity", "n0=2"]),
                            (f"join {joining}", ["join", "--node", f"{joining}@127.0.0.1:{cluster.ports[-1]}"]),
                            (f"drain {joining}", ["drain", joining]),
                            ("rebalance --capacity n0=1 --capacity n1=2",
                             ["rebalance", "--capacity", "n0=1", "--capacity", "n1=2"])]:
            started = time.monotonic()
            reply = json.loads(call(*words, "--json", *lead))
            reply["command_s"] = time.monotonic() - started  # until the moved neurons run where they went
            # The install in the pause is the lead's last planning.
            planned = re.findall(r"planned and partitioned in ([0-9.]+) ms", cluster.log("n0"))[-1]
            moves.append((name, reply, float(planned)))
        call("freeze", *lead)
        after = cluster.timed_step(args.ticks)
    print(f"microcircuit_scaled ({NEURONS} neurons, {SYNAPSES} synapses) on {args.nodes} local nodes; "
          f"install at submit {install * 1000:.0f} ms")
    print("| move | neurons moved | synapses moved (est.) | pause ms | planning in it, ms | ms per 10^6 synapses moved | "
          "pause / install | nodes that kept their engines | engines built ahead | command s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, reply, planned in moves:
        moved = reply["moved"]
        synapses = moved * SYNAPSES / NEURONS
        per_million = reply["paused_ms"] / (synapses / 1e6) if synapses else float("nan")
        def having(flag):
            return ", ".join(n["id"] for n in reply["nodes"] if n.get(flag)) or "none"
        print(f"| {name} | {moved} | {synapses:.0f} | {reply['paused_ms']:.0f} | {planned:.1f} | {per_million:.0f} | "
              f"{reply['paused_ms'] / 1000 / install:.2f} | {having('kept')} | {having('prepared')} | {reply['command_s']:.2f} |")
    simulated = args.ticks * 0.1 / 1000
    print(f"wall per simulated second: {before / simulated:.2f} s before, {after / simulated:.2f} s after "
          f"(ratio {after / before:.2f})")


if __name__ == "__main__":
    main()
