# NEST's neuron models built in Python: NEST's parameter names as the document spells them,
# and the same spikes on one node as on three.
import numpy as np

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


def test_iaf_cond_alpha_spikes_alike_on_one_and_three_nodes():
    def network():
        net = dnnc.Network("cond_alpha")
        net.population("C", 60, model="iaf_cond_alpha", seed=4, E_in=-80, tau_syn_ex=0.5, I_e=350, v_init=-65, v_init_std=5)
        net.connect("C[0:48]", "C", kind="random", p=0.2, weight=1, seed=1)
        net.connect("C[48:60]", "C", kind="random", p=0.2, weight=-4, delay=2, seed=2)
        net.record("C")
        return net
    assert 'model="iaf_cond_alpha"' in network().to_xml() and 'E_in="-80"' in network().to_xml()
    one, three = spikes_on(network(), 1), spikes_on(network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


def test_aeif_cond_exp_spikes_alike_on_one_and_three_nodes():
    def network():
        net = dnnc.Network("adex")
        net.population("A", 60, model="aeif_cond_exp", seed=4, I_e=700, tau_w=100, Delta_T=2.5, V_peak=10, t_ref=1,
                       v_init=-65, v_init_std=5)
        net.connect("A[0:48]", "A", kind="random", p=0.2, weight=2, seed=1)
        net.connect("A[48:60]", "A", kind="random", p=0.2, weight=-8, delay=2, seed=2)
        net.record("A")
        return net
    xml = network().to_xml()
    assert 'model="aeif_cond_exp"' in xml and 'Delta_T="2.5"' in xml and 'tau_w="100"' in xml and 'V_peak="10"' in xml
    one, three = spikes_on(network(), 1), spikes_on(network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


def test_aeif_cond_alpha_spikes_alike_on_one_and_three_nodes():
    def network():
        net = dnnc.Network("adex_alpha")
        net.population("A", 60, model="aeif_cond_alpha", seed=4, I_e=700, tau_w=100, tau_syn_ex=1, t_ref=1,
                       v_init=-65, v_init_std=5)
        net.connect("A[0:48]", "A", kind="random", p=0.2, weight=1, seed=1)
        net.connect("A[48:60]", "A", kind="random", p=0.2, weight=-4, delay=2, seed=2)
        net.record("A")
        return net
    xml = network().to_xml()
    assert 'model="aeif_cond_alpha"' in xml and 'tau_syn_ex="1"' in xml and 'tau_w="100"' in xml
    one, three = spikes_on(network(), 1), spikes_on(network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)


def test_hh_cond_exp_traub_spikes_alike_on_one_and_three_nodes():
    def network():
        net = dnnc.Network("hh")
        net.population("H", 60, model="hh_cond_exp_traub", seed=4, I_e=600, g_K=5500, V_T=-62, E_L=-65,
                       v_init=-65, v_init_std=5)
        net.connect("H[0:48]", "H", kind="random", p=0.2, weight=2, seed=1)
        net.connect("H[48:60]", "H", kind="random", p=0.2, weight=-8, delay=2, seed=2)
        net.record("H")
        return net
    xml = network().to_xml()
    assert 'model="hh_cond_exp_traub"' in xml and 'g_K="5500"' in xml and 'V_T="-62"' in xml
    one, three = spikes_on(network(), 1), spikes_on(network(), 3)
    assert len(one[0]) > 0
    for a, b in zip(one, three):
        assert np.array_equal(a, b)
