#!/usr/bin/python3
"""Load-driven re-balancing against a node with less CPU (issue #31): the scaled microcircuit
(7,717 neurons) or Brunel's network (examples/brunel/brunel.xml, 12,500 neurons) on K local
nodes, the last of which gets a fraction of a core (a cgroup CPU quota set here: cgroup v1's
cpu controller or cgroup v2's cpu.max; needs root). Timed in the same run, from the same
placement (every node of capacity 1):
  frozen  - <run rebalance="off">: the initial placement, stepped T ticks;
  auto    - <run rebalance="auto">: free-running for --settle seconds, in which the lead
            re-balances by itself, then stepped T ticks.
Printed: the wall time per simulated second of each, their ratio (aim >= 1.3), the moves the
lead made and each node's neurons and time per tick (compute and CPU wait) before and after,
and the moves' pauses as a share of the free running (issue #31's aim: <= 2% at the default
threshold).
Usage: bench_auto_rebalance.py [--network microcircuit|brunel] [--nodes K] [--ticks T]
                               [--quota F] [--settle S] [--pause-share P] [--dnnc PATH]"""
import json
import os
import pathlib
import sys
import time

from local_microcircuit import MICROCIRCUIT, LocalCluster, arguments, root

NETWORKS = {"microcircuit": MICROCIRCUIT, "brunel": root / "examples/brunel/brunel.xml"}


def cpu_quota(pid, fraction):
    """Puts process `pid` (all its threads) in a cgroup of its own with `fraction` of one
    core; returns a function that removes the cgroup."""
    name = f"dnnc-bench-{pid}"
    v1 = pathlib.Path("/sys/fs/cgroup/cpu")
    v2 = pathlib.Path("/sys/fs/cgroup/unified")
    if (v1 / "cpu.cfs_quota_us").exists():
        group = v1 / name
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text(str(int(100000 * fraction)))
        parent = v1
    elif (v2 / "cgroup.controllers").exists() and "cpu" in (v2 / "cgroup.subtree_control").read_text():
        group = v2 / name
        group.mkdir()
        (group / "cpu.max").write_text(f"{int(100000 * fraction)} 100000")
        parent = v2
    else:
        sys.exit("no cgroup CPU controller to set a quota with (cgroup v1 cpu, or v2 with cpu enabled)")
    (group / "cgroup.procs").write_text(str(pid))

    def remove():
        for task in (group / "cgroup.procs").read_text().split():
            try:
                (parent / "cgroup.procs").write_text(task)
            except OSError:
                pass  # gone already
        group.rmdir()

    return remove


def times_per_tick(cluster):
    """Each node's neurons, time per tick and the CPU wait in it (ms), and the moves made."""
    status = json.loads(cluster.call("status", "--json", *cluster.lead))
    times = {n["id"]: (n["neurons"], n.get("ms_per_tick"), n.get("cpu_wait_ms_per_tick")) for n in status["nodes"]}
    return times, status.get("moves", [])


def main():
    args = arguments(__doc__, 4, extra=[("--quota", float, 0.25, "the slowed node's share of one core"),
                                         ("--network", str, "microcircuit", "microcircuit or brunel"),
                                         ("--settle", float, 12, "seconds of free running with rebalance=auto"),
                                         ("--pause-share", float, 0.02, "rebalance-pause-share: the share of the run the lead's moves may pause it for")])
    if args.network not in NETWORKS:
        sys.exit(f"--network: one of {', '.join(NETWORKS)}")
    if os.geteuid() != 0:
        sys.exit("bench_auto_rebalance.py sets a cgroup CPU quota: run it as root")
    slow = f"n{args.nodes - 1}"
    simulated = args.ticks * 0.1 / 1000
    results = {}
    for mode in ("off", "auto"):
        with LocalCluster(args.dnnc, args.nodes,
                          run=f'rebalance="{mode}" rebalance-after="2000" rebalance-pause-share="{args.pause_share:g}"',
                          example=NETWORKS[args.network]) as cluster:
            remove = cpu_quota(cluster.pid(slow), args.quota)
            try:
                cluster.submit()
                cluster.timed_step(500)  # warm-up, and the times per tick of the initial placement
                before, _ = times_per_tick(cluster)
                if mode == "auto":
                    cluster.call("start", *cluster.lead)
                    time.sleep(args.settle)  # a wait of 2 s, a re-balance, perhaps more
                    cluster.call("freeze", *cluster.lead)
                wall = cluster.timed_step(args.ticks)
                after, moves = times_per_tick(cluster)
            finally:
                remove()
        results[mode] = wall / simulated
        print(f"rebalance={mode}: {wall / simulated:.2f} s per simulated second")
        print(f"  before: {before}")
        print(f"  after:  {after}")
        for m in moves:
            print(f"  moved at tick {m['tick']}: {m['what']}, {m['moved']} neurons, paused {m['paused_ms']:.0f} ms")
        if mode == "auto":
            paused = sum(m["paused_ms"] for m in moves) / 1000
            print(f"  paused {paused:.1f} s in all: {100 * paused / args.settle:.1f}% of the {args.settle:g} s of free running")
    print(f"{args.network} on {args.nodes} local nodes, {slow} at {args.quota:g} of a core: "
          f"frozen / auto = {results['off'] / results['auto']:.2f} (aim >= 1.3)")


if __name__ == "__main__":
    main()
