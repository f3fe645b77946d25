# Errors raise the right exceptions, located as the command line locates them.
import pytest

import dnnc
from conftest import cli, example


def test_a_bad_file_raises_document_error_with_the_cli_message(tmp):
    path = tmp / "bad.xml"
    path.write_text('<dnnc xmlns="urn:dnnc:1">\n  <network name="n">\n    <neuron id="a" model="lif" tau-q="3"/>\n'
                    '  </network>\n</dnnc>\n')
    with pytest.raises(dnnc.DocumentError) as caught:
        dnnc.load(path)
    e = caught.value
    assert isinstance(e, ValueError) and isinstance(e, dnnc.Error)
    assert str(e) == cli("validate", path, check=False).stderr.strip()
    assert str(e).startswith("%s:3:" % path)
    assert (e.file, e.line) == (str(path), 3)
    assert e.problems[0][:2] == (str(path), 3)


def test_a_check_error_is_located_too(tmp):
    path = tmp / "dangling.xml"
    path.write_text('<dnnc xmlns="urn:dnnc:1">\n  <network name="n">\n    <neuron id="a"/>\n'
                    '    <synapse from="a" to="nowhere"/>\n  </network>\n</dnnc>\n')
    with pytest.raises(dnnc.DocumentError) as caught:
        dnnc.load(path)
    assert str(caught.value) == cli("validate", path, check=False).stderr.strip()
    assert caught.value.line == 4


def test_a_missing_file_is_an_error():
    with pytest.raises(dnnc.Error):
        dnnc.load("/nonexistent/net.xml")


def test_a_network_built_in_python_is_located_in_its_text():
    net = dnnc.Network("n")
    net.neuron("a", model="linear")
    net.population("P", 3, model="lif", tau_q=3)
    with pytest.raises(dnnc.DocumentError) as caught:
        net.to_xml()
    e = caught.value
    assert e.file == "Network('n')" and e.line == 4  # <dnnc>, <network>, <neuron>, <population>
    assert "tau-q" in str(e)
    with pytest.raises(dnnc.DocumentError):
        dnnc.Simulation(net, nodes=1)


def test_a_reference_to_nothing_is_located():
    net = dnnc.Network("n").neuron("a").synapse("a", "b")
    with pytest.raises(dnnc.DocumentError) as caught:
        net.synapses
    assert caught.value.line == 4


def test_conflicting_placements_are_usage_errors():
    with pytest.raises(dnnc.UsageError) as caught:
        dnnc.Simulation(dnnc.load(example("xor/xor.xml")), nodes=2, cluster=example("xor/xor.xml"))
    assert isinstance(caught.value, ValueError)


def test_an_unreachable_lead_is_a_node_error():
    with pytest.raises(dnnc.NodeError):
        dnnc.Simulation(dnnc.load(example("xor/xor.xml")), lead="127.0.0.1:1", timeout=2)


def test_a_tick_count_past_its_limit_is_a_usage_error_and_the_run_goes_on():
    # 2**63 - 1 once wrapped the lead's target and left it stepping for ever.
    with dnnc.Simulation(dnnc.load(example("xor/xor.xml")), nodes=1) as sim:
        for ticks in (2**63 - 1, 2**53 + 1, 0, -3):
            with pytest.raises(dnnc.UsageError) as caught:
                sim.run(ticks)
            assert "ticks must lie in 1..9007199254740992" in str(caught.value)
        sim.run(3)
        assert sim.outputs().shape[0] == 3
