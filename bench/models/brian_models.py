#!/usr/bin/env python3
"""Brunel (2000) and the Potjans & Diesmann (2014) microcircuit in Brian2's C++ standalone
mode: the peer of bench/models/bench_models.sh, built from the same parameters as
examples/brunel/*.xml and examples/microcircuit/make_microcircuit.py.

    brian_models.py brunel --variant ai|sr --ms 1000 --spikes s.csv
    brian_models.py microcircuit --scale 0.1 --ms 1000 --spikes s.csv

Every spike is recorded (SpikeMonitor) and written as CSV `t_ms,population,index`, the
format of `dnnc run --spikes`. The project is generated and compiled first; Brian2's own
measure of the simulation loop (excluding compilation and synapse creation, as dnnc's run
time excludes set-up) is reported. Prints one JSON object: model, neurons, synapses,
threads, simulated_s, loop_s.
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore")

import numpy as np
from brian2 import (Network, NeuronGroup, PoissonInput, Synapses, SpikeMonitor, device, defaultclock,
                    prefs, seed, set_device, ms, mV, pA, pF, Hz)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "microcircuit"))
import make_microcircuit as mc  # noqa: E402


def fixed_indegree(rng, n_pre, n_post, k):
    """Every target draws k sources with replacement (NEST's fixed_indegree, multapses and
    autapses allowed)."""
    return rng.integers(0, n_pre, size=n_post * k), np.repeat(np.arange(n_post), k)


def brunel(args, rng):
    g = 5.0 if args.variant == "ai" else 3.0
    eta = 2.0
    NE, NI, CE, CI = 10000, 2500, 1000, 250
    J, D, theta, tau_m, Vr, t_ref = 0.1 * mV, 1.5 * ms, 20 * mV, 20 * ms, 10 * mV, 2 * ms
    nu_thr = theta / (J * CE * tau_m)
    groups, keep = {}, []
    for name, n in (("E", NE), ("I", NI)):
        grp = NeuronGroup(n, "dv/dt = -v/tau_m : volt (unless refractory)", threshold="v >= theta",
                          reset="v = Vr", refractory=t_ref, method="exact", name=name)
        grp.v = "rand() * theta"
        # iaf_psc_delta drops input that arrives while refractory.
        keep.append(PoissonInput(grp, "v", N=CE, rate=eta * nu_thr, weight="J * int(not_refractory)"))
        groups[name] = grp
    synapses = 0
    for src, k, w in (("E", CE, J), ("I", CI, -g * J)):
        for dst in ("E", "I"):
            s = Synapses(groups[src], groups[dst], on_pre=f"v_post += {float(w / mV)!r}*mV * int(not_refractory_post)",
                         delay=D)
            i, j = fixed_indegree(rng, len(groups[src]), len(groups[dst]), k)
            s.connect(i=i, j=j)
            synapses += len(i)
            keep.append(s)
    return groups, synapses, keep, dict(tau_m=tau_m, theta=theta, Vr=Vr, J=J)


def microcircuit(args, rng):
    net = mc.build(args.scale, args.scale)
    p = mc.NEURON
    C_m, tau_m, tau_s = p["C_m"] * pF, p["tau_m"] * ms, p["tau_syn_ex"] * ms
    E_L, V_th, V_reset = p["E_L"] * mV, p["V_th"] * mV, p["V_reset"] * mV
    eqs = """
    dv/dt = -(v - E_L)/tau_m + (I_syn + I_e)/C_m : volt (unless refractory)
    dI_syn/dt = -I_syn/tau_s : amp
    I_e : amp
    """
    groups, keep = {}, []
    for i, name in enumerate(mc.POPULATIONS):
        grp = NeuronGroup(net["sizes"][i], eqs, threshold="v >= V_th", reset="v = V_reset",
                          refractory=p["t_ref"] * ms, method="exact", name=name)
        grp.v = (mc.V0_MEAN[i] + mc.V0_STD[i] * rng.standard_normal(len(grp))) * mV
        grp.I_e = net["dc"][i] * pA
        keep.append(PoissonInput(grp, "I_syn", N=net["k_ext"][i], rate=mc.BG_RATE_HZ * Hz, weight=net["w_ext"] * pA))
        groups[name] = grp
    dt = float(defaultclock.dt / ms)
    synapses = 0
    for i, target in enumerate(mc.POPULATIONS):
        for j, source in enumerate(mc.POPULATIONS):
            n = net["counts"][i][j]
            if n <= 0:
                continue
            w_mean = net["psc"][i][j]
            d_mean = mc.DELAY_I_MS if j % 2 else mc.DELAY_E_MS
            w = redraw(rng, n, w_mean, abs(w_mean) * mc.PSP_REL_STD, 0.0 if w_mean > 0 else -np.inf,
                       np.inf if w_mean > 0 else 0.0)
            d = redraw(rng, n, d_mean, d_mean * mc.DELAY_REL_STD, dt / 2, np.inf)
            s = Synapses(groups[source], groups[target], "w : amp", on_pre="I_syn_post += w",
                         name=f"{source}_to_{target}")
            s.connect(i=rng.integers(0, len(groups[source]), n), j=rng.integers(0, len(groups[target]), n))
            s.w = w * pA
            s.delay = d * ms
            synapses += n
            keep.append(s)
    return groups, synapses, keep, dict(C_m=C_m, tau_m=tau_m, tau_s=tau_s, E_L=E_L, V_th=V_th, V_reset=V_reset)


def redraw(rng, n, mean, std, low, high):
    """Normal draws, redrawn until inside [low, high] (NEST's nest.math.redraw)."""
    x = rng.normal(mean, std, n)
    bad = (x < low) | (x > high)
    while bad.any():
        x[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (x < low) | (x > high)
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=["brunel", "microcircuit"])
    ap.add_argument("--variant", choices=["ai", "sr"], default="ai")
    ap.add_argument("--scale", type=float, default=0.1, help="microcircuit: N and K scaling")
    ap.add_argument("--ms", type=float, default=1000.0, help="simulated time")
    ap.add_argument("--threads", type=int, default=0, help="OpenMP threads; 0: Brian2's single-threaded code")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spikes", help="write every spike here as CSV t_ms,population,index")
    ap.add_argument("--dir", default=None, help="project folder (default: a temporary one)")
    args = ap.parse_args()

    directory = args.dir or tempfile.mkdtemp(prefix="brian-models-")
    set_device("cpp_standalone", build_on_run=False)
    prefs.devices.cpp_standalone.openmp_threads = args.threads
    defaultclock.dt = 0.1 * ms
    seed(args.seed)
    rng = np.random.default_rng(args.seed)

    groups, synapses, keep, namespace = (brunel if args.model == "brunel" else microcircuit)(args, rng)
    monitors = {name: SpikeMonitor(g) for name, g in groups.items()}
    Network(*groups.values(), *keep, *monitors.values()).run(args.ms * ms, namespace=namespace)
    device.build(directory=directory, compile=True, run=False)
    device.run(directory, with_output=False, run_args=[])

    if args.spikes:
        rows = []
        for name, m in monitors.items():
            t = np.asarray(m.t / ms)
            rows.append((t, name, np.asarray(m.i)))
        with open(args.spikes, "w") as f:
            f.write("t_ms,population,index\n")
            merged = sorted(((float(t), name, int(i)) for ts, name, ii in rows for t, i in zip(ts, ii)))
            f.writelines(f"{t:.10g},{name},{i}\n" for t, name, i in merged)
    result = {
        "model": args.model if args.model == "microcircuit" else f"brunel_{args.variant}",
        "neurons": int(sum(len(g) for g in groups.values())),
        "synapses": int(synapses),
        "threads": max(args.threads, 1),
        "simulated_s": args.ms / 1000.0,
        "loop_s": float(device._last_run_time),
    }
    print(json.dumps(result))
    if args.dir is None:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
