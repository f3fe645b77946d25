# pyNN.dnnc's standard cell types: each translated to NEST's model of dnnc with PyNN's units
# converted (nF -> pF, nA -> pA, µS -> nS), checked against the same neuron written by hand
# as a dnnc network, and against a spike time worked out on paper.
import math

import numpy as np
import pytest

import dnnc
from pyNN import errors
from pynn_support import dnnc_spike_times, sim, spike_times

TICKS = 2000  # 200 ms at dt 0.1


def driven(celltype, nodes=1, **initial):
    """One neuron of `celltype` driven by its i_offset; its spike times over 200 ms."""
    sim.setup(timestep=0.1, nodes=nodes)
    cell = sim.Population(1, celltype, initial_values=initial)
    cell.record("spikes")
    sim.run(TICKS * 0.1)
    times = spike_times(cell)[0]
    sim.end()
    return times


# PyNN's parameters and NEST's, as the same neuron: (cell type, its dnnc population).
CASES = {
    "IF_curr_exp": (lambda: sim.IF_curr_exp(cm=0.25, tau_m=10.0, tau_refrac=2.0, v_rest=-70.0, v_reset=-68.0,
                                            v_thresh=-55.0, i_offset=0.4),
                    dict(model="iaf_psc_exp", C_m=250, tau_m=10, t_ref=2, E_L=-70, V_reset=-68, V_th=-55, I_e=400)),
    "IF_curr_alpha": (lambda: sim.IF_curr_alpha(cm=0.25, tau_m=10.0, tau_refrac=2.0, v_rest=-70.0, v_reset=-68.0,
                                                v_thresh=-55.0, i_offset=0.4),
                      dict(model="iaf_psc_alpha", C_m=250, tau_m=10, t_ref=2, E_L=-70, V_reset=-68, V_th=-55, I_e=400,
                           tau_syn_ex=0.5, tau_syn_in=0.5)),
    "IF_curr_delta": (lambda: sim.IF_curr_delta(cm=0.25, tau_m=10.0, tau_refrac=2.0, v_rest=-70.0, v_reset=-68.0,
                                                v_thresh=-55.0, i_offset=0.4),
                      dict(model="iaf_psc_delta", C_m=250, tau_m=10, t_ref=2, E_L=-70, V_reset=-68, V_th=-55, I_e=400)),
    "IF_cond_exp": (lambda: sim.IF_cond_exp(cm=0.25, tau_m=12.5, tau_refrac=2.0, v_rest=-70.0, v_reset=-68.0,
                                            v_thresh=-55.0, i_offset=0.4, e_rev_E=5.0, e_rev_I=-75.0),
                    dict(model="iaf_cond_exp", C_m=250, g_L=20, t_ref=2, E_L=-70, V_reset=-68, V_th=-55, I_e=400,
                         E_ex=5, E_in=-75, tau_syn_ex=5, tau_syn_in=5)),
    "IF_cond_alpha": (lambda: sim.IF_cond_alpha(cm=0.25, tau_m=12.5, tau_refrac=2.0, v_rest=-70.0, v_reset=-68.0,
                                                v_thresh=-55.0, i_offset=0.4),
                      dict(model="iaf_cond_alpha", C_m=250, g_L=20, t_ref=2, E_L=-70, V_reset=-68, V_th=-55, I_e=400,
                           E_ex=0, E_in=-70, tau_syn_ex=0.3, tau_syn_in=0.5)),
    # PyNN's defaults otherwise, translated as PyNN's NEST backend does (cm·1000, cm/tau_m·1000, ...).
    "EIF_cond_alpha_isfa_ista": (lambda: sim.EIF_cond_alpha_isfa_ista(i_offset=1.0, tau_refrac=2.0, v_spike=-40.0),
                                 dict(model="aeif_cond_alpha", C_m=0.281 * 1000.0, g_L=0.281 / 9.3667 * 1000.0, t_ref=2,
                                      V_peak=-40, V_reset=-70.6, E_L=-70.6, I_e=1000, a=4, b=0.0805 * 1000.0, Delta_T=2,
                                      tau_w=144, V_th=-50.4, E_ex=0, E_in=-80, tau_syn_ex=5, tau_syn_in=5, v_init=-70.6)),
    "HH_cond_exp": (lambda: sim.HH_cond_exp(i_offset=1.0),
                    dict(model="hh_cond_exp_traub", g_Na=20.0 * 1000.0, g_K=6.0 * 1000.0, g_L=0.01 * 1000.0,
                         C_m=0.2 * 1000.0, V_T=-63, E_Na=50, E_K=-90, E_L=-65, E_ex=0, E_in=-80, tau_syn_ex=0.2,
                         tau_syn_in=2, I_e=1000)),
    "Izhikevich": (lambda: sim.Izhikevich(a=0.02, b=0.2, c=-65.0, d=6.0, i_offset=0.014),
                   dict(model="izhikevich", a=0.02, b=0.2, c=-65, d=6, I_e=14, v_init=-70)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cell_type_spikes_as_the_same_nest_model_in_dnnc(name):
    make, population = CASES[name]
    initial = {"u": 0.0} if name == "Izhikevich" else {}
    times = driven(make(), **initial)
    net = dnnc.Network("by_hand", dt=0.1)
    net.population("n", 1, **{"v_init": -65, **population})
    net.record()
    expected = dnnc_spike_times(net, TICKS)[("n", 0)]
    assert len(times) >= 3
    np.testing.assert_allclose(times, expected, rtol=0, atol=1e-9)


def test_if_curr_exp_first_spike_where_the_membrane_equation_puts_it():
    # From v_rest, V(t) = v_rest + R·I·(1 - e^(-t/tau_m)); it reaches v_thresh at
    # t = tau_m·ln(R·I / (R·I - (v_thresh - v_rest))); the spike is reported at the end of
    # the tick that crosses, as NEST reports it.
    times = driven(sim.IF_curr_exp(cm=1.0, tau_m=20.0, i_offset=1.0, tau_refrac=2.0))
    crossing = 20.0 * math.log(20.0 / (20.0 - 15.0))
    assert times[0] == pytest.approx(math.ceil(crossing / 0.1) * 0.1)
    np.testing.assert_allclose(np.diff(times), times[0] + 2.0, atol=1e-9)


def test_the_same_spikes_on_one_and_three_nodes():
    def network(nodes):
        sim.setup(timestep=0.1, nodes=nodes)
        exc = sim.Population(80, sim.IF_cond_exp(i_offset=0.9, tau_refrac=2.0))
        inh = sim.Population(20, sim.IF_curr_alpha(i_offset=0.5))
        exc.initialize(v=sim.RandomDistribution("uniform", low=-65.0, high=-50.0, rng=sim.NumpyRNG(seed=3)))
        sim.Projection(exc, exc, sim.FixedProbabilityConnector(0.1, rng=sim.NumpyRNG(seed=1)),
                       sim.StaticSynapse(weight=0.002, delay=1.0))
        sim.Projection(exc, inh, sim.FixedNumberPreConnector(8), sim.StaticSynapse(weight=0.05))
        sim.Projection(inh, exc, sim.AllToAllConnector(), sim.StaticSynapse(weight=0.001, delay=0.5),
                       receptor_type="inhibitory")
        exc.record("spikes")
        inh.record("spikes")
        sim.run(300.0)
        result = spike_times(exc), spike_times(inh)
        sim.end()
        return result

    one, three = network(1), network(3)
    assert sum(len(t) for t in one[0].values()) > 100
    for a, b in zip(one, three):
        assert a.keys() == b.keys()
        for i in a:
            np.testing.assert_array_equal(a[i], b[i])


def test_eif_cond_exp_isfa_ista_is_nest_aeif_cond_exp():
    sim.setup(timestep=0.1, nodes=1)
    cells = sim.Population(2, sim.EIF_cond_exp_isfa_ista(cm=0.2, tau_m=10.0, a=2.0, b=0.05, delta_T=1.5,
                                                         v_spike=-30.0, i_offset=0.6))
    text = sim.simulator.state.network().to_xml() if "aeif_cond_exp" in _dnnc_models() else None
    sim.end()
    if text is None:
        pytest.skip("this dnnc has no aeif_cond_exp model yet")
    for attribute in ('model="aeif_cond_exp"', 'C_m="200"', 'g_L="20"', 'a="2"', 'b="50"', 'Delta_T="1.5"',
                      'V_peak="-30"', 'I_e="600"'):
        assert attribute in text


def _dnnc_models():
    """The neuron models this dnnc reads (from the errors of a document naming none)."""
    net = dnnc.Network("probe")
    net.population("x", 1, model="aeif_cond_exp")
    try:
        net.validate()
        return {"aeif_cond_exp"}
    except dnnc.DocumentError:
        return set()


def test_per_neuron_parameters_split_a_population_into_groups():
    # Members with equal parameters form a group, one dnnc population each, in order: the
    # neurons keep their numbers and each spikes as the same neuron written by hand.
    sim.setup(timestep=0.1, nodes=2)
    cells = sim.Population(5, sim.IF_curr_exp(i_offset=[0.4, 0.4, 0.8, 0.8, 0.0], tau_refrac=2.0))
    cells[4:5].set(i_offset=1.2)
    cells.initialize(v=[-65.0, -65.0, -60.0, -60.0, -60.0])
    cells.record("spikes")
    source = sim.Population(2, sim.SpikeSourceArray(spike_times=[[1.0], [2.0]]))
    sim.Projection(source, cells, sim.AllToAllConnector(), sim.StaticSynapse(weight=0.01))
    recurrent = sim.Projection(cells, cells, sim.FixedNumberPostConnector(2), sim.StaticSynapse(weight=0.0))
    text = sim.simulator.state.network().to_xml()
    # fixed-outdegree over a target of several groups: PyNN draws it, as list projections.
    assert len(recurrent) == 10 and 'kind="list"' in text and text.count('kind="all"') == 3
    sim.run(100.0)
    times = spike_times(cells)
    assert cells.get("i_offset") == pytest.approx([0.4, 0.4, 0.8, 0.8, 1.2])
    sim.end()
    assert [g in text for g in ('id="p0_0" size="2"', 'id="p0_1" size="2"', 'id="p0_2" size="1"')] == [True] * 3
    net = dnnc.Network("by_hand", dt=0.1)
    for name, size, current, v in (("a", 2, 400, -65), ("b", 2, 800, -60), ("c", 1, 1200, -60)):
        net.population(name, size, model="iaf_psc_exp", C_m=1000, tau_m=20, tau_syn_ex=5, tau_syn_in=5, t_ref=2,
                       E_L=-65, V_th=-50, V_reset=-65, I_e=current, v_init=v)
    net.spike_source("s", size=2, spikes=([1.0, 2.0], [0, 1]))
    net.connect("s", "a", kind="all", weight=10.0, delay_ms=0.1)
    net.connect("s", "b", kind="all", weight=10.0, delay_ms=0.1)
    net.connect("s", "c", kind="all", weight=10.0, delay_ms=0.1)
    net.record()
    expected = dnnc_spike_times(net, 1000)
    assert sum(len(t) for t in times.values()) >= 6
    for i, key in enumerate([("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0)]):
        np.testing.assert_allclose(times.get(i, []), expected.get(key, []), atol=1e-9)


def test_initial_potentials_given_per_member_keep_one_population_and_start_each_member():
    # An array, or a distribution dnnc does not draw (PyNN draws it), is dnnc's v-init list:
    # one dnnc population, each member from its own value, the same on 1 and 3 nodes.
    given = np.linspace(-70.0, -52.0, 40)
    gamma = sim.RandomDistribution("gamma", k=2.0, theta=1.5, rng=sim.NumpyRNG(seed=8))

    def run(nodes):
        sim.setup(timestep=0.1, nodes=nodes)
        cells = sim.Population(40, sim.IF_curr_alpha(i_offset=1.0, tau_refrac=2.0))
        cells.initialize(v=given)
        drawn = sim.Population(10, sim.IF_curr_exp(v_rest=-60.0), initial_values={"v": gamma})
        cells.record(["spikes", "v"]), drawn.record("v")
        text = sim.simulator.state.network().to_xml()
        sim.run(60.0)
        v0 = np.asarray(cells.get_data().segments[0].analogsignals[0].magnitude)[0]
        drawn_v0 = np.asarray(drawn.get_data().segments[0].analogsignals[0].magnitude)[0]
        times = spike_times(cells)
        sim.end()
        return text, v0, drawn_v0, times

    text, v0, drawn_v0, times = run(1)
    assert text.count("<population ") == 2 and 'v-init="-70 ' in text
    np.testing.assert_array_equal(v0, given.astype(np.float32))
    expected = sim.RandomDistribution("gamma", k=2.0, theta=1.5, rng=sim.NumpyRNG(seed=8)).next(10)
    np.testing.assert_array_equal(drawn_v0, expected.astype(np.float32))
    assert sum(len(t) for t in times.values()) > 40
    _, v0_3, _, times_3 = run(3)
    np.testing.assert_array_equal(v0_3, v0)
    assert sorted(times_3) == sorted(times)
    for k in times:
        np.testing.assert_array_equal(times_3[k], times[k])


def test_initial_values_dnnc_cannot_start_from_are_refused():
    sim.setup(timestep=0.1, nodes=1)
    cells = sim.Population(3, sim.IF_cond_exp())
    with pytest.raises(NotImplementedError, match="gsyn_exc"):
        cells.initialize(gsyn_exc=0.01)
    with pytest.raises(NotImplementedError, match="part of a population"):
        cells[0:1].initialize(v=-60.0)
    izhikevich = sim.Population(2, sim.Izhikevich())  # PyNN starts u at -14 mV/ms: dnnc's u-init
    assert 'u-init="-14"' in sim.simulator.state.network().to_xml()
    with pytest.raises(NotImplementedError, match="per-neuron values of 'initial u'"):
        izhikevich.initialize(u=[-14.0, -10.0])
    sim.end()


def test_cell_types_dnnc_lacks_raise_naming_them():
    sim.setup(timestep=0.1, nodes=1)
    with pytest.raises(NotImplementedError, match="IF_cond_exp_gsfa_grr"):
        sim.Population(1, sim.IF_cond_exp_gsfa_grr())
    with pytest.raises(errors.NonExistentParameterError):
        sim.IF_curr_exp(tau_mm=3.0)
    with pytest.raises(errors.InvalidParameterValueError):
        sim.IF_curr_exp(tau_m="fast")
    sim.end()


def test_parameter_values_dnnc_refuses_are_pynn_errors_that_change_nothing():
    sim.setup(timestep=0.1, nodes=1)
    with pytest.raises(errors.InvalidParameterValueError, match="tau_m must be a positive number"):
        sim.Population(2, sim.IF_curr_exp(tau_m=-1.0))
    with pytest.raises(errors.InvalidParameterValueError, match="V_reset must lie below V_th"):
        sim.Population(2, sim.IF_cond_exp(v_reset=-40.0, v_thresh=-50.0))
    with pytest.raises(errors.InvalidParameterValueError, match="rate must be finite numbers >= 0"):
        sim.Population(2, sim.SpikeSourcePoisson(rate=-5.0))
    cells = sim.Population(2, sim.IF_curr_exp(tau_refrac=1.0))
    with pytest.raises(errors.InvalidParameterValueError, match="t_ref must be a number >= 0"):
        cells.set(tau_refrac=-1.0)
    assert cells.get("tau_refrac") == pytest.approx(1.0)
    sim.run(1.0)
    with pytest.raises(errors.InvalidParameterValueError, match="t_ref"):
        cells.set(tau_refrac=-2.0)  # between runs: refused before the cluster hears of it
    assert cells.get("tau_refrac") == pytest.approx(1.0)
    sim.end()

