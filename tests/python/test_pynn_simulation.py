# pyNN.dnnc's simulation control: setup, runs in pieces on one cluster, reset, end, the
# state queries, get/set of parameters, recording into Neo and its files.
import pickle

import numpy as np
import pytest

import dnnc

from pyNN import errors
from conftest import free_ports
from pynn_support import sim, spike_times


def network(nodes=2):
    sim.setup(timestep=0.1, min_delay=0.2, max_delay=5.0, nodes=nodes)
    cells = sim.Population(40, sim.IF_curr_exp(i_offset=1.0, tau_refrac=2.0), label="cells")
    cells.initialize(v=sim.RandomDistribution("normal", mu=-60.0, sigma=4.0, rng=sim.NumpyRNG(seed=2)))
    sim.Projection(cells, cells, sim.FixedProbabilityConnector(0.2, rng=sim.NumpyRNG(seed=7)),
                   sim.StaticSynapse(weight=-0.05, delay=0.5), receptor_type="inhibitory")
    cells.record("spikes")
    return cells


def test_state_queries():
    assert sim.setup(timestep=0.05, min_delay=0.1, nodes=1) == 0
    assert (sim.get_time_step(), sim.get_min_delay(), sim.num_processes(), sim.rank()) == (0.05, 0.1, 1, 0)
    assert sim.get_current_time() == 0.0
    sim.end()


def test_runs_in_pieces_continue_the_same_cluster():
    cells = network()
    sim.run(60.0)
    pids = sim.simulator.state.simulation.pids
    assert sim.run_until(150.0) == pytest.approx(150.0)
    assert sim.simulator.state.simulation.pids == pids
    pieces = spike_times(cells)
    sim.end()
    cells = network()
    sim.run(150.0)
    whole = spike_times(cells)
    sim.end()
    assert sum(len(t) for t in whole.values()) > 40
    assert pieces.keys() == whole.keys()
    for i in whole:
        np.testing.assert_array_equal(pieces[i], whole[i])


def test_reset_starts_the_same_network_again_in_a_new_segment():
    cells = network()
    sim.run(100.0)
    first = spike_times(cells)
    sim.reset()
    assert sim.get_current_time() == 0.0
    sim.run(100.0)
    block = cells.get_data()
    assert len(block.segments) == 2
    second = spike_times(cells)
    for i in first:
        np.testing.assert_array_equal(first[i], second[i])
    sim.end()


def test_spike_counts_and_files(tmp_path):
    cells = network(nodes=1)
    sim.run(200.0)
    counts = cells.get_spike_counts()
    times = spike_times(cells)
    assert counts == {int(cells[i]): len(times.get(i, [])) for i in range(40)}
    assert cells.mean_spike_count() == pytest.approx(np.mean(list(counts.values())))
    path = tmp_path / "cells.pkl"
    cells.write_data(str(path))
    with open(path, "rb") as f:
        block = pickle.load(f)
    assert sum(len(st) for st in block.segments[0].spiketrains) == sum(counts.values())
    cleared = cells.get_data(clear=True)
    assert sum(len(st) for st in cleared.segments[0].spiketrains) == sum(counts.values())
    sim.run(50.0)
    after = cells.get_data().segments[0].spiketrains
    assert all(st.magnitude.min() > 200.0 for st in after if len(st))
    sim.end()


def test_get_and_set_of_cell_parameters():
    sim.setup(timestep=0.1, nodes=1)
    cells = sim.Population(3, sim.IF_cond_exp(tau_m=15.0, cm=0.3))
    assert cells.get("tau_m") == pytest.approx(15.0)
    cells.set(tau_m=25.0, i_offset=0.2)
    assert cells.get(["tau_m", "i_offset"]) == pytest.approx([25.0, 0.2])
    text = sim.simulator.state.network().to_xml()
    assert 'g_L="12"' in text and 'I_e="200"' in text  # 0.3 nF / 25 ms = 12 nS
    with pytest.raises(errors.NonExistentParameterError):
        cells.set(tau_q=2.0)
    sim.run(10.0)
    cells.set(tau_m=30.0)  # between runs: the frozen cluster takes it
    assert 'g_L="10"' in sim.simulator.state.network().to_xml()
    with pytest.raises(NotImplementedError, match="after the first run.*more than the running cluster can take"):
        cells[0:1].set(tau_m=40.0)  # one member apart would split its dnnc population
    assert cells.get("tau_m") == pytest.approx(30.0)  # undone
    with pytest.raises(NotImplementedError, match="after the first run"):
        sim.Population(1, sim.IF_curr_exp())
    sim.run(10.0)
    sim.reset()
    cells[0:1].set(tau_m=40.0)  # reset: the next run submits the network anew
    sim.run(10.0)
    sim.end()


def spikes_with_a_current_that_changes(nodes, between_runs):
    """Spike times of 20 cells whose DC current goes from 0.5 to 0.9 nA at 30 ms: set
    between two runs, or written as two sources from the start."""
    sim.setup(timestep=0.1, nodes=nodes)
    cells = sim.Population(20, sim.IF_cond_exp(tau_refrac=2.0))
    cells.initialize(v=sim.RandomDistribution("uniform", low=-70.0, high=-55.0, rng=sim.NumpyRNG(seed=3)))
    sim.Projection(cells, cells, sim.FixedProbabilityConnector(0.3, rng=sim.NumpyRNG(seed=5)),
                   sim.StaticSynapse(weight=0.002, delay=0.5))
    cells.record(["spikes", "v"])
    if between_runs:
        source = sim.DCSource(amplitude=0.5)
        source.inject_into(cells)
        sim.run(30.0)
        source.amplitude = 0.9
        sim.run(70.0)
    else:
        sim.DCSource(amplitude=0.5, stop=30.0).inject_into(cells)
        sim.DCSource(amplitude=0.9, start=30.0).inject_into(cells)
        sim.run(100.0)
    times = spike_times(cells)
    v = np.asarray(cells.get_data().segments[0].filter(name="v")[0])
    sim.end()
    return times, v


def test_set_between_runs_gives_the_bits_of_a_network_written_with_the_change():
    expected, v = spikes_with_a_current_that_changes(1, between_runs=False)
    assert sum(len(t) for t in expected.values()) > 20
    for nodes in (1, 3):
        got, v_got = spikes_with_a_current_that_changes(nodes, between_runs=True)
        assert got.keys() == expected.keys()
        for k in expected:
            np.testing.assert_array_equal(got[k], expected[k])
        np.testing.assert_array_equal(v_got, v)


def test_state_variables_a_cell_type_lacks_are_pynn_recording_errors():
    sim.setup(timestep=0.1, nodes=1)
    cells = sim.Population(2, sim.IF_curr_exp())
    cells.record("v")
    with pytest.raises(errors.RecordingError):
        cells.record("w")
    sim.end()


def test_setup_takes_nodes_or_a_cluster():
    with pytest.raises(ValueError, match="not both"):
        sim.setup(nodes=2, cluster="c.xml")
    with pytest.raises(Exception, match="min_delay"):
        sim.setup(timestep=0.1, min_delay=0.05)


def test_a_cluster_document(tmp_path):
    ports = free_ports(2)
    cluster = tmp_path / "cluster.xml"
    cluster.write_text('<dnnc xmlns="urn:dnnc:1"><cluster lead="a"><node id="a" port="%d"/><node id="b" port="%d"/>'
                       '<link from="a" to="b"/></cluster></dnnc>' % tuple(ports))
    sim.setup(timestep=0.1, cluster=str(cluster))
    cells = sim.Population(20, sim.IF_curr_exp(i_offset=1.0))
    cells.record("spikes")
    sim.run(50.0)
    assert [n["id"] for n in sim.simulator.state.simulation.summary["nodes"]] == ["a", "b"]
    assert sim.simulator.state.simulation.lead == "127.0.0.1:%d" % ports[0]
    assert cells.mean_spike_count() == 1.0  # each first spikes at 27.8 ms
    sim.end()


def test_set_between_runs_of_a_network_with_a_connection_list():
    # The list is written to a new file each time the network is written: an update still
    # counts it by its connections.
    sim.setup(timestep=0.1, nodes=2)
    cells = sim.Population(10, sim.IF_curr_exp(i_offset=0.5))
    sim.Projection(cells, cells, sim.FromListConnector([(0, 1, 0.1, 1.0), (2, 3, 0.2, 1.5), (9, 0, 0.1, 0.5)]))
    cells.record("spikes")
    sim.run(20.0)
    cells.set(i_offset=1.5)
    sim.run(20.0)
    assert cells.get_spike_counts()[cells[0]] > 0
    sim.end()


# What the tests below set between two runs, per attribute: a drawn projection's one value,
# a list's values per connection, one connection's value (delays within the network's
# longest, 1 ms).
WEIGHTS = (0.6, np.linspace(0.1, 2.0, 30 * 30).reshape(30, 30), 3.5)
DELAYS = (0.2, np.linspace(0.1, 1.0, 30 * 30).reshape(30, 30), 0.8)


def spikes_with_projections_set_between_runs(nodes, name, values=None):
    """Spike times of 30 cells whose projections' `name` ("weight" or "delay") is set between
    two runs to `values` (WEIGHTS, DELAYS; None: unchanged): a drawn projection's to one
    value, a list's per connection, one connection's alone."""
    sim.setup(timestep=0.1, nodes=nodes)
    cells = sim.Population(30, sim.IF_curr_exp(i_offset=0.8, tau_refrac=2.0))
    cells.initialize(v=sim.RandomDistribution("uniform", low=-65.0, high=-52.0, rng=sim.NumpyRNG(seed=4)))
    drawn = sim.Projection(cells, cells, sim.FixedProbabilityConnector(0.2, rng=sim.NumpyRNG(seed=5)),
                           sim.StaticSynapse(weight=0.3, delay=0.5))
    listed = sim.Projection(cells, cells, sim.FromListConnector([(k, (k * 7 + 3) % 30, 0.5, 1.0) for k in range(30)]),
                            sim.StaticSynapse(), receptor_type="inhibitory")
    cells.record("spikes")
    sim.run(30.0)
    one = listed.connections[4]
    if values is not None:
        drawn.set(**{name: values[0]})
        listed.set(**{name: values[1]})
        setattr(one, name, values[2])
    sim.run(50.0)
    got = (drawn.get(name, format="list"), listed.get(name, format="array"), (one.presynaptic_index, one.postsynaptic_index))
    times = spike_times(cells)
    sim.end()
    return times, got


def check_set_between_runs(name, values):
    """Spikes with `values` set between runs differ from those without, the same on 3 nodes
    as on 1; returns what the projections then hold."""
    expected, got = spikes_with_projections_set_between_runs(1, name, values)
    assert sum(len(t) for t in expected.values()) > 50
    unchanged, _ = spikes_with_projections_set_between_runs(1, name)
    assert any(not np.array_equal(unchanged[k], expected[k]) for k in expected)
    on_three, _ = spikes_with_projections_set_between_runs(3, name, values)
    assert on_three.keys() == expected.keys()
    for k in expected:
        np.testing.assert_array_equal(on_three[k], expected[k])
    return got


def test_projection_weights_set_between_runs_give_the_same_spikes_on_1_and_3_nodes():
    drawn, listed, one = check_set_between_runs("weight", WEIGHTS)
    assert {w for _, _, w in drawn} == {0.6}
    assert listed[one] == 3.5
    pre = 5 if one[0] != 5 else 6
    assert listed[pre, (pre * 7 + 3) % 30] == pytest.approx(0.1 + 1.9 * (pre * 30 + (pre * 7 + 3) % 30) / 899)


def test_projection_delays_set_between_runs_give_the_same_spikes_on_1_and_3_nodes():
    drawn, listed, one = check_set_between_runs("delay", DELAYS)
    assert [d for _, _, d in drawn] == pytest.approx([0.2] * len(drawn))
    assert listed[one] == pytest.approx(0.8)


def test_per_connection_values_on_a_drawn_projection_between_runs_give_the_same_spikes_on_1_and_3_nodes():
    # dnnc's drawn projection becomes the list of its synapses, with the values given.
    weights = np.linspace(0.05, 1.2, 30 * 30).reshape(30, 30)
    drawn, _, _ = check_set_between_runs("weight", (weights,) + WEIGHTS[1:])
    assert [w for _, _, w in drawn] == pytest.approx([weights[i, j] for i, j, _ in drawn])
    delays = np.linspace(0.1, 1.0, 30 * 30).reshape(30, 30)
    drawn, _, _ = check_set_between_runs("delay", (delays,) + DELAYS[1:])
    assert [d for _, _, d in drawn] == pytest.approx([delays[i, j] for i, j, _ in drawn])


def drawn_projection_run_10_ms(delay):
    """A drawn projection of weight 0.3 and `delay` among 10 cells on 2 nodes, after a run of 10 ms."""
    sim.setup(timestep=0.1, nodes=2)
    cells = sim.Population(10, sim.IF_curr_exp(i_offset=0.5))
    drawn = sim.Projection(cells, cells, sim.FixedProbabilityConnector(0.3, rng=sim.NumpyRNG(seed=5)),
                           sim.StaticSynapse(weight=0.3, delay=delay))
    sim.run(10.0)
    return drawn


def test_new_delays_wait_while_spikes_sent_with_the_last_ones_are_on_their_way():
    drawn = drawn_projection_run_10_ms(1.0)
    drawn.set(delay=0.5)
    drawn.set(delay=0.4)  # before the next run: one change
    sim.run(0.5)
    with pytest.raises(dnnc.NodeError, match="on their way until tick 110"):
        drawn.set(delay=0.3)  # 1 ms (the longest delay) after the change only
    delays = [d for _, _, d in drawn.get("delay", format="list")]
    assert delays == pytest.approx([0.4] * len(delays))  # undone
    sim.run(0.5)
    drawn.set(delay=0.3)
    sim.run(1.0)
    sim.end()


def test_projection_changes_other_than_static_weights_and_delays_between_runs_are_refused_and_undone():
    drawn = drawn_projection_run_10_ms(0.5)
    # Longer than any delay of the network as first run: the nodes keep 5 ticks of output.
    with pytest.raises(NotImplementedError, match="Projection.set\\(\\) after the first run.*the nodes keep 5 ticks"):
        drawn.set(delay=1.0)
    assert {d for _, _, d in drawn.get("delay", format="list")} == {0.5}
    assert {w for _, _, w in drawn.get("weight", format="list")} == {0.3}
    sim.run(10.0)
    sim.end()


def test_setup_keeps_weights_in_16_bits_when_asked():
    cells = network(nodes=1)
    assert "weight-precision" not in sim.simulator.state.network().to_xml()
    sim.run(100.0)
    single = spike_times(cells)
    sim.end()
    sim.setup(timestep=0.1, min_delay=0.2, max_delay=5.0, nodes=1, weight_precision="half")
    cells = sim.Population(40, sim.IF_curr_exp(i_offset=1.0, tau_refrac=2.0), label="cells")
    cells.initialize(v=sim.RandomDistribution("normal", mu=-60.0, sigma=4.0, rng=sim.NumpyRNG(seed=2)))
    sim.Projection(cells, cells, sim.FixedProbabilityConnector(0.2, rng=sim.NumpyRNG(seed=7)),
                   sim.StaticSynapse(weight=-0.05, delay=0.5), receptor_type="inhibitory")
    cells.record("spikes")
    assert 'weight-precision="half"' in sim.simulator.state.network().to_xml()
    sim.run(100.0)
    # -50 pA is a binary16 value: the same spikes as with 32-bit weights.
    half = spike_times(cells)
    assert half.keys() == single.keys() and all(np.array_equal(half[i], single[i]) for i in single)
    assert sum(len(t) for t in single.values()) > 40
    sim.end()
    with pytest.raises(ValueError, match="weight_precision must be 'single' or 'half'"):
        sim.setup(weight_precision="double")
