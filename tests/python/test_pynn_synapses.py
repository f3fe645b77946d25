# pyNN.dnnc's synapse types: TsodyksMarkramSynapse as NEST's tsodyks2_synapse, STDPMechanism
# as stdp_synapse, each against the same synapse model written by hand as a dnnc network.
import numpy as np
import pytest

import dnnc
from pynn_support import dnnc_spike_times, sim, spike_times

PRE = [10.0, 30.0, 50.0, 70.0, 90.0, 110.0]


def pynn_pair(synapse, ms=150.0):
    """A spike source firing at PRE into an IF_curr_exp neuron driven just below threshold:
    the neuron's spike times and the projection's weights after the run."""
    sim.setup(timestep=0.1, nodes=2)
    source = sim.Population(1, sim.SpikeSourceArray(spike_times=PRE))
    cell = sim.Population(1, sim.IF_curr_exp(i_offset=0.7, tau_refrac=2.0))
    prj = sim.Projection(source, cell, sim.AllToAllConnector(), synapse)
    cell.record("spikes")
    sim.run(ms)
    result = spike_times(cell).get(0, np.zeros(0)), prj.get("weight", format="list")
    sim.end()
    return result


def by_hand_pair(model, ms=150.0, weight=0.0, **params):
    net = dnnc.Network("by_hand", dt=0.1)
    net.spike_source("s", size=1, spikes=(PRE, [0] * len(PRE)))
    net.population("n", 1, model="iaf_psc_exp", C_m=1000, tau_m=20, tau_syn_ex=5, tau_syn_in=5, t_ref=2, E_L=-65,
                   V_th=-50, V_reset=-65, I_e=700, v_init=-65, **params.pop("neuron", {}))
    net.synapse_model("m", model, **params)
    net.connect("s", "n", kind="all", weight=weight, delay_ms=1.0, synapse_model="m", id="p")
    net.record("n")
    with dnnc.Simulation(net, nodes=2) as run:
        run.run(int(ms / 0.1))
        _, _, weights = run.weights("p")
    return dnnc_spike_times(net, int(ms / 0.1)).get(("n", 0), np.zeros(0)), weights


def test_tsodyks_markram_is_tsodyks2_synapse():
    synapse = sim.TsodyksMarkramSynapse(U=0.4, tau_rec=200.0, tau_facil=50.0, weight=4.0, delay=1.0)
    times, weights = pynn_pair(synapse)
    expected, _ = by_hand_pair("tsodyks2_synapse", weight=4000.0, U=0.4, u=0.4, tau_rec=200.0, tau_fac=50.0)
    assert len(times) >= 2
    np.testing.assert_allclose(times, expected, atol=1e-9)
    assert [w for _, _, w in weights] == [4.0]  # w itself never changes


def test_stdp_mechanism_is_stdp_synapse():
    synapse = sim.STDPMechanism(timing_dependence=sim.SpikePairRule(tau_plus=16.0, tau_minus=30.0, A_plus=0.05,
                                                                    A_minus=0.06),
                                weight_dependence=sim.AdditiveWeightDependence(w_min=0.0, w_max=6.0),
                                weight=3.0, delay=1.0)
    times, weights = pynn_pair(synapse)
    expected, expected_weights = by_hand_pair("stdp_synapse", weight=3000.0, tau_plus=16.0, lambda_=0.05,
                                              alpha=1.2, mu_plus=0.0, mu_minus=0.0, Wmax=6000.0,
                                              neuron={"tau_minus": 30.0})
    assert len(times) >= 2
    np.testing.assert_allclose(times, expected, atol=1e-9)
    (_, _, w), = weights
    assert w != pytest.approx(3.0)  # it learned
    assert w == pytest.approx(float(expected_weights[0]) / 1000.0, rel=1e-6)


def test_multiplicative_weight_dependence_and_the_bounds_stdp_synapse_has():
    rule = sim.SpikePairRule(tau_plus=20.0, tau_minus=20.0, A_plus=0.01, A_minus=0.012)
    synapse = sim.STDPMechanism(timing_dependence=rule,
                                weight_dependence=sim.MultiplicativeWeightDependence(w_max=2.0), weight=1.0)
    sim.setup(timestep=0.1, nodes=1)
    a, b = sim.Population(2, sim.IF_curr_exp()), sim.Population(2, sim.IF_cond_exp())
    sim.Projection(a, b, sim.OneToOneConnector(), synapse, receptor_type="inhibitory")
    text = sim.simulator.state.network().to_xml()
    for attribute in ('model="stdp_synapse"', 'Wmax="-2000"', 'lambda="0.01"', 'alpha="1.2', 'weight="-1000"',
                      'mu_plus="1"', 'mu_minus="1"'):
        assert attribute in text
    with pytest.raises(NotImplementedError, match="w_min"):
        sim.AdditiveWeightDependence(w_min=0.1, w_max=1.0)
    sim.end()


def test_synapse_types_dnnc_lacks_raise_naming_them():
    with pytest.raises(NotImplementedError, match="GutigWeightDependence"):
        sim.GutigWeightDependence()
    with pytest.raises(NotImplementedError, match="dendritic_delay_fraction"):
        sim.STDPMechanism(timing_dependence=sim.SpikePairRule(), weight_dependence=sim.AdditiveWeightDependence(),
                          dendritic_delay_fraction=0.5)


def test_a_synapse_models_parameters_are_set_per_projection():
    sim.setup(timestep=0.1, nodes=1)
    a, b = sim.Population(3, sim.IF_curr_exp()), sim.Population(3, sim.IF_curr_exp())
    synapse = sim.TsodyksMarkramSynapse(U=0.5, tau_rec=100.0, weight=0.2)
    first = sim.Projection(a, b, sim.AllToAllConnector(), synapse)
    second = sim.Projection(a, b, sim.OneToOneConnector(), synapse)
    first.set(U=0.25, tau_facil=20.0)
    assert {u for _, _, u in first.get("U", format="list")} == {0.25}
    assert {u for _, _, u in second.get("U", format="list")} == {0.5}
    text = sim.simulator.state.network().to_xml()
    assert 'U="0.25"' in text and 'tau_fac="20"' in text and 'U="0.5"' in text
    sim.end()


def spikes_with_a_u_per_connection(nodes, per_connection):
    """Spike times of 4 cells driven through depressing synapses whose U is 0.2 + 0.1·(i + j):
    given per connection, or written as one projection per value of U."""
    sim.setup(timestep=0.1, nodes=nodes)
    inputs = sim.Population(3, sim.SpikeSourceArray(spike_times=[[5.0, 15.0, 25.0, 35.0]] * 3))
    cells = sim.Population(4, sim.IF_curr_exp(tau_refrac=2.0, v_thresh=-60.0))
    u = lambda i, j: 0.2 + 0.1 * (i + j)
    if per_connection:
        prj = sim.Projection(inputs, cells, sim.AllToAllConnector(),
                             sim.TsodyksMarkramSynapse(U=np.fromfunction(u, (3, 4)), tau_rec=200.0, weight=1.5))
        assert prj.get("U", format="array") == pytest.approx(np.fromfunction(u, (3, 4)))
    else:
        for i in range(3):
            for j in range(4):
                sim.Projection(inputs[i:i + 1], cells[j:j + 1], sim.AllToAllConnector(),
                               sim.TsodyksMarkramSynapse(U=u(i, j), tau_rec=200.0, weight=1.5))
    cells.record("spikes")
    sim.run(50.0)
    times = spike_times(cells)
    sim.end()
    return times


def test_a_synapse_models_parameter_given_per_connection_runs_as_one_projection_per_value():
    expected = spikes_with_a_u_per_connection(1, per_connection=False)
    assert sum(len(t) for t in expected.values()) >= 4
    for nodes in (1, 2):
        got = spikes_with_a_u_per_connection(nodes, per_connection=True)
        assert got.keys() == expected.keys()
        for k in expected:
            np.testing.assert_array_equal(got[k], expected[k])


def stdp_weights_set_between_runs(nodes):
    """20 sources firing regularly into 5 cells through STDP synapses of weight 1 whose
    weights are set to 2.5 after 60 ms: the weights right after the set, and after 60 ms more."""
    sim.setup(timestep=0.1, nodes=nodes)
    times = [[5.0 + 7.0 * k + 0.3 * i for k in range(17)] for i in range(20)]
    sources = sim.Population(20, sim.SpikeSourceArray(spike_times=times))
    cells = sim.Population(5, sim.IF_curr_exp(i_offset=0.5, tau_refrac=2.0))
    synapse = sim.STDPMechanism(timing_dependence=sim.SpikePairRule(tau_plus=16.0, tau_minus=30.0, A_plus=0.05,
                                                                    A_minus=0.06),
                                weight_dependence=sim.AdditiveWeightDependence(w_min=0.0, w_max=6.0),
                                weight=1.0, delay=1.0)
    prj = sim.Projection(sources, cells, sim.AllToAllConnector(), synapse)
    sim.run(60.0)
    prj.set(weight=2.5)
    right_after = np.array([w for _, _, w in prj.get("weight", format="list")])
    sim.run(60.0)
    learned = np.array([w for _, _, w in prj.get("weight", format="list")])
    sim.end()
    return right_after, learned


def test_stdp_weights_set_between_runs_are_the_cluster_s_and_learn_on_alike_on_1_and_3_nodes():
    right_after, learned = stdp_weights_set_between_runs(1)
    np.testing.assert_allclose(right_after, 2.5, rtol=1e-6)
    assert np.any(np.abs(learned - 2.5) > 1e-3)  # it learned on from there
    _, learned_on_3 = stdp_weights_set_between_runs(3)
    np.testing.assert_array_equal(learned, learned_on_3)


def synapse_parameters_set_between_runs(nodes, synapse, **change):
    """The network of stdp_weights_set_between_runs with `synapse`, `change` set on its
    projection after 20 ms (none: unchanged): the weights and the cells' spikes after 80 ms
    more."""
    sim.setup(timestep=0.1, nodes=nodes)
    times = [[5.0 + 7.0 * k + 0.3 * i for k in range(17)] for i in range(20)]
    sources = sim.Population(20, sim.SpikeSourceArray(spike_times=times))
    cells = sim.Population(5, sim.IF_curr_exp(i_offset=0.5, tau_refrac=2.0))
    prj = sim.Projection(sources, cells, sim.AllToAllConnector(), synapse)
    cells.record("spikes")
    sim.run(20.0)
    if change:
        prj.set(**change)
    sim.run(80.0)
    result = np.array([w for _, _, w in prj.get("weight", format="list")]), spike_times(cells)
    sim.end()
    return result


def stdp_synapse():
    return sim.STDPMechanism(timing_dependence=sim.SpikePairRule(tau_plus=16.0, tau_minus=30.0, A_plus=0.05, A_minus=0.06),
                             weight_dependence=sim.AdditiveWeightDependence(w_min=0.0, w_max=6.0), weight=3.0, delay=1.0)


def test_synapse_parameters_set_between_runs_are_the_cluster_s_alike_on_1_and_3_nodes():
    unchanged, _ = synapse_parameters_set_between_runs(1, stdp_synapse())
    learned, _ = synapse_parameters_set_between_runs(1, stdp_synapse(), A_plus=0.3, A_minus=0.01, w_max=8.0)
    assert np.any(np.abs(learned - unchanged) > 1e-3)  # the new rates of learning made a difference
    learned_on_3, _ = synapse_parameters_set_between_runs(3, stdp_synapse(), A_plus=0.3, A_minus=0.01, w_max=8.0)
    np.testing.assert_array_equal(learned, learned_on_3)
    # A Tsodyks-Markram synapse's U: its synapses' u (which starts at U) runs on as it was.
    tsodyks = lambda: sim.TsodyksMarkramSynapse(U=0.3, tau_rec=200.0, tau_facil=50.0, weight=1.5, delay=1.0)
    _, before = synapse_parameters_set_between_runs(1, tsodyks())
    _, after = synapse_parameters_set_between_runs(1, tsodyks(), U=0.8, tau_rec=40.0)
    # The new U and tau_rec changed the cells' spikes (compared train by train: a dict's !=
    # on arrays of other lengths is always true).
    assert before.keys() != after.keys() or any(not np.array_equal(before[k], after[k]) for k in before)
    _, after_on_3 = synapse_parameters_set_between_runs(3, tsodyks(), U=0.8, tau_rec=40.0)
    assert after.keys() == after_on_3.keys()
    for k in after:
        np.testing.assert_array_equal(after[k], after_on_3[k])


def test_stdp_delays_set_between_runs_are_the_cluster_s_alike_on_1_and_3_nodes():
    # Spikes on their way keep the delay they were sent with (docs/simulation.md).
    learning = lambda: sim.STDPMechanism(
        timing_dependence=sim.SpikePairRule(tau_plus=16.0, tau_minus=30.0, A_plus=0.3, A_minus=0.01),
        weight_dependence=sim.AdditiveWeightDependence(w_min=0.0, w_max=8.0), weight=3.0, delay=1.0)
    unchanged, _ = synapse_parameters_set_between_runs(1, learning())
    shorter, spikes = synapse_parameters_set_between_runs(1, learning(), delay=0.4)
    assert np.any(np.abs(shorter - unchanged) > 1e-3)
    assert prj_delays_after_set() == [0.4] * 4
    shorter_on_3, spikes_on_3 = synapse_parameters_set_between_runs(3, learning(), delay=0.4)
    np.testing.assert_array_equal(shorter, shorter_on_3)
    assert spikes.keys() == spikes_on_3.keys()
    for k in spikes:
        np.testing.assert_array_equal(spikes[k], spikes_on_3[k])


def stdp_after_a_run(sources):
    """`sources` spike sources onto 2 cells through stdp_synapse(), after a first run of 10 ms."""
    sim.setup(timestep=0.1, nodes=2)
    spikes = sim.Population(sources, sim.SpikeSourceArray(spike_times=[[5.0, 9.0]] * sources))
    cells = sim.Population(2, sim.IF_curr_exp())
    prj = sim.Projection(spikes, cells, sim.AllToAllConnector(), stdp_synapse())
    sim.run(10.0)
    return prj


def prj_delays_after_set():
    prj = stdp_after_a_run(2)
    prj.set(delay=0.4)
    sim.run(10.0)
    delays = [d for _, _, d in prj.get("delay", format="list")]
    sim.end()
    return delays


def test_a_synapse_parameter_that_times_traces_is_refused_between_runs_and_undone():
    prj = stdp_after_a_run(4)
    with pytest.raises(NotImplementedError, match="changes tau_plus, which times the traces"):
        prj.set(tau_plus=30.0)
    assert prj.get("tau_plus", format="list")[0][2] == 16.0
    sim.run(10.0)
    sim.end()
