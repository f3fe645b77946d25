#!/usr/bin/env python3
"""Song, Miller & Abbott (2000), Fig. 2 as in Brian2's examples/synapses/STDP.py: the inputs
and document of bench_song_abbott.sh, and its report.

    song_abbott.py make --dir DIR [--seconds 100] [--inputs 1000] [--rate 15] [--gmax 25] [--seed 1]
    song_abbott.py report --dir DIR

`make` draws every input's spike train once (each of --inputs sources spikes in a 0.1 ms
tick with probability rate * dt: a Poisson train on the tick grid, at most one spike per
tick, which is what Brian2's SpikeGeneratorGroup accepts) and writes
  DIR/inputs.csv   the trains for dnnc's <spike-source> (t_ms,index),
  DIR/inputs.npz   the same trains for Brian2 (index, tick),
  DIR/song_abbott.xml   the dnnc document,
  DIR/params.json  the parameters both simulators read.
The initial weights are dnnc's own draws (uniform in [0, gmax)), which the bench reads back
after one tick (`dnnc run --ticks 1 --weights`) and hands to Brian2.

`report` reads DIR/dnnc_weights.csv, DIR/dnnc_spikes.csv, DIR/brian.json and
DIR/brian_weights.csv and prints, for each simulator, the fraction of weights above gmax/2,
the mean weight / gmax, the output rate over the last --rate-window seconds and over the
whole run, a text histogram of the weights, PASS/MISS per figure (within 10% of each
other), and both wall times. Exits 1 on a MISS or a distribution that is not bimodal.
"""
import argparse
import csv
import json
import os
import sys

import numpy as np

DT_MS = 0.1
TOLERANCE = 0.10

# The neuron: Brian2's example's constants (taum 10 ms, taue 5 ms, El -74 mV, vt -54 mV,
# vr -60 mV, no refractory period) in NEST's iaf_psc_exp (a current-based synapse; dnnc has
# no conductance-based model), C_m NEST's default.
NEURON = dict(C_m=250.0, tau_m=10.0, tau_syn_ex=5.0, t_ref=0.0, E_L=-74.0, V_th=-54.0, V_reset=-60.0, tau_minus=20.0)
# Additive STDP: Brian2's taupre = taupost = 20 ms, dApre = 0.01 gmax, dApost = -1.05 dApre.
STDP = dict(tau_plus=20.0, **{"lambda": 0.01}, alpha=1.05, mu_plus=0.0, mu_minus=0.0)


def draw_trains(rng, inputs, ticks, p):
    """Every input's spike ticks: Bernoulli(p) per tick, drawn as geometric gaps."""
    index, tick = [], []
    expected = ticks * p
    for i in range(inputs):
        n = int(expected + 10 * np.sqrt(expected) + 20)
        t = np.cumsum(rng.geometric(p, size=n)) - 1
        while t[-1] < ticks:  # never in practice; keeps the train complete if it happens
            t = np.concatenate([t, t[-1] + np.cumsum(rng.geometric(p, size=n))])
        t = t[t < ticks]
        index.append(np.full(t.size, i, dtype=np.int32))
        tick.append(t.astype(np.int64))
    index, tick = np.concatenate(index), np.concatenate(tick)
    order = np.lexsort((index, tick))
    return index[order], tick[order]


def make(args):
    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    ticks = int(round(args.seconds * 1000 / DT_MS))
    index, tick = draw_trains(rng, args.inputs, ticks, args.rate * DT_MS / 1000)
    np.savez(os.path.join(args.dir, "inputs.npz"), index=index, tick=tick)
    with open(os.path.join(args.dir, "inputs.csv"), "w") as f:
        f.write("t_ms,index\n")
        # tick / 10 written exactly in decimal: dnnc rounds t_ms / dt back to the same tick.
        f.write("".join(f"{t // 10}.{t % 10},{i}\n" for t, i in zip(tick.tolist(), index.tolist())))
    neuron = " ".join(f'{k}="{v:g}"' for k, v in NEURON.items())
    stdp = " ".join(f'{k}="{v:g}"' for k, v in STDP.items())
    document = f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Song, Miller & Abbott (2000) as in Brian2's examples/synapses/STDP.py: {args.inputs} Poisson
     inputs at {args.rate:g} Hz (replayed from inputs.csv) onto one neuron through additive STDP
     (stdp_synapse, mu = 0), weights uniform in [0, gmax = {args.gmax:g} pA) at the start. The
     neuron is current-based (iaf_psc_exp), not the paper's conductance-based one. Written by
     bench/sim/song_abbott.py. -->
<dnnc xmlns="urn:dnnc:1">
  <network name="song_abbott" dt="{DT_MS:g}">
    <synapse-model id="stdp" model="stdp_synapse" {stdp} Wmax="{args.gmax:g}"/>
    <spike-source id="input" size="{args.inputs}" file="inputs.csv"/>
    <population id="out" size="1" model="iaf_psc_exp" {neuron}/>
    <!-- Never driven, never recorded: without it dnnc's recording of every spiking neuron
         would list the inputs' spikes too, which the spikes reader refuses
         (see bench_song_abbott.sh). -->
    <population id="idle" size="1" model="iaf_psc_exp"/>
    <projection id="in_out" from="input" to="out" kind="all" delay="1" seed="{args.seed}" synapse-model="stdp">
      <weight distribution="uniform" min="0" max="{args.gmax:g}"/>
    </projection>
    <record neurons="out"/>
  </network>
  <run sync="lockstep" send="nonzero"/>
</dnnc>
"""
    with open(os.path.join(args.dir, "song_abbott.xml"), "w") as f:
        f.write(document)
    params = dict(seconds=args.seconds, inputs=args.inputs, rate_hz=args.rate, gmax=args.gmax, dt_ms=DT_MS,
                  delay_ticks=1, neuron=NEURON, stdp=STDP, input_spikes=int(index.size))
    with open(os.path.join(args.dir, "params.json"), "w") as f:
        json.dump(params, f, indent=1)
    print(f"{index.size} input spikes ({index.size / args.inputs / args.seconds:.2f} Hz per input) in {args.dir}")


def read_weights(path, projection=None):
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if projection is None or r["projection"] == projection]
    # source "input[i]": in source order
    rows.sort(key=lambda r: int(r["source"].split("[")[1].rstrip("]")))
    return np.array([float(r["weight"]) for r in rows])


def read_output_spikes(path):
    with open(path) as f:
        return np.array([float(r["t_ms"]) for r in csv.DictReader(f) if r["population"] == "out"])


def histogram(w, gmax, bins=20, width=50):
    counts, _ = np.histogram(w / gmax, bins=bins, range=(0.0, 1.0 + 1e-9))
    top = max(counts.max(), 1)
    return [f"  [{k / bins:.2f},{(k + 1) / bins:.2f}{']' if k == bins - 1 else ')'} {c:5d} {'#' * int(round(width * c / top))}"
            for k, c in enumerate(counts)]


def figures(w, spikes_ms, gmax, seconds, window_s):
    from_ms = (seconds - window_s) * 1000
    return {
        "fraction above gmax/2": float(np.mean(w > gmax / 2)),
        "mean weight / gmax": float(np.mean(w) / gmax),
        f"output rate, last {window_s:g} s (Hz)": float(np.sum(spikes_ms >= from_ms) / window_s),
        "output rate, whole run (Hz)": float(spikes_ms.size / seconds),
    }


def report(args):
    d = args.dir
    p = json.load(open(os.path.join(d, "params.json")))
    gmax, seconds = p["gmax"], p["seconds"]
    window = min(args.rate_window, seconds)
    dnnc_run = json.load(open(os.path.join(d, "dnnc_run.json")))
    brian = json.load(open(os.path.join(d, "brian.json")))
    w0 = read_weights(os.path.join(d, "weights0.csv"))
    sims = {
        "dnnc": (read_weights(os.path.join(d, "dnnc_weights.csv"), "in_out"),
                 read_output_spikes(os.path.join(d, "dnnc_spikes.csv"))),
        "Brian2": (np.loadtxt(os.path.join(d, "brian_weights.csv"), delimiter=",", skiprows=1, usecols=1),
                   np.array(brian["spikes_ms"])),
    }
    print(f"\n{p['inputs']} inputs at {p['rate_hz']:g} Hz, {p['input_spikes']} input spikes, {seconds:g} s simulated, "
          f"gmax {gmax:g} pA; initial weights: mean/gmax {np.mean(w0) / gmax:.3f}, "
          f"above gmax/2 {np.mean(w0 > gmax / 2):.3f}")
    stats, unimodal = {}, False
    for name, (w, s) in sims.items():
        stats[name] = figures(w, s, gmax, seconds, window)
        ends = np.mean(w < 0.1 * gmax) + np.mean(w > 0.9 * gmax)
        middle = np.mean((w >= 0.25 * gmax) & (w <= 0.75 * gmax))
        print(f"\n== {name}: final weights / gmax ({w.size} synapses)")
        print("\n".join(histogram(w, gmax)))
        bimodal = np.mean(w < 0.1 * gmax) > 0.05 and np.mean(w > 0.9 * gmax) > 0.05 and middle < 0.25
        unimodal |= not bimodal
        print(f"  below 0.1 gmax {np.mean(w < 0.1 * gmax):.3f}, above 0.9 gmax {np.mean(w > 0.9 * gmax):.3f}, "
              f"in [0.25, 0.75] gmax {middle:.3f}: {'bimodal' if bimodal else 'NOT bimodal'} "
              f"(both ends > 5%, middle half < 25%; {ends:.3f} at the ends)")
    a, b = (np.round(sims[k][1] / DT_MS).astype(np.int64) for k in ("dnnc", "Brian2"))
    n = min(a.size, b.size)
    same = int(np.argmax(a[:n] != b[:n])) if np.any(a[:n] != b[:n]) else n
    print(f"\noutput spikes: dnnc {a.size}, Brian2 {b.size}; the first {same} are on the same ticks" +
          (f" (through {a[same - 1] * DT_MS:g} ms; then dnnc {a[same] * DT_MS:g} ms, Brian2 {b[same] * DT_MS:g} ms)"
           if 0 < same < n else ""))
    missed = False
    print(f"\n{'figure':<34}{'dnnc':>10}{'Brian2':>10}{'dnnc/Brian2':>13}  within 10%")
    for key in stats["dnnc"]:
        a, b = stats["dnnc"][key], stats["Brian2"][key]
        r = a / b if b else float("nan")
        ok = abs(r - 1) <= TOLERANCE
        missed |= not ok
        print(f"{key:<34}{a:>10.3f}{b:>10.3f}{r:>13.3f}  {'PASS' if ok else 'MISS'}")
    print(f"\nwall seconds: dnnc {dnnc_run['seconds']:.2f} ticks (+ {dnnc_run['setup_seconds']:.2f} set-up, "
          f"{dnnc_run['total_seconds']:.2f} in all, cluster up and down included); "
          f"Brian2 {brian['loop_s']:.2f} loop ({brian['binary_s']:.2f} the compiled binary in all; "
          f"code generation and compilation {brian['build_s']:.1f} not counted)")
    print(f"dnnc / Brian2 (ticks / loop): {dnnc_run['seconds'] / brian['loop_s']:.2f}")
    return 1 if missed or unimodal else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("--dir", required=True)
    m.add_argument("--seconds", type=float, default=100.0)
    m.add_argument("--inputs", type=int, default=1000)
    m.add_argument("--rate", type=float, default=15.0, help="Hz per input")
    m.add_argument("--gmax", type=float, default=25.0, help="pA")
    m.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("report")
    r.add_argument("--dir", required=True)
    r.add_argument("--rate-window", type=float, default=20.0, help="seconds at the end for the output rate")
    args = ap.parse_args()
    return make(args) if args.command == "make" else report(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
