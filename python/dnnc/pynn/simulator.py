"""The state of a pyNN.dnnc simulation: the network built so far, and the dnnc cluster
that runs it from the first run() on (docs/pynn.md).

PyNN's IDs are the dnnc neuron numbers: populations are written into the document in the
order they were created and dnnc numbers a network's members group by group in document
order, so the member i of the population whose first ID is f is neuron f + i.
"""

import numpy as np

import dnnc
from pyNN import common

name = "dnnc"


class ID(int, common.IDMixin):

    def __init__(self, n):
        int.__init__(n)
        common.IDMixin.__init__(self)


def update_between_runs(what, change, undo):
    """Makes `change` (a function) to the network's parameters: before the first run it
    rewrites the document; between runs the frozen cluster takes the new parameters
    (dnnc.Simulation.update), and a change it cannot take (more than parameters, a delay
    beyond the history its nodes keep) is undone (`undo`) and raises NotImplementedError;
    one the cluster refuses now (new delays while spikes sent with the last ones are on
    their way) is undone and raises the cluster's error."""
    change()
    state.changed()
    if state.simulation is None:
        return
    try:
        state.simulation.update(state.network())
    except dnnc.Error as e:
        undo()
        state.changed()
        if not isinstance(e, dnnc.DocumentError):
            raise
        raise NotImplementedError("pyNN.dnnc: %s after the first run() is more than the running cluster can take (%s); "
                                  "call reset() first" % (what, e)) from None


def not_between_runs(what):
    """Raises NotImplementedError when the network is already on its cluster: it is
    built once, at the first run, and not changed while it runs."""
    if state.simulation is not None:
        raise NotImplementedError("pyNN.dnnc: %s after the first run() (the network on the cluster is not changed "
                                  "while it runs; call reset() first)" % what)


class State(common.control.BaseState):

    def __init__(self):
        common.control.BaseState.__init__(self)
        self.mpi_rank = 0
        self.num_processes = 1
        self.dt = 0.1
        self.min_delay = "auto"
        self.max_delay = 6553.5
        self.cluster = {"nodes": 4}
        self.weight_precision = "single"
        self.simulation = None
        self._read = None
        self.clear()

    @property
    def min_delay(self):
        """setup()'s min_delay; for 'auto', one tick until the first run, then the shortest
        delay of the network's projections."""
        if self._min_delay != "auto":
            return self._min_delay
        shortest = [p.shortest_delay() for p in self.projections] if self.simulation is not None else []
        return min([d for d in shortest if d is not None], default=self.dt)

    @min_delay.setter
    def min_delay(self, value):
        self._min_delay = value

    # --- the network ---------------------------------------------------------------------
    def clear(self):
        self.close()
        self.populations = []
        self.projections = []
        self.current_sources = []
        self.recorders = set()
        self.id_counter = 0
        self.segment_counter = -1
        self.write_on_end = []
        self._network = None
        self.reset()

    def changed(self):
        """Forgets the document built so far: something in the network changed."""
        self._network = None

    def network(self):
        """The dnnc.Network of everything created so far, written in one pass (cached)."""
        if self._network is None:
            net = dnnc.Network("pyNN", dt=self.dt)
            for population in self.populations:
                population._write(net)
            for projection in self.projections:
                projection._write(net)
            for source in self.current_sources:
                source._write(net)
            recorded = [ref for population in self.populations for ref in population.recorder._spike_references()]
            if recorded:
                net.record(recorded)
            for population in self.populations:
                for references, variables, interval in population.recorder._state_records():
                    net.record(references, variables=variables, interval_ms=interval)
            if self.weight_precision != "single":
                net.run_settings(weight_precision=self.weight_precision)
            self._network = net
        return self._network

    def population_of(self, ids):
        """The population of each neuron number in `ids` (an array), as indices into
        self.populations."""
        firsts = np.array([int(p.first_id) for p in self.populations])
        return np.searchsorted(firsts, ids, side="right") - 1

    # --- the clock -------------------------------------------------------------------------
    @property
    def tick(self):
        return int(round(self.t / self.dt))

    def run(self, simtime):
        self.run_until(self.t + simtime)

    def run_until(self, tstop):
        if self.simulation is None:
            self._read = None
            self.simulation = dnnc.Simulation(self.network(), spikes=False, outputs=False, **self.cluster)
        ticks = int(round(tstop / self.dt)) - self.simulation.tick
        if ticks > 0:
            self.simulation.run(ticks)
        self.t = self.simulation.tick * self.dt
        self.running = True

    def _results(self):
        """The spikes and samples recorded since t = 0 (Simulation.spikes() and recorded()),
        read once per tick reached; kept by end()."""
        if self.simulation is not None and (self._read is None or self._read[0] != self.simulation.tick):
            self._read = (self.simulation.tick, self.simulation.spikes(), self.simulation.recorded())
        return self._read

    def _numbers(self, population, index):
        """PyNN's IDs of dnnc's (population, index) pairs (arrays), and each one's population."""
        numbers = np.zeros(len(index), dtype=np.int64)
        owners = np.zeros(len(index), dtype=np.int64)
        for k, p in enumerate(self.populations):
            for group in p.groups():
                mine = population == group.dnnc_id
                numbers[mine] = index[mine] + group.first_number
                owners[mine] = k
        return numbers, owners

    def spikes(self):
        """The spikes recorded since t = 0: neuron numbers, times in ms and ticks (arrays)."""
        if self._results() is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
        t_ms, population, index = self._results()[1]
        ticks = np.rint(np.asarray(t_ms) / self.dt).astype(np.int64)
        numbers, owners = self._numbers(population, index)
        ends = np.array([p.spike_at_tick_end for p in self.populations], dtype=np.int64)[owners]
        return numbers, (ticks + ends) * self.dt, ticks

    def samples(self, variable):
        """The samples of NEST's `variable` since t = 0: neuron numbers, the sample's tick m
        (the state at m·dt) and the values in NEST's unit (arrays)."""
        if self._results() is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        r = self._results()[2]
        mine = r["variable"] == variable
        numbers, _ = self._numbers(r["population"][mine], r["index"][mine])
        return numbers, np.rint(r["t_ms"][mine] / self.dt).astype(np.int64), r["value"][mine].astype(float)

    def end(self):
        """Stops the cluster, keeping what it recorded (PyNN reads it after end())."""
        self._results()
        self.close(keep_results=True)

    def close(self, keep_results=False):
        if self.simulation is not None:
            self.simulation.close()
            self.simulation = None
        if not keep_results:
            self._read = None

    def reset(self):
        """Back to t = 0: the next run submits the network anew."""
        self.close()
        self.running = False
        self.t = 0
        self.t_start = 0
        self.segment_counter += 1


state = State()
