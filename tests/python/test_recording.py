# State recording from Python: Network.record(..., variables=, interval_ms=) and
# Simulation.recorded(), the same arrays on one node as on three, rows in the documented
# order; a variable a model does not have is a DocumentError.
import numpy as np
import pytest

import dnnc


def network():
    net = dnnc.Network("sampled")
    net.population("E", 40, model="iaf_cond_exp", seed=4, I_e=300, v_init=-65, v_init_std=5)
    net.population("A", 10, model="aeif_cond_exp", seed=5, I_e=700, v_init=-65, v_init_std=5)
    net.connect("E", "E", kind="random", p=0.2, weight=2, seed=1)
    net.connect("E", "A", kind="random", p=0.2, weight=2, seed=2)
    net.record("A[2:4]", variables=["V_m", "w"])
    net.record("E[0:3]", variables=["g_ex", "V_m"], interval_ms=1)
    net.record("E")
    return net


def recorded_on(nodes, ticks=200):
    with dnnc.Simulation(network(), nodes=nodes) as sim:
        sim.run(ticks)
        return sim.recorded(), sim.spikes()


def test_recorded_variables_alike_on_one_and_three_nodes_in_order():
    (one, spikes_one), (three, spikes_three) = recorded_on(1), recorded_on(3)
    assert 'variables="g_ex V_m" interval-ms="1"' in network().to_xml()
    assert sorted(one) == ["index", "population", "t_ms", "value", "variable"]
    # samples 0..200 (the state at t_ms 0, 0.1, ..., 20): 2 A neurons x 2 variables every
    # tick, 3 E neurons x 2 every 10th tick
    assert len(one["value"]) == 201 * 4 + 21 * 6
    for key in one:
        assert np.array_equal(one[key], three[key]), key
    assert one["value"].dtype == np.float32 and one["t_ms"].dtype == np.float64
    # t_ms 0, the initial state: E[0], E[1], E[2] (g_ex, V_m each), then A[2], A[3] (V_m, w each)
    assert np.all(one["t_ms"][:10] == 0) and one["t_ms"][10] == 0.1
    assert list(one["value"][[0, 2, 4, 7, 9]]) == [0] * 5  # g_ex and w start at 0
    assert list(one["population"][:10]) == ["E"] * 6 + ["A"] * 4
    assert list(one["index"][:10]) == [0, 0, 1, 1, 2, 2, 2, 2, 3, 3]
    assert list(one["variable"][:6]) == ["g_ex", "V_m"] * 3
    assert list(one["variable"][6:10]) == ["V_m", "w"] * 2
    assert np.all(np.diff(one["t_ms"]) >= 0)
    assert np.all(one["value"][one["variable"] == "V_m"] < 0)
    for a, b in zip(spikes_one, spikes_three):
        assert np.array_equal(a, b)


def test_a_variable_the_model_does_not_have_is_a_document_error():
    net = dnnc.Network("bad")
    net.population("E", 4, model="iaf_psc_exp")
    net.record("E", variables=["g_ex"])
    with pytest.raises(dnnc.DocumentError, match="which has no variable 'g_ex' \\(it records V_m, I_syn_ex, I_syn_in\\)"):
        dnnc.Simulation(net, nodes=1)
