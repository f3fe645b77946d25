# Synapse models from Python: the builder writes the document the command line reads, under
# NEST's names, and a plastic network refuses what it cannot run, located as the CLI does.
import pytest

import dnnc
from conftest import cli

STDP_XML = """<?xml version="1.0" encoding="UTF-8"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="stdp">
    <synapse-model id="ee" model="stdp_synapse" tau_plus="16.8" lambda="0.005" mu_plus="0" mu_minus="0" Wmax="100"/>
    <population id="E" size="80" model="iaf_psc_exp" seed="1" tau_minus="33.7" C_m="200" tau_m="15" V_th="-54"/>
    <population id="I" size="20" model="iaf_psc_delta" tau_minus="20"/>
    <projection id="E_E" from="E" to="E" kind="fixed-indegree" indegree="8" seed="1" synapse-model="ee">
      <weight distribution="uniform" min="0" max="60"/>
    </projection>
    <projection from="E" to="I" kind="all" weight="2" synapse-model="tsodyks2_synapse"/>
    <synapse from="I[0]" to="E[3]" weight="-3"/>
    <synapse from="E[1]" to="I[2]" weight="0.5" synapse-model="ee"/>
    <poisson to="E I" rate="8000" weight="20" seed="4"/>
  </network>
</dnnc>
"""


def stdp_in_python():
    net = dnnc.Network("stdp")
    net.synapse_model("ee", "stdp_synapse", tau_plus=16.8, lambda_=0.005, mu_plus=0, mu_minus=0, Wmax=100)
    net.population("E", 80, model="iaf_psc_exp", seed=1, tau_minus=33.7, C_m=200, tau_m=15, V_th=-54)
    net.population("I", 20, model="iaf_psc_delta", tau_minus=20)
    net.connect("E", "E", kind="fixed-indegree", indegree=8, seed=1, synapse_model="ee", id="E_E",
                weight=dict(distribution="uniform", min=0, max=60))
    net.connect("E", "I", weight=2, synapse_model="tsodyks2_synapse")
    net.synapse("I[0]", "E[3]", weight=-3)
    net.synapse("E[1]", "I[2]", weight=0.5, synapse_model="ee")
    net.poisson("E I", rate=8000, weight=20, seed=4)
    return net


def test_an_stdp_network_built_in_python_equals_its_document(tmp):
    path = tmp / "stdp.xml"
    path.write_text(STDP_XML)
    net = stdp_in_python()
    assert net.to_xml() == dnnc.load(path).to_xml()
    assert '<synapse-model id="ee" model="stdp_synapse" tau_plus="16.8" lambda="0.005"' in net.to_xml()
    assert net.synapses == 80 * 8 + 80 * 20 + 2
    saved = tmp / "saved.xml"
    net.save(saved)
    assert cli("validate", saved).returncode == 0


def test_a_bad_synapse_model_is_located_in_the_python_text():
    net = dnnc.Network("n")
    net.population("E", 4, model="iaf_psc_exp")
    net.synapse_model("m", "tsodyks2_synapse", U=1.5)
    with pytest.raises(dnnc.DocumentError) as caught:
        net.to_xml()
    assert caught.value.line == 4  # <dnnc>, <network>, <population>, <synapse-model>
    assert "synapse-model 'm': U must lie in [0, 1], not 1.5" in str(caught.value)


def test_tau_minus_belongs_to_the_spiking_models():
    net = dnnc.Network("n").neuron("r", model="tanh", tau_minus=20)
    with pytest.raises(dnnc.DocumentError) as caught:
        net.validate()
    assert "attribute 'tau_minus' does not apply to model tanh" in str(caught.value)


def test_a_plastic_network_refuses_a_batched_simulation_before_starting_nodes():
    net = stdp_in_python()
    with pytest.raises(dnnc.DocumentError) as caught:
        dnnc.Simulation(net, nodes=1, batch=2)
    assert "stdp_synapse is plastic, and the run has batch 2" in str(caught.value)
    assert caught.value.line == 6  # the first plastic connection: <dnnc>, <network>, <synapse-model>, E, I
    net.run_settings(sync="window")
    with pytest.raises(dnnc.DocumentError) as caught:
        net.validate()
    assert 'the run has sync="window"' in str(caught.value)


def test_a_plastic_network_built_in_python_runs_alike_on_one_and_two_nodes():
    net = stdp_in_python().record()
    runs = []
    for nodes in (1, 2):
        with dnnc.Simulation(net, nodes=nodes) as sim:
            sim.run(1000)
            runs.append(sim.spikes())
    assert len(runs[0][0]) > 0
    for a, b in zip(*runs):
        assert (a == b).all()
