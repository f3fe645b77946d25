#!/usr/bin/python3
"""Load-driven re-balancing against a node with less CPU (issue #31): the scaled microcircuit
(7,717 neurons) on K local nodes, the last of which gets a fraction of a core (a cgroup CPU
quota set here: cgroup v1's cpu controller or cgroup v2's cpu.max; needs root). Timed in
the same run, from the same placement (every node of capacity 1):
  frozen  - <run rebalance="off">: the initial placement, stepped T ticks;
  auto    - <run rebalance="auto">: free-running until the lead has re-balanced by itself and
            its nodes' compute times per tick have settled, then stepped T ticks.
Printed: the wall time per simulated second of each, their ratio (aim >= 1.3), the moves the
lead made and each node's compute time per tick before and after.
Usage: bench_auto_rebalance.py [--nodes K] [--ticks T] [--quota F] [--dnnc PATH]"""
import json
import os
import pathlib
import sys
import time

from local_microcircuit import LocalCluster, arguments


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


def compute_times(cluster):
    status = json.loads(cluster.call("status", "--json", *cluster.lead))
    return {n["id"]: (n["neurons"], n.get("compute_ms_per_tick")) for n in status["nodes"]}, status.get("moves", [])


def main():
    args = arguments(__doc__, 4, extra=[("--quota", float, 0.25, "the slowed node's share of one core")])
    if os.geteuid() != 0:
        sys.exit("bench_auto_rebalance.py sets a cgroup CPU quota: run it as root")
    slow = f"n{args.nodes - 1}"
    simulated = args.ticks * 0.1 / 1000
    results = {}
    for mode in ("off", "auto"):
        with LocalCluster(args.dnnc, args.nodes, run=f'rebalance="{mode}" rebalance-after="2000"') as cluster:
            remove = cpu_quota(cluster.pid(slow), args.quota)
            try:
                cluster.submit()
                cluster.timed_step(500)  # warm-up, and the compute times of the initial placement
                before, _ = compute_times(cluster)
                if mode == "auto":
                    cluster.call("start", *cluster.lead)
                    time.sleep(12)  # a wait of 2 s, a re-balance, perhaps a second one
                    cluster.call("freeze", *cluster.lead)
                wall = cluster.timed_step(args.ticks)
                after, moves = compute_times(cluster)
            finally:
                remove()
        results[mode] = wall / simulated
        print(f"rebalance={mode}: {wall / simulated:.2f} s per simulated second")
        print(f"  before: {before}")
        print(f"  after:  {after}")
        for m in moves:
            print(f"  moved at tick {m['tick']}: {m['what']}, {m['moved']} neurons, paused {m['paused_ms']:.0f} ms")
    print(f"microcircuit_scaled on {args.nodes} local nodes, {slow} at {args.quota:g} of a core: "
          f"frozen / auto = {results['off'] / results['auto']:.2f} (aim >= 1.3)")


if __name__ == "__main__":
    main()
