"""Population, PopulationView and Assembly. A Population is one dnnc population, or
several when its members' parameters differ (dnnc's populations take one value per
parameter): each run of members with equal parameters is a group, written as a dnnc
population of its own, in order, so that dnnc's neuron numbers stay PyNN's IDs. Initial
potentials given per member are no parameter: dnnc lists them per member (v-init)."""

import logging

import numpy as np

import dnnc
from pyNN import common, errors
from pyNN.parameters import ParameterSpace, simplify
from pyNN.random import RandomDistribution
from pyNN.standardmodels import StandardCellType

from . import simulator
from .recording import Recorder

logger = logging.getLogger("PyNN")


class Group:
    """Members first..first+size-1 of a population, with equal parameters: one dnnc
    population."""

    def __init__(self, population, k, first, size, single):
        self.population, self.first, self.size = population, first, size
        self.dnnc_id = population.dnnc_id if single else "%s_%d" % (population.dnnc_id, k)
        self.seed = population.seed if single else (population.seed * 65537 + k) % 2**63
        self.first_number = int(population.first_id) + first

    def parameter_values(self, name):
        return self.population.parameter_values(name)[self.first:self.first + self.size]


def _uniform_value(name, values):
    """The one value of a variable that dnnc starts every neuron from."""
    values = np.asarray(values)
    if values.size and not np.all(values == values.flat[0]):
        raise NotImplementedError("pyNN.dnnc: per-neuron values of '%s'" % name)
    return float(values.flat[0])


def _initial_potential(value, size):
    """dnnc's initial-potential attributes for PyNN's initial value of v (for a uniform or
    normal distribution, which dnnc draws), or the value of each member (drawn here from any
    other distribution, as PyNN draws it); and the seed of dnnc's draws (None: none)."""
    base = value.base_value
    if isinstance(base, RandomDistribution) and not value.operations:
        p = base.parameters
        seed = getattr(base.rng, "seed", None)
        if base.name == "uniform":
            return {"v_init": float(p["low"]), "v_init_max": float(p["high"])}, seed
        if base.name == "normal":
            return {"v_init": float(p["mu"]), "v_init_std": float(p["sigma"])}, seed
    value.shape = (size,)
    return np.asarray(value.evaluate(simplify=False), dtype=float), None


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
        self.first_id = self.all_cells[0]  # as PyNN sets it after this; the groups number from it
        self._mask_local = np.ones(self.size, dtype=bool)
        for id in self.all_cells:
            id.parent = self
        state.id_counter += self.size
        self.dnnc_id = "p%d" % len(state.populations)
        self.seed = len(state.populations) + 1
        self._initial = {}  # dnnc's initial-state attributes: a drawn v, izhikevich's u_init
        self._initial_v = None  # or the initial v of each member
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
        """Sets native parameters ({name: array over the members}), on the cluster too
        between runs; values dnnc refuses raise InvalidParameterValueError and change
        nothing."""
        for name, value in values.items():
            self.celltype.check(name, value)
        before = dict(self._parameters)

        def change():
            self._parameters.update(values)
            try:
                self._check_parameters()
            except errors.InvalidParameterValueError:
                self._parameters = before
                raise

        simulator.update_between_runs("set()", change, lambda: setattr(self, "_parameters", before))

    def _check_parameters(self):
        """PyNN's InvalidParameterValueError, with dnnc's message, for parameter values dnnc's
        checks refuse (its groups written alone into a network and checked)."""
        net = dnnc.Network("parameters", dt=simulator.state.dt)
        for group in self.groups():
            parameters = {name: float(values[group.first]) for name, values in self._columns().items()}
            self.celltype.population_element(net, group, dict(parameters, **self._initial_of(group)))
        try:
            net.validate()
        except dnnc.DocumentError as e:
            raise errors.InvalidParameterValueError("%s (%s): %s" % (self.label, type(self.celltype).__name__,
                                                                     str(e).split(": ", 1)[-1])) from None

    def _columns(self):
        """{name: values over the members} that a dnnc population takes one of."""
        columns = {name: np.asarray(values) for name, values in self._parameters.items()
                   if name not in self.celltype.per_neuron}
        return columns

    def _initial_of(self, group):
        """dnnc's initial-state attributes of a group: the population's rules, or its members'
        own initial potentials (one v_init per member, dnnc's v-init list)."""
        if self._initial_v is None:
            return self._initial
        values = self._initial_v[group.first:group.first + group.size]
        return dict(self._initial, v_init=float(values[0]) if np.all(values == values[0]) else values.tolist())

    def groups(self):
        """The runs of members whose parameters are equal, as Groups, in order."""
        changes = np.zeros(max(self.size - 1, 0), dtype=bool)
        for values in self._columns().values():
            changes |= values[1:] != values[:-1]
        starts = np.r_[0, np.flatnonzero(changes) + 1]
        stops = np.r_[starts[1:], self.size]
        return [Group(self, k, int(a), int(b - a), len(starts) == 1) for k, (a, b) in enumerate(zip(starts, stops))]

    def _get_parameters(self, *names):
        return ParameterSpace({name: simplify(self._parameters[name]) for name in names}, shape=(self.size,))

    def _set_parameters(self, parameter_space):
        parameter_space.evaluate(simplify=False)
        self._set_values(dict(parameter_space.items()))

    def _set_initial_value_array(self, variable, initial_values):
        simulator.not_between_runs("initialize()")
        if variable == "v":
            initial, seed = _initial_potential(initial_values, self.size)
            if seed is not None:
                self.seed = int(seed) * 1000003 + len(simulator.state.populations) + 1
            kept = {k: v for k, v in self._initial.items() if not k.startswith("v_init")}
            self._initial, self._initial_v = ({**kept, **initial}, None) if isinstance(initial, dict) else (kept, initial)
        elif variable == "u" and self.celltype.dnnc_model == "izhikevich":
            self._initial["u_init"] = _uniform_value("initial u", initial_values.evaluate(simplify=True))
        elif variable in self.celltype.ignored_initial_values:
            logger.warning("pyNN.dnnc: %s takes no initial %s; the value is ignored", self.celltype.dnnc_model, variable)
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
        """Adds this population's groups to dnnc.Network `net`."""
        tau_minus = {p.tau_minus() for p in simulator.state.projections
                     if p.tau_minus() is not None and self in p.target_populations()}
        if len(tau_minus) > 1:
            raise NotImplementedError("pyNN.dnnc: STDP projections into %s with different tau_minus %s (a neuron "
                                      "parameter in dnnc, as in NEST)" % (self.label, sorted(tau_minus)))
        tau_minus = tau_minus.pop() if tau_minus else None
        for group in self.groups():
            parameters = {name: float(values[group.first]) for name, values in self._columns().items()}
            parameters.update(tau_minus=tau_minus, **self._initial_of(group))
            self.celltype.population_element(net, group, parameters)
