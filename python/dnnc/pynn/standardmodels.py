"""PyNN's standard cell types, synapse types and current sources, translated to dnnc's
NEST models, synapse models and generators (docs/pynn.md). Names and units as NEST's:
pF, pA, nS and mV on dnnc's side; nF, nA, µS and mV on PyNN's."""

import numpy as np

from pyNN import errors
from pyNN.parameters import ParameterSpace, Sequence
from pyNN.standardmodels import StandardCurrentSource, build_translations, cells, electrodes, synapses

from dnnc import _dnnc

from . import simulator
from .selection import references

# Parameters shared by the integrate-and-fire models, as PyNN's NEST backend translates them.
_IAF = (('v_rest', 'E_L'), ('v_reset', 'V_reset'), ('cm', 'C_m', 1000.0), ('tau_refrac', 't_ref'),
        ('v_thresh', 'V_th'), ('i_offset', 'I_e', 1000.0))
_SYNAPTIC_TAU = (('tau_syn_E', 'tau_syn_ex'), ('tau_syn_I', 'tau_syn_in'))
_CURRENT_BASED = _IAF + (('tau_m', 'tau_m'),)
_CONDUCTANCE_BASED = _IAF + _SYNAPTIC_TAU + (('tau_m', 'g_L', "cm/tau_m*1000.0", "C_m/g_L"), ('e_rev_E', 'E_ex'),
                                           ('e_rev_I', 'E_in'))


class _Neuron:
    """What a dnnc population of this type is: `dnnc_model` with the translated parameters.
    `weight_scale`: a synapse's weight in dnnc's unit (pA, nS or mV) per PyNN unit (nA or µS);
    `per_neuron`: the parameters the dnnc element takes per member (the others split a
    population into groups of equal values)."""
    weight_scale = 1000.0
    per_neuron = ()
    # Initial values of dnnc's state other than the membrane potential: another value
    # cannot be given.
    fixed_initial_values = {}
    # Initial values PyNN's cell type has but the model does not take (a warning).
    ignored_initial_values = ()
    # PyNN's recordable state variables: (NEST's name, PyNN's unit per NEST's).
    state_variables = {"v": ("V_m", 1.0)}

    def check(self, name, values):
        """Raises PyNN's error for values of native parameter `name` PyNN refuses."""

    def population_element(self, net, group, parameters):
        """Adds `group` (populations.Group) to `net`, with its translated `parameters`."""
        net.population(group.dnnc_id, group.size, model=self.dnnc_model, seed=group.seed, **parameters)


class _CurrentBased(_Neuron):
    translations = build_translations(*_CURRENT_BASED, *_SYNAPTIC_TAU)
    fixed_initial_values = {"isyn_exc": 0.0, "isyn_inh": 0.0}


_CONDUCTANCES = {"gsyn_exc": ("g_ex", 0.001), "gsyn_inh": ("g_in", 0.001)}  # µS per nS


class _ConductanceBased(_Neuron):
    translations = build_translations(*_CONDUCTANCE_BASED)
    fixed_initial_values = {"gsyn_exc": 0.0, "gsyn_inh": 0.0}
    state_variables = {"v": ("V_m", 1.0), **_CONDUCTANCES}


def _cell_type(base, kind, model):
    """PyNN's cell type `base` as dnnc's `model`, translated as `kind` is."""
    return type(base.__name__, (kind, base), {"__doc__": base.__doc__, "dnnc_model": model})


IF_curr_exp = _cell_type(cells.IF_curr_exp, _CurrentBased, "iaf_psc_exp")
IF_curr_alpha = _cell_type(cells.IF_curr_alpha, _CurrentBased, "iaf_psc_alpha")
IF_cond_exp = _cell_type(cells.IF_cond_exp, _ConductanceBased, "iaf_cond_exp")
IF_cond_alpha = _cell_type(cells.IF_cond_alpha, _ConductanceBased, "iaf_cond_alpha")


class IF_curr_delta(_Neuron, cells.IF_curr_delta):
    __doc__ = cells.IF_curr_delta.__doc__
    translations = build_translations(*_CURRENT_BASED)
    dnnc_model = "iaf_psc_delta"
    weight_scale = 1.0  # the weight is the jump of V_m in mV


class _Adaptive(_Neuron):
    translations = build_translations(*_CONDUCTANCE_BASED, ('v_spike', 'V_peak'), ('a', 'a'), ('b', 'b', 1000.0),
                                      ('delta_T', 'Delta_T'), ('tau_w', 'tau_w'))
    fixed_initial_values = {"w": 0.0, "gsyn_exc": 0.0, "gsyn_inh": 0.0}
    state_variables = {"v": ("V_m", 1.0), "w": ("w", 0.001), **_CONDUCTANCES}  # nA per pA


EIF_cond_exp_isfa_ista = _cell_type(cells.EIF_cond_exp_isfa_ista, _Adaptive, "aeif_cond_exp")
EIF_cond_alpha_isfa_ista = _cell_type(cells.EIF_cond_alpha_isfa_ista, _Adaptive, "aeif_cond_alpha")


class HH_cond_exp(_Neuron, cells.HH_cond_exp):
    __doc__ = cells.HH_cond_exp.__doc__
    translations = build_translations(('gbar_Na', 'g_Na', 1000.0), ('gbar_K', 'g_K', 1000.0), ('g_leak', 'g_L', 1000.0),
                                      ('cm', 'C_m', 1000.0), ('v_offset', 'V_T'), ('e_rev_Na', 'E_Na'),
                                      ('e_rev_K', 'E_K'), ('e_rev_leak', 'E_L'), ('e_rev_E', 'E_ex'),
                                      ('e_rev_I', 'E_in'), *_SYNAPTIC_TAU, ('i_offset', 'I_e', 1000.0))
    dnnc_model = "hh_cond_exp_traub"
    fixed_initial_values = {"gsyn_exc": 0.0, "gsyn_inh": 0.0}
    # hh_cond_exp_traub starts its gates at rest for the initial V_m, as NEST does; PyNN's
    # initial m, h and n are ignored with a warning, as pyNN.nest's are (NEST has no such
    # initial values).
    ignored_initial_values = ("m", "h", "n")
    state_variables = {"v": ("V_m", 1.0), **_CONDUCTANCES}


class Izhikevich(_Neuron, cells.Izhikevich):
    __doc__ = cells.Izhikevich.__doc__
    translations = build_translations(('a', 'a'), ('b', 'b'), ('c', 'c'), ('d', 'd'), ('i_offset', 'I_e', 1000.0))
    dnnc_model = "izhikevich"
    weight_scale = 1.0  # the weight is the jump of V_m in mV
    state_variables = {"v": ("V_m", 1.0), "u": ("U_m", 1.0)}


class SpikeSourceArray(_Neuron, cells.SpikeSourceArray):
    __doc__ = cells.SpikeSourceArray.__doc__
    translations = build_translations(('spike_times', 'spike_times'))
    per_neuron = ("spike_times",)

    def check(self, name, values):
        if name == "spike_times" and any(np.any(np.diff(np.asarray(s.value)) < 0) for s in values):
            raise errors.InvalidParameterValueError("SpikeSourceArray: spike times must be in order")

    def population_element(self, net, group, parameters):
        trains = [np.asarray(sequence.value, dtype=float) for sequence in group.parameter_values("spike_times")]
        index = np.repeat(np.arange(group.size), [len(t) for t in trains])
        net.spike_source(group.dnnc_id, size=group.size, spikes=(np.concatenate(trains) if trains else np.zeros(0), index))


class SpikeSourcePoisson(_Neuron, cells.SpikeSourcePoisson):
    __doc__ = cells.SpikeSourcePoisson.__doc__
    translations = build_translations(('rate', 'rate'), ('start', 'start'),
                                      ('duration', 'stop', "start+duration", "stop-start"))
    per_neuron = ("rate",)

    def population_element(self, net, group, parameters):
        rates = group.parameter_values("rate")
        rate = float(rates[0]) if np.all(rates == rates[0]) else [float(r) for r in rates]
        net.spike_source(group.dnnc_id, size=group.size, rate=rate, start=parameters["start"], stop=parameters["stop"],
                         seed=group.seed)


# --- synapse types ---------------------------------------------------------------------
# Weights and delays keep PyNN's units here (nA or µS, ms): a projection scales the weights
# to its target's unit (_Neuron.weight_scale).

class _Synapse:
    """`dnnc_model`: dnnc's synapse model; `dnnc_parameters(weight_scale, native)`: its
    parameters (NEST's names and units) from the native ones ({name: LazyArray}) that a
    projection has; `dnnc_initial_state`: those of them that are its synapses' initial
    state, which a running cluster keeps as it was built."""
    dnnc_initial_state = ()

    def _get_minimum_delay(self):
        return simulator.state.min_delay

    def dnnc_parameters(self, weight_scale, native):
        return {}


class StaticSynapse(_Synapse, synapses.StaticSynapse):
    __doc__ = synapses.StaticSynapse.__doc__
    translations = build_translations(('weight', 'weight'), ('delay', 'delay'))
    dnnc_model = "static_synapse"


def homogeneous(parameters, names):
    """{name: value} of native parameters that a dnnc synapse model takes as one value."""
    values = {}
    for name in names:
        value = parameters[name]
        if not value.is_homogeneous:
            raise NotImplementedError("pyNN.dnnc: a synapse model's '%s' must be the same for every connection" % name)
        value.shape = (1,)
        values[name] = float(value.evaluate(simplify=True))
    return values


class TsodyksMarkramSynapse(_Synapse, synapses.TsodyksMarkramSynapse):
    __doc__ = synapses.TsodyksMarkramSynapse.__doc__
    translations = build_translations(('weight', 'weight'), ('delay', 'delay'), ('U', 'U'), ('tau_rec', 'tau_rec'),
                                      ('tau_facil', 'tau_fac'))
    dnnc_model = "tsodyks2_synapse"
    dnnc_initial_state = ("u",)

    def dnnc_parameters(self, weight_scale, native):
        values = homogeneous(native, ("U", "tau_rec", "tau_fac"))
        values["u"] = values["U"]  # the first spike uses U, as in Tsodyks & Markram's model
        return values


class STDPMechanism(_Synapse, synapses.STDPMechanism):
    __doc__ = synapses.STDPMechanism.__doc__
    base_translations = build_translations(('weight', 'weight'), ('delay', 'delay'),
                                           ('dendritic_delay_fraction', 'dendritic_delay_fraction'))
    dnnc_model = "stdp_synapse"

    def __init__(self, timing_dependence=None, weight_dependence=None, voltage_dependence=None,
                 dendritic_delay_fraction=1.0, weight=0.0, delay=None):
        if dendritic_delay_fraction != 1:
            raise NotImplementedError("pyNN.dnnc: dendritic_delay_fraction %g (dnnc's delays are all dendritic, "
                                      "as NEST's)" % dendritic_delay_fraction)
        if voltage_dependence is not None:
            raise NotImplementedError("pyNN.dnnc: STDPMechanism with a voltage dependence")
        synapses.STDPMechanism.__init__(self, timing_dependence, weight_dependence, voltage_dependence,
                                        dendritic_delay_fraction, weight, delay)

    def dnnc_parameters(self, weight_scale, native):
        values = homogeneous(native, ("tau_plus", "lambda", "alpha", "mu_plus", "mu_minus", "Wmax"))
        values["Wmax"] *= weight_scale
        values["lambda_"] = values.pop("lambda")
        return values


def _translate_A_minus_forwards(**parameters):
    """NEST's alpha is A_minus relative to A_plus (as PyNN's NEST backend translates it)."""
    A_plus, A_minus = parameters["A_plus"], parameters["A_minus"]
    return A_minus if A_plus == 0 else A_minus / A_plus


def _translate_A_minus_reverse(**parameters):
    alpha, lambda_ = parameters["alpha"], parameters["lambda"]
    return alpha if lambda_ == 0 else alpha * lambda_


class SpikePairRule(synapses.SpikePairRule):
    __doc__ = synapses.SpikePairRule.__doc__
    translations = build_translations(('tau_plus', 'tau_plus'), ('tau_minus', 'tau_minus'), ('A_plus', 'lambda'),
                                      ('A_minus', 'alpha', _translate_A_minus_forwards, _translate_A_minus_reverse))


class _WeightDependence:
    """NEST's stdp_synapse bounds weights in [0, Wmax]: a w_min other than 0 cannot be given."""

    def __init__(self, w_min=0.0, w_max=1.0):
        if w_min != 0:
            raise NotImplementedError("pyNN.dnnc: w_min %g (stdp_synapse bounds weights in [0, Wmax])" % w_min)
        super().__init__(w_min, w_max)


class AdditiveWeightDependence(_WeightDependence, synapses.AdditiveWeightDependence):
    __doc__ = synapses.AdditiveWeightDependence.__doc__
    translations = build_translations(('w_max', 'Wmax'), ('w_min', 'w_min_always_zero'))
    extra_parameters = {"mu_plus": 0.0, "mu_minus": 0.0}


class MultiplicativeWeightDependence(_WeightDependence, synapses.MultiplicativeWeightDependence):
    __doc__ = synapses.MultiplicativeWeightDependence.__doc__
    translations = build_translations(('w_max', 'Wmax'), ('w_min', 'w_min_always_zero'))
    extra_parameters = {"mu_plus": 1.0, "mu_minus": 1.0}


# --- current sources -------------------------------------------------------------------

class _CurrentSource(StandardCurrentSource):
    """A current source: its parameters (native, pA) and the cells it is injected into,
    written as dnnc generator elements when the network is built."""

    def __init__(self, **parameters):
        object.__setattr__(self, "_targets", [])
        object.__setattr__(self, "_native", None)
        StandardCurrentSource.__init__(self, **parameters)
        self.set_native_parameters(self.translate(self.parameter_space))
        simulator.state.current_sources.append(self)
        object.__setattr__(self, "seed", len(simulator.state.current_sources))

    def inject_into(self, cells):
        simulator.not_between_runs("inject_into()")
        for id in cells:
            if not id.celltype.injectable:
                raise TypeError("Can't inject current into a spike source.")
        self._targets.append(cells)
        simulator.state.changed()

    def set_native_parameters(self, parameters):
        parameters.shape = (1,)
        parameters.evaluate(simplify=True)
        before = self._native
        native = dict(before or {})
        native.update(parameters.items())
        native = self._adjusted(native)
        simulator.update_between_runs("changing a current source", lambda: object.__setattr__(self, "_native", native),
                                      lambda: object.__setattr__(self, "_native", before))

    def get_native_parameters(self):
        return ParameterSpace(dict(self._native), shape=(1,))

    def get_parameters(self):
        """{name: value} in PyNN's units (arrays for the step times and amplitudes)."""
        parameters = self.reverse_translate(self.get_native_parameters())
        parameters.evaluate(simplify=True)
        return {name: value.value if isinstance(value, Sequence) else value for name, value in parameters.items()}

    def _adjusted(self, native):
        """The native parameters as dnnc takes them (checked)."""
        return native

    def record(self):
        """The current needs no recording: _get_data computes it (as pyNN.brian2 does)."""

    def _get_data(self):
        """(times in ms, current in nA) at every tick from 0 to now: what the source's
        generator elements add in each tick, by dnnc's formulas and windows (start <= t·dt <
        stop); a noise source's draws are the engine's own for its first target neuron (each
        target draws its own, as NEST's noise_generator)."""
        state = simulator.state
        ticks = np.arange(state.tick + 1)
        time = ticks * state.dt
        current = np.zeros(ticks.size, dtype=np.float32)
        first = next((int(cells[0]) for cells in self._targets if len(cells)), 0)
        for tag, p in self._elements(""):
            on = (p.get("start", 0.0) <= time) & (time < (np.inf if p.get("stop") is None else p["stop"]))
            if tag == "dc":
                values = np.full(ticks.size, p["amplitude"], dtype=np.float32)
            elif tag == "ac":
                radians = 2 * np.pi * p["frequency"] * state.dt / 1000.0
                values = (p["offset"] + p["amplitude"] * np.sin(radians * ticks + p["phase"] * np.pi / 180.0)).astype(np.float32)
            else:
                interval = max(1, int(round(p["dt_ms"] / state.dt)))
                values = _dnnc.noise_current(int(p["seed"]), first, p["mean"], p["std"], interval, ticks.size)
            current += np.where(on, values, np.float32(0))
        return time, current / 1000.0  # pA -> nA

    def _write(self, net):
        for cells in self._targets:
            for element in self._elements(references(cells)):
                net.element(*element[:1], **element[1])

    def _elements(self, to):
        raise NotImplementedError


def _window(native):
    return {"start": native["start"], "stop": native["stop"]}


class DCSource(_CurrentSource, electrodes.DCSource):
    __doc__ = electrodes.DCSource.__doc__
    translations = build_translations(('amplitude', 'amplitude', 1000.0), ('start', 'start'), ('stop', 'stop'))

    def _elements(self, to):
        return [("dc", dict(to=to, amplitude=self._native["amplitude"], **_window(self._native)))]


class StepCurrentSource(_CurrentSource, electrodes.StepCurrentSource):
    """Consecutive <dc> segments: amplitudes[k] from times[k] to times[k + 1]."""
    __doc__ = electrodes.StepCurrentSource.__doc__
    translations = build_translations(('amplitudes', 'amplitudes', 1000.0), ('times', 'times'))

    def _adjusted(self, native):
        """Times rounded to ticks; of steps that land on one tick the last one stays (as
        PyNN's other backends keep them)."""
        times = np.asarray(native["times"].value, dtype=float)
        amplitudes = np.asarray(native["amplitudes"].value, dtype=float)
        if len(times) != len(amplitudes):
            raise ValueError("StepCurrentSource: %d times for %d amplitudes" % (len(times), len(amplitudes)))
        if times.size and times.min() < 0:
            raise ValueError("StepCurrentSource: times must not be negative")
        if np.any(np.diff(times) <= 0):
            raise ValueError("StepCurrentSource: times must increase")
        ticks = np.rint(times / simulator.state.dt)
        last = np.r_[ticks[1:] != ticks[:-1], True]
        return dict(native, times=Sequence(ticks[last] * simulator.state.dt), amplitudes=Sequence(amplitudes[last]))

    def _elements(self, to):
        times = list(np.asarray(self._native["times"].value, dtype=float))
        amplitudes = list(np.asarray(self._native["amplitudes"].value, dtype=float))
        stops = times[1:] + [None]
        return [("dc", dict(to=to, amplitude=a, start=t, stop=stop))
                for t, stop, a in zip(times, stops, amplitudes) if a != 0]


class ACSource(_CurrentSource, electrodes.ACSource):
    __doc__ = electrodes.ACSource.__doc__
    translations = build_translations(('amplitude', 'amplitude', 1000.0), ('offset', 'offset', 1000.0),
                                      ('frequency', 'frequency'), ('phase', 'phase'), ('start', 'start'),
                                      ('stop', 'stop'))

    def _elements(self, to):
        """PyNN's sine has `phase` at `start`; NEST's ac_generator, as dnnc's <ac>, at t = 0
        (PyNN's NEST backend shifts the phase so)."""
        n = self._native
        phase = n["phase"] - 360.0 * n["frequency"] * n["start"] / 1000.0
        return [("ac", dict(to=to, amplitude=n["amplitude"], offset=n["offset"], frequency=n["frequency"],
                            phase=phase, **_window(n)))]


class NoisyCurrentSource(_CurrentSource, electrodes.NoisyCurrentSource):
    __doc__ = electrodes.NoisyCurrentSource.__doc__
    translations = build_translations(('mean', 'mean', 1000.0), ('stdev', 'std', 1000.0), ('dt', 'dt_ms'),
                                      ('start', 'start'), ('stop', 'stop'))

    def _elements(self, to):
        n = self._native
        return [("noise", dict(to=to, mean=n["mean"], std=n["std"], dt_ms=n["dt_ms"],
                               seed=self.seed, **_window(n)))]


__all__ = [name for name, value in list(globals().items())
           if isinstance(value, type) and not name.startswith("_") and value.__module__ == __name__]
