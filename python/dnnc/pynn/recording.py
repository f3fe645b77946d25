"""Recording: spikes and state variables through the document's <record> elements, read back
with dnnc.Simulation.spikes() and recorded()."""

import numpy as np

from pyNN import recording

from . import simulator
from .selection import references


class Recorder(recording.Recorder):
    _simulator = simulator

    def __init__(self, population, file=None):
        recording.Recorder.__init__(self, population, file)
        self._cleared = (-1, 0)  # (segment, tick): data of that segment before that tick were cleared

    def _record(self, variable, new_ids, sampling_interval=None):
        if variable != "spikes" and variable not in self.population.celltype.state_variables:
            raise NotImplementedError("pyNN.dnnc: recording '%s' of %s" % (variable, type(self.population.celltype).__name__))
        if new_ids or sampling_interval is not None:
            simulator.not_between_runs("record()")
            simulator.state.changed()
        if sampling_interval is not None:
            self.sampling_interval = sampling_interval

    def _spike_references(self):
        return references(sorted(self.recorded["spikes"])) if self.recorded["spikes"] else []

    def _state_records(self):
        """[(references, NEST's variable names, interval in ms)]: one <record> for the cells
        that sample the same variables (dnnc samples a neuron by one record only)."""
        translations = self.population.celltype.state_variables
        variables_of = {}
        for variable, ids in self.recorded.items():
            if variable != "spikes":
                for id in ids:
                    variables_of.setdefault(int(id), []).append(variable)
        cells_of = {}
        for id, variables in sorted(variables_of.items()):
            cells_of.setdefault(tuple(sorted(variables)), []).append(id)
        return [(references(ids), [translations[v][0] for v in variables], self.sampling_interval)
                for variables, ids in cells_of.items()]

    def _since(self):
        """The first tick whose data get_data() returns: 0, or that of the last clear."""
        segment, tick = self._cleared
        return tick if segment == simulator.state.segment_counter else 0

    def _spikes(self, ids):
        """(neuron numbers, times in ms) of the spikes of `ids` since the last clear."""
        numbers, times, ticks = simulator.state.spikes()
        keep = np.isin(numbers, np.asarray(list(ids), dtype=np.int64)) & (ticks >= self._since())
        return numbers[keep], times[keep]

    def _get_spiketimes(self, ids, clear=False):
        return self._spikes(ids)

    def _get_all_signals(self, variable, ids, clear=False):
        """PyNN's (signal array, times): the samples of `variable` of `ids` (columns), one row
        per sample from the last clear (t = 0: the initial state) to now, in PyNN's unit."""
        name, scale = self.population.celltype.state_variables[variable]
        numbers, ticks, values = simulator.state.samples(name)
        every = max(1, int(round(self.sampling_interval / simulator.state.dt)))
        rows = np.arange(self._since(), simulator.state.tick + 1)
        rows = rows[rows % every == 0]
        signals = np.full((rows.size, len(ids)), np.nan)
        columns = np.asarray(list(ids), dtype=np.int64)
        order = np.argsort(columns)
        at = np.searchsorted(columns, numbers, sorter=order)
        mine = (at < columns.size) & (columns[order[np.minimum(at, columns.size - 1)]] == numbers) & np.isin(ticks, rows)
        signals[np.searchsorted(rows, ticks[mine]), order[at[mine]]] = values[mine] * scale
        return signals, None

    def _local_count(self, variable, filter_ids=None):
        ids = sorted(self.filter_recorded(variable, filter_ids))
        numbers, _ = self._spikes(ids)
        counts = np.bincount(np.searchsorted(ids, numbers), minlength=len(ids)) if ids else []
        return {int(id): int(n) for id, n in zip(ids, counts)}

    def _clear_simulator(self):
        self._cleared = (simulator.state.segment_counter, simulator.state.tick)

    def _reset(self):
        simulator.state.changed()
