"""Compares the partition strategies (multilevel, and the original method, mincut) on
generated graphs, and prints a table of edge cut, imbalance and time.

    python3 examples/python/partition_quality.py
"""
import os
import tempfile

import dnnc

graphs = [
    ("grid2d 40x40", "grid2d", dict(dims=[40, 40])),
    ("erdos-renyi n=1000 p=0.01", "erdos-renyi", dict(n=1000, p=0.01)),
    ("sbm 4x250", "sbm", dict(blocks=[250, 250, 250, 250], p_in=0.05, p_out=0.002)),
    ("watts-strogatz n=1000 k=10", "watts-strogatz", dict(n=1000, k=10, beta=0.1)),
]

print("%-28s %5s %-10s %9s %9s %8s" % ("graph", "parts", "strategy", "edge cut", "imbalance", "seconds"))
with tempfile.TemporaryDirectory() as d:
    for title, kind, params in graphs:
        path = dnnc.generate(kind, path=os.path.join(d, kind + ".graph"), seed=1, **params)
        for parts in (2, 4, 8):
            for strategy in ("multilevel", "mincut"):
                _, m = dnnc.partition(path, parts=parts, strategy=strategy)
                print("%-28s %5d %-10s %9d %9.3f %8.3f" %
                      (title, parts, strategy, m["edge_cut"], m["max_imbalance"], m["seconds"]))
