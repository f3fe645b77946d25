# Runs on real local clusters: the Python layer gives the command line's bits, and leaves
# no process behind.
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import numpy as np
import pytest

import dnnc
from conftest import alive, cli, example, free_ports

CUBA = example("cuba/cuba.xml")
XOR = example("xor/xor.xml")


def read_outputs_csv(path):
    """The values of `dnnc run --output` as float32 (printed so that they read back exactly)."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [line.strip().split(",") for line in f if line.strip()]
    ticks = np.array([int(r[0]) for r in rows])
    values = np.array([[np.float32(v) for v in r[1:]] for r in rows], dtype=np.float32)
    return header[1:], ticks, values


@pytest.mark.parametrize("nodes", [1, 3])
def test_cuba_outputs_and_spikes_equal_dnnc_run(tmp, nodes):
    out, spikes = tmp / "out.csv", tmp / "spikes.csv"
    cli("run", CUBA, "--nodes", nodes, "--ticks", 2000, "--output", out, "--spikes", spikes)
    columns, ticks, expected = read_outputs_csv(out)
    with dnnc.Simulation(dnnc.load(CUBA), nodes=nodes) as sim:
        sim.run(2000)
        got = sim.outputs()
        assert got.dtype == np.float32 and got.shape == (2000, 100)
        assert sim.output_columns == columns
        assert np.array_equal(sim.output_ticks, ticks)
        assert got.tobytes() == expected.tobytes()
        t_ms, population, index = sim.spikes()
        rows = ["%.10g,%s,%d" % r for r in zip(t_ms.tolist(), population.tolist(), index.tolist())]
        with open(spikes) as f:
            assert f.read().splitlines()[1:] == rows
        assert len(rows) > 1000
        rate = sim.rates()["P"]
        assert rate == pytest.approx(len(rows) / 4000 / 0.2)


def test_xor_with_inputs_equals_dnnc_run(tmp):
    out = tmp / "out.csv"
    cli("run", XOR, "--nodes", 2, "--ticks", 8, "--input", example("xor/inputs.csv"), "--output", out)
    _, _, expected = read_outputs_csv(out)
    with dnnc.Simulation(XOR, nodes=2) as sim:
        sim.input(example("xor/inputs.csv"))
        sim.run(8)
        assert sim.outputs().tobytes() == expected.tobytes()
    # The same inputs as an array (one column per <input>, here x: both a and b) and as rows.
    with dnnc.Simulation(XOR, nodes=1) as sim:
        sim.input([(0, "a", 0.0), (0, "b", 0.0), (1, "a", 1), (2, "b", 1), (3, "a", 1), (3, "b", 1)])
        sim.run(8)
        assert sim.outputs().tobytes() == expected.tobytes()
    with dnnc.Simulation(XOR, nodes=1) as sim:
        sim.input(np.array([0, 0, 0, 1], dtype=np.float32))  # x = a and b together, at tick 3
        sim.run(6)
        assert sim.outputs()[:, 0].tolist() == [0, 0, 0, 0, 0, 0]  # a AND b: h2 cancels h1


def test_run_in_steps_freeze_resume_and_status():
    with dnnc.Simulation(CUBA, nodes=2) as sim:
        assert sim.tick == 0
        sim.run(300)
        sim.run(200)
        assert sim.tick == 500
        assert sim.outputs().shape == (500, 100)
        status = sim.status()
        assert status["role"] == "lead" and status["network"] == "cuba" and len(status["nodes"]) == 2
        sim.resume()
        sim.freeze()
        after = sim.tick
        assert after >= 500
        assert sim.outputs().shape == (after, 100)


def test_grow_refuses_a_count_that_is_not_a_whole_number_of_one_or_more_before_sending():
    with dnnc.Simulation(XOR, nodes=1) as sim:
        for n in (0, -2):
            with pytest.raises(ValueError, match=r"grow: the number of members to add must be a whole number >= 1 \(got %d\)" % n):
                sim.grow("h", n)
        with pytest.raises(TypeError):
            sim.grow("h", 2.5)
        sim.run(2)  # the lead heard nothing odd


def test_snapshot_and_restore_continue_bit_for_bit(tmp):
    with dnnc.Simulation(CUBA, nodes=1) as sim:
        sim.run(500)
        whole = sim.outputs()
    with dnnc.Simulation(CUBA, nodes=3) as sim:
        sim.run(300)
        sim.freeze()
        assert sim.snapshot(tmp / "cuba.dnncs") == 300
    with dnnc.restore(tmp / "cuba.dnncs", nodes=2) as sim:
        assert sim.tick == 300
        sim.run(200)
        assert sim.outputs().tobytes() == whole[300:].tobytes()


def test_a_with_block_that_raises_stops_its_nodes():
    with pytest.raises(KeyError):
        with dnnc.Simulation(XOR, nodes=3) as sim:
            pids = sim.pids
            assert len(pids) == 3 and all(alive(p) for p in pids)
            sim.run(5)
            raise KeyError("the body failed")
    assert not any(alive(p) for p in pids)


def test_the_nodes_stop_by_themselves_once_the_process_that_started_them_is_killed():
    # SIGKILL gives the process no chance to stop its nodes; each was started with
    # dnnc-node --owner and stops once that process is gone.
    script = ("import os, signal, dnnc\n"
              "sim = dnnc.Simulation(%r, nodes=2)\n"
              "print(' '.join(map(str, sim.pids)), flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n" % XOR)
    child = subprocess.Popen(["/usr/bin/python3", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = [int(p) for p in child.stdout.readline().split()]
    assert len(pids) == 2, child.stderr.read()
    # What the killed process leaves in the temporary folder (its cluster's record and logs,
    # its document) is removed at the end.
    words = open("/proc/%d/cmdline" % pids[0]).read().split("\0")
    left_behind = [os.path.dirname(words[words.index("--secret-file") + 1]),
                   os.path.join(tempfile.gettempdir(), "dnnc-py-%d-0" % child.pid)]
    try:
        assert child.wait() == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in pids if alive(p)]
        for p in left:
            os.kill(p, signal.SIGKILL)
        assert not left
    finally:
        for folder in left_behind:
            if os.path.basename(folder).startswith(("dnnc-cluster-", "dnnc-py-")):
                shutil.rmtree(folder, ignore_errors=True)


def test_the_documents_own_cluster_and_a_cluster_file(tmp):
    # xor.xml's cluster has fixed ports; a cluster file with port 0 lets the nodes choose.
    net = dnnc.load(XOR)
    net.cluster([("m0", "127.0.0.1", 0), ("m1", "127.0.0.1", 0)])
    with pytest.raises(dnnc.DocumentError):
        net.to_xml()  # a port must be given in a document
    with dnnc.Simulation(XOR, cluster=XOR) as sim:
        assert [n["id"] for n in sim.summary["nodes"]] == ["n0", "n1"]
        sim.run(4)
        assert sim.lead == "127.0.0.1:7100"


def test_batched_outputs_have_lanes():
    with dnnc.Simulation(XOR, nodes=1, batch=2) as sim:
        sim.input([(1, "a", 1.0, 0), (1, "b", 1.0, 1)])
        sim.run(5)
        out = sim.outputs()
        assert out.shape == (5, 2, 1)
        assert out[3, 0, 0] == 1 and out[3, 1, 0] == 1


def test_partition_and_generate(tmp):
    graph = dnnc.generate("grid2d", path=str(tmp / "g.graph"), dims=[20, 20])
    assignment, metrics = dnnc.partition(graph, parts=4)
    assert assignment.shape == (400,) and set(assignment.tolist()) == {0, 1, 2, 3}
    assert metrics["edge_cut"] > 0 and metrics["max_imbalance"] <= 1.03 + 1e-9
    cli_report = cli("partition", graph, "--parts", 4, "--json").stdout
    assert json.loads(cli_report)["edge_cut"] == metrics["edge_cut"]
    assignment, metrics = dnnc.partition(dnnc.load(CUBA), parts=2)
    assert assignment.shape == (4000,)


@pytest.mark.parametrize("suffix", [".graph", ".xml"])
def test_generate_writes_what_dnnc_gen_writes(tmp, suffix):
    ours = dnnc.generate("er", path=str(tmp / ("ours" + suffix)), seed=7, n=300, degree=6, name="random")
    cli("gen", "er", "--n", 300, "--degree", 6, "--seed", 7, "--name", "random", "-o", tmp / ("theirs" + suffix))
    with open(ours) as a, open(tmp / ("theirs" + suffix)) as b:
        assert a.read() == b.read()
    if suffix == ".xml":
        net = dnnc.load(ours)
        assert net.name == "random"


def test_generate_refuses_what_dnnc_gen_refuses(tmp):
    with pytest.raises(dnnc.UsageError, match="--p or --degree is required"):
        dnnc.generate("er", path=str(tmp / "g.graph"), n=10)
    with pytest.raises(dnnc.UsageError, match="give --p or --degree, not both"):
        dnnc.generate("er", path=str(tmp / "g.graph"), n=10, p=0.1, degree=2)
    with pytest.raises(dnnc.UsageError, match="unknown parameter 'colour'"):
        dnnc.generate("er", path=str(tmp / "g.graph"), n=10, p=0.1, colour=2)
    with pytest.raises(dnnc.UsageError, match="must end in .graph"):
        dnnc.generate("er", path=str(tmp / "g.txt"), n=10, p=0.1)


def test_a_run_goes_on_when_its_lead_is_killed(tmp, monkeypatch):
    # A quarter-size Brunel network, recording 200 neurons, on three linked nodes that
    # checkpoint every 2,000 ticks; its lead is killed once the run is past tick 5,000.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp))  # the nodes' checkpoints
    ports = free_ports(3)
    cluster = '<cluster lead="a">%s<link from="a" to="b"/><link from="b" to="c"/><link from="a" to="c"/></cluster>' % "".join(
        '<node id="%s" port="%d"/>' % node for node in zip("abc", ports))
    with open(example("brunel/brunel_small.xml")) as f:
        text = re.sub(r"<cluster[\s\S]*</cluster>", cluster, f.read())
    text = re.sub(r"<run [^>]*/>", '<run sync="lockstep" send="nonzero" probes="2" heartbeat-timeout="400" checkpoint-every="2000"/>', text)
    doc = tmp / "brunel.xml"
    doc.write_text(text.replace("<output ", '<record neurons="E[0:200]"/>\n<output ', 1))
    out, spikes = tmp / "out.csv", tmp / "spikes.csv"
    cli("run", doc, "--ticks", 30000, "--output", out, "--spikes", spikes)
    _, _, expected = read_outputs_csv(out)

    secret = tmp / "secret"
    secret.write_text(secrets.token_hex(32) + "\n")
    secret.chmod(0o600)
    lead = "127.0.0.1:%d" % ports[0]

    def kill_the_lead_past_tick_5000():
        while True:
            status = cli("status", "--lead", lead, "--secret-file", secret, "--json", check=False)
            if status.returncode == 0 and json.loads(status.stdout).get("tick", 0) > 5000:
                os.kill(json.loads(status.stdout)["pid"], signal.SIGKILL)
                return
            time.sleep(0.05)

    with dnnc.Simulation(str(doc), secret_file=secret) as sim:
        killer = threading.Thread(target=kill_the_lead_past_tick_5000)
        killer.start()
        sim.run(30000)
        killer.join()
        assert sim.lead != lead  # the standby took over
        assert sim.outputs().tobytes() == expected.tobytes()
        t_ms, population, index = sim.spikes()
        rows = ["%.10g,%s,%d" % r for r in zip(t_ms.tolist(), population.tolist(), index.tolist())]
        with open(spikes) as f:
            assert f.read().splitlines()[1:] == rows


@pytest.mark.parametrize("nodes", [1, 3])
def test_weights_of_a_plastic_projection_equal_dnnc_runs_csv(tmp, nodes):
    stdp = example("stdp/stdp.xml")
    path = tmp / "weights.csv"
    cli("run", stdp, "--nodes", 1, "--ticks", 1000, "--weights", path)
    expected = {}
    with open(path) as f:
        assert f.readline().strip() == "projection,source,target,weight"
        for line in f:
            projection, source, target, weight = line.strip().split(",")
            if projection == "I_E":
                expected.setdefault((int(source[2:-1]), int(target[2:-1])), []).append(np.float32(weight))
    with dnnc.Simulation(dnnc.load(stdp), nodes=nodes) as sim:
        sim.run(1000)
        source, target, weight = sim.weights("I_E")
        assert source.dtype == np.int64 and target.dtype == np.int64 and weight.dtype == np.float32
        assert len(weight) == 4000
        got = {}
        for s, t, w in zip(source.tolist(), target.tolist(), weight.tolist()):
            got.setdefault((s, t), []).append(np.float32(w))
        assert got == expected  # bit for bit, parallel synapses in canonical order
        assert np.all(weight < 0) and np.any(weight != np.float32(-4))
        with pytest.raises(Exception, match="no plastic projection 'E_I'"):
            sim.weights("E_I")


def test_a_plastic_network_snapshotted_on_4_nodes_learns_on_2_as_a_straight_run(tmp):
    stdp = dnnc.load(example("stdp/stdp.xml"))
    with dnnc.Simulation(stdp, nodes=1) as sim:
        sim.run(1500)
        straight = sim.weights("E_E")
    with dnnc.Simulation(stdp, nodes=4) as sim:
        sim.run(900)
        sim.freeze()
        assert sim.snapshot(tmp / "stdp.dnncs") == 900
    with dnnc.restore(tmp / "stdp.dnncs", nodes=2) as sim:
        sim.run(600)
        source, target, weight = sim.weights("E_E")
    order = np.lexsort((straight[0], straight[1]))
    again = np.lexsort((source, target))
    assert np.array_equal(source[again], straight[0][order]) and np.array_equal(target[again], straight[1][order])
    assert weight[again].tobytes() == straight[2][order].tobytes()
    assert np.any(weight != np.float32(1.5))


def test_structure_and_grown_connections_of_a_growing_network_equal_dnnc_run_and_1_node(tmp):
    growing = tmp / "grow.xml"
    text = open(example("structural_plasticity/structural_plasticity.xml")).read()
    # A tenth of NEST's example, growing 100 times faster: updates every 100 ms.
    for old, new in (('size="800"', 'size="80"'), ('size="200"', 'size="20"'), ('interval="1000"', 'interval="100"'),
                     ('growth_rate="0.0001"', 'growth_rate="0.01"'), ('growth_rate="0.0004"', 'growth_rate="0.04"')):
        text = text.replace(old, new)
    growing.write_text(text)
    path = tmp / "structure.csv"
    cli("run", growing, "--nodes", 1, "--ticks", 20000, "--structure", path)
    with open(path) as f:
        assert f.readline().strip() == "t_ms,population,mean_ca,connections_in,created,deleted"
        expected = [line.strip().split(",") for line in f]
    with dnnc.Simulation(dnnc.load(str(growing)), nodes=2) as sim:
        sim.run(20000)
        s = sim.structure()
        assert s["t_ms"].dtype == np.float64 and s["mean_ca"].dtype == np.float64 and s["created"].dtype == np.int64
        assert len(s["t_ms"]) == len(expected) == 40
        for k, row in enumerate(expected):
            assert (s["t_ms"][k], s["population"][k]) == (float(row[0]), row[1])
            assert s["mean_ca"][k] == float(row[2])  # bit for bit: 17 digits round-trip a double
            assert (s["connections_in"][k], s["created"][k], s["deleted"][k]) == tuple(int(v) for v in row[3:])
        assert s["created"].sum() > 100
        c = sim.connections()
        assert c["source"].dtype == np.int64 and c["target"].dtype == np.int64
        # The grown synapses now: as many as the last update left onto E and I.
        assert len(c["synapse"]) == int(s["connections_in"][-2] + s["connections_in"][-1])
        excitatory = c["synapse"] == "synapse_ex"
        assert np.all(c["source_population"][excitatory] == "E") and np.all(c["source_population"][~excitatory] == "I")
        assert np.all(c["target"][c["target_population"] == "E"] < 80) and np.all(c["target"][c["target_population"] == "I"] < 20)
        with dnnc.Simulation(dnnc.load(str(growing)), nodes=1) as single:
            single.run(20000)
            one = single.connections()
            for key in c:
                assert np.array_equal(one[key], c[key])  # the same synapses on 1 node as on 2
