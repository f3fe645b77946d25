#!/usr/bin/python3
"""The pause a grow costs a running network (issue #30): the scaled microcircuit
(examples/microcircuit/microcircuit_scaled.xml, 7,717 neurons) on K local nodes grows L4E by
10% of the network's neurons in one `dnnc grow` while it runs. Printed: the grow's pause (the
lead's paused_ms, and the command's wall time), against the time the same cluster took to
install the network at submit, measured in the same run (the limit: a grow is a snapshot, a
re-plan and a restore, so it should cost about an install); and the wall time per simulated
second before and after the grow.
Usage: bench_grow.py [--nodes K] [--ticks T] [--dnnc PATH]"""
import json
import time

from local_microcircuit import NEURONS, LocalCluster, arguments


def main():
    args = arguments(__doc__, 2)
    with LocalCluster(args.dnnc, args.nodes) as cluster:
        call, lead = cluster.call, cluster.lead
        install = cluster.submit()
        before = cluster.timed_step(args.ticks)
        neurons = NEURONS
        add = neurons // 10
        call("start", *lead)
        time.sleep(1)
        started = time.monotonic()
        reply = json.loads(call("grow", "L4E", str(add), "--json", *lead))
        command = time.monotonic() - started
        call("freeze", *lead)
        after = cluster.timed_step(args.ticks)
    simulated = args.ticks * 0.1 / 1000
    print(f"microcircuit_scaled on {args.nodes} local nodes: L4E grown by {add} (10% of {neurons}) at tick {reply['tick']}")
    print(f"grow pause {reply['paused_ms']:.0f} ms (dnnc grow took {command * 1000:.0f} ms); install at submit {install * 1000:.0f} ms")
    print(f"ratio pause / install: {reply['paused_ms'] / 1000 / install:.2f}")
    print(f"wall per simulated second: {before / simulated:.2f} s before, {after / simulated:.2f} s after "
          f"(ratio {after / before:.2f})")


if __name__ == "__main__":
    main()
