"""dnnc: build, run and partition neural graphs from Python.

The same libraries as the ``dnnc`` command line, without a second implementation of
anything: a network built here is a DNNC document, read and checked by the same reader;
a simulation starts the same ``dnnc-node`` servers and talks to them as ``dnnc run`` does.

    import dnnc
    net = dnnc.load("examples/cuba/cuba.xml")
    with dnnc.Simulation(net, nodes=4) as sim:
        sim.run(10000)
        t_ms, population, index = sim.spikes()

Networks: :func:`load`, :class:`Network` (``population``, ``neuron``, ``synapse_model``,
``connect``, ``synapse``, ``input``, ``output``, ``record``, ``poisson``, ``dc``, ``cluster``,
``to_xml``, ``save``). Runs: :class:`Simulation` (``run``, ``freeze``, ``resume``,
``tick``, ``input``, ``outputs``, ``spikes``, ``rates``, ``snapshot``, ``status``) and
:func:`restore`. Partitioning: :func:`partition`, :func:`generate`.

Errors: :class:`DocumentError` (a ``ValueError``; its message is the command line's
``file:line:column: ...``), :class:`UsageError` (a ``ValueError``), :class:`NodeError`
(a ``RuntimeError``: a node failed, refused, or could not be reached); all are
:class:`Error`. See docs/python.md.
"""

import operator
import os
import shutil
import tempfile
import weakref
from xml.etree import ElementTree as _ET

import numpy as np

from . import _dnnc
from ._dnnc import DocumentError, Error, NodeError, UsageError

__all__ = [
    "Network", "Simulation", "load", "restore", "partition", "generate",
    "Error", "DocumentError", "UsageError", "NodeError",
]

_NS = "urn:dnnc:1"

#: Spikes given to :meth:`Network.spike_source` as arrays go inline (one ``<spike>`` element
#: each, about 40 bytes) up to this many, and to a CSV file beyond: a submit request carries
#: at most 64 MiB.
SPIKES_INLINE = 1 << 16
# The attributes that may name a file the network wrote itself (Network._own_file).
_OWN_FILE_ATTRIBUTES = ("connections", "file")


# Parameters the document spells as NEST does, with underscores (docs/document.md).
_NEST_NAMES = {"tau_minus", "C_m", "tau_syn_ex", "tau_syn_in", "t_ref", "E_L", "V_th", "V_reset", "I_e", "V_min",
               "consistent_integration", "g_L", "E_ex", "E_in", "Delta_T", "tau_w", "V_peak", "g_Na", "g_K", "E_Na",
               "E_K", "V_T"}
_NEST_MODELS = ("iaf_psc_exp", "iaf_psc_delta", "iaf_psc_alpha", "izhikevich", "iaf_cond_exp", "iaf_cond_alpha",
                "aeif_cond_exp", "aeif_cond_alpha", "hh_cond_exp_traub")


def _attribute_name(key):
    """A keyword argument's name as the document spells it: ``tau_m`` -> ``tau-m``, NEST's
    names as they are (``tau_minus``, ``C_m``); a trailing ``_`` is dropped (``from_``)."""
    key = key.rstrip("_")
    return key if key in _NEST_NAMES else key.replace("_", "-")


def _nest_name(key):
    """A synapse model's parameter: NEST's name as it is (``lambda_`` -> ``lambda``)."""
    return key.rstrip("_")


def _attribute_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same double
    if isinstance(value, (list, tuple)):
        return " ".join(_attribute_value(v) for v in value)
    if isinstance(value, np.generic):
        return _attribute_value(value.item())
    return str(value)


def _element(tag, params, name=_attribute_name):
    """(tag, attributes, children): keyword values that are dicts become child elements
    (``weight=dict(distribution="normal", mean=1, std=0.1)`` -> ``<weight .../>``);
    ``name`` spells a keyword as an attribute."""
    attributes, children = {}, []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, dict):
            children.append(_element(_attribute_name(key), value))
        else:
            attributes[name(key)] = _attribute_value(value)
    return (tag, attributes, children)


def _neuron_element(tag, params):
    """A <neuron> or <population>: NEST's models take ``tau_m`` under NEST's name, ``lif``
    takes it as ``tau-m``."""
    nest = params.get("model") in _NEST_MODELS
    return _element(tag, params, lambda key: key if nest and key == "tau_m" else _attribute_name(key))


def _from_tree(node):
    tag = node.tag.split("}", 1)[-1]
    return (tag, dict(node.attrib), [_from_tree(child) for child in node])


def _to_tree(parent, element):
    tag, attributes, children = element
    node = _ET.SubElement(parent, tag, attributes) if parent is not None else _ET.Element(tag, attributes)
    for child in children:
        _to_tree(node, child)
    return node


class Network:
    """A DNNC network built in Python (or read by :func:`load`).

    Elements are kept in the order they are added, which is the document order: the
    canonical summation order of synapses and projections. Parameters take their document
    names, with ``-`` written ``_`` (``tau_m=20`` is ``tau-m="20"``). Nothing is checked
    until the document is needed (:meth:`to_xml`, :meth:`save`, counts, a simulation);
    then the same reader and checks as for files run, and a problem raises
    :class:`DocumentError` located in the text :meth:`to_xml` returns.
    """

    def __init__(self, name, dt=None):
        """A network called ``name``; ``dt``: the tick length in ms (default 0.1)."""
        self.name = name
        self.dt = dt
        self._elements = []  # the <network>'s children, in order
        self._sections = {}   # "cluster", "run", "state": (tag, attributes, children)
        self._file = "Network(%r)" % (name,)
        self._files = None  # the folder of the lists and spikes given as arrays (connect, spike_source)
        self._changed()

    # --- building -------------------------------------------------------------------
    def _changed(self):
        """Forgets what was derived from the document (its text and counts)."""
        self._counts = None
        self._cached_text = None

    def _add(self, tag, params, make=_element):
        self._elements.append(make(tag, params))
        self._changed()
        return self

    def population(self, id, size, model="lif", **params):
        """Adds ``<population id size model ...>`` (``seed``, ``tau_m``, ``v_th``, ...;
        NEST's models take NEST's names: ``C_m``, ``tau_m``, ``V_th``, ...; the spiking
        models take ``tau_minus``, the post-synaptic trace's time constant for STDP)."""
        return self._add("population", dict(id=id, size=size, model=model, **params), _neuron_element)

    def neuron(self, id, model="linear", **params):
        """Adds ``<neuron id model ...>`` (``bias``, ``threshold``, ...)."""
        return self._add("neuron", dict(id=id, model=model, **params), _neuron_element)

    def synapse_model(self, id, model, **params):
        """Adds ``<synapse-model id model ...>``: a NEST synapse model (``stdp_synapse``,
        ``tsodyks2_synapse``, ``vogels_sprekeler_synapse``, ``static_synapse``) with
        parameters under NEST's names (``tau_plus``, ``Wmax``, ``U``, ...; ``lambda_`` for
        ``lambda``), which connections name by ``synapse_model=id``."""
        return self._add("synapse-model", dict(id=id, model=model, **params), lambda tag, p: _element(tag, p, _nest_name))

    def connect(self, source, target, kind="all", **params):
        """Adds ``<projection from to kind ...>``: ``kind`` is ``all``, ``one-to-one``,
        ``random`` (``p``, ``seed``), ``fixed-indegree``, ``fixed-outdegree``,
        ``fixed-total-number``, ``dense`` (``init``, ``scale``, ``weights``, ...), ``list``
        (``connections``); ``weight`` and ``delay`` are numbers, or dicts for distributions
        (``weight=dict(distribution="normal", mean=1, std=0.1)``). ``source`` and ``target``
        are references (``"P"``, ``"P[0:3200]"``). ``synapse_model``: the id of a
        :meth:`synapse_model`, or a model's name for its defaults; ``id``: the projection's
        own, unique among them.

        ``kind="list"``: ``connections`` is an array of one row per connection, (source
        position in ``source``, target position in ``target``, weight, delay in ms), a tuple
        of those four columns, or the path of a ``.npy`` file of such rows. An array is
        written to a ``.npy`` file the network keeps (float64), which :meth:`save` copies
        beside the document."""
        params = dict(params)
        if "from_" in params or "to" in params:
            raise UsageError("connect(source, target, ...): give the ends as source and target")
        connections = params.get("connections")
        if connections is not None and not isinstance(connections, (str, os.PathLike)):
            params["connections"] = self._list_file(connections)
        elif connections is not None:
            params["connections"] = os.fspath(connections)
        return self._add("projection", {"from": source, "to": target, "kind": kind, **params})

    def _list_file(self, connections):
        """Writes a connection list (rows, or four columns) to a new float64 .npy file in the
        network's own folder (removed with the network) and returns its path."""
        if isinstance(connections, tuple) and len(connections) == 4:
            columns = [np.asarray(c, dtype="<f8") for c in connections]
            if any(c.ndim != 1 or len(c) != len(columns[0]) for c in columns):
                raise UsageError("connect(kind=\"list\"): the four columns must be sequences of one length")
        else:
            rows = np.asarray(connections, dtype="<f8")
            if rows.ndim != 2 or rows.shape[1] != 4:
                raise UsageError("connect(kind=\"list\"): connections must be rows of (source, target, weight, delay "
                                 "in ms), an array of shape (n, 4), or four columns, not %s" % (rows.shape,))
            columns = rows.T
        path = self._own_file("connections", ".npy")
        n = len(columns[0])
        with open(path, "wb") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (n, 4)})
            step = 1 << 16  # rows interleaved a block at a time: no second copy of the list
            block = np.empty((min(n, step), 4))
            for first in range(0, n, step):
                last = min(n, first + step)
                for k in range(4):
                    block[:last - first, k] = columns[k][first:last]
                block[:last - first].tofile(f)
        return path

    def _own_file(self, kind, suffix):
        """The path of a new file in the network's own folder (removed with the network)."""
        if self._files is None:
            self._files = tempfile.mkdtemp(prefix="dnnc-network-")
            weakref.finalize(self, shutil.rmtree, self._files, True)
        return os.path.join(self._files, "%s-%d%s" % (kind, len(os.listdir(self._files)), suffix))

    def synapse(self, source, target, weight=None, delay=None, **params):
        """Adds ``<synapse from to weight delay>`` between two neurons (``"a"``, ``"P[3]"``);
        ``synapse_model`` as for :meth:`connect`."""
        return self._add("synapse", {"from": source, "to": target, "weight": weight, "delay": delay, **params})

    def input(self, id, neurons):
        """Adds ``<input id neurons>``; ``neurons``: references, ``"r[0] r[7]"`` or a list."""
        return self._add("input", dict(id=id, neurons=neurons))

    def output(self, id, neurons):
        """Adds ``<output id neurons>``; its neurons are the columns of :meth:`Simulation.outputs`."""
        return self._add("output", dict(id=id, neurons=neurons))

    def record(self, neurons=None, variables=None, interval_ms=None):
        """Adds ``<record>``: whose spikes a run records (default: every spiking neuron); with
        ``variables`` (a list of NEST's names, e.g. ``["V_m", "g_ex"]``) the neurons' state is
        sampled instead, every ``interval_ms`` (default: every tick): read with
        :meth:`Simulation.recorded`."""
        return self._add("record", dict(neurons=neurons, variables=variables, interval_ms=interval_ms))

    def poisson(self, to, **params):
        """Adds a ``<poisson to ...>`` generator (``rate``, ``weight``, ``seed``, ...)."""
        return self._add("poisson", dict(to=to, **params))

    def dc(self, to, amplitude, **params):
        """Adds a ``<dc to amplitude [start] [stop]>`` current."""
        return self._add("dc", dict(to=to, amplitude=amplitude, **params))

    def spike_source(self, id, spikes=None, **params):
        """Adds a ``<spike-source id size ...>``: replaying spike times from a CSV (``file``),
        or given as ``spikes=(t_ms, index)`` (two sequences: one ``<spike>`` child each, or,
        past :data:`SPIKES_INLINE` spikes, a CSV file the network keeps, which the lead reads
        and :meth:`save` copies beside the document), or Poisson trains (``rate``,
        ``start``, ``stop``, ``seed``)."""
        if spikes is not None:
            t_ms, index = np.asarray(spikes[0], dtype=float), np.asarray(spikes[1], dtype=np.int64)
            if t_ms.shape != index.shape or t_ms.ndim != 1:
                raise UsageError("spike_source(spikes=(t_ms, index)): two sequences of one length")
            spikes = (t_ms, index)
            if len(t_ms) > SPIKES_INLINE:
                params["file"], spikes = self._spike_file(t_ms, index), None

        def make(tag, params):
            element = _element(tag, params)
            if spikes is not None:
                t_ms, index = spikes
                element[2].extend(("spike", {"t-ms": _attribute_value(float(t)), "index": str(int(i))}, [])
                                  for t, i in zip(t_ms, index))
            return element

        return self._add("spike-source", dict(id=id, **params), make)

    def _spike_file(self, t_ms, index):
        """Writes spikes (two arrays of one length) to a new CSV file (``t_ms,index``) in the
        network's own folder."""
        path = self._own_file("spikes", ".csv")
        with open(path, "w", encoding="ascii") as f:
            f.write("t_ms,index\n")
            f.writelines("%r,%d\n" % row for row in zip(t_ms.tolist(), index.tolist()))
        return path

    def element(self, tag, **params):
        """Adds any other element the schema allows in ``<network>``."""
        return self._add(tag, params)

    def cluster(self, nodes, links=None, lead=None):
        """Sets the ``<cluster>``: ``nodes`` is a list of dicts (``id``, ``host``, ``port``,
        ``capacity``) or of ``(id, host, port[, capacity])`` tuples; ``links`` a list of
        ``(from, to)`` pairs (default: every pair); ``lead`` the lead's id (default: the
        first node). Optional: ``Simulation(nodes=K)`` makes its own local cluster."""
        rows = []
        for n in nodes:
            if not isinstance(n, dict):
                n = dict(zip(("id", "host", "port", "capacity"), n))
            rows.append(_element("node", n))
        ids = [r[1]["id"] for r in rows]
        if links is None:
            links = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]]
        children = rows + [_element("link", {"from": a, "to": b}) for a, b in links]
        self._sections["cluster"] = ("cluster", {"lead": lead or ids[0]}, children)
        self._changed()
        return self

    def run_settings(self, **params):
        """Sets ``<run ...>`` (``sync``, ``send``, ``batch``, ``tick_period``, ...)."""
        self._sections["run"] = _element("run", params)
        self._changed()
        return self

    # --- the document ---------------------------------------------------------------
    def _text(self):
        if self._cached_text is None:
            self._cached_text = self._write_text()
        return self._cached_text

    def _write_text(self, renamed=None):
        """The document's text; ``renamed`` maps the network's own files to the names to write."""
        root = _ET.Element("dnnc", {"xmlns": _NS})
        attributes = {"name": self.name}
        if self.dt is not None:
            attributes["dt"] = _attribute_value(self.dt)
        net = _ET.SubElement(root, "network", attributes)
        for tag, element_attributes, children in self._elements:
            for name in _OWN_FILE_ATTRIBUTES:
                if renamed and element_attributes.get(name) in renamed:
                    element_attributes = dict(element_attributes, **{name: renamed[element_attributes[name]]})
            _to_tree(net, (tag, element_attributes, children))
        for section in ("cluster", "run", "state"):
            if section in self._sections:
                _to_tree(root, self._sections[section])
        _ET.indent(root)  # one element a line: locations in messages name the element's line
        return _ET.tostring(root, encoding="unicode") + "\n"

    def to_xml(self):
        """The DNNC document, as the command line's writer writes it (validated and checked)."""
        return _dnnc.canonical(self._text(), self._file)

    def save(self, path):
        """Writes :meth:`to_xml` to ``path``; ``dnnc run path`` reads the same network. The
        connection lists and spikes given as arrays are copied beside it, as
        ``NAME.connections-K.npy`` and ``NAME.spikes-K.csv`` for a document ``NAME.xml``, and
        named relative to it."""
        path = os.fspath(path)
        folder, stem = os.path.dirname(os.path.abspath(path)), os.path.splitext(os.path.basename(path))[0]
        renamed = {}
        for _, attributes, _ in self._elements:
            for own in (attributes.get(name) for name in _OWN_FILE_ATTRIBUTES):
                if own and self._files and os.path.dirname(own) == self._files and own not in renamed:
                    renamed[own] = "%s.%s" % (stem, os.path.basename(own))
                    shutil.copyfile(own, os.path.join(folder, renamed[own]))
        text = _dnnc.canonical(self._write_text(renamed), path) if renamed else self.to_xml()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def validate(self):
        """Runs the reader and every check; raises :class:`DocumentError` when wrong."""
        self.to_xml()
        return self

    def _count(self):
        if self._counts is None:
            self._counts = _dnnc.counts(self._text(), self._file)
        return self._counts

    @property
    def neurons(self):
        """The number of neurons (exact)."""
        return self._count()["neurons"]

    @property
    def synapses(self):
        """The number of synapses (exact: random rules are drawn, none is stored)."""
        return self._count()["synapses"]

    def connection_count(self, projection):
        """The exact number of synapses of the projection with id ``projection`` (random
        rules draw their skips only; nothing is stored)."""
        return _dnnc.connection_count(self._text(), self._file, projection)

    def connections(self, projection):
        """The synapses of the projection with id ``projection``, drawn as the nodes draw
        them: NumPy arrays ``(source, target, weight, delay)``, neurons by their number in
        the network (explicit neurons first, then each group's members, in document
        order), delays in ticks, each target's synapses in canonical order."""
        return _dnnc.connections(self._text(), self._file, projection)

    @property
    def populations(self):
        """{population id: size}, in document order."""
        return {a["id"]: int(a["size"]) for tag, a, _ in self._elements if tag == "population"}

    @property
    def inputs(self):
        """The ids of the network's inputs, in document order."""
        return [a["id"] for tag, a, _ in self._elements if tag == "input"]

    @property
    def outputs(self):
        """{output id: its neuron references}, in document order."""
        return {a["id"]: a["neurons"] for tag, a, _ in self._elements if tag == "output"}

    def __repr__(self):
        return "<dnnc.Network %r: %d elements>" % (self.name, len(self._elements))

    @classmethod
    def _from_text(cls, text, file):
        root = _ET.fromstring(text)
        net = None
        sections = {}
        for child in root:
            tag = child.tag.split("}", 1)[-1]
            if tag == "network":
                net = child
            else:
                sections[tag] = _from_tree(child)
        if net is None:
            raise UsageError(file + ": the document has no <network>")
        self = cls(net.get("name"), dt=float(net.get("dt")) if net.get("dt") is not None else None)
        self._elements = [_from_tree(child) for child in net]
        self._sections = sections
        self._file = file
        return self


def load(path):
    """Reads a DNNC document (or a snapshot) into a :class:`Network`.

    Raises :class:`DocumentError` (a ``ValueError``) with the command line's message,
    ``file:line:column: ...``, when the file is not a valid document."""
    path = os.fspath(path)
    return Network._from_text(_dnnc.load(path), path)


def _exclusive(nodes, cluster, lead):
    given = [name for name, v in (("nodes", nodes), ("cluster", cluster), ("lead", lead)) if v]
    if len(given) > 1 and given != ["cluster", "lead"]:
        raise UsageError("give one of nodes=, cluster= and lead=, not " + " and ".join(given))


class Simulation:
    """A network running on a cluster, as a context manager::

        with dnnc.Simulation(net, nodes=4) as sim:
            sim.run(10000)
            out = sim.outputs()

    ``nodes=K`` starts K local ``dnnc-node`` servers (every pair linked) and stops them on
    exit, as ``dnnc run --nodes K`` does; ``cluster=PATH`` uses the ``<cluster>`` of that
    document (its nodes must be on this machine); ``lead="host:port"`` submits to a running
    lead (the network needs a cluster) and leaves its nodes running. With none of them, the
    network's own cluster is started here, or one local node when it has none.
    ``batch``: lanes (default: the document's); ``secret_file``: the cluster secret (a
    local cluster makes its own); ``spikes``: record every spiking neuron when the network
    has no ``<record>``; ``outputs=False``: do not read the outputs (:meth:`outputs` stays
    empty), which spares the lead their transfer. The GIL is released while nodes start and ticks run.
    """

    def __init__(self, network, nodes=None, cluster=None, lead=None, batch=None, secret_file=None,
                 spikes=True, outputs=True, log_level="warn", timeout=120.0, _snapshot=None):
        _exclusive(nodes, cluster, lead)
        text, file = "", ""
        if _snapshot is None:
            if isinstance(network, (str, os.PathLike)):
                network = load(network)
            if not isinstance(network, Network):
                raise UsageError("Simulation(network): a dnnc.Network or a document path")
            text, file = network._text(), network._file
        self.network = network
        self._sim = _dnnc.Simulation(text, file, os.fspath(_snapshot) if _snapshot else "", int(nodes or 0),
                                     os.fspath(cluster) if cluster else "", lead or "", int(batch or 0),
                                     os.fspath(secret_file) if secret_file else "", bool(spikes), bool(outputs), log_level,
                                     float(timeout))

    # --- life -----------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Stops the nodes this simulation started (also on leaving a ``with`` block)."""
        self._sim.close()

    @property
    def pids(self):
        """The process ids of the local nodes this simulation started."""
        return list(self._sim.pids)

    @property
    def lead(self):
        """The lead's ``host:port`` (for ``dnnc status --lead`` and the other commands)."""
        return self._sim.lead

    # --- the clock --------------------------------------------------------------------
    def run(self, ticks):
        """Runs ``ticks`` ticks and returns when they are complete; outputs and spikes are
        read while it runs. Ctrl-C interrupts the wait (the nodes finish the step)."""
        self._sim.run(int(ticks))

    def freeze(self):
        """Stops the clock: every node completes the current tick and pauses."""
        return self._sim.command("freeze")

    def resume(self):
        """Lets the clock run freely until :meth:`freeze`."""
        return self._sim.command("resume")

    @property
    def tick(self):
        """The next tick to compute (the ticks before it are complete)."""
        return self._sim.tick()

    @property
    def start_tick(self):
        """The tick the network started from (0, or a snapshot's tick)."""
        return self._sim.start

    # --- inputs and results -------------------------------------------------------------
    def input(self, data, start=None):
        """Feeds external inputs.

        ``data`` is an input CSV's path (``tick,target,value[,lane]``); a list of
        ``(tick, target, value[, lane])`` rows (target: an input id or a neuron id); or an
        array of values for the network's inputs in document order, one row per tick from
        ``start`` (default: :attr:`tick`): shape (ticks,) for a single input, (ticks,
        inputs), or (ticks, lanes, inputs) for a batched run. Zeros are not sent (a
        tick's external input is 0 unless given)."""
        if isinstance(data, (str, os.PathLike)):
            self._sim.input_csv(os.fspath(data))
            return
        if isinstance(data, np.ndarray):
            ids = self._sim.input_ids
            values = np.asarray(data, dtype=np.float32)
            if values.ndim == 1:
                values = values[:, None]
            if values.ndim == 2:
                values = values[:, None, :]
                lanes_given = False
            elif values.ndim == 3:
                lanes_given = True
            else:
                raise UsageError("input: an array of shape (ticks,), (ticks, inputs) or (ticks, lanes, inputs)")
            if values.shape[2] != len(ids):
                raise UsageError("input: %d columns for the network's %d inputs %s" % (values.shape[2], len(ids), ids))
            first = self.tick if start is None else int(start)
            t, lane, k = np.nonzero(values)
            rows = list(zip((t + first).tolist(), [ids[i] for i in k.tolist()], values[t, lane, k].tolist(),
                            lane.tolist() if lanes_given else [-1] * len(t)))
            self._sim.input(rows)
            return
        rows = []
        for row in data:
            row = tuple(row)
            rows.append((int(row[0]), str(row[1]), float(row[2]), int(row[3]) if len(row) > 3 else -1))
        self._sim.input(rows)

    def outputs(self):
        """The outputs of every tick run so far: float32, shape (ticks, outputs), or
        (ticks, lanes, outputs) for a batched run; the same values ``dnnc run --output``
        writes."""
        self._sim.catch_up()
        return self._sim.outputs()

    @property
    def output_ticks(self):
        """The tick of each row of :meth:`outputs`."""
        self._sim.catch_up()
        return self._sim.output_ticks()

    @property
    def output_columns(self):
        """The output neurons (the columns of :meth:`outputs`), in document order."""
        self._sim.catch_up()
        return list(self._sim.output_columns)

    def spikes(self):
        """The recorded spikes so far as NumPy arrays ``(t_ms, population, index)``: the
        start of each spike's tick in ms (float64), its population (or neuron) id (str) and
        the member's index (int64), in tick order: the rows of ``dnnc run --spikes``."""
        self._sim.catch_up()
        t_ms, codes, index, names = self._sim.spikes()
        population = np.asarray(names if names else [""], dtype=str)[codes]
        return t_ms, population, index

    def recorded(self):
        """The variables that ``record(..., variables=...)`` samples, so far, as a dict of NumPy
        arrays of one row per value: ``t_ms`` (float64, the sample's time: the state at t_ms,
        from 0, the initial state, on), ``population`` (str, population or neuron id),
        ``index`` (int64, in the population), ``variable`` (str, NEST's name: ``V_m``,
        ``g_ex``, ...) and ``value`` (float32, in the variable's unit: mV, nS, pA). Rows by
        time, then neuron, then the record's variables in order: the rows of ``dnnc run
        --record-file``; the same on any partition."""
        self._sim.catch_up()
        t_ms, populations, index, variables, value, population_names, variable_names = self._sim.recorded()
        return {"t_ms": t_ms, "population": np.asarray(population_names or [""], dtype=str)[populations], "index": index,
                "variable": np.asarray(variable_names or [""], dtype=str)[variables], "value": value}

    def rates(self):
        """{population id: mean firing rate in Hz} of the recorded neurons, over the ticks run."""
        self._sim.catch_up()
        return {g["id"]: g["rate_hz"] for g in self._sim.rates()}

    def status(self):
        """The lead's status as a dict, as ``dnnc status --json`` prints it."""
        return self._sim.status()

    def weights(self, projection):
        """The weights of the plastic projection ``projection`` (its ``id``) now, as NumPy
        arrays ``(source, target, weight)``: each synapse's source and target index in its
        population (0 for a single neuron, int64) and its weight (float32), node by node,
        each target's synapses in canonical order: the rows of ``dnnc weights --projection``.
        The network is paused between runs, as reading needs."""
        return self._sim.weights(projection)

    def structure(self):
        """Structural plasticity so far, one row per population with synaptic elements at every
        structural update, as a dict of NumPy arrays: ``t_ms`` (float64, the update's time),
        ``population`` (str), ``mean_ca`` (float64, its members' mean calcium),
        ``connections_in`` (int64, the grown synapses onto its members after the update),
        ``created`` and ``deleted`` (int64, by the update): the rows of ``dnnc run --structure``."""
        self._sim.catch_up()
        t_ms, codes, mean_ca, connections, created, deleted, names = self._sim.structure()
        population = np.asarray(names if names else [""], dtype=str)[codes]
        return {"t_ms": t_ms, "population": population, "mean_ca": mean_ca, "connections_in": connections,
                "created": created, "deleted": deleted}

    def connections(self):
        """The synapses structural plasticity has grown and not deleted, now, in the order they
        were made, as a dict of NumPy arrays: ``synapse`` (str, its <structural-synapse> id),
        ``source_population`` and ``target_population`` (str), ``source`` and ``target`` (int64,
        the member's index in its population). The network is paused between runs, as reading
        needs; every node with synaptic elements holds the same list, so one node's is read."""
        synapse, source_group, source, target_group, target, synapses, groups = self._sim.connections()
        names = np.asarray(groups if groups else [""], dtype=str)
        return {"synapse": np.asarray(synapses if synapses else [""], dtype=str)[synapse],
                "source_population": names[source_group], "source": source,
                "target_population": names[target_group], "target": target}

    def update(self, network):
        """Gives the running network the parameters of ``network`` (a :class:`Network`), a
        version of it that differs in parameters only: neurons' and populations' model
        parameters, spike sources' spikes and rates, generators' amplitudes, rates and
        windows, synapses' weights, static synapses' delays within the history the nodes
        keep (docs/simulation.md; a spike sent before keeps its delay). Applied between two
        runs: the next tick computes with them, states and synapses carried over, on every
        node alike. A structural change or a delay beyond the history raises
        :class:`DocumentError`. Returns the tick from which they hold."""
        if not isinstance(network, Network):
            raise UsageError("update(network): a dnnc.Network")
        return self._sim.update(network._text(), network._file)["tick"]

    def grow(self, population, n):
        """Adds ``n`` members (a whole number >= 1; else :class:`UsageError`, and nothing is
        sent) to the population ``population`` of the running network, as ``dnnc grow`` does
        (docs/document.md, "Growing populations"). Returns the lead's answer as a dict:
        ``population``, ``added``, ``size`` (its members now), ``first_new`` (``"P[k]"``, the
        first new member), ``tick`` (when they joined) and ``paused_ms`` (how long the run
        was paused). A number that is not whole (2.5) raises TypeError."""
        return self._sim.grow(str(population), operator.index(n))

    def rebalance(self, dry_run=False, capacity=None, migration_weight=None):
        """Re-places the running network's neurons over its nodes from where they are, as
        ``dnnc rebalance`` does (docs/simulation.md, "Re-balancing, and nodes that join and
        leave"): ``capacity`` (a dict, node id to a number > 0) changes nodes' capacities
        first; ``migration_weight`` (>= 0, default 1) is what moving a synapse costs in cut
        synapses. Applied between two ticks unless ``dry_run`` or nothing would move; the
        results stay bit for bit those of a run without the move. Returns the lead's answer
        as a dict: ``moved`` (neurons), ``nodes`` (each ``id``, ``before``, ``after``, and
        whether it ``kept`` its engine or had it ``prepared`` while the network ran),
        ``edge_cut`` (``before``, ``after``), ``tick``, ``applied`` and, when applied,
        ``paused_ms``. Bad values raise :class:`UsageError` (nothing is sent), a node the
        cluster lacks :class:`NodeError` (the lead refuses); either way nothing changes."""
        weight = None if migration_weight is None else float(migration_weight)
        capacities = {str(k): float(v) for k, v in (capacity or {}).items()}
        return self._sim.rebalance(bool(dry_run), weight, capacities)

    def join(self, node, capacity=1.0, links=()):
        """Adds ``node`` (``"ID@HOST:PORT"``: a running node with the cluster's secret that
        serves no network) to the running cluster, linked to the nodes ``links`` (ids;
        none: the lead), with ``capacity``; it takes its share of the neurons, the results
        unchanged. Returns the lead's answer: ``joined``, ``tick``, ``moved``, ``nodes``,
        ``paused_ms``."""
        return self._sim.join(str(node), float(capacity), [str(l) for l in links])

    def drain(self, node):
        """Moves the neurons of node ``node`` (an id; not the lead) to the others and lets it
        leave the running cluster, free to serve another network; the results unchanged.
        Returns the lead's answer: ``drained``, ``released``, ``tick``, ``moved``, ``nodes``,
        ``paused_ms``."""
        return self._sim.drain(str(node))

    def snapshot(self, path):
        """Saves the frozen network (freeze first) to ``path``: XML, or binary for ``.dnncs``.
        Returns the snapshot's tick. :func:`restore` continues it."""
        return self._sim.snapshot(os.fspath(path))

    @property
    def summary(self):
        """The lead's answer to the submission: network, nodes and their neurons, edge cut."""
        return self._sim.summary

    @property
    def last_step_seconds(self):
        """The lead's own time for the last :meth:`run`, in seconds."""
        return self._sim.last_step_seconds


def restore(path, nodes=None, cluster=None, lead=None, **options):
    """Continues a snapshot (XML or ``.dnncs``) on K local nodes, on a cluster document's
    cluster, at a running lead, or on the snapshot's own cluster: a :class:`Simulation`
    frozen at the snapshot's tick. In lockstep runs the results equal an uninterrupted run's."""
    return Simulation(None, nodes=nodes, cluster=cluster, lead=lead, _snapshot=path, **options)


def partition(network_or_graph, parts=None, cluster=None, strategy="multilevel", imbalance=0.03, seed=1):
    """Partitions a network (a :class:`Network`, or a DNNC ``.xml`` path) or a METIS
    ``.graph`` over ``parts=K`` nodes (all linked, capacity 1) or a cluster document's
    nodes, as ``dnnc partition`` does.

    Returns ``(assignment, metrics)``: the node index of every neuron (or vertex) as a
    NumPy array, and a dict with ``edge_cut``, ``communication_volume``,
    ``max_imbalance``, ``condition1_violations``, ``hop_weighted_cut``, ``tick_cost``,
    ``seconds``, ``nodes`` (their names) and more."""
    _exclusive(parts, cluster, None)
    if isinstance(network_or_graph, Network):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "network.xml")
            network_or_graph.save(path)
            return _dnnc.partition(path, int(parts or 0), os.fspath(cluster) if cluster else "", strategy,
                                   float(imbalance), int(seed))
    return _dnnc.partition(os.fspath(network_or_graph), int(parts or 0), os.fspath(cluster) if cluster else "",
                           strategy, float(imbalance), int(seed))


_KINDS = {"er": "erdos-renyi", "ws": "watts-strogatz", "ba": "barabasi-albert", "rgg": "random-geometric",
          "ff": "feed-forward"}


def generate(kind, path=None, seed=1, name=None, **params):
    """Writes a synthetic graph, as ``dnnc gen`` does, and returns its path: a METIS
    ``.graph`` file, or a DNNC network when ``path`` ends in ``.xml`` (synapses from the
    lower neuron id to the higher one; ``name``: the network's, by default the kind). Without
    ``path``, a new temporary ``.graph`` file.

    Kinds and parameters: ``erdos-renyi`` (``n``, ``p`` or ``degree``), ``sbm`` (``blocks``,
    ``p_in``, ``p_out``), ``watts-strogatz`` (``n``, ``k``, ``beta``), ``barabasi-albert``
    (``n``, ``m``), ``grid2d`` / ``grid3d`` (``dims``), ``random-geometric`` (``n``,
    ``radius`` or ``degree``), ``feed-forward`` (``layers``, ``p``); short names ``er``,
    ``ws``, ``ba``, ``rgg``, ``ff``. A parameter missing, extra or both of a pair raises
    :class:`UsageError` with ``dnnc gen``'s message."""
    kind = _KINDS.get(kind, kind)
    if path is None:
        fd, path = tempfile.mkstemp(prefix="dnnc-%s-" % kind, suffix=".graph")
        os.close(fd)
    _dnnc.generate(kind, params, int(seed), os.fspath(path), name or "")
    return path
