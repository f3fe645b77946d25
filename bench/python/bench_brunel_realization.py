"""PyNN's brunel.py network, one realisation, on pyNN.dnnc and on Brian2 with pyNN.brian2's own
equations: the same connections, the same Poisson input spikes and the same initial
potentials, so the two runs can be compared spike for spike instead of by rates.

    /usr/bin/python3 bench/python/bench_brunel_realization.py [--ms 200] [--nodes 1] [--seed 7]

Why: PyNN's brunel.py on pyNN.dnnc and on pyNN.brian2 differed by up to 53% in rate
(BENCHMARKS.md, "PyNN's own examples"). That network (J = 5 mV through alpha currents with
tau_syn = dt = 0.1 ms, 2 ms refractory) fires in bursts that end as neurons leave their
refractory period, so its rates hang on the last step of that period; and pyNN.brian2's
script takes an hour and a half to connect, so it could be run only once.

What runs: 4,000 excitatory and 1,000 inhibitory IF_curr_alpha neurons with brunel.py's
parameters; every neuron draws its inputs with p = 0.1 (weights JE and JI = -5 JE, delay
1.5 ms), and gets its own 400 Hz Poisson train (one spike at most per 0.1 ms step, the same
train on both sides) through a weight JE, delay 0.1 ms connection, as brunel.py's one-to-one
Poisson sources. The connections go to pyNN.dnnc as FromListConnectors and the trains as a
SpikeSourceArray; the initial potentials (uniform in [0, 20) mV, as brunel.py draws them) are
drawn here and given to both as arrays. Brian2 (Debian's 2.5.1,
numpy target) takes pyNN.brian2's IF_curr_alpha equations from pyNN.brian2 itself, with its
threshold (v > v_thresh), reset and `refractory=tau_refrac`, integrated with its default
methods (Brian2 picks 'exact'); its synapses add the weights to the ye/yi variables as
pyNN.brian2's projections do.

Spike times: Brian2 stamps a spike with the start of the step whose update crossed the
threshold, dnnc (as NEST) with its end; Brian2's times are moved by one step (+dt) before
they are compared.

Brian2 runs twice: with tau_refrac as pyNN.brian2 gives it, and with tau_refrac + dt. Brian2
holds the potential for the steps whose start lies less than tau_refrac after the spike's
stamp, which is 19 steps of 0.1 ms for 2 ms; NEST's iaf_psc_alpha, and dnnc, hold it for
tau_refrac / dt = 20 steps. The table shows each run's spikes, rates, how many of them are
dnnc's spikes exactly (same neuron, same step), and the first step where the two runs' spikes
differ. Where the conventions agree, the runs stay identical until rounding tells (dnnc keeps
a neuron's state in float32, Brian2 in float64): this network is chaotic, so one spike moved
by a step then spreads, and from there on only the rates compare.
"""
import argparse
import os
import sys
import time

import numpy as np

NE, NI = 4000, 1000
DT = 0.1
J_EFF, TAU_SYN, FUDGE = 5.0, 0.1, 0.00041363506632638  # brunel.py's J * downscale, tauSyn, fudge
JE = (J_EFF / TAU_SYN) * FUDGE  # nA
JI = -5.0 * JE
DELAY, P, POISSON_HZ = 1.5, 0.1, 400.0
CELL = dict(tau_m=20.0, tau_syn_E=TAU_SYN, tau_syn_I=TAU_SYN, tau_refrac=2.0, v_rest=0.0, v_reset=0.0,
            v_thresh=20.0, cm=0.001, i_offset=0.0)


def realisation(ms, seed):
    """(connections {(pre 'E'|'I', post 'E'|'I'): rows (pre index, post index)}, Poisson trains
    as (step, neuron) pairs, initial potentials in mV; neurons are all NE + NI, E first)."""
    rng = np.random.default_rng(seed)
    n = NE + NI
    pre, post = np.nonzero(rng.random((n, n)) < P)
    connections = {}
    for (pre_name, pre_lo, pre_hi) in (("E", 0, NE), ("I", NE, n)):
        for (post_name, post_lo, post_hi) in (("E", 0, NE), ("I", NE, n)):
            mine = (pre >= pre_lo) & (pre < pre_hi) & (post >= post_lo) & (post < post_hi)
            connections[pre_name, post_name] = np.column_stack((pre[mine] - pre_lo, post[mine] - post_lo))
    steps = int(round(ms / DT))
    step, neuron = np.nonzero(rng.random((steps, n)) < POISSON_HZ * DT / 1000.0)
    return connections, (step, neuron), rng.uniform(0.0, 20.0, n)


def run_dnnc(ms, nodes, connections, trains, v0):
    """(spikes as a set of (step, neuron), seconds)."""
    import dnnc_pynn_hook  # noqa: F401 (what dnnc.pth imports at start-up)
    import pyNN.dnnc as sim
    from pyNN.parameters import Sequence
    began = time.perf_counter()
    sim.setup(timestep=DT, min_delay=DT, max_delay=DELAY, nodes=nodes)
    pops = {"E": sim.Population(NE, sim.IF_curr_alpha(**CELL), label="E"),
            "I": sim.Population(NI, sim.IF_curr_alpha(**CELL), label="I")}
    for name, first, size in (("E", 0, NE), ("I", NE, NI)):
        pops[name].initialize(v=v0[first:first + size])
        pops[name].record("spikes")
    step, neuron = trains
    order = np.argsort(neuron, kind="stable")
    bounds = np.searchsorted(neuron[order], np.arange(NE + NI + 1))
    times = np.round(step[order] * DT, 1)
    sources = sim.Population(NE + NI, sim.SpikeSourceArray(
        spike_times=[Sequence(times[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]))
    for name, first, size in (("E", 0, NE), ("I", NE, NI)):
        sim.Projection(sources[first:first + size], pops[name], sim.OneToOneConnector(),
                       sim.StaticSynapse(weight=JE, delay=DT), receptor_type="excitatory")
    for (pre, post), rows in connections.items():
        weight, receptor = (JE, "excitatory") if pre == "E" else (JI, "inhibitory")
        sim.Projection(pops[pre], pops[post], sim.FromListConnector(rows), sim.StaticSynapse(weight=weight, delay=DELAY),
                       receptor_type=receptor)
    sim.run(ms)
    spikes = set()
    for name, first in (("E", 0), ("I", NE)):
        for k, train in enumerate(pops[name].get_data().segments[0].spiketrains):
            spikes.update((int(round(t / DT)), first + k) for t in np.asarray(train.magnitude))
    sim.end()
    return spikes, time.perf_counter() - began


def run_brian2(ms, connections, trains, v0, refractory_ms):
    """(spikes as a set of (step, neuron), stamped as dnnc stamps them, seconds)."""
    import brian2 as b2
    from pyNN.brian2.standardmodels.cells import IF_curr_alpha
    began = time.perf_counter()
    b2.prefs.codegen.target = "numpy"
    b2.start_scope()
    b2.defaultclock.dt = DT * b2.ms
    n = NE + NI
    equations = IF_curr_alpha.eqs + b2.Equations("v_thresh : volt (constant)\nv_reset : volt (constant)")
    group = b2.NeuronGroup(n, equations, threshold="v > v_thresh", reset="v = v_reset",
                           refractory=refractory_ms * b2.ms, method=("exact", "euler", "heun"))
    group.tau_m, group.c_m = CELL["tau_m"] * b2.ms, CELL["cm"] * b2.nF
    group.v_rest, group.v_reset, group.v_thresh = CELL["v_rest"] * b2.mV, CELL["v_reset"] * b2.mV, CELL["v_thresh"] * b2.mV
    group.tau_syn_e, group.tau_syn_i = CELL["tau_syn_E"] * b2.ms, CELL["tau_syn_I"] * b2.ms
    group.i_offset, group.i_inj = 0 * b2.nA, 0 * b2.nA
    group.v = v0 * b2.mV
    excitatory, inhibitory = (IF_curr_alpha.post_synaptic_variables[r] for r in ("excitatory", "inhibitory"))
    step, neuron = trains
    source = b2.SpikeGeneratorGroup(n, neuron, step * DT * b2.ms)
    drive = b2.Synapses(source, group, on_pre="%s_post += %r * nA" % (excitatory, JE), delay=DT * b2.ms)
    drive.connect(i=np.arange(n), j=np.arange(n))
    objects = [group, source, drive]
    first = {"E": 0, "I": NE}
    for (pre, post), rows in connections.items():
        variable, weight = (excitatory, JE) if pre == "E" else (inhibitory, JI)
        synapses = b2.Synapses(group, group, on_pre="%s_post += %r * nA" % (variable, weight), delay=DELAY * b2.ms)
        synapses.connect(i=rows[:, 0] + first[pre], j=rows[:, 1] + first[post])
        objects.append(synapses)
    monitor = b2.SpikeMonitor(group)
    network = b2.Network(*objects, monitor)
    network.run(ms * b2.ms)
    steps = np.rint(np.asarray(monitor.t / b2.ms) / DT).astype(int) + 1  # the end of the step
    return set(zip(steps.tolist(), np.asarray(monitor.i).tolist())), time.perf_counter() - began


def rates(spikes, ms):
    neurons = np.array([k for _, k in spikes], dtype=int)
    excitatory = np.count_nonzero(neurons < NE)
    return excitatory / NE / (ms / 1000.0), (len(neurons) - excitatory) / NI / (ms / 1000.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ms", type=float, default=200.0)
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    connections, trains, v0 = realisation(args.ms, args.seed)
    print("%d neurons, %d connections, %d input spikes, %g ms" % (
        NE + NI, sum(len(r) for r in connections.values()), len(trains[0]), args.ms))
    ours, seconds = run_dnnc(args.ms, args.nodes, connections, trains, v0)
    rows = [("pyNN.dnnc, %d node(s)" % args.nodes, ours, seconds)]
    for refractory, label in ((CELL["tau_refrac"], "Brian2, refractory=tau_refrac (pyNN.brian2's)"),
                              (CELL["tau_refrac"] + DT, "Brian2, refractory=tau_refrac+dt (NEST's 20 steps)")):
        spikes, seconds = run_brian2(args.ms, connections, trains, v0, refractory)
        rows.append((label, spikes, seconds))
    print("| run | spikes | E Hz | I Hz | spikes also dnnc's | first step that differs | s |")
    print("|---|---|---|---|---|---|---|")
    for label, spikes, seconds in rows:
        differ = sorted(spikes ^ ours)
        print("| %s | %d | %.2f | %.2f | %d | %s | %.0f |" % (
            label, len(spikes), *rates(spikes, args.ms), len(spikes & ours),
            "none" if not differ else "%.1f ms" % (differ[0][0] * DT), seconds))
    for label, spikes, _ in rows[1:]:
        excitatory, inhibitory = rates(spikes, args.ms)
        ours_e, ours_i = rates(ours, args.ms)
        print("%s: rates differ from dnnc's by %.1f%% (E) and %.1f%% (I)" % (
            label, 100 * abs(excitatory - ours_e) / excitatory, 100 * abs(inhibitory - ours_i) / inhibitory))
    return 0

if __name__ == "__main__":
    sys.exit(main())
