"""Population, PopulationView and Assembly: a dnnc population per PyNN Population, with
one value per parameter (dnnc's populations take no per-neuron parameters)."""

import numpy as np

from pyNN import common
from pyNN.parameters import ParameterSpace, simplify
from pyNN.random import RandomDistribution
from pyNN.standardmodels import StandardCellType

from . import simulator
from .recording import Recorder


def runs(cells):
    """The neurons of `cells` (a Population, PopulationView, Assembly or IDs) as runs of
    consecutive members of one population: (population, start, stop, position of the
    run's first neuron in `cells`)."""
    ids = np.asarray(getattr(cells, "all_cells", cells), dtype=np.int64)
    if ids.size == 0:
        return []
    owners = simulator.state.population_of(ids)
    breaks = np.flatnonzero((np.diff(ids) != 1) | (np.diff(owners) != 0)) + 1
    result = []
    for first, last in zip(np.r_[0, breaks], np.r_[breaks, ids.size]):
        population = simulator.state.populations[owners[first]]
        start = int(ids[first] - int(population.first_id))
        result.append((population, start, start + int(last - first), int(first)))
    return result


def reference(population, start, stop):
    """dnnc's reference to members start..stop-1 of a population."""
    if start == 0 and stop == population.size:
        return population.dnnc_id
    return "%s[%d:%d]" % (population.dnnc_id, start, stop)


def references(cells):
    return [reference(population, start, stop) for population, start, stop, _ in runs(cells)]


def positions(cells, numbers):
    """The position in `cells` of each neuron number in `numbers`."""
    ids = np.asarray(getattr(cells, "all_cells", cells), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids, numbers, sorter=order)]


def _uniform_value(name, values):
    """The one value of a parameter that dnnc gives a whole population."""
    values = np.asarray(values)
    if values.size and not np.all(values == values.flat[0]):
        raise NotImplementedError("pyNN.dnnc: per-neuron values of '%s' (a dnnc population takes one value per "
                                  "parameter)" % name)
    return float(values.flat[0])


def _initial_potential(value):
    """dnnc's initial-potential attributes for PyNN's initial value of v, and the seed of
    its draws (None: no draws)."""
    base = value.base_value
    if isinstance(base, RandomDistribution) and not value.operations:
        p = base.parameters
        seed = getattr(base.rng, "seed", None)
        if base.name == "uniform":
            return {"v_init": float(p["low"]), "v_init_max": float(p["high"])}, seed
        if base.name == "normal":
            return {"v_init": float(p["mu"]), "v_init_std": float(p["sigma"])}, seed
        raise NotImplementedError("pyNN.dnnc: initial v drawn from RandomDistribution('%s') (dnnc draws "
                                  "'uniform' and 'normal')" % base.name)
    return {"v_init": _uniform_value("initial v", value.evaluate(simplify=True))}, None


class Assembly(common.Assembly):
    _simulator = simulator


class PopulationView(common.PopulationView):
    _assembly_class = Assembly
    _simulator = simulator

    def _get_parameters(self, *names):
        return ParameterSpace({name: simplify(self.parent.parameter_values(name)[self.mask]) for name in names},
                              shape=(self.size,))

    def _set_parameters(self, parameter_space):
        parameter_space.evaluate(simplify=False)
        updated = {}
        for name, value in parameter_space.items():
            values = np.array(self.parent.parameter_values(name), copy=True)
            values[self.mask] = value
            updated[name] = values
        self.parent._set_values(updated)

    def _set_initial_value_array(self, variable, initial_values):
        if self.size != self.parent.size:
            raise NotImplementedError("pyNN.dnnc: initial values for part of a population (a dnnc population "
                                      "starts every member alike, or draws them all from one distribution)")
        self.parent._set_initial_value_array(variable, initial_values)

    def _get_view(self, selector, label=None):
        return PopulationView(self, selector, label)


class Population(common.Population):
    __doc__ = common.Population.__doc__
    _simulator = simulator
    _recorder_class = Recorder
    _assembly_class = Assembly

    def _create_cells(self):
        state = simulator.state
        state.recorders.discard(self.recorder)  # until the population exists (a refused one has no data)
        simulator.not_between_runs("creating a Population")
        if not isinstance(self.celltype, StandardCellType) or not hasattr(self.celltype, "population_element"):
            raise NotImplementedError("pyNN.dnnc: the cell type %s" % type(self.celltype).__name__)
        self.all_cells = np.array([simulator.ID(i) for i in range(state.id_counter, state.id_counter + self.size)],
                                  dtype=simulator.ID)
        self._mask_local = np.ones(self.size, dtype=bool)
        for id in self.all_cells:
            id.parent = self
        state.id_counter += self.size
        self.dnnc_id = "p%d" % len(state.populations)
        self.seed = len(state.populations) + 1
        self._initial = {}
        parameter_space = self.celltype.native_parameters
        parameter_space.shape = (self.size,)
        parameter_space.evaluate(simplify=False)
        self._parameters = {}
        self._set_values(parameter_space.as_dict())
        state.populations.append(self)
        state.recorders.add(self.recorder)

    @property
    def spike_at_tick_end(self):
        """A neuron's spike in tick t is at the tick's end, (t + 1)·dt, as in NEST; a spike
        source's at its own time, t·dt."""
        return 1 if self.celltype.injectable else 0

    def parameter_values(self, name):
        """A native parameter's values, one per member."""
        return self._parameters[name]

    def _set_values(self, values):
        """Sets native parameters ({name: array over the members}), each one value for all
        members unless the cell type takes it per neuron."""
        simulator.not_between_runs("set()")
        for name, value in values.items():
            self.celltype.check(name, value)
            if name not in self.celltype.per_neuron:
                _uniform_value(name, value)
        self._parameters.update(values)
        simulator.state.changed()

    def _get_parameters(self, *names):
        return ParameterSpace({name: simplify(self._parameters[name]) for name in names}, shape=(self.size,))

    def _set_parameters(self, parameter_space):
        parameter_space.evaluate(simplify=False)
        self._set_values(dict(parameter_space.items()))

    def _set_initial_value_array(self, variable, initial_values):
        simulator.not_between_runs("initialize()")
        if variable == "v":
            attributes, seed = _initial_potential(initial_values)
            if seed is not None:
                self.seed = int(seed) * 1000003 + len(simulator.state.populations) + 1
            self._initial = dict(attributes)
        elif variable in self.celltype.fixed_initial_values:
            fixed = self.celltype.fixed_initial_values[variable]
            if _uniform_value("initial " + variable, initial_values.evaluate(simplify=True)) != fixed:
                raise NotImplementedError("pyNN.dnnc: initial %s other than %g (%s starts from it)"
                                          % (variable, fixed, self.celltype.dnnc_model))
        else:
            raise NotImplementedError("pyNN.dnnc: initial values of %s for %s" % (variable, type(self.celltype).__name__))
        simulator.state.changed()

    def _get_view(self, selector, label=None):
        return PopulationView(self, selector, label)

    def _write(self, net):
        """Adds this population to dnnc.Network `net`."""
        parameters = {name: _uniform_value(name, values) for name, values in self._parameters.items()
                      if name not in self.celltype.per_neuron}
        tau_minus = {p.tau_minus() for p in simulator.state.projections
                     if p.tau_minus() is not None and self in p.target_populations()}
        if len(tau_minus) > 1:
            raise NotImplementedError("pyNN.dnnc: STDP projections into %s with different tau_minus %s (a neuron "
                                      "parameter in dnnc, as in NEST)" % (self.label, sorted(tau_minus)))
        if tau_minus:
            parameters["tau_minus"] = tau_minus.pop()
        self.celltype.population_element(net, self, parameters, self._initial)
