# Growing a population from Python on real local clusters: sim.grow between two runs adds
# members whose spikes come back with indices past the written size, the run goes on as on
# any partition, and a refused grow changes nothing.
import os

import numpy as np
import pytest

import dnnc
from conftest import SOURCE

# E (400) and I (100) joined by rules that take new members, Q (50) on its own; every
# neuron driven by Poisson input and recorded.
BRUNEL = os.path.join(SOURCE, "tests", "data", "growing_brunel.xml")


def grown_run(path, nodes):
    """200 ticks, E grows by 40, 300 ticks, I grows by 10, 100 ticks: the spikes and the answers."""
    with dnnc.Simulation(path, nodes=nodes) as sim:
        sim.run(200)
        first = sim.grow("E", 40)
        sim.run(300)
        second = sim.grow("I", 10)
        sim.run(100)
        assert sim.tick == 600
        return sim.spikes(), first, second


def test_grow_between_runs_adds_members_that_spike_the_same_on_1_and_3_nodes():
    (t_ms, population, index), first, second = grown_run(BRUNEL, 1)
    assert first["population"] == "E" and first["added"] == 40 and first["size"] == 440
    assert first["first_new"] == "E[400]" and first["tick"] == 200
    assert second["size"] == 110 and second["first_new"] == "I[100]" and second["tick"] == 500
    grown_e = (population == "E") & (index >= 400)
    assert grown_e.any()
    assert index[grown_e].max() < 440
    assert t_ms[grown_e].min() >= 20.0  # members join at tick 200
    assert index[population == "I"].max() < 110
    assert index[population == "Q"].max() < 50

    (t3, p3, i3), first3, second3 = grown_run(BRUNEL, 3)
    assert np.array_equal(t3, t_ms) and np.array_equal(p3, population) and np.array_equal(i3, index)
    assert {k: first3[k] for k in ("size", "first_new", "tick")} == {k: first[k] for k in ("size", "first_new", "tick")}
    assert second3["size"] == second["size"]


def test_grow_leaves_what_it_does_not_reach_and_what_came_before():
    (t_ms, population, index), _, _ = grown_run(BRUNEL, 2)
    with dnnc.Simulation(BRUNEL, nodes=2) as sim:
        sim.run(600)
        t0, p0, i0 = sim.spikes()
    before, before0 = t_ms < 20.0, t0 < 20.0
    assert np.array_equal(t_ms[before], t0[before0]) and np.array_equal(index[before], i0[before0])
    q, q0 = population == "Q", p0 == "Q"
    assert q.sum() > 0
    assert np.array_equal(t_ms[q], t0[q0]) and np.array_equal(index[q], i0[q0])


def test_a_refused_grow_changes_nothing():
    with dnnc.Simulation(BRUNEL, nodes=2) as sim:
        sim.run(50)
        with pytest.raises(dnnc.NodeError, match="no population 'Z'"):  # the lead refuses it
            sim.grow("Z", 3)
        sim.run(50)
        assert sim.tick == 100
        _, population, index = sim.spikes()
        assert index[population == "E"].max() < 400


def test_a_grow_under_an_output_of_the_whole_population_widens_it_as_a_scheduled_grow_would(tmp_path):
    text = open(BRUNEL).read()
    output = '    <output id="o" neurons="Q[0] E"/>\n'
    plain = tmp_path / "plain.xml"
    plain.write_text(text.replace("</network>", output + "</network>"))
    scheduled = tmp_path / "scheduled.xml"
    scheduled.write_text(text.replace("</network>", output + '    <grow population="E" add="10" at-ms="5"/>\n</network>'))
    with dnnc.Simulation(str(plain), nodes=2) as sim:
        sim.run(50)
        assert sim.outputs().shape == (50, 401)
        sim.grow("E", 10)
        sim.run(50)
        widened = sim.outputs()
        assert len(sim.output_columns) == 411 and sim.output_columns[-1] == "E[409]"
    with dnnc.Simulation(str(scheduled), nodes=1) as sim:
        sim.run(100)
        expected = sim.outputs()
    assert widened.shape == (100, 411)
    assert not widened[:50, 401:].any()  # the new members' columns read 0 before they were born
    assert np.array_equal(widened, expected)
