# pyNN.dnnc's inputs: current sources (amplitudes nA -> pA) and spike sources, each checked
# against the same input written by hand as a dnnc network.
import numpy as np
import pytest

import dnnc
from pynn_support import dnnc_spike_times, sim, spike_times

CELL = dict(cm=0.25, tau_m=10.0, tau_refrac=2.0, v_rest=-70.0, v_reset=-70.0, v_thresh=-55.0)
NEST_CELL = dict(model="iaf_psc_exp", C_m=250, tau_m=10, t_ref=2, E_L=-70, V_reset=-70, V_th=-55, tau_syn_ex=5,
                 tau_syn_in=5, v_init=-70)


def pynn_run(inject, ms=150.0):
    """Spike times of one IF_curr_exp neuron given `inject(cell)`."""
    sim.setup(timestep=0.1, nodes=1)
    cell = sim.Population(1, sim.IF_curr_exp(**CELL), initial_values={"v": -70.0})
    inject(cell)
    cell.record("spikes")
    sim.run(ms)
    times = spike_times(cell)[0]
    sim.end()
    return times


def by_hand(add, ms=150.0):
    net = dnnc.Network("by_hand", dt=0.1)
    net.population("n", 1, **NEST_CELL)
    add(net)
    net.record("n")
    return dnnc_spike_times(net, int(ms / 0.1)).get(("n", 0), np.zeros(0))


def test_dc_source():
    times = pynn_run(lambda cell: sim.DCSource(amplitude=0.5, start=20.0, stop=80.0).inject_into(cell))
    expected = by_hand(lambda net: net.dc("n", 500.0, start=20.0, stop=80.0))
    assert len(times) >= 2 and times.min() > 20.0 and times.max() < 82.0
    np.testing.assert_allclose(times, expected, atol=1e-9)


def test_step_current_source_is_consecutive_dc_segments():
    source = lambda: sim.StepCurrentSource(times=[10.0, 50.0, 90.0], amplitudes=[0.4, 0.8, 0.0])
    times = pynn_run(lambda cell: source().inject_into(cell))
    expected = by_hand(lambda net: (net.dc("n", 400.0, start=10.0, stop=50.0), net.dc("n", 800.0, start=50.0, stop=90.0)))
    assert len(times) >= 3
    np.testing.assert_allclose(times, expected, atol=1e-9)


def test_current_into_a_spike_source_is_refused():
    sim.setup(timestep=0.1, nodes=1)
    source = sim.Population(1, sim.SpikeSourceArray(spike_times=[1.0]))
    with pytest.raises(TypeError):
        sim.DCSource(amplitude=1.0).inject_into(source)
    sim.end()


def test_spike_source_array_drives_a_neuron_as_dnnc_does():
    given = [[5.0, 12.3, 40.0], [41.0, 41.5]]

    def inject(cell):
        source = sim.Population(2, sim.SpikeSourceArray(spike_times=given))
        source.record("spikes")
        sim.Projection(source, cell, sim.AllToAllConnector(), sim.StaticSynapse(weight=1.5, delay=1.0))
        inject.source = source

    sim.setup(timestep=0.1, nodes=1)
    cell = sim.Population(1, sim.IF_curr_exp(**CELL), initial_values={"v": -70.0})
    inject(cell)
    cell.record("spikes")
    sim.run(100.0)
    times, sources = spike_times(cell)[0], spike_times(inject.source)
    sim.end()
    np.testing.assert_allclose(sources[0], given[0])
    np.testing.assert_allclose(sources[1], given[1])

    def add(net):
        net.spike_source("s", size=2, spikes=([5.0, 12.3, 40.0, 41.0, 41.5], [0, 0, 0, 1, 1]))
        net.connect("s", "n", kind="all", weight=1500.0, delay_ms=1.0)

    expected = by_hand(add, ms=100.0)
    assert len(times) >= 1
    np.testing.assert_allclose(times, expected, atol=1e-9)


def test_a_spike_source_array_past_a_frames_size_goes_to_a_file_and_drives_as_inline(monkeypatch, tmp_path):
    # Regression: 2,000,000 spikes as <spike> children made an 86 MiB submit request, past the
    # 64 MiB a frame carries; past dnnc.SPIKES_INLINE they go to a CSV file the lead reads.
    rng = np.random.default_rng(11)

    def run(n, count, ms):
        step, index = np.divmod(np.sort(rng.choice(int(ms * 10) * n, count, replace=False)), n)
        sim.setup(timestep=0.1, nodes=2)
        source = sim.Population(n, sim.SpikeSourceArray(spike_times=[np.round(step[index == k] * 0.1, 1)
                                                                     for k in range(n)]))
        cell = sim.Population(n, sim.IF_curr_exp(**CELL))
        sim.Projection(source, cell, sim.OneToOneConnector(), sim.StaticSynapse(weight=0.6, delay=1.0))
        cell.record("spikes")
        text = sim.simulator.state.network()._text()
        sim.run(ms)
        spikes = spike_times(cell)
        sim.end()
        return spikes, text

    spikes, text = run(500, 2_000_000, 1000.0)
    assert 'file="' in text and "<spike " not in text
    assert sum(len(t) for t in spikes.values()) > 1000
    # A file gives the spikes that the same trains inline give.
    state = rng.bit_generator.state
    monkeypatch.setattr(dnnc, "SPIKES_INLINE", 10)
    in_file, text = run(20, 4000, 300.0)
    assert 'file="' in text
    rng.bit_generator.state = state
    monkeypatch.setattr(dnnc, "SPIKES_INLINE", 10 ** 9)
    inline, text = run(20, 4000, 300.0)
    assert "<spike " in text and sum(len(t) for t in inline.values()) > 20
    assert sorted(in_file) == sorted(inline)
    for k in inline:
        np.testing.assert_array_equal(in_file[k], inline[k])
    # save() writes the file beside the document and names it there.
    monkeypatch.setattr(dnnc, "SPIKES_INLINE", 2)
    net = dnnc.Network("small", dt=0.1)
    net.spike_source("s", size=2, spikes=([0.5, 1.25, 3.0], [1, 0, 1]))
    net.save(tmp_path / "small.xml")
    assert 'file="small.spikes-0.csv"' in (tmp_path / "small.xml").read_text()
    assert (tmp_path / "small.spikes-0.csv").read_text() == "t_ms,index\n0.5,1\n1.25,0\n3.0,1\n"
    dnnc.load(tmp_path / "small.xml").validate()
    # Garbage either way: a located error from the file, a usage error for unequal columns.
    net.spike_source("bad", size=2, spikes=([0.5, float("nan"), 2.0], [0, 1, 5]))
    with pytest.raises(dnnc.DocumentError, match=r"spikes-1\.csv:3"):
        net.validate()
    for limit in (2, 10 ** 9):
        monkeypatch.setattr(dnnc, "SPIKES_INLINE", limit)
        with pytest.raises(dnnc.UsageError, match="two sequences of one length"):
            dnnc.Network("n").spike_source("s", size=2, spikes=([0.5, 1.0, 2.0], [0, 1]))


def test_ac_and_noise_sources_translate_to_dnnc_generators():
    sim.setup(timestep=0.1, nodes=1)
    cell = sim.Population(3, sim.IF_curr_exp())
    sim.ACSource(amplitude=0.2, offset=0.1, frequency=20.0, phase=90.0, start=5.0, stop=50.0).inject_into(cell)
    sim.NoisyCurrentSource(mean=0.3, stdev=0.05, dt=1.0, start=0.0, stop=60.0).inject_into(cell[1:3])
    text = sim.simulator.state.network()._text()
    sim.end()
    # PyNN's phase is at start, dnnc's (NEST's) at t = 0: 90° - 360°·20 Hz·5 ms.
    assert '<ac to="p0" amplitude="200.0" offset="100.0" frequency="20.0" phase="54.0" start="5.0" stop="50.0"' in text
    assert '<noise to="p0[1:3]" mean="300.0" std="50.0" dt-ms="1.0" seed="2" start="0.0" stop="60.0"' in text


@pytest.mark.parametrize("tag", ["ac", "noise"])
def test_ac_and_noise_sources_run_as_dnnc_runs_them(tag):
    if tag == "ac":
        times = pynn_run(lambda cell: sim.ACSource(amplitude=0.4, offset=0.3, frequency=25.0, phase=30.0,
                                                   start=5.0, stop=120.0).inject_into(cell))
        expected = by_hand(lambda net: net.element("ac", to="n", amplitude=400.0, offset=300.0, frequency=25.0,
                                                   phase=30.0 - 360.0 * 25.0 * 5.0 / 1000.0, start=5.0, stop=120.0))
    else:
        times = pynn_run(lambda cell: sim.NoisyCurrentSource(mean=0.5, stdev=0.2, dt=1.0, start=0.0,
                                                             stop=150.0).inject_into(cell))
        expected = by_hand(lambda net: net.element("noise", to="n", mean=500.0, std=200.0, dt_ms=1.0, seed=1,
                                                   start=0.0, stop=150.0))
    assert len(times) >= 2
    np.testing.assert_allclose(times, expected, atol=1e-9)


def test_spike_source_poisson_is_a_poisson_spike_source():
    sim.setup(timestep=0.1, nodes=1)
    poisson = sim.Population(4, sim.SpikeSourcePoisson(rate=[10.0, 20.0, 30.0, 40.0], start=10.0, duration=500.0))
    text = sim.simulator.state.network()._text()
    assert '<spike-source id="p0" size="4" rate="10.0 20.0 30.0 40.0" start="10.0" stop="510.0" seed="1"' in text
    poisson.record("spikes")
    sim.run(1000.0)
    counts = poisson.get_spike_counts()
    times = spike_times(poisson)
    sim.end()
    for i, rate in enumerate([10.0, 20.0, 30.0, 40.0]):
        expected = rate * 0.5
        assert abs(counts[int(poisson[i])] - expected) < 5 * expected ** 0.5
        assert times[i].min() >= 10.0 and times[i].max() < 510.0


def test_recorded_currents_are_what_the_engine_adds():
    """Each source's recorded current (nA, from t = 0 to now) equals the output of a dnnc
    `linear` neuron, which is its input, fed by the generator elements the source writes, at
    the number of the source's first target (a noise source's draws are keyed by it)."""
    sim.setup(timestep=0.1, nodes=1)
    cells = sim.Population(3, sim.IF_curr_exp())
    sources = [sim.DCSource(amplitude=0.5, start=2.0, stop=6.0),
               sim.ACSource(amplitude=0.2, offset=0.1, frequency=200.0, phase=30.0, start=1.0, stop=8.0),
               sim.NoisyCurrentSource(mean=0.3, stdev=0.1, dt=0.5, start=3.0, stop=9.0),
               sim.StepCurrentSource(times=[1.0, 4.0, 7.0], amplitudes=[0.4, -0.2, 0.0])]
    for source in sources:
        source.inject_into(cells[2:3])
        source.record()
    sim.run(10.0)
    recorded = [np.asarray(source.get_data()).ravel() for source in sources]
    elements = [source._elements("L[2]") for source in sources]
    sim.end()
    for source, trace, written in zip(sources, recorded, elements):
        assert trace.size == 101
        net = dnnc.Network("currents", dt=0.1)
        net.population("L", 3, model="linear")
        for tag, params in written:
            net.element(tag, **params)
        net.output("y", ["L[2]"])
        with dnnc.Simulation(net, nodes=1) as run:
            run.run(101)
            expected = np.asarray(run.outputs())[:, 0] / 1000.0
        np.testing.assert_array_equal(trace.astype(np.float32), expected.astype(np.float32), err_msg=type(source).__name__)
        assert np.count_nonzero(trace) > 10

