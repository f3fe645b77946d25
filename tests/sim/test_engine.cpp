// The single-node engine: tick semantics, delays, inputs, models and state capture.
#include "dnnc/sim/engine.hpp"
#include "dnnc/protocol/xml.hpp"

#include "restore_check.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dnnc;
using namespace dnnc::sim;

namespace {
model::expanded_network network_of(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\">" + body + "</network></dnnc>", "t.xml");
    return model::expand(*doc.net, "t.xml");
}
}  // namespace

TEST_CASE("XOR answers two ticks after its inputs") {
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/xor/xor.xml");
    const auto net = model::expand(*doc.net, doc.file);
    engine e(whole_network(net));
    const auto a = *net.find("a"), b = *net.find("b"), out = *net.find("out");
    const int pairs[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    for (int t = 0; t < 4; ++t) {
        e.add_input(a, t, static_cast<float>(pairs[t][0]));
        e.add_input(b, t, static_cast<float>(pairs[t][1]));
    }
    std::vector<float> y;
    for (int t = 0; t < 6; ++t) {
        e.compute();
        y.push_back(e.output(out));
    }
    CHECK(y == std::vector<float>{0, 0, 0, 1, 1, 0});
}

TEST_CASE("delays read the output of d ticks ago, ticks before 0 read 0") {
    const auto net = network_of(R"(<neuron id="src"/><neuron id="late"/>
        <synapse from="src" to="late" weight="2" delay="3"/>)");
    engine e(whole_network(net));
    e.add_input(0, 0, 1.5f);
    e.add_input(0, 1, -1.0f);
    std::vector<float> late;
    for (int t = 0; t < 6; ++t) {
        e.compute();
        late.push_back(e.output(1));
    }
    CHECK(late == std::vector<float>{0, 0, 0, 3, -2, 0});
}

TEST_CASE("rate models apply their function to u = bias + ext + sum") {
    const auto net = network_of(R"(<neuron id="l" bias="0.5"/><neuron id="s" model="sigmoid"/>
        <neuron id="t" model="tanh"/><neuron id="r" model="relu" bias="-1"/><neuron id="st" model="step" threshold="2"/>)");
    engine e(whole_network(net));
    for (global_index i = 0; i < 5; ++i) e.add_input(i, 0, 2.0f);
    e.compute();
    CHECK(e.output(0) == 2.5f);
    CHECK(e.output(1) == Approx(1.0 / (1.0 + std::exp(-2.0))));
    CHECK(e.output(2) == Approx(std::tanh(2.0)));
    CHECK(e.output(3) == 1.0f);
    CHECK(e.output(4) == 1.0f);
    e.compute();
    CHECK(e.output(0) == 0.5f);
    CHECK(e.output(3) == 0.0f);
    CHECK(e.output(4) == 0.0f);
}

TEST_CASE("lif integrates exactly, spikes above threshold, resets and stays refractory") {
    // No input: v relaxes to v-rest exponentially.
    const auto quiet = network_of(R"(<neuron id="n" model="lif" v-init="-60" v-rest="-49" tau-m="20" dt="0.1" v-th="0"/>)");
    engine e(whole_network(quiet));
    for (int t = 0; t < 100; ++t) e.compute();
    const double expected = -49 + (-60 + 49) * std::exp(-100 * 0.1 / 20);
    CHECK(e.capture()[0].variables[0] == Approx(expected).epsilon(1e-4));

    // Above threshold at rest: spikes at once, then holds v-reset for refractory - 1 ticks.
    const auto busy = network_of(R"(<neuron id="n" model="lif" v-init="-49" v-rest="-40" v-th="-50" v-reset="-60" refractory="5"/>)");
    engine f(whole_network(busy));
    std::vector<float> spikes;
    for (int t = 0; t < 12; ++t) {
        f.compute();
        spikes.push_back(f.output(0));
    }
    CHECK(spikes[0] == 1.0f);
    for (int t = 1; t < 5; ++t) CHECK(spikes[t] == 0.0f);
    CHECK(f.capture()[0].variables.size() == 4);
    // After the refractory period it integrates from v-reset towards v-rest (-40) and spikes again.
    CHECK(std::count(spikes.begin(), spikes.end(), 1.0f) >= 1);
}

TEST_CASE("lif synaptic currents take weights by sign") {
    const auto net = network_of(R"(<neuron id="e"/><neuron id="i"/>
        <neuron id="n" model="lif" v-init="-49" v-rest="-49" v-th="100"/>
        <synapse from="e" to="n" weight="2"/><synapse from="i" to="n" weight="-3"/>)");
    engine e(whole_network(net));
    e.add_input(0, 0, 1.0f);
    e.add_input(1, 0, 1.0f);
    e.compute();
    e.compute();
    const auto s = e.capture()[2].variables;
    // After tick 1: ge = 2 * exp(-dt/tau_e), gi = -3 * exp(-dt/tau_i).
    CHECK(s[1] == Approx(2 * std::exp(-0.1 / 5)).epsilon(1e-5));
    CHECK(s[2] == Approx(-3 * std::exp(-0.1 / 10)).epsilon(1e-5));
    CHECK(s[0] < -49.0f + 1.0f);
}

namespace {
// The engine of part `k` of three, neuron i on part i % 3.
engine one_of_three(const model::expanded_network& net, std::size_t k) {
    std::vector<std::uint32_t> node_of(net.neuron_count());
    for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>(i % 3);
    return engine(partition_specs(net, node_of, 3)[k]);
}
}  // namespace

TEST_CASE("initial potentials are drawn per neuron, independent of partition, within range") {
    const auto net = network_of(R"(<population id="p" size="1000" model="lif" seed="9" v-init="-60" v-init-max="-50"/>)");
    engine whole(whole_network(net));
    engine part = one_of_three(net, 1);
    const auto all = whole.capture();
    const auto some = part.capture();
    for (const auto& s : some) CHECK(s.variables[0] == all[static_cast<std::size_t>(s.index)].variables[0]);
    double lo = 0, hi = -100;
    for (const auto& s : all) lo = std::min<double>(lo, s.variables[0]), hi = std::max<double>(hi, s.variables[0]);
    CHECK(lo >= -60.0);
    CHECK(hi < -50.0);
    CHECK(hi - lo > 9.0);
}

TEST_CASE("initial potentials given per member start each member, and step alike on any partition") {
    std::string listed;
    for (int i = 0; i < 30; ++i) listed += (i ? " " : "") + std::to_string(-70.0 + 0.5 * i);
    const auto net = network_of(R"(<population id="p" size="30" model="iaf_psc_alpha" I_e="400" v-init=")" + listed + R"("/>)");
    engine whole(whole_network(net));
    engine part = one_of_three(net, 2);
    const auto all = whole.capture();
    for (const auto& s : all) CHECK(s.variables[0] == static_cast<float>(-70.0 + 0.5 * static_cast<double>(s.index)));
    for (const auto& s : part.capture()) CHECK(s.variables[0] == all[static_cast<std::size_t>(s.index)].variables[0]);
    // They differ only where they start: the same dynamics, so the same step from the same state.
    for (int t = 0; t < 20; ++t) whole.compute(), part.compute();
    const auto later = whole.capture();
    for (const auto& s : part.capture()) CHECK(s.variables == later[static_cast<std::size_t>(s.index)].variables);
}

TEST_CASE("capture and restore continue bit for bit") {
    const auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    const auto net = model::expand(*doc.net, doc.file);
    CHECK(test::check_restore_continues(net) > 0);
}

TEST_CASE("an engine restored to the tick it is at takes the restored outputs, not those it computed") {
    // Sparse spiking activity read with several delays: the sources the sparse path found in
    // the history rows before the restore must not stand in for the restored rows'.
    const auto net = network_of(R"(<population id="P" size="300" model="iaf_psc_exp" seed="4" v-init="-70" v-init-std="4"/>
        <projection from="P" to="P" kind="random" p="0.05" weight="300" delay="1" seed="1"/>
        <projection from="P" to="P" kind="random" p="0.05" weight="-900" delay="3" seed="2"/>
        <projection from="P" to="P" kind="random" p="0.05" weight="250" delay="5" seed="3"/>
        <poisson to="P" rate="8000" weight="90" seed="9"/>)");
    engine pushed(whole_network(net)), e(whole_network(net));
    for (int t = 90; t < 100; ++t)
        for (global_index i = 0; i < 300; i += 7) pushed.add_input(i, t, 2000.0f);  // other spikes in the last ticks
    for (int t = 0; t < 100; ++t) {
        pushed.compute();
        e.compute();
    }
    e.restore(pushed.capture(), 100);
    std::size_t spikes = 0;
    for (int t = 100; t < 200; ++t) {
        pushed.compute();
        e.compute();
        for (global_index i = 0; i < 300; ++i) {
            spikes += pushed.output(i) != 0.0f;
            REQUIRE(e.output(i) == pushed.output(i));
        }
    }
    CHECK(spikes > 100);
    CHECK(spikes < 300 * 100 / 20);  // sparse: the sparse path runs
}

TEST_CASE("a value a peer sent is read at its delays and never again once its row is reused") {
    // a (node 0) feeds c with delay 1 and b with delay 3 (a ring of 4 rows on node 1). One
    // non-zero value arrives, for tick 2, then nothing (as in window mode); also after a
    // restore, which rewrites the rows' remote parts. With d (always 1) every tick takes the
    // full path, which reads every remote slot; without, the sparse path, which reads the
    // slots peers wrote.
    for (const bool busy : {false, true}) {
        INFO("full path: " << busy);
        const auto net = network_of(std::string(R"(<neuron id="a"/><neuron id="b"/><neuron id="c"/>
            <synapse from="a" to="b" weight="2" delay="3"/><synapse from="a" to="c" weight="1" delay="1"/>)") +
                                    (busy ? R"(<neuron id="d" bias="1"/>)" : ""));
        std::vector<std::uint32_t> node_of = {0, 1, 1};
        if (busy) node_of.push_back(1);
        const auto specs = partition_specs(net, node_of, 2);
        engine e(specs[1]);
        REQUIRE(e.receive_count(0) == 1);
        auto run = [&](tick_t from, tick_t to, tick_t sent) {
            for (tick_t t = from; t < to; ++t) {
                if (t == sent + 1) e.deliver_nonzero(0, sent, {{0, 1.5f}});
                e.compute();
                INFO("tick " << t);
                CHECK(e.output(2) == (t == sent + 1 ? 1.5f : 0.0f));
                CHECK(e.output(1) == (t == sent + 3 ? 3.0f : 0.0f));
            }
        };
        run(0, 20, 2);
        const auto states = e.capture();
        e.deliver_nonzero(0, 19, {{0, 4.0f}});
        e.restore(states, 20);  // the tick-19 value delivered above is not in the snapshot
        run(20, 40, 25);
    }
}

TEST_CASE("bad use of the engine is refused") {
    const auto net = network_of(R"(<neuron id="a"/>)");
    engine e(whole_network(net));
    CHECK_THROWS_AS(e.add_input(5, 0, 1.0f), usage_error);
    e.compute();
    CHECK_THROWS_AS(e.add_input(0, 0, 1.0f), usage_error);
    CHECK_THROWS_AS(e.restore({}, 3), usage_error);
}
