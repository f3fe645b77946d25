#!/usr/bin/env python3
"""Song, Miller & Abbott (2000) in Brian2's C++ standalone mode: the peer of
bench_song_abbott.sh, on the inputs and initial weights that dnnc runs with.

    brian_song_abbott.py --dir DIR [--threads 0]

Reads DIR/params.json and DIR/inputs.npz (bench/sim/song_abbott.py make) and
DIR/weights0.csv (dnnc's initial weights, `projection,source,target,weight`); writes
DIR/brian_weights.csv (`source,weight`) and DIR/brian.json (the output spike times, loop_s:
Brian2's own measure of its simulation loop, binary_s: the compiled binary's whole run,
build_s: code generation and compilation, not counted).

The model is Brian2's examples/synapses/STDP.py with two changes, so that it is dnnc's
(NEST's) model and not a neighbour of it:
- the neuron is current-based, NEST's iaf_psc_exp with the example's constants (dnnc has no
  conductance-based neuron): dv/dt = (E_L - v)/tau_m + I/C_m, dI/dt = -I/tau_syn_ex,
  integrated exactly; v >= V_th spikes and resets v; no refractory period;
- the synapse follows NEST's stdp_synapse, whose whole delay d (one 0.1 ms tick here) is
  dendritic: a source spike at t reaches the synapse at t, depresses it and is delivered at
  t + d with the weight it left (the example delivers first, then depresses); a target
  spike at t_post reaches it at t_post + d. Shifting every synapse event by the same d
  keeps their order, so the source's pathway runs d after its spike (depress, deliver,
  Apre) and the target's 2d after (Apost, facilitate). (Brian2 adds the current after
  the step's integration, as iaf_psc_exp does, so a delivery d after the spike lands on
  dnnc's tick);
- at one time NEST takes the target's spike first, and neither event of a pair at zero lag
  sees the other (the facilitation reads K+ without the source's spike of that time, the
  depression K- just before t - d). Brian2 runs a synapse's source pathway before its
  target pathway, and a trace read there includes what the other added in the same step.
  So the target's pathway runs first here, and a depression takes back a target's
  increment of the same step (tpost == t). Without that, an input spiking d after an
  output spike's arrival gains dApre that NEST's rule does not give: about 1.5 inputs for
  each output spike, a steady bias of the drift that alpha = 1.05 leaves.
"""
import argparse
import csv
import json
import os
import shutil
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")

import numpy as np
from brian2 import (Network, NeuronGroup, SpikeGeneratorGroup, SpikeMonitor, Synapses, device, defaultclock,
                    prefs, set_device, ms, mV, pA, pF, second)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="the folder song_abbott.py make wrote")
    ap.add_argument("--threads", type=int, default=0, help="OpenMP threads; 0: Brian2's single-threaded code")
    ap.add_argument("--build-dir", default=None, help="project folder (default: a temporary one)")
    args = ap.parse_args()
    p = json.load(open(os.path.join(args.dir, "params.json")))
    n, dt = p["inputs"], p["dt_ms"] * ms
    inputs = np.load(os.path.join(args.dir, "inputs.npz"))
    with open(os.path.join(args.dir, "weights0.csv")) as f:
        w0 = np.zeros(n)
        for r in csv.DictReader(f):
            w0[int(r["source"].split("[")[1].rstrip("]"))] = float(r["weight"])

    directory = args.build_dir or tempfile.mkdtemp(prefix="brian-song-abbott-")
    set_device("cpp_standalone", build_on_run=False)
    prefs.devices.cpp_standalone.openmp_threads = args.threads
    defaultclock.dt = dt

    nrn, stdp = p["neuron"], p["stdp"]
    namespace = dict(C_m=nrn["C_m"] * pF, tau_m=nrn["tau_m"] * ms, tau_s=nrn["tau_syn_ex"] * ms, E_L=nrn["E_L"] * mV,
                     V_th=nrn["V_th"] * mV, V_reset=nrn["V_reset"] * mV, taupre=stdp["tau_plus"] * ms,
                     taupost=nrn["tau_minus"] * ms, gmax=p["gmax"] * pA,
                     dApre=stdp["lambda"] * p["gmax"] * pA,
                     dApost=-stdp["alpha"] * stdp["lambda"] * p["gmax"] * pA)
    source = SpikeGeneratorGroup(n, inputs["index"], inputs["tick"] * dt)
    neuron = NeuronGroup(1, """dv/dt = (E_L - v)/tau_m + I/C_m : volt
                               dI/dt = -I/tau_s : amp""",
                         threshold="v >= V_th", reset="v = V_reset", method="exact")
    neuron.v = nrn["E_L"] * mV
    synapses = Synapses(source, neuron,
                        """w : amp
                           tpost : second
                           dApre/dt = -Apre/taupre : amp (event-driven)
                           dApost/dt = -Apost/taupost : amp (event-driven)""",
                        on_pre="""w = clip(w + Apost - dApost * int(tpost == t), 0*pA, gmax)
                                  I_post += w
                                  Apre += dApre""",
                        on_post="""Apost += dApost
                                   tpost = t
                                   w = clip(w + Apre, 0*pA, gmax)""",
                        delay={"pre": p["delay_ticks"] * dt, "post": 2 * p["delay_ticks"] * dt})
    synapses.connect()  # i -> 0, in source order
    synapses.w = w0 * pA
    synapses.tpost = -1 * second
    synapses.post.order = -2  # before the source pathway (-1) of the same step
    spikes = SpikeMonitor(neuron)
    Network(source, neuron, synapses, spikes).run(p["seconds"] * 1000 * ms, namespace=namespace)

    started = time.perf_counter()
    device.build(directory=directory, compile=True, run=False)
    build_s = time.perf_counter() - started
    device.run(directory, with_output=False, run_args=[])

    w = np.asarray(synapses.w / pA)
    with open(os.path.join(args.dir, "brian_weights.csv"), "w") as f:
        f.write("source,weight\n")
        f.writelines(f"{i},{x:.9g}\n" for i, x in enumerate(w))
    result = {"threads": max(args.threads, 1), "loop_s": float(device._last_run_time),
              "binary_s": float(device.timers["run_binary"]), "build_s": build_s,
              "spikes_ms": [round(float(t), 4) for t in np.asarray(spikes.t / ms)]}
    with open(os.path.join(args.dir, "brian.json"), "w") as f:
        json.dump(result, f)
    print(f"Brian2: {len(result['spikes_ms'])} output spikes, loop {result['loop_s']:.2f} s "
          f"(binary {result['binary_s']:.2f} s, build {build_s:.1f} s)")
    if args.build_dir is None:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
