"""The cost of the Python layer: CUBA (1 s simulated, 10,000 ticks) on 4 local nodes, the
whole job (nodes up, submit, run, results, nodes down) through the command line and
through dnnc.Simulation, alternately in the same run, doing the same work:
  outputs and spikes: `dnnc run --spikes --output` against Simulation (the default) with
                      sim.spikes() and sim.outputs();
  spikes only:        `dnnc run --spikes` against Simulation(outputs=False) with sim.spikes().
Reports the medians, their ratio (target <= 1.05) and what each adds outside the nodes'
own step; also times the conversion of a 1M-spike record to NumPy arrays.

    python3 bench/python/bench_python.py [--repeats N] [--nodes K] [--ticks T]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import dnnc

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CUBA = os.path.join(ROOT, "examples", "cuba", "cuba.xml")


def cli_run(dnnc_binary, nodes, ticks, spikes, outputs):
    start = time.perf_counter()
    extra = ["--output", outputs] if outputs else []
    r = subprocess.run([dnnc_binary, "run", CUBA, "--nodes", str(nodes), "--ticks", str(ticks), "--spikes", spikes,
                        "--json", *extra], check=True, capture_output=True, text=True)
    return time.perf_counter() - start, json.loads(r.stdout)["seconds"]


def python_run(net, nodes, ticks, outputs):
    start = time.perf_counter()
    with dnnc.Simulation(net, nodes=nodes, outputs=outputs) as sim:
        sim.run(ticks)
        t_ms, population, index = sim.spikes()
        if outputs:
            sim.outputs()
        step = sim.last_step_seconds
    return time.perf_counter() - start, step, len(t_ms)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--ticks", type=int, default=10000)
    p.add_argument("--dnnc", default=os.path.join(ROOT, "build", "tools", "dnnc"))
    a = p.parse_args()
    net = dnnc.load(CUBA)
    python_run(net, a.nodes, 100, True)  # warm the page cache
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        spikes_csv, outputs_csv = os.path.join(d, "spikes.csv"), os.path.join(d, "outputs.csv")
        for title, with_outputs in (("outputs and spikes", True), ("spikes only", False)):
            cli_times, py_times, cli_steps, py_steps = [], [], [], []
            for _ in range(a.repeats):
                seconds, step = cli_run(a.dnnc, a.nodes, a.ticks, spikes_csv, outputs_csv if with_outputs else None)
                cli_times.append(seconds)
                cli_steps.append(step)
                seconds, step, count = python_run(net, a.nodes, a.ticks, with_outputs)
                py_times.append(seconds)
                py_steps.append(step)
            c, q = statistics.median(cli_times), statistics.median(py_times)
            # Outside the nodes' own step (the lead's time for the ticks, which both drive
            # alike): what each front end adds, nodes up and down included.
            c_out = statistics.median(t - s for t, s in zip(cli_times, cli_steps))
            q_out = statistics.median(t - s for t, s in zip(py_times, py_steps))
            worst = max(worst, q / c)
            print("CUBA %s, %d ticks on %d local nodes, %d spikes, median of %d:" %
                  (title, a.ticks, a.nodes, count, a.repeats))
            print("  dnnc run          %.3f s (outside the step %.3f s)" % (c, c_out))
            print("  dnnc.Simulation   %.3f s (outside the step %.3f s)" % (q, q_out))
            print("  ratio             %.3f (target <= 1.05)" % (q / c))

    # The conversion alone: 1M spikes from C++ columns to NumPy arrays.
    codes = np.zeros(1_000_000, dtype=np.int32)
    start = time.perf_counter()
    population = np.asarray(["P"], dtype=str)[codes]
    t_ms = np.arange(1_000_000, dtype=np.int64) * 0.1
    print("1M spikes to NumPy (population strings, times): %.3f s" % (time.perf_counter() - start))
    return 0 if worst <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
