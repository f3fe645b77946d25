# Shared by the pyNN.dnnc tests: the backend, imported through its hook as the set-up makes
# Python import it, and a dnnc run of a network written by hand to compare with.
import numpy as np

import dnnc
import dnnc_pynn_hook  # noqa: F401 (what dnnc.pth imports at start-up)
import pyNN.dnnc as sim


def spike_times(population):
    """{index in the population: spike times in ms} from its Neo block."""
    block = population.get_data("spikes")
    return {int(population.id_to_index(train.annotations["channel_id"])): np.asarray(train.magnitude)
            for train in block.segments[-1].spiketrains}


def dnnc_spike_times(net, ticks, nodes=1):
    """{(population, index): spike times in ms} of a dnnc.Network run directly, each spike
    at the end of its tick as NEST reports it."""
    with dnnc.Simulation(net, nodes=nodes) as run:
        run.run(ticks)
        t_ms, population, index = run.spikes()
    result = {}
    for t, p, i in zip(t_ms, population, index):
        result.setdefault((str(p), int(i)), []).append(t)
    dt = net.dt or 0.1
    return {key: np.rint(np.asarray(times) / dt + 1) * dt for key, times in result.items()}


__all__ = ["sim", "spike_times", "dnnc_spike_times"]
