# A network built in Python is the document the command line reads, checked by the same code.
import json

import numpy
import pytest

import dnnc
from conftest import cli, example


def cuba_in_python():
    net = dnnc.Network("cuba")
    net.population("P", 4000, model="lif", seed=42, tau_m=20, v_rest=-49, v_reset=-60, v_th=-50, refractory=50,
                   tau_e=5, tau_i=10, dt=0.1, v_init=-60, v_init_max=-50)
    net.connect("P[0:3200]", "P", kind="random", p=0.02, weight=1.62, delay=1, seed=1)
    net.connect("P[3200:4000]", "P", kind="random", p=0.02, weight=-9, delay=1, seed=2)
    net.output("raster", "P[0:100]")
    net.cluster([("n0", "127.0.0.1", 7120, 4), ("n1", "127.0.0.1", 7121, 3), ("n2", "127.0.0.1", 7122, 2),
                 ("n3", "127.0.0.1", 7123, 1)],
                links=[("n0", "n1"), ("n0", "n2"), ("n0", "n3"), ("n1", "n2")])
    net.run_settings(sync="lockstep", send="nonzero")
    return net


def test_cuba_built_in_python_equals_its_document():
    assert cuba_in_python().to_xml() == dnnc.load(example("cuba/cuba.xml")).to_xml()


def test_xor_built_in_python_equals_its_document():
    net = dnnc.Network("xor")
    for n in ("a", "b"):
        net.neuron(n, model="linear")
    net.neuron("h1", model="step", threshold=0.5)
    net.neuron("h2", model="step", threshold=1.5)
    net.neuron("out", model="step", threshold=0.5)
    for s, t, w in [("a", "h1", 1), ("b", "h1", 1), ("a", "h2", 1), ("b", "h2", 1), ("h1", "out", 1), ("h2", "out", -1)]:
        net.synapse(s, t, weight=w)
    net.input("x", ["a", "b"])
    net.output("y", "out")
    net.cluster([("n0", "127.0.0.1", 7100), ("n1", "127.0.0.1", 7101)])
    net.run_settings(sync="lockstep", send="always")
    assert net.to_xml() == dnnc.load(example("xor/xor.xml")).to_xml()
    assert net.neurons == 5 and net.synapses == 6
    assert net.inputs == ["x"] and net.outputs == {"y": "out"}


def test_saved_network_reads_back_and_validates(tmp):
    net = cuba_in_python()
    path = tmp / "cuba.xml"
    net.save(path)
    assert dnnc.load(path).to_xml() == net.to_xml()
    report = json.loads(cli("validate", path, "--json").stdout)[0]
    assert report["valid"]
    assert (report["neurons"], report["synapses"]) == (net.neurons, net.synapses)
    assert net.populations == {"P": 4000}


def test_distributions_become_child_elements():
    net = dnnc.Network("d")
    net.population("A", 10, model="lif")
    net.connect("A", "A", kind="fixed-indegree", indegree=3, seed=5,
                weight=dict(distribution="normal", mean=1.0, std=0.1))
    assert "<weight" in net.to_xml()
    assert net.synapses == 30


def test_connections_are_the_synapses_the_nodes_draw():
    net = dnnc.Network("rows", dt=0.1)
    net.population("A", 6, model="iaf_psc_exp")
    net.population("B", 4, model="iaf_psc_exp")
    net.connect("A[2:5]", "B", kind="all", weight=2.5, delay_ms=0.3, id="ab")
    net.connect("A", "A", kind="fixed-indegree", indegree=3, multapses=False, autapses=False, seed=4, id="aa")
    source, target, weight, delay = net.connections("ab")
    assert sorted(zip(source.tolist(), target.tolist())) == [(s, t) for s in (2, 3, 4) for t in (6, 7, 8, 9)]
    assert set(weight.tolist()) == {2.5} and set(delay.tolist()) == {3}
    source, target, _, _ = net.connections("aa")
    assert net.connection_count("aa") == len(source) == 18
    assert all(sorted(set(source[target == t])) == sorted(source[target == t]) and t not in source[target == t]
               for t in range(6))
    assert net.synapses == 12 + 18
    with pytest.raises(dnnc.UsageError, match="no projection with id 'zz'"):
        net.connections("zz")


def test_connections_with_half_weights_are_the_weights_the_nodes_keep():
    net = dnnc.Network("h", dt=0.1)
    net.population("A", 20, model="iaf_psc_exp")
    net.connect("A", "A", kind="fixed-indegree", indegree=5, seed=4, id="aa",
                weight=dict(distribution="normal", mean=87.8, std=8.78))
    _, _, drawn, _ = net.connections("aa")
    net.run_settings(weight_precision="half")
    assert 'weight-precision="half"' in net.to_xml()
    _, _, kept, _ = net.connections("aa")
    assert kept.dtype == drawn.dtype and len(kept) == len(drawn) == 100
    assert (kept == drawn.astype(numpy.float16).astype(numpy.float32)).all()
    assert (kept != drawn).sum() > 90
