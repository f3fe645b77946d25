#!/usr/bin/env python3
"""Per-population firing rate and irregularity from a spikes CSV (`t_ms,population,index`,
as `dnnc run --spikes` and brian_models.py write it).

    spike_stats.py SPIKES.csv DOC.xml [--from-ms 500] [--to-ms 1500] [--json]

Population sizes come from the DNNC document. The rate counts every neuron of a
population, silent ones included (as NEST's example does); the CV of inter-spike intervals
is the mean over neurons with at least three spikes in the window.
"""
import argparse
import csv
import json
import xml.etree.ElementTree as ET
from collections import defaultdict

import numpy as np


def population_sizes(document):
    ns = {"d": "urn:dnnc:1"}
    root = ET.parse(document).getroot()
    return {p.get("id"): int(p.get("size")) for p in root.iterfind("d:network/d:population", ns)}


def read_spikes(path, t_from, t_to):
    """{population: (times, indices)} of the spikes with t_from <= t < t_to."""
    rows = defaultdict(lambda: ([], []))
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        if header != ["t_ms", "population", "index"]:
            raise SystemExit(f"{path}: expected the header t_ms,population,index, got {','.join(header)}")
        for t, pop, i in reader:
            t = float(t)
            if t_from <= t < t_to:
                rows[pop][0].append(t)
                rows[pop][1].append(int(i))
    return {p: (np.array(t), np.array(i, dtype=np.int64)) for p, (t, i) in rows.items()}


def stats(spikes_csv, sizes, t_from, t_to):
    spikes = read_spikes(spikes_csv, t_from, t_to)
    seconds = (t_to - t_from) / 1000.0
    out = {}
    for pop, n in sizes.items():
        t, i = spikes.get(pop, (np.array([]), np.array([], dtype=np.int64)))
        order = np.lexsort((t, i))
        t, i = t[order], i[order]
        cvs = []
        starts = np.searchsorted(i, np.arange(n))
        ends = np.searchsorted(i, np.arange(n), side="right")
        for a, b in zip(starts, ends):
            if b - a >= 3:
                isi = np.diff(t[a:b])
                cvs.append(isi.std() / isi.mean())
        out[pop] = {"neurons": n, "spikes": int(len(t)), "rate_hz": len(t) / n / seconds,
                    "cv_isi": float(np.mean(cvs)) if cvs else float("nan")}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spikes")
    ap.add_argument("document")
    ap.add_argument("--from-ms", type=float, default=500.0)
    ap.add_argument("--to-ms", type=float, default=1500.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = stats(args.spikes, population_sizes(args.document), args.from_ms, args.to_ms)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'population':<12}{'neurons':>9}{'spikes':>10}{'rate Hz':>10}{'CV ISI':>9}")
    for pop, s in result.items():
        print(f"{pop:<12}{s['neurons']:>9}{s['spikes']:>10}{s['rate_hz']:>10.3f}{s['cv_isi']:>9.3f}")


if __name__ == "__main__":
    main()
