"""Projection: a connector dnnc draws natively becomes <projection> rules (nothing drawn or
stored here); the others are drawn by PyNN (a FromListConnector read as it is) and become
list projections, their connections in binary files beside the document."""

import math

import numpy as np

from pyNN import common, connectors, errors
from pyNN.parameters import LazyArray
from pyNN.random import RandomDistribution
from pyNN.space import Space
from pyNN.standardmodels import check_weights

from . import simulator
from .selection import positions, reference, runs
from .standardmodels import STDPMechanism, StaticSynapse, homogeneous

# Connectors dnnc draws itself, by their projection kind.
_NATIVE = {
    connectors.AllToAllConnector: "all",
    connectors.OneToOneConnector: "one-to-one",
    connectors.FixedProbabilityConnector: "random",
    connectors.FixedNumberPreConnector: "fixed-indegree",
    connectors.FixedNumberPostConnector: "fixed-outdegree",
    connectors.FixedTotalNumberConnector: "fixed-total-number",
}
# Connectors whose connections PyNN draws (explicit synapses).
_EXPANDED = (connectors.FromListConnector, connectors.ArrayConnector, connectors.DistanceDependentProbabilityConnector)


def distribution(rd, scale, what):
    """dnnc's <weight>/<delay> distribution for RandomDistribution `rd`, its values scaled
    by `scale` (a weight's unit and sign, or 1)."""
    p = rd.parameters

    def bounds(low, high):
        low, high = sorted((low * scale, high * scale))
        return {key: value for key, value in (("min", low), ("max", high)) if math.isfinite(value)}

    if rd.name == "normal":
        return {"distribution": "normal", "mean": p["mu"] * scale, "std": p["sigma"] * abs(scale)}
    if rd.name == "normal_clipped":
        return {"distribution": "normal", "mean": p["mu"] * scale, "std": p["sigma"] * abs(scale),
                **bounds(p["low"], p["high"])}
    if rd.name == "uniform":
        return {"distribution": "uniform", **bounds(p["low"], p["high"])}
    if rd.name == "lognormal" and scale > 0:
        return {"distribution": "lognormal", "mu": p["mu"] + math.log(scale), "sigma": p["sigma"]}
    raise NotImplementedError("pyNN.dnnc: %s drawn from RandomDistribution('%s')%s (dnnc draws 'normal', "
                              "'normal_clipped', 'uniform' and 'lognormal')"
                              % (what, rd.name, " into a negative weight" if rd.name == "lognormal" else ""))


def _native_value(value):
    """The value of a weight or delay as dnnc can take it for a whole rule: a number or a
    RandomDistribution; None when it is given per connection (arrays, functions)."""
    if value.operations:
        return None
    base = value.base_value
    if isinstance(base, RandomDistribution):
        return base
    if isinstance(base, (int, float, np.integer, np.floating)):
        return float(base)
    return None


def _rule(connector):
    """(kind, attributes) of the dnnc projection rule that draws `connector`'s connections."""
    kind = _NATIVE[type(connector)]
    autapses = getattr(connector, "allow_self_connections", True)
    if not isinstance(autapses, (bool, np.bool_)):
        raise NotImplementedError("pyNN.dnnc: allow_self_connections=%r" % (autapses,))
    attributes = {"autapses": bool(autapses)}
    if kind == "random":
        attributes["p"] = float(connector.p_connect)
    elif kind != "all" and kind != "one-to-one":
        if not isinstance(connector.n, (int, np.integer)):
            raise NotImplementedError("pyNN.dnnc: %s with n drawn from a distribution" % type(connector).__name__)
        attributes[{"fixed-indegree": "indegree", "fixed-outdegree": "outdegree", "fixed-total-number": "n"}[kind]] = \
            int(connector.n)
        attributes["multapses"] = bool(connector.with_replacement)
    return kind, attributes


def _pieces(kind, pre, post):
    """The (source run, target run) pairs a rule over `pre` -> `post` is written as: each
    run (population, start, stop, position) is contiguous in one population. None when the
    rule cannot be split over the runs it spans (dnnc draws it over one group)."""
    sources, targets = runs(pre), runs(post)
    if kind == "one-to-one":
        if pre.size != post.size:
            raise errors.InvalidDimensionsError("OneToOneConnector: the pre- and postsynaptic sizes differ (%d, %d)"
                                                % (pre.size, post.size))
        cuts = sorted({r[3] for r in sources} | {r[3] for r in targets} | {pre.size})
        return [(_slice(sources, a, b), _slice(targets, a, b)) for a, b in zip(cuts[:-1], cuts[1:])]
    whole_sources = kind in ("fixed-indegree", "fixed-total-number")
    whole_targets = kind in ("fixed-outdegree", "fixed-total-number")
    if (whole_sources and len(sources) > 1) or (whole_targets and len(targets) > 1):
        return None
    return [(s, t) for s in sources for t in targets]


def _slice(run_list, a, b):
    """Positions a..b-1 of a collection, inside one of its runs."""
    for population, start, stop, first in run_list:
        if first <= a < first + stop - start:
            return population, start + a - first, start + b - first, a


def _by_target(targets):
    """Positions of `targets` (whole numbers in 0 .. 2^32 - 1) sorted by target, each target's
    in the list's order: NumPy's stable sort on 16-bit keys is a radix sort, so this is two
    linear passes at most (a third of the time of an argsort of int32 keys at 10^7)."""
    order = np.argsort((targets & 0xFFFF).astype(np.uint16), kind="stable")
    if targets.size and targets.max() > 0xFFFF:
        order = order[np.argsort((targets[order] >> 16).astype(np.uint16), kind="stable")]
    return order


class Projection(common.Projection):
    __doc__ = common.Projection.__doc__
    _simulator = simulator

    _static_synapse_class = StaticSynapse

    def __init__(self, presynaptic_population, postsynaptic_population, connector, synapse_type=None, source=None,
                 receptor_type=None, space=Space(), label=None):
        common.Projection.__init__(self, presynaptic_population, postsynaptic_population, connector, synapse_type,
                                   source, receptor_type, space, label)
        simulator.not_between_runs("creating a Projection")
        if not hasattr(self.synapse_type, "dnnc_model"):
            raise NotImplementedError("pyNN.dnnc: the synapse type %s" % type(self.synapse_type).__name__)
        self._native = dict(self.synapse_type.native_parameters.items())  # this projection's own values
        self._built = {}  # the synapse models' parameters as the cluster was built with them
        # A synapse model's parameters given per connection (U as a function of distance, ...):
        # the connections are explicit, these values a column each beside them.
        self._varying = {name: [] for name, value in self._native.items()
                         if name not in ("weight", "delay") and not value.is_homogeneous}
        if not self._varying:
            self.synapse_type.dnnc_parameters(1.0, self._native)  # refuses what dnnc's synapse model cannot take, now
        state = simulator.state
        self.dnnc_id = "c%d" % len(state.projections)
        rng = getattr(connector, "rng", None)
        self._seed = (int(getattr(rng, "seed", None) or 0) * 1000003 + len(state.projections) + 1) % 2**63
        self._values = {name: self._native[name] for name in ("weight", "delay")}
        delay = _native_value(self._values["delay"])
        if isinstance(delay, float) and not (delay >= state.dt / 2 and delay <= 65535 * state.dt):
            # PyNN's message (standardmodels.check_delays): dnnc rounds a delay to whole ticks, 1..65,535.
            raise errors.ConnectionError("Delay (%s) is out of range [%s, %s]" % (delay, state.dt, 65535 * state.dt))
        self._rule = None
        self._explicit = []  # (pre positions, post positions, weights, delays) chunks
        self._listed = None  # a rule made explicit: its pieces and their connection counts
        if type(connector) in _NATIVE and all(_native_value(v) is not None for v in self._values.values()) and not self._varying:
            self._rule = _rule(connector)
            if not isinstance(_native_value(self._values["weight"]), RandomDistribution):
                check_weights(_native_value(self._values["weight"]), self)  # PyNN's check, as its connectors make it
        elif type(connector) is connectors.FromListConnector and not self._varying and self._read_list(connector):
            pass
        elif type(connector) in _NATIVE or isinstance(connector, _EXPANDED):
            connector.connect(self)
        else:
            raise NotImplementedError("pyNN.dnnc: the connector %s" % type(connector).__name__)
        self._split()
        state.projections.append(self)
        state.changed()

    # --- connections drawn by PyNN ---------------------------------------------------------
    def _read_list(self, connector):
        """Takes a FromListConnector's connections as FromListConnector.connect() would give
        them, without its loop over the targets, sorted by target, each target's in the
        list's order (connect() orders them by NumPy's unstable default sort); False (nothing
        taken) when a weight or delay is neither a column of the list nor one number."""
        names = connector.column_names
        known = self.synapse_type.get_parameter_names()
        for name in names:
            if name not in known:
                raise ValueError("%s is not a valid parameter for %s" % (name, self.synapse_type.__class__.__name__))
        defaults = {name: _native_value(self._values[name]) for name in ("weight", "delay") if name not in names}
        if not set(names) <= {"weight", "delay"} or any(not isinstance(v, float) for v in defaults.values()):
            return False
        rows = np.asarray(connector.conn_list, dtype=float)
        if rows.size == 0:
            return True
        if np.any(rows[:, 0] >= self.pre.size):
            raise errors.ConnectionError("source index out of range")
        targets = rows[:, 1].astype(np.int64)
        kept = (targets >= 0) & (targets < self.post.size)  # FromListConnector skips the others
        if not kept.all():
            rows, targets = rows[kept], targets[kept]
        order = _by_target(targets)
        rows, targets = np.take(rows, order, axis=0), targets[order]  # np.take: rows[order], 4x as fast
        n = len(rows)
        column = {name: rows[:, k] for k, name in enumerate(names, 2)}
        self._explicit = [(rows[:, 0].astype(np.int64), targets,
                           *(column[name] if name in column else np.full(n, defaults[name]) for name in ("weight", "delay")))]
        return True

    def _convergent_connect(self, presynaptic_indices, postsynaptic_index, **connection_parameters):
        n = len(presynaptic_indices)
        column = {name: np.array(np.broadcast_to(np.asarray(connection_parameters[name], dtype=float), (n,)))
                  for name in ("weight", "delay", *self._varying)}
        self._explicit.append((np.asarray(presynaptic_indices, dtype=np.int64), np.full(n, postsynaptic_index),
                               column["weight"], column["delay"]))
        for name, chunks in self._varying.items():
            chunks.append(column[name])

    def _varying_columns(self):
        """{name: value per explicit connection} of the synapse model's parameters given per
        connection, in the order of _explicit_columns()."""
        for name, chunks in self._varying.items():
            if len(chunks) > 1:
                chunks[:] = [np.concatenate(chunks)]
        return {name: chunks[0] if chunks else np.zeros(0) for name, chunks in self._varying.items()}

    def _explicit_columns(self):
        """(pre positions, post positions, weights, delays) of the explicit connections."""
        if not self._explicit:
            return tuple(np.zeros(0, dtype=t) for t in (np.int64, np.int64, float, float))
        if len(self._explicit) > 1:
            self._explicit = [tuple(np.concatenate(column) for column in zip(*self._explicit))]
        return self._explicit[0]

    # --- the document --------------------------------------------------------------------
    def target_populations(self):
        return {group.population for group, _, _, _ in runs(self.post)}

    def tau_minus(self):
        """STDP's time constant of the target's trace (a neuron parameter in dnnc, as in
        NEST); None for the other synapse types."""
        if not isinstance(self.synapse_type, STDPMechanism):
            return None
        return homogeneous(self._native, ("tau_minus",))["tau_minus"]

    def _scale(self, population):
        """A weight into `population`, in its dnnc unit, per PyNN unit: NEST's models take
        inhibitory conductances as negative weights."""
        celltype = population.celltype
        sign = -1.0 if self.receptor_type == "inhibitory" and celltype.conductance_based else 1.0
        return sign * celltype.weight_scale

    def _synapse_model(self, net, scale, models, values=()):
        """The id of the <synapse-model> this projection's synapses into a target of weight
        scale `scale` name (None: static), with `values` ((name, value) pairs) for its
        parameters given per connection, added to `net` once ({key: id} in `models`)."""
        model = self.synapse_type.dnnc_model
        if model == "static_synapse":
            return None
        key = (scale, tuple(values))
        if key not in models:
            models[key] = "%s_m%d" % (self.dnnc_id, len(models))
            native = dict(self._native, **{name: LazyArray(value, shape=(1,)) for name, value in values})
            parameters = self.synapse_type.dnnc_parameters(scale, native)
            # The synapses' initial state stays as the running cluster was built with it
            # (tsodyks2_synapse's u starts at U: a U set between runs leaves it).
            if simulator.state.simulation is None:
                self._built[key] = parameters
            else:
                built = self._built.get(key, parameters)  # a new key: the cluster refuses a model it lacks
                parameters.update({name: built[name] for name in self.synapse_type.dnnc_initial_state})
            net.synapse_model(models[key], model, **parameters)
        return models[key]

    def _split(self):
        """The rule as pieces over the groups that pre and post span now (their members'
        parameters may have split a population since); None when the connections are
        explicit: when dnnc cannot draw the rule over those groups, PyNN's connector draws
        them now, once."""
        if self._rule is None:
            return None
        pieces = _pieces(self._rule[0], self.pre, self.post)
        if pieces is None:
            self._rule = None
            self._connector.connect(self)
        return pieces

    def _write(self, net):
        pieces = self._split()
        if pieces is None:
            if self._listed is not None and not self._varying:
                self._write_pieces(net)
            else:
                write_synapses(net, self)
            return
        kind, attributes = self._rule
        models = {}
        for k, (source, target) in enumerate(pieces):
            scale = self._scale(target[0].population)
            weight, delay = (_native_value(self._values[name]) for name in ("weight", "delay"))
            values = {
                "weight": distribution(weight, scale, "weights") if isinstance(weight, RandomDistribution)
                else weight * scale,
                ("delay" if isinstance(delay, RandomDistribution) else "delay_ms"):
                    distribution(delay, 1.0, "delays") if isinstance(delay, RandomDistribution) else delay,
            }
            net.connect(reference(*source[:3]), reference(*target[:3]), kind=kind, id="%s_%d" % (self.dnnc_id, k),
                        seed=(self._seed * 65537 + k) % 2**63, synapse_model=self._synapse_model(net, scale, models),
                        **attributes, **values)

    # --- connections as PyNN reads them -------------------------------------------------------
    def _columns(self):
        """(pre positions, post positions, weights, delays in ms) of every connection."""
        pieces = self._split()
        if pieces is None:
            return self._explicit_columns()
        net = simulator.state.network()
        columns = []
        for k, (source, target) in enumerate(pieces):
            numbers_from, numbers_to, weights, delays = net.connections("%s_%d" % (self.dnnc_id, k))
            if self.synapse_type.dnnc_model != "static_synapse" and simulator.state.simulation is not None:
                weights = self._weights_now("%s_%d" % (self.dnnc_id, k), source[0], numbers_from)
            columns.append((positions(self.pre, numbers_from), positions(self.post, numbers_to),
                            weights.astype(float) / self._scale(target[0].population), delays * simulator.state.dt))
        return tuple(np.concatenate(column) for column in zip(*columns))

    @staticmethod
    def _weights_now(piece, source_group, numbers_from):
        """The weights of a plastic piece on the cluster now, in the order of
        Network.connections(): dnnc reports them node by node, each target's synapses in
        canonical order, so a stable sort by target restores the document's order."""
        source, target, weights = simulator.state.simulation.weights(piece)
        order = np.argsort(target, kind="stable")
        if not np.array_equal(source[order] + source_group.first_number, numbers_from):
            raise RuntimeError("pyNN.dnnc: the weights of %s do not match its synapses" % piece)
        return weights[order]

    def shortest_delay(self):
        """The shortest delay in ms (None: no connection); a drawn delay counts as one tick,
        the least dnnc gives it."""
        if self._rule is None:
            delays = self._explicit_columns()[3]
            return float(delays.min()) if len(delays) else None
        delay = _native_value(self._values["delay"])
        return simulator.state.dt if isinstance(delay, RandomDistribution) else delay

    @property
    def connections(self):
        """The connections, as PyNN's Connection objects."""
        pre, post, _, _ = self._columns()
        return [Connection(self, k, i, j) for k, (i, j) in enumerate(zip(pre.tolist(), post.tolist()))]

    def _set_connection(self, k, name, value):
        """Sets the weight or delay of connection k (the connections become explicit);
        between runs, on the running cluster (a weight, or a static synapse's delay)."""
        before = self._saved()

        def change():
            self._expand()
            self._explicit = [tuple(np.array(column) for column in self._explicit_columns())]  # not the saved arrays
            self._explicit[0][2 if name == "weight" else 3][k] = value

        simulator.update_between_runs("setting a connection's %s" % name, change, lambda: self._restore(before))

    def __len__(self):
        pieces = self._split()
        if pieces is None:
            return len(self._explicit_columns()[0])
        net = simulator.state.network()
        return sum(net.connection_count("%s_%d" % (self.dnnc_id, k)) for k in range(len(pieces)))

    def _attribute_columns(self, names):
        pre, post, weight, delay = self._columns()
        known = {"presynaptic_index": pre, "postsynaptic_index": post, "weight": weight, "delay": delay}
        columns = []
        for name in names:
            if name in known:
                columns.append(known[name])
            elif name in self._varying:
                columns.append(self._varying_columns()[name])
            else:
                columns.append(np.full(len(pre), homogeneous(self._native, (name,))[name]))
        return columns

    def _get_attributes_as_list(self, names):
        return list(zip(*(column.tolist() for column in self._attribute_columns(names))))

    def _get_attributes_as_arrays(self, names, multiple_synapses='sum'):
        pre, post, *columns = self._attribute_columns(["presynaptic_index", "postsynaptic_index", *names])
        arrays = []
        for values in columns:
            array = np.full((self.pre.size, self.post.size), np.nan)
            if multiple_synapses == "sum":
                array[pre, post] = 0.0
                np.add.at(array, (pre, post), values)
            elif multiple_synapses in ("min", "max"):
                getattr(np, "f" + multiple_synapses).at(array, (pre, post), values)
            elif multiple_synapses == "first":
                array[pre[::-1], post[::-1]] = values[::-1]
            else:
                array[pre, post] = values
            arrays.append(array)
        return arrays

    def _saved(self):
        """What set() may change, to undo it (_restore)."""
        return (dict(self._values), dict(self._native), {name: list(chunks) for name, chunks in self._varying.items()},
                self._rule, list(self._explicit), self._listed)

    def _restore(self, saved):
        values, native, varying, self._rule, self._explicit, self._listed = saved
        self._values, self._native, self._varying = dict(values), dict(native), varying

    def _set_attributes(self, parameter_space):
        """Sets weights, delays or synapse parameters; between runs, on the running cluster,
        where weights and static synapses' delays may change (docs/pynn.md)."""
        before = self._saved()
        simulator.update_between_runs("Projection.set()", lambda: self._assign(parameter_space), lambda: self._restore(before))

    def _assign(self, parameter_space):
        for name, value in parameter_space.items():
            if name not in self._values and value.is_homogeneous and name not in self._varying:
                self._native[name] = value
                self.synapse_type.dnnc_parameters(1.0, self._native)  # a synapse model's parameter for the projection
                continue
            if name not in self._values:  # per connection: a column beside the explicit connections
                self._expand()
                value.shape = (self.pre.size, self.post.size)
                pre, post, _, _ = self._explicit_columns()
                self._varying[name] = [np.asarray(value.evaluate(simplify=False), dtype=float)[pre, post]]
                continue
            if self._rule is not None and _native_value(value) is not None:
                self._values[name] = value
                continue
            self._expand()
            value.shape = (self.pre.size, self.post.size)
            pre, post, weight, delay = self._explicit_columns()
            new = value.evaluate(simplify=False)[pre, post]
            self._explicit = [(pre, post, new, delay) if name == "weight" else (pre, post, weight, new)]

    def _expand(self):
        """Makes the connections dnnc draws explicit (for values given per connection),
        remembering the rule's pieces and how many connections each drew (_write_pieces)."""
        pieces = self._split()
        if pieces is not None:
            net = simulator.state.network()
            counts = [net.connection_count("%s_%d" % (self.dnnc_id, k)) for k in range(len(pieces))]
            self._explicit = [self._columns()]
            self._rule = None
            self._listed = (pieces, counts)

    def _write_pieces(self, net):
        """The connections of a rule made explicit, as one list per piece of the rule, with
        the piece's references and id: the same connection elements in the same order, which
        a running cluster takes as the rule's synapses with new values (dnnc update)."""
        pieces, counts = self._listed
        pre, post, weights, delays = self._explicit_columns()
        sources = np.asarray(self.pre.all_cells, dtype=np.int64)[pre]
        targets = np.asarray(self.post.all_cells, dtype=np.int64)[post]
        models = {}
        ends = np.cumsum([0] + counts)
        for k, (source, target) in enumerate(pieces):
            mine = slice(ends[k], ends[k + 1])
            scale = self._scale(target[0].population)
            columns = (sources[mine] - (source[0].first_number + source[1]), targets[mine] - (target[0].first_number + target[1]),
                       weights[mine] * scale, delays[mine])
            net.connect(reference(*source[:3]), reference(*target[:3]), kind="list", connections=columns,
                        id="%s_%d" % (self.dnnc_id, k), synapse_model=self._synapse_model(net, scale, models))


class Connection(common.Connection):
    """Connection k of a projection: its indices, and its weight and delay in PyNN's units,
    read from the projection and written back to it."""

    def __init__(self, projection, k, presynaptic_index, postsynaptic_index):
        self.projection, self.k = projection, k
        self.presynaptic_index, self.postsynaptic_index = presynaptic_index, postsynaptic_index

    def _column(self, name):
        return float(self.projection._columns()[2 if name == "weight" else 3][self.k])

    weight = property(lambda self: self._column("weight"),
                      lambda self, value: self.projection._set_connection(self.k, "weight", value))
    delay = property(lambda self: self._column("delay"),
                     lambda self, value: self.projection._set_connection(self.k, "delay", value))

    def as_tuple(self, *attribute_names):
        return tuple(getattr(self, name) for name in attribute_names)


def write_synapses(net, projection):
    """Adds a projection's explicit connections to `net` as list projections, one per (source
    group, target group) in the order the pairs first occur, each listing its connections in
    the projection's order (a target's connections from one source group keep their order);
    weights scaled to each target's unit, delays in ms."""
    pre, post, weights, delays = projection._explicit_columns()
    if len(pre) == 0:
        return
    sources = np.asarray(projection.pre.all_cells, dtype=np.int64)[pre]
    targets = np.asarray(projection.post.all_cells, dtype=np.int64)[post]
    groups = [group for population in simulator.state.populations for group in population.groups()]
    firsts = np.array([group.first_number for group in groups])

    def group_of(numbers):
        """The group of each neuron number, or of all of them when they share one."""
        lowest, highest = np.searchsorted(firsts, [numbers.min(), numbers.max()], side="right") - 1
        return lowest if lowest == highest else np.searchsorted(firsts, numbers, side="right") - 1

    pair = group_of(sources) * len(groups) + group_of(targets)
    # Parameters given per connection: one synapse model (and list) per set of their values.
    varying = projection._varying_columns()
    value_sets, value_set = [()], 0
    if varying:
        rows, value_set = np.unique(np.column_stack(list(varying.values())), axis=0, return_inverse=True)
        value_sets = [tuple(zip(varying, map(float, row))) for row in rows]
        pair = pair * len(value_sets) + value_set.ravel()
    # Mostly one pair (populations of one group): then no sort and no copy per pair.
    if np.ndim(pair) == 0:
        pairs, chosen = [int(pair)], [slice(None)]
    else:
        pairs, first_at, which = np.unique(pair, return_index=True, return_inverse=True)
        order = np.argsort(first_at, kind="stable")
        rank = np.empty(len(pairs), dtype=np.int64)
        rank[order] = np.arange(len(pairs))
        # The connections' positions grouped by pair (pairs in order of first occurrence, each
        # pair's in the projection's order): memory in the connections, not pairs times them.
        key = rank[which.ravel()]
        by_pair = np.argsort(key, kind="stable")
        bounds = np.searchsorted(key[by_pair], np.arange(len(pairs) + 1))
        pairs, chosen = pairs[order].tolist(), [by_pair[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    models = {}
    for k, (key, mine) in enumerate(zip(pairs, chosen)):
        key, values = divmod(key, len(value_sets))
        source, target = groups[key // len(groups)], groups[key % len(groups)]
        scale = projection._scale(target.population)
        columns = (sources[mine] - source.first_number, targets[mine] - target.first_number, weights[mine] * scale,
                   delays[mine])
        net.connect(source.dnnc_id, target.dnnc_id, kind="list", connections=columns, id="%s_l%d" % (projection.dnnc_id, k),
                    synapse_model=projection._synapse_model(net, scale, models, value_sets[values]))
