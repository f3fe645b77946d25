# pyNN.dnnc's FromListConnector as list projections (the connections in binary files beside
# the document): the same spikes as before, when each connection was a <synapse> element,
# static and plastic, on 1 and 3 nodes.
import numpy as np
import pytest

import dnnc
from pynn_support import sim, spike_times
from pyNN.dnnc import projections  # noqa: E402 (the backend as pynn_support imports it)

N_PRE, N_POST, MS = 40, 30, 200.0


def neuron_references(numbers):
    """dnnc's reference to each neuron number in `numbers` (group[index])."""
    groups = [group for population in sim.simulator.state.populations for group in population.groups()]
    owner = np.searchsorted([g.first_number for g in groups], numbers, side="right") - 1
    return ["%s[%d]" % (groups[g].dnnc_id, n - groups[g].first_number) for g, n in zip(owner.tolist(), numbers.tolist())]


def synapse_elements(net, projection):
    """write_synapses as it was: one <synapse> per connection, in the projection's order."""
    pre, post, weights, delays = projection._explicit_columns()
    sources = np.asarray(projection.pre.all_cells, dtype=np.int64)[pre]
    targets = np.asarray(projection.post.all_cells, dtype=np.int64)[post]
    populations = sim.simulator.state.populations
    models = {}
    for source, target, owner, weight, delay in zip(neuron_references(sources),
                                                    neuron_references(targets),
                                                    sim.simulator.state.population_of(targets).tolist(), weights.tolist(),
                                                    delays.tolist()):
        scale = projection._scale(populations[owner])
        net.synapse(source, target, weight=weight * scale, delay_ms=delay,
                    synapse_model=projection._synapse_model(net, scale, models))


def run(synapse, nodes, n):
    """Spikes of a population fed through a FromListConnector of n connections (duplicates,
    unsorted targets, delays that round to ticks) and, within the population, by a second
    list: {index: times}, and the document's text."""
    rng = np.random.default_rng(29)
    sim.setup(timestep=0.1, min_delay=0.1, nodes=nodes)
    times = [np.unique(np.round(rng.uniform(1.0, MS, 12), 1)) for _ in range(N_PRE)]
    pre = sim.Population(N_PRE, sim.SpikeSourceArray(spike_times=times))
    # Two groups of members (i_offset differs), one dnnc population each.
    post = sim.Population(N_POST, sim.IF_curr_exp(i_offset=[0.3] * 12 + [0.5] * 18, tau_refrac=2.0))
    post.record("spikes")
    # A pair's repeats are copies of one connection: PyNN's connect() orders a target's
    # connections differently from the list (its sort is not stable), and a sum of one
    # source's unequal repeats could differ in its last bits with the order.
    def listed(n_from, n_to, n, *columns):
        pre, post = rng.integers(0, n_from, n), rng.integers(0, n_to, n)
        return np.column_stack((pre, post, *(c[pre, post] for c in columns)))

    rows = listed(N_PRE, N_POST, n, rng.uniform(0.2, 0.9, (N_PRE, N_POST)),
                  rng.choice([0.1, 0.15, 0.5, 1.05, 2.0], (N_PRE, N_POST)))
    sim.Projection(pre, post, sim.FromListConnector(rows, column_names=["weight", "delay"]), synapse)
    inner = listed(N_POST, N_POST, 200, rng.uniform(-0.3, 0.0, (N_POST, N_POST)))
    sim.Projection(post, post, sim.FromListConnector(inner, column_names=["weight"]),
                   sim.StaticSynapse(delay=0.7), receptor_type="inhibitory")
    text = sim.simulator.state.network().to_xml()
    sim.run(MS)
    spikes = spike_times(post)
    sim.end()
    return spikes, text


def stdp():
    return sim.STDPMechanism(timing_dependence=sim.SpikePairRule(tau_plus=16.0, tau_minus=30.0, A_plus=0.05, A_minus=0.06),
                             weight_dependence=sim.AdditiveWeightDependence(w_min=0.0, w_max=1.5), weight=0.5, delay=1.0)


# A node takes at most 256 plastic <synapse> elements (each is a synapse model's class of its
# own in the engine): the plastic list is kept below that, for the run as it was.
@pytest.mark.parametrize("synapse, n", [(sim.StaticSynapse, 900), (stdp, 200)], ids=["static", "stdp"])
def test_from_list_gives_the_spikes_it_gave_as_synapse_elements(synapse, n, monkeypatch):
    listed, text = run(synapse(), 1, n)
    assert text.count('kind="list"') == 2 + 4 and "<synapse " not in text  # group pairs
    assert sum(len(t) for t in listed.values()) > 20
    assert_same(run(synapse(), 3, n)[0], listed)
    # As before: PyNN's FromListConnector.connect() and one <synapse> element per connection.
    monkeypatch.setattr(projections.Projection, "_read_list", lambda self, connector: False)
    monkeypatch.setattr(projections, "write_synapses", synapse_elements)
    for nodes in (1, 3):
        elements, text = run(synapse(), nodes, n)
        assert text.count("<synapse ") == n + 200 and 'kind="list"' not in text
        assert_same(elements, listed)


def test_from_list_keeps_each_targets_connections_in_the_lists_order():
    sim.setup(timestep=0.1, min_delay=0.1, nodes=1)
    pre, post = sim.Population(1000, sim.SpikeSourcePoisson(rate=1.0)), sim.Population(70000, sim.IF_curr_exp())
    # Targets past 2^16 take the second radix pass (5 and 65541 share their low 16 bits);
    # 70000 is past the end and skipped. NumPy's default argsort reorders these ties.
    rng = np.random.default_rng(3)
    targets = rng.choice([0, 5, 7, 65541, 70000], 1000)
    rows = np.column_stack((np.arange(1000), targets, np.linspace(0.001, 1.0, 1000), np.full(1000, 1.0)))
    assert not np.array_equal(np.argsort(targets), np.argsort(targets, kind="stable"))
    prj = sim.Projection(pre, post, sim.FromListConnector(rows, column_names=["weight", "delay"]), sim.StaticSynapse())
    expected = sorted(((int(s), int(t), w) for s, t, w, _ in rows if t < 70000), key=lambda c: c[1])  # stable
    assert [tuple(c) for c in prj.get("weight", format="list")] == expected
    sim.end()


def test_from_list_into_many_groups_takes_memory_in_the_connections_not_groups_times_connections():
    # Regression: each (source group, target group) pair took a mask over every connection, so
    # a list into a population split into 2,000 groups (a parameter given per cell) took
    # 2,000 x 200,000 bytes here.
    import tracemalloc
    sim.setup(timestep=0.1, min_delay=0.1, nodes=1)
    pre = sim.Population(100, sim.SpikeSourcePoisson(rate=1.0))
    post = sim.Population(2000, sim.IF_curr_exp(i_offset=np.linspace(0.0, 0.1, 2000)))
    rng = np.random.default_rng(5)
    rows = np.column_stack((rng.integers(0, 100, 200000), rng.integers(0, 2000, 200000)))
    sim.Projection(pre, post, sim.FromListConnector(rows), sim.StaticSynapse(weight=0.1, delay=1.0))
    tracemalloc.start()
    net = sim.simulator.state.network()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100e6
    # One list per target group (member k is group k), in order, each listing its target's
    # connections in the list's order.
    lists = [np.load(a["connections"]) for tag, a, _ in net._elements if tag == "projection"]
    assert len(lists) == 2000 and all(np.all(rows_k[:, 1] == 0) for rows_k in lists)
    order = np.argsort(rows[:, 1], kind="stable")
    assert [len(rows_k) for rows_k in lists] == np.bincount(rows[:, 1], minlength=2000).tolist()
    assert np.concatenate([rows_k[:, 0] for rows_k in lists]).tolist() == rows[order, 0].tolist()
    sim.end()


def assert_same(a, b):
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_network_connect_takes_an_array_and_save_writes_it_beside(tmp_path):
    net = dnnc.Network("lists", dt=0.1)
    net.population("p", 3, model="iaf_psc_exp")
    net.population("q", 2, model="iaf_psc_exp")
    rows = np.array([[0, 1, 250.0, 1.0], [2, 0, 100.0, 0.5], [1, 1, -50.0, 2.0]])
    net.connect("p", "q", kind="list", connections=rows, id="pq")
    source, target, weight, delay = net.connections("pq")
    # Neuron numbers, each target's connections in the list's order, delays in ticks.
    assert source.tolist() == [2, 0, 1] and target.tolist() == [3, 4, 4]
    assert weight.tolist() == [100.0, 250.0, -50.0] and delay.tolist() == [5, 10, 20]
    net.save(tmp_path / "lists.xml")
    assert (tmp_path / "lists.connections-0.npy").exists()
    assert 'connections="lists.connections-0.npy"' in (tmp_path / "lists.xml").read_text()
    back = dnnc.load(tmp_path / "lists.xml")
    assert [c.tolist() for c in back.connections("pq")] == [c.tolist() for c in (source, target, weight, delay)]
    with pytest.raises(dnnc.UsageError):
        net.connect("p", "q", kind="list", connections=rows[:, :3])
    with pytest.raises(dnnc.DocumentError, match="row 0: delay 0.01 ms is below one tick"):
        dnnc.Network("bad").population("p", 2).connect("p", "p", kind="list", connections=[[0, 1, 1.0, 0.01]]).validate()


def test_a_plastic_list_snapshotted_on_2_nodes_and_restored_on_3_learns_on_as_a_straight_run(tmp_path):
    # A snapshot holds the list inline (it names no file), in XML and in binary.
    net = dnnc.Network("snap", dt=0.1)
    net.spike_source("s", size=20, rate=50.0, seed=3)
    net.population("q", 10, model="iaf_psc_exp")
    rng = np.random.default_rng(2)
    rows = np.column_stack((rng.integers(0, 20, 300), rng.integers(0, 10, 300), rng.uniform(100, 400, 300),
                            rng.choice([0.5, 1.0], 300)))
    net.synapse_model("m", "stdp_synapse", Wmax=1000.0)
    net.connect("s", "q", kind="list", connections=rows, id="sq", synapse_model="m")
    net.record("q")
    late = lambda spikes: sorted((round(t, 6), str(p), int(i)) for t, p, i in zip(*spikes) if t >= 50.0)
    by_target = lambda w: sorted(zip(w[1].tolist(), w[0].tolist(), w[2].tolist()))
    with dnnc.Simulation(net, nodes=2) as run:
        run.run(500)
        run.freeze()
        for name in ("s.xml", "s.dnncs"):
            run.snapshot(tmp_path / name)
        run.run(500)
        spikes, weights = late(run.spikes()), by_target(run.weights("sq"))
    assert "<connections>" in (tmp_path / "s.xml").read_text() and len(spikes) > 20
    for name in ("s.xml", "s.dnncs"):
        with dnnc.restore(tmp_path / name, nodes=3) as again:
            again.run(500)
            assert late(again.spikes()) == spikes
            assert by_target(again.weights("sq")) == weights
