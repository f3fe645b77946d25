#!/usr/bin/env python3
"""The CUBA network in Brian2's C++ standalone mode: the peer of bench_cuba.

Model, parameters and connectivity are those of Brian2's examples/CUBA.py (Vogels & Abbott
2005, as used by Brette et al. 2007): N LIF neurons, the first 80% excitatory, every pair
connected with probability p, 0.1 ms steps, 1 s simulated. The project is generated and
compiled first; only the compiled binary's run is timed. Two times are reported: Brian2's
own measure of the simulation loop (results/last_run_info.txt, excluding synapse creation,
like bench_cuba excludes expansion) and the binary's whole wall time.

Prints one JSON object: neurons, synapses, threads, loop_s, binary_s (medians over --repeat
runs of the same binary), rate_hz.
"""
import argparse
import json
import shutil
import statistics
import tempfile
import warnings

warnings.filterwarnings("ignore", category=FutureWarning)

from brian2 import (NeuronGroup, Synapses, SpikeMonitor, device, defaultclock, prefs, run,
                    seed, set_device, ms, mV, second)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--neurons", type=int, default=4000)
    ap.add_argument("--p", type=float, default=0.02)
    ap.add_argument("--threads", type=int, default=0,
                    help="OpenMP threads; 0 is Brian2's default single-threaded code")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="runs of the binary; medians are reported")
    ap.add_argument("--dir", default=None, help="project folder (default: a temporary one)")
    args = ap.parse_args()

    directory = args.dir or tempfile.mkdtemp(prefix="brian-cuba-")
    set_device("cpp_standalone", build_on_run=False)
    prefs.devices.cpp_standalone.openmp_threads = args.threads
    defaultclock.dt = 0.1 * ms
    seed(args.seed)

    taum, taue, taui = 20 * ms, 5 * ms, 10 * ms
    Vt, Vr, El = -50 * mV, -60 * mV, -49 * mV
    eqs = """
    dv/dt  = (ge+gi-(v-El))/taum : volt (unless refractory)
    dge/dt = -ge/taue : volt
    dgi/dt = -gi/taui : volt
    """
    n = args.neurons
    n_exc = n * 4 // 5
    P = NeuronGroup(n, eqs, threshold="v>Vt", reset="v = Vr", refractory=5 * ms,
                    method="exact")
    P.v = "Vr + rand() * (Vt - Vr)"
    P.ge = 0 * mV
    P.gi = 0 * mV

    we = (60 * 0.27 / 10) * mV
    wi = (-20 * 4.5 / 10) * mV
    Ce = Synapses(P, P, on_pre="ge += we")
    Ci = Synapses(P, P, on_pre="gi += wi")
    Ce.connect(f"i<{n_exc}", p=args.p)
    Ci.connect(f"i>={n_exc}", p=args.p)
    # Counts spikes per neuron without recording times: the cheapest way to get the rate.
    spikes = SpikeMonitor(P, record=False)

    run(1 * second)
    device.build(directory=directory, compile=True, run=False)
    loop_s, binary_s = [], []
    for _ in range(args.repeat):
        device.run(directory, with_output=False, run_args=[])
        loop_s.append(float(device._last_run_time))
        binary_s.append(float(device.timers["run_binary"]))

    result = {
        "neurons": n,
        "synapses": int(len(Ce) + len(Ci)),
        "threads": max(args.threads, 1),
        "loop_s": statistics.median(loop_s),
        "binary_s": statistics.median(binary_s),
        "rate_hz": float(spikes.num_spikes) / n / 1.0,
    }
    print(json.dumps(result))
    if args.dir is None:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
