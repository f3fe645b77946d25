#!/usr/bin/env python3
"""Brunel's network with E->E under NEST's stdp_synapse, in Brian2's C++ standalone mode:
the peer of bench_brunel_stdp.sh (the document that dnnc runs there: examples/brunel/brunel.xml
with its E->E projection under stdp_synapse, as bench_plastic_cost.sh builds it).

    brian_brunel_stdp.py [--ms 300] [--threads 0] [--seed 1] [--repeat 1] --spikes s.csv

Brunel (2000), asynchronous irregular: 10,000 E and 2,500 I iaf_psc_delta neurons (tau_m
20 ms, theta 20 mV, V_r 10 mV, t_ref 2 ms, input while refractory dropped), every neuron
receiving 1,000 E and 250 I synapses (fixed in-degree, drawn here with NumPy, not dnnc's
draws) of J = 0.1 mV and -g J = -0.5 mV, delay D = 1.5 ms, and Poisson input of 20 kHz of J.
E->E follows NEST's stdp_synapse, multiplicative: tau_plus = tau_minus = 20 ms, lambda 0.01,
alpha 1, mu_plus = mu_minus = 1, Wmax = J (so the weights can only fall).

NEST's synapse takes the whole delay as dendritic: a source spike at t reaches the synapse at
t, depresses it and is delivered at t + D; a target spike at t_post reaches it at t_post + D;
at one time the target's event comes first, and a pair at zero lag is paired neither way.
Shifting every synapse event by the same D' keeps that order, so here the source's pathway
runs D' after its spike (depress, deliver, K+ += 1) and the target's D + D' after (K- += 1,
facilitate; first at one time step, where Brian2 would run it after the source's), and a
depression takes back a K- increment of the same step (tpost == t). D' = D - dt: Brian2 adds
a synaptic jump after the step's integration, so it meets the threshold one step later than
in NEST's iaf_psc_delta, which adds it within the step; with D' it meets it at dnnc's tick.
Two differences of Brian2's update order remain: the jump has decayed by one step's
e^(-dt/tau_m) (0.5%) when it meets the threshold, and a neuron leaving its refractory period
integrates one step earlier (V_r decays one step more). The static projections use D' too.

Every spike is recorded and written as CSV `t_ms,population,index` (dnnc run --spikes'
format). Prints one JSON object: neurons, synapses, plastic, threads, simulated_s, loop_s
(Brian2's own measure of its simulation loop, the median over --repeat runs of the binary;
it excludes code generation, compilation and synapse creation, as dnnc's tick time excludes
set-up), build_s.
"""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")

import numpy as np
from brian2 import (Network, NeuronGroup, PoissonInput, Synapses, SpikeMonitor, device, defaultclock, prefs,
                    seed, set_device, ms, mV, second)


def fixed_indegree(rng, n_pre, n_post, k):
    """Every target draws k sources with replacement (NEST's fixed_indegree, multapses and
    autapses allowed)."""
    return rng.integers(0, n_pre, size=n_post * k), np.repeat(np.arange(n_post), k)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ms", type=float, default=300.0, help="simulated time")
    ap.add_argument("--threads", type=int, default=0, help="OpenMP threads; 0: Brian2's single-threaded code")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs of the compiled binary; the median loop time is reported")
    ap.add_argument("--spikes", required=True, help="write every spike here as CSV t_ms,population,index")
    ap.add_argument("--dir", default=None, help="project folder (default: a temporary one)")
    args = ap.parse_args()

    directory = args.dir or tempfile.mkdtemp(prefix="brian-brunel-stdp-")
    set_device("cpp_standalone", build_on_run=False)
    prefs.devices.cpp_standalone.openmp_threads = args.threads
    dt = 0.1 * ms
    defaultclock.dt = dt
    seed(args.seed)
    rng = np.random.default_rng(args.seed)

    NE, NI, CE, CI = 10000, 2500, 1000, 250
    g, eta = 5.0, 2.0
    J, D = 0.1 * mV, 1.5 * ms
    namespace = dict(tau_m=20 * ms, theta=20 * mV, Vr=10 * mV, J=J, tau_plus=20 * ms, tau_minus=20 * ms, lam=0.01,
                     alpha=1.0, Wmax=J)
    theta_v = namespace["theta"]  # noqa: F841 (read by the string "rand() * theta_v")
    nu_thr = namespace["theta"] / (J * CE * namespace["tau_m"])
    groups, keep = {}, []
    for name, n in (("E", NE), ("I", NI)):
        grp = NeuronGroup(n, "dv/dt = -v/tau_m : volt (unless refractory)", threshold="v >= theta",
                          reset="v = Vr", refractory=2 * ms, method="exact", name=name, namespace=namespace)
        grp.v = "rand() * theta_v"
        keep.append(PoissonInput(grp, "v", N=CE, rate=eta * nu_thr, weight="J * int(not_refractory)"))
        groups[name] = grp
    synapses = plastic = 0
    for src, k, w in (("E", CE, J), ("I", CI, -g * J)):
        for dst in ("E", "I"):
            i, j = fixed_indegree(rng, len(groups[src]), len(groups[dst]), k)
            if src == "E" and dst == "E":
                s = Synapses(groups[src], groups[dst],
                             """w : volt
                                tpost : second
                                dKp/dt = -Kp / tau_plus : 1 (event-driven)
                                dKm/dt = -Km / tau_minus : 1 (event-driven)""",
                             on_pre="""w = clip(w - alpha * lam * w * (Km - int(tpost == t)), 0*mV, Wmax)
                                       v_post += w * int(not_refractory_post)
                                       Kp += 1""",
                             on_post="""Km += 1
                                        tpost = t
                                        w = clip(w + lam * (Wmax - w) * Kp, 0*mV, Wmax)""",
                             delay={"pre": D - dt, "post": 2 * D - dt}, name="E_E")
                s.connect(i=i, j=j)
                s.w = J
                s.tpost = -1 * second
                s.post.order = -2  # before the source pathways (-1) of the same step
                plastic += len(i)
            else:
                s = Synapses(groups[src], groups[dst], on_pre=f"v_post += {float(w / mV)!r}*mV * int(not_refractory_post)",
                             delay=D - dt, name=f"{src}_{dst}")
                s.connect(i=i, j=j)
            synapses += len(i)
            keep.append(s)
    monitors = {name: SpikeMonitor(grp) for name, grp in groups.items()}
    Network(*groups.values(), *keep, *monitors.values()).run(args.ms * ms, namespace=namespace)
    started = time.perf_counter()
    device.build(directory=directory, compile=True, run=False)
    build_s = time.perf_counter() - started
    loop_s = []
    for _ in range(args.repeat):
        device.run(directory, with_output=False, run_args=[])
        loop_s.append(float(device._last_run_time))

    rows = []
    for name, m in monitors.items():
        rows += [(float(t), name, int(i)) for t, i in zip(np.asarray(m.t / ms), np.asarray(m.i))]
    rows.sort()
    with open(args.spikes, "w") as f:
        f.write("t_ms,population,index\n")
        f.writelines(f"{t:.10g},{name},{i}\n" for t, name, i in rows)
    print(json.dumps({"neurons": NE + NI, "synapses": synapses, "plastic": plastic, "threads": max(args.threads, 1),
                      "simulated_s": args.ms / 1000.0, "loop_s": statistics.median(loop_s), "build_s": build_s}))
    if args.dir is None:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
