# Re-balancing a running network from Python on a real local cluster: sim.rebalance with new
# capacities moves neurons between two runs and the spikes stay those of the run without it;
# a dry run and a re-balance with nothing to move change nothing; sim.drain lets a node go
# and sim.join takes it back with the same result; bad values raise UsageError before anything is sent, and what the
# lead refuses raises NodeError.
import os

import numpy as np
import pytest

import dnnc
from conftest import SOURCE

BRUNEL = os.path.join(SOURCE, "tests", "data", "growing_brunel.xml")


def spikes_of(change):
    """300 ticks on 3 local nodes, `change(sim)`, 300 ticks more: the spikes."""
    with dnnc.Simulation(BRUNEL, nodes=3) as sim:
        sim.run(300)
        change(sim)
        sim.run(300)
        return sim.spikes()


def same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def test_rebalance_and_drain_keep_the_spikes():
    straight = spikes_of(lambda sim: None)
    assert len(straight[0]) > 1000

    def rebalanced(sim):
        dry = sim.rebalance(dry_run=True, capacity={"n2": 4})
        assert dry["applied"] is False and dry["moved"] > 0
        answer = sim.rebalance(capacity={"n2": 4})
        assert answer["applied"] is True and answer["tick"] == 300
        after = {n["id"]: n["after"] for n in answer["nodes"]}
        assert after["n2"] > after["n0"] + after["n1"]

    assert same(spikes_of(rebalanced), straight)

    def drained_and_joined_again(sim):
        address = next(n["address"] for n in sim.status()["nodes"] if n["id"] == "n1")
        answer = sim.drain("n1")
        assert answer["drained"] == "n1" and answer["released"] is True
        assert [n["id"] for n in answer["nodes"] if n["after"] > 0] == ["n0", "n2"]
        # Released, it serves no network: it may join again.
        back = sim.join("n1@" + address, links=["n0", "n2"])
        assert back["joined"] == "n1" and back["tick"] == 300
        assert {n["id"] for n in back["nodes"] if n["after"] > 0} == {"n0", "n1", "n2"}

    assert same(spikes_of(drained_and_joined_again), straight)


def test_bad_values_raise_and_change_nothing():
    with dnnc.Simulation(BRUNEL, nodes=2) as sim:
        sim.run(100)
        for bad in ({"capacity": {"n1": 0}}, {"capacity": {"n1": float("nan")}}, {"migration_weight": -1}):
            with pytest.raises(dnnc.UsageError):
                sim.rebalance(**bad)
        with pytest.raises(dnnc.NodeError, match="no node 'n9'"):  # the lead refuses it
            sim.rebalance(capacity={"n9": 2})
        with pytest.raises(dnnc.NodeError, match="it is the lead"):
            sim.drain("n0")
        with pytest.raises(dnnc.UsageError, match="ID@HOST:PORT"):
            sim.join("n5")
        sim.run(100)
        assert sim.tick == 200
