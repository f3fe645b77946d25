"""Recording: spikes through the document's <record> elements and dnnc.Simulation.spikes()."""

import numpy as np

from pyNN import recording

from . import simulator


def record_state(recorder, variable, ids, sampling_interval):
    """Where the recording of a state variable (v, gsyn_exc, gsyn_inh, ...) joins dnnc's:
    called when it is asked for (ids: the cells, sampling_interval: ms) and when it is read
    (sampling_interval None: return PyNN's (signal array, times) for ids). dnnc records
    spikes only so far."""
    raise NotImplementedError("pyNN.dnnc: recording '%s' (dnnc records spikes only, for now)" % variable)


class Recorder(recording.Recorder):
    _simulator = simulator

    def __init__(self, population, file=None):
        recording.Recorder.__init__(self, population, file)
        self._cleared = (-1, 0)  # (segment, tick): spikes of that segment before that tick were cleared

    def _record(self, variable, new_ids, sampling_interval=None):
        if variable != "spikes":
            record_state(self, variable, new_ids, sampling_interval)
        elif new_ids:
            simulator.not_between_runs("record()")
            simulator.state.changed()

    def _spike_references(self):
        from .populations import references  # populations import this module
        return references(sorted(self.recorded["spikes"])) if self.recorded["spikes"] else []

    def _spikes(self, ids):
        """(neuron numbers, times in ms) of the spikes of `ids` since the last clear."""
        numbers, times, ticks = simulator.state.spikes()
        segment, tick = self._cleared
        since = tick if segment == simulator.state.segment_counter else 0
        keep = np.isin(numbers, np.asarray(list(ids), dtype=np.int64)) & (ticks >= since)
        return numbers[keep], times[keep]

    def _get_spiketimes(self, ids, clear=False):
        return self._spikes(ids)

    def _get_all_signals(self, variable, ids, clear=False):
        return record_state(self, variable, ids, None)

    def _local_count(self, variable, filter_ids=None):
        ids = sorted(self.filter_recorded(variable, filter_ids))
        numbers, _ = self._spikes(ids)
        counts = np.bincount(np.searchsorted(ids, numbers), minlength=len(ids)) if ids else []
        return {int(id): int(n) for id, n in zip(ids, counts)}

    def _clear_simulator(self):
        self._cleared = (simulator.state.segment_counter, simulator.state.tick)

    def _reset(self):
        simulator.state.changed()
