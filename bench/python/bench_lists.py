"""Loading explicit connection lists: pyNN.dnnc's FromListConnector with N connections
between two populations on a local 2-node cluster, timed from Projection() until the
network is installed and has run its first tick (sim.run of one tick), against the target
of 10^6 connections per second. The same with the connections written as one <synapse>
element each (pyNN.dnnc before list projections), for a smaller N, in the same run.

    python3 bench/python/bench_lists.py [--connections 1e6,1e7] [--before 1e5] [--nodes 2]
"""
import argparse
import time

import numpy as np

import dnnc_pynn_hook  # noqa: F401 (what dnnc.pth imports at start-up)
import pyNN.dnnc as sim
from pyNN.dnnc import projections

TARGET = 1e6  # connections per second


def connection_rows(n, sources, targets, seed=1):
    """PyNN's conn_list: (pre index, post index, weight in nA, delay in ms), random."""
    rng = np.random.default_rng(seed)
    return np.column_stack((rng.integers(0, sources, n), rng.integers(0, targets, n), rng.uniform(0.0, 0.01, n),
                            rng.choice([0.1, 0.5, 1.0, 1.5], n)))


def load(rows, sources, targets, nodes):
    """Seconds from Projection() to the first tick run: (Projection, document, install) and the total."""
    sim.setup(timestep=0.1, min_delay=0.1, nodes=nodes)
    pre = sim.Population(sources, sim.SpikeSourceArray(spike_times=[1.0]))
    post = sim.Population(targets, sim.IF_curr_exp())
    start = time.perf_counter()
    sim.Projection(pre, post, sim.FromListConnector(rows, column_names=["weight", "delay"]), sim.StaticSynapse())
    made = time.perf_counter()
    sim.simulator.state.network()
    written = time.perf_counter()
    sim.run(0.1)
    done = time.perf_counter()
    assert sim.simulator.state.tick == 1
    sim.end()
    return made - start, written - made, done - written, done - start


def as_elements(net, projection):
    """write_synapses before list projections: one <synapse> per connection."""
    pre, post, weights, delays = projection._explicit_columns()
    sources = np.asarray(projection.pre.all_cells, dtype=np.int64)[pre]
    targets = np.asarray(projection.post.all_cells, dtype=np.int64)[post]
    scale = projection._scale(projection.post)
    for source, target, weight, delay in zip(projections.neuron_references(sources), projections.neuron_references(targets),
                                             weights.tolist(), delays.tolist()):
        net.synapse(source, target, weight=weight * scale, delay_ms=delay)


def report(title, n, seconds):
    made, written, installed, total = seconds
    rate = n / total
    print("%s, %d connections: %.2f s (Projection %.2f s, document %.2f s, install and first tick %.2f s)" %
          (title, n, total, made, written, installed))
    print("  %.3g connections/s, ratio to the target of 10^6/s: %.2f" % (rate, rate / TARGET))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--connections", default="1e6,1e7", help="list sizes, comma-separated")
    p.add_argument("--before", type=float, default=1e5, help="list size for the <synapse>-element run (0: none)")
    p.add_argument("--sources", type=int, default=10000)
    p.add_argument("--targets", type=int, default=10000)
    p.add_argument("--nodes", type=int, default=2)
    a = p.parse_args()
    for n in (int(float(x)) for x in a.connections.split(",")):
        rows = connection_rows(n, a.sources, a.targets)
        report("list projections on %d nodes" % a.nodes, n, load(rows, a.sources, a.targets, a.nodes))
    if a.before:
        n = int(a.before)
        rows = connection_rows(n, a.sources, a.targets)
        written = projections.write_synapses
        projections.write_synapses = as_elements
        projections.Projection._read_list = lambda self, connector: False
        report("<synapse> elements (before) on %d nodes" % a.nodes, n, load(rows, a.sources, a.targets, a.nodes))
        projections.write_synapses = written


if __name__ == "__main__":
    main()
