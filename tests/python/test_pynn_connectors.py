# pyNN.dnnc's connectors: the rules dnnc draws (counts and shapes read back through
# Projection.get, which asks dnnc for the synapses its nodes build), the lists PyNN draws,
# and weight and delay distributions.
import numpy as np
import pytest

from pyNN import errors
from pynn_support import sim


@pytest.fixture
def populations():
    sim.setup(timestep=0.1, min_delay=0.1, nodes=1)
    pre = sim.Population(30, sim.IF_curr_exp(), label="pre")
    post = sim.Population(20, sim.IF_cond_exp(), label="post")
    yield pre, post
    sim.end()


def connections(projection):
    """(pre, post, weight, delay) arrays of a projection, as PyNN reads it."""
    rows = projection.get(["weight", "delay"], format="list")
    return tuple(np.array(column) for column in zip(*rows)) if rows else (np.zeros(0),) * 4


def test_all_to_all_without_self_connections(populations):
    pre, _ = populations
    prj = sim.Projection(pre, pre, sim.AllToAllConnector(allow_self_connections=False),
                         sim.StaticSynapse(weight=0.5, delay=0.3))
    i, j, w, d = connections(prj)
    assert len(prj) == prj.size() == len(i) == 30 * 29
    assert not np.any(i == j)
    np.testing.assert_allclose(w, 0.5)
    np.testing.assert_allclose(d, 0.3)


def test_one_to_one_and_its_dimensions(populations):
    pre, post = populations
    prj = sim.Projection(pre[5:25], post, sim.OneToOneConnector(), sim.StaticSynapse(weight=0.01))
    i, j, _, _ = connections(prj)
    assert sorted(zip(i, j)) == [(k, k) for k in range(20)]
    with pytest.raises(errors.InvalidDimensionsError):
        sim.Projection(pre, post, sim.OneToOneConnector())


def test_fixed_probability_is_drawn_by_dnnc_and_seeded_by_the_rng(populations):
    pre, post = populations
    make = lambda seed: sim.Projection(pre, post, sim.FixedProbabilityConnector(0.3, rng=sim.NumpyRNG(seed=seed)),
                                       sim.StaticSynapse(weight=0.004))
    a, b, c = make(1), make(1), make(2)
    n = len(a)
    assert 600 * 0.3 - 4 * (600 * 0.21) ** 0.5 < n < 600 * 0.3 + 4 * (600 * 0.21) ** 0.5
    # Conductance weights come back in µS, as given (nS in the document).
    np.testing.assert_allclose(connections(a)[2], 0.004)
    pairs = lambda p: sorted(zip(*connections(p)[:2]))
    assert pairs(a) != pairs(c)
    assert len(pairs(a)) == n and len(set(pairs(a))) == n
    assert sim.simulator.state.network().to_xml().count('kind="random"') == 3
    # Two projections drawn from the same seed in the same network still differ.
    assert pairs(a) != pairs(b)


def test_fixed_number_pre_and_post(populations):
    pre, post = populations
    pre_n = sim.Projection(pre, post, sim.FixedNumberPreConnector(7), sim.StaticSynapse(weight=0.01))
    post_n = sim.Projection(pre, post, sim.FixedNumberPostConnector(4, with_replacement=True),
                            sim.StaticSynapse(weight=0.01))
    i, j, _, _ = connections(pre_n)
    assert np.array_equal(np.bincount(j, minlength=20), np.full(20, 7))
    assert all(len(set(i[j == k])) == 7 for k in range(20))  # without replacement: distinct sources
    i, j, _, _ = connections(post_n)
    assert np.array_equal(np.bincount(i, minlength=30), np.full(30, 4))
    assert len(post_n) == 120


def test_fixed_total_number(populations):
    pre, post = populations
    prj = sim.Projection(pre, post, sim.FixedTotalNumberConnector(137), sim.StaticSynapse(weight=0.01))
    assert len(prj) == len(connections(prj)[0]) == 137


def test_rules_over_views_and_assemblies_are_split_into_runs(populations):
    pre, post = populations
    other = sim.Population(10, sim.IF_cond_exp())
    both = post + other
    prj = sim.Projection(pre[[0, 1, 2, 10, 11]], both, sim.AllToAllConnector(), sim.StaticSynapse(weight=0.01))
    i, j, _, _ = connections(prj)
    assert len(prj) == 5 * 30 and sorted(set(zip(i, j))) == [(a, b) for a in range(5) for b in range(30)]
    assert sim.simulator.state.network().to_xml().count('kind="all"') == 4


def test_from_list_from_file_and_array(populations, tmp_path):
    pre, post = populations
    rows = [(0, 1, 0.1, 0.5), (3, 1, 0.2, 1.0), (29, 19, 0.3, 2.5), (3, 1, 0.4, 0.1)]
    prj = sim.Projection(pre, post, sim.FromListConnector(rows), sim.StaticSynapse())
    assert sorted(prj.get(["weight", "delay"], format="list")) == sorted(rows)
    path = tmp_path / "conn.txt"
    np.savetxt(path, np.array(rows))
    from_file = sim.Projection(pre, post, sim.FromFileConnector(str(path)), sim.StaticSynapse())
    np.testing.assert_allclose(sorted(from_file.get(["weight", "delay"], format="list")), sorted(rows))
    mask = np.zeros((30, 20), dtype=bool)
    mask[2, 3] = mask[4, 5] = True
    array = sim.Projection(pre, post, sim.ArrayConnector(mask), sim.StaticSynapse(weight=0.2))
    assert sorted(array.get("weight", format="list")) == [(2, 3, 0.2), (4, 5, 0.2)]
    weights = array.get("weight", format="array")
    assert weights[2, 3] == 0.2 and np.isnan(weights[0, 0])
    # One list projection each, their connections in binary files, none an element.
    xml = sim.simulator.state.network().to_xml()
    assert xml.count('kind="list"') == 3 and xml.count("<synapse ") == 0


def test_distance_dependent_probability_on_a_grid():
    sim.setup(timestep=0.1, nodes=1)
    grid = sim.Population(25, sim.IF_curr_exp(), structure=sim.space.Grid2D(aspect_ratio=1.0, dx=1.0, dy=1.0))
    prj = sim.Projection(grid, grid, sim.DistanceDependentProbabilityConnector("d < 1.1"),
                         sim.StaticSynapse(weight=0.1))
    i, j, _, _ = connections(prj)
    positions = grid.positions.T
    distances = np.linalg.norm(positions[i] - positions[j], axis=1)
    assert np.all(distances < 1.1)
    # Each of the 5x5 points with its neighbours within 1.1 (itself included): 5·5 + 2·2·5·4.
    assert len(prj) == 25 + 80
    sim.end()


def test_weight_and_delay_distributions_are_drawn_by_dnnc(populations):
    pre, post = populations
    rng = sim.NumpyRNG(seed=5)
    prj = sim.Projection(pre, post, sim.AllToAllConnector(),
                         sim.StaticSynapse(weight=sim.RandomDistribution("normal_clipped", mu=0.005, sigma=0.002,
                                                                         low=0.002, high=0.007, rng=rng),
                                           delay=sim.RandomDistribution("uniform", low=0.5, high=2.0, rng=rng)))
    text = sim.simulator.state.network().to_xml()
    assert 'distribution="normal"' in text and 'distribution="uniform"' in text
    _, _, w, d = connections(prj)
    assert len(w) == 600 and 0.002 <= w.min() and w.max() <= 0.007
    assert abs(w.mean() - 0.005) < 0.0005 and w.std() > 0.001
    assert 0.5 <= d.min() and d.max() <= 2.0 and len(set(np.round(d, 6))) > 10
    np.testing.assert_allclose(d, np.round(d / 0.1) * 0.1)  # whole ticks
    inhibitory = sim.Projection(pre, post, sim.AllToAllConnector(),
                                sim.StaticSynapse(weight=sim.RandomDistribution("lognormal", mu=-5.0, sigma=0.5)),
                                receptor_type="inhibitory")
    with pytest.raises(NotImplementedError, match="lognormal"):
        len(inhibitory)  # a conductance into g_in is a negative weight in NEST's models


def test_distributions_and_connectors_dnnc_lacks_are_named(populations):
    pre, post = populations
    prj = sim.Projection(pre, post, sim.AllToAllConnector(),
                         sim.StaticSynapse(weight=sim.RandomDistribution("gamma", k=2.0, theta=0.001)))
    with pytest.raises(NotImplementedError, match="gamma"):
        len(prj)
    with pytest.raises(NotImplementedError, match="SmallWorldConnector"):
        sim.Projection(pre, post, sim.SmallWorldConnector(degree=2.0, rewiring=0.1))


def test_weights_of_the_wrong_sign_are_pynn_connection_errors(populations):
    pre, post = populations
    with pytest.raises(errors.ConnectionError):
        sim.Projection(pre, post, sim.AllToAllConnector(), sim.StaticSynapse(weight=-0.1))
    with pytest.raises(errors.ConnectionError):
        sim.Projection(post, pre, sim.AllToAllConnector(), sim.StaticSynapse(weight=0.1), receptor_type="inhibitory")


def test_set_before_the_first_run_and_weights_between_runs(populations):
    pre, post = populations
    prj = sim.Projection(pre, post, sim.FixedProbabilityConnector(0.5), sim.StaticSynapse(weight=0.01))
    prj.set(weight=0.02)
    np.testing.assert_allclose(connections(prj)[2], 0.02)
    array = np.full((30, 20), 0.03)
    array[0, :] = 0.04
    count = len(prj)
    prj.set(weight=array)  # per connection: the drawn synapses become explicit
    i, _, w, _ = connections(prj)
    assert len(w) == count and np.allclose(w[i == 0], 0.04) and np.allclose(w[i != 0], 0.03)
    sim.run(1.0)
    prj.set(weight=0.05)  # between runs: the cluster's static weights change
    np.testing.assert_allclose(connections(prj)[2], 0.05)
    with pytest.raises(NotImplementedError, match="after the first run"):
        prj.set(delay=2.0)


def test_a_delay_dnnc_cannot_round_to_ticks_is_a_pynn_connection_error():
    sim.setup(timestep=0.1, nodes=1)
    pre, post = sim.Population(2, sim.IF_curr_exp()), sim.Population(2, sim.IF_curr_exp())
    with pytest.raises(errors.ConnectionError, match=r"Delay \(0.01\) is out of range"):
        sim.Projection(pre, post, sim.AllToAllConnector(), sim.StaticSynapse(delay=0.01))
    with pytest.raises(errors.ConnectionError, match="out of range"):
        sim.Projection(pre, post, sim.AllToAllConnector(), sim.StaticSynapse(delay=7000.0))
    sim.end()

