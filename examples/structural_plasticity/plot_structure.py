#!/usr/bin/python3
"""Plots what `dnnc run ... --structure FILE.csv` wrote: each population's mean calcium with
its set point (the eps of its synaptic elements, read from the document), and the grown
synapses onto each population, over time.

    plot_structure.py structure.csv structural_plasticity.xml structure.png
"""
import csv
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def set_points(document):
    ns = {"d": "urn:dnnc:1"}
    points = {}
    for population in ET.parse(document).getroot().iterfind(".//d:population", ns):
        elements = population.findall("d:synaptic-element", ns)
        if elements:
            points[population.get("id")] = float(elements[0].get("eps", "0.7"))
    return points


def main(table, document, image):
    series = {}
    with open(table, newline="") as f:
        for row in csv.DictReader(f):
            s = series.setdefault(row["population"], {"t": [], "ca": [], "connections": []})
            s["t"].append(float(row["t_ms"]) / 1000)
            s["ca"].append(float(row["mean_ca"]))
            s["connections"].append(int(row["connections_in"]))
    points = set_points(document)
    fig, (calcium, connections) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    for name, s in series.items():
        line, = calcium.plot(s["t"], s["ca"], label=f"{name}: mean Ca")
        if name in points:
            calcium.axhline(points[name], color=line.get_color(), linestyle=":", label=f"{name}: set point {points[name]}")
        connections.plot(s["t"], s["connections"], label=f"onto {name}")
    calcium.set_ylabel("calcium")
    calcium.legend(loc="lower right")
    connections.set_ylabel("grown synapses")
    connections.set_xlabel("time (s)")
    connections.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(image, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
