# NEST's neuron models built in Python: NEST's parameter names as the document spells them,
# and the same spikes on one node as on three.
import numpy as np
import pytest

import dnnc


def alpha_network():
    net = dnnc.Network("alpha")
    net.population("A", 60, model="iaf_psc_alpha", seed=4, C_m=200, tau_m=15, tau_syn_ex=0.5, tau_syn_in=3,
                   t_ref=1.5, V_th=-54, I_e=300, v_init=-65, v_init_std=5)
    net.connect("A[0:48]", "A", kind="random", p=0.2, weight=60, seed=1)
    net.connect("A[48:60]", "A", kind="random", p=0.2, weight=-200, delay=2, seed=2)
    net.record("A")
    return net


def spikes_on(net, nodes, ticks=400):
    with dnnc.Simulation(net, nodes=nodes) as sim:
        sim.run(ticks)
        return sim.spikes()


def test_iaf_psc_alpha_takes_nest_names():
    text = alpha_network().to_xml()
    for attribute in ('model="iaf_psc_alpha"', 'C_m="200"', 'tau_m="15"', 'tau_syn_ex="0.5"', 't_ref="1.5"', 'V_th="-54"'):
        assert attribute in text
    assert "tau-m" not in text


def test_iaf_psc_alpha_spikes_alike_on_one_and_three_nodes():
    one, three = spikes_on(alpha_network(), 1), spikes_on(alpha_network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


def izhikevich_network():
    net = dnnc.Network("izhikevich")
    net.population("Z", 40, model="izhikevich", seed=1, I_e=20, V_min=-90, v_init=-70, v_init_std=5)
    net.population("F", 10, model="izhikevich", a=0.1, d=2, I_e=15, consistent_integration=False)
    net.connect("Z", "Z", kind="random", p=0.1, weight=2, seed=1)
    net.connect("F", "Z", kind="random", p=0.2, weight=-4, delay=2, seed=2)
    net.connect("Z", "F", kind="random", p=0.1, weight=3, seed=3)
    net.record("Z")
    return net


def test_izhikevich_takes_nest_names():
    text = izhikevich_network().to_xml()
    for attribute in ('model="izhikevich"', 'V_min="-90"', 'a="0.1"', 'd="2"', 'consistent_integration="false"', 'I_e="20"'):
        assert attribute in text


def test_izhikevich_spikes_alike_on_one_and_three_nodes():
    one, three = spikes_on(izhikevich_network(), 1), spikes_on(izhikevich_network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


def cond_exp_network():
    net = dnnc.Network("cond")
    net.population("C", 60, model="iaf_cond_exp", seed=4, g_L=20, E_ex=5, E_in=-80, tau_syn_in=3, I_e=350,
                   v_init=-65, v_init_std=5)
    net.connect("C[0:48]", "C", kind="random", p=0.2, weight=2, seed=1)
    net.connect("C[48:60]", "C", kind="random", p=0.2, weight=-8, delay=2, seed=2)
    net.record("C")
    return net


def test_iaf_cond_exp_takes_nest_names():
    text = cond_exp_network().to_xml()
    for attribute in ('model="iaf_cond_exp"', 'g_L="20"', 'E_ex="5"', 'E_in="-80"', 'tau_syn_in="3"', 'I_e="350"'):
        assert attribute in text


def test_iaf_cond_exp_spikes_alike_on_one_and_three_nodes():
    one, three = spikes_on(cond_exp_network(), 1), spikes_on(cond_exp_network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


def recurrent(model, excitatory, inhibitory, **params):
    """60 neurons of `model` (the first 48 excitatory) with random recurrent synapses, all recorded."""
    net = dnnc.Network(model)
    net.population("N", 60, model=model, seed=4, v_init=-65, v_init_std=5, **params)
    net.connect("N[0:48]", "N", kind="random", p=0.2, weight=excitatory, seed=1)
    net.connect("N[48:60]", "N", kind="random", p=0.2, weight=inhibitory, delay=2, seed=2)
    net.record("N")
    return net


CONDUCTANCE_MODELS = [
    ("iaf_cond_alpha", 1, -4, dict(E_in=-80, tau_syn_ex=0.5, I_e=350), ('E_in="-80"',)),
    ("aeif_cond_exp", 2, -8, dict(I_e=700, tau_w=100, Delta_T=2.5, V_peak=10, t_ref=1),
     ('Delta_T="2.5"', 'tau_w="100"', 'V_peak="10"')),
    ("aeif_cond_alpha", 1, -4, dict(I_e=700, tau_w=100, tau_syn_ex=1, t_ref=1), ('tau_syn_ex="1"', 'tau_w="100"')),
    ("hh_cond_exp_traub", 2, -8, dict(I_e=600, g_K=5500, V_T=-62, E_L=-65), ('g_K="5500"', 'V_T="-62"')),
]


@pytest.mark.parametrize("model, excitatory, inhibitory, params, written", CONDUCTANCE_MODELS,
                         ids=[m[0] for m in CONDUCTANCE_MODELS])
def test_a_model_takes_nest_names_and_spikes_alike_on_one_and_three_nodes(model, excitatory, inhibitory, params, written):
    xml = recurrent(model, excitatory, inhibitory, **params).to_xml()
    assert all(attribute in xml for attribute in ('model="%s"' % model, *written))
    one = spikes_on(recurrent(model, excitatory, inhibitory, **params), 1)
    three = spikes_on(recurrent(model, excitatory, inhibitory, **params), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)
