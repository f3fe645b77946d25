// Engines that build their rows from a share of the network: the same bits, every tick, as
// engines built from the listed rows (engine_spec::in), alone or split over two nodes whose
// receives lists hold more than they read; a share that names a source no peer sends is a
// protocol_error. Also the per-synapse weight and delay layout against a plain reference, and
// own delays packed beside their slots or kept apart.
#include "lockstep.hpp"

#include "dnnc/sim/engine.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <set>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

using trace = std::vector<std::vector<float>>;  // per tick, every neuron's output
using input_list = std::vector<std::tuple<global_index, tick_t, float>>;

model::network parse(const std::string& body) {
    return *protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\">" + body + "</network></dnnc>", "g.xml").net;
}

model::network example(const std::string& name) {
    return *protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/" + name).net;
}

input_list random_inputs(std::size_t neurons, int ticks, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> value(-1, 1);
    input_list inputs;
    for (int k = 0; k < ticks * 3; ++k)
        inputs.emplace_back(static_cast<global_index>(gen() % neurons), static_cast<tick_t>(gen() % static_cast<unsigned>(ticks)), value(gen));
    return inputs;
}

// Engines joined in lockstep by hand (lockstep.hpp).
trace run(std::vector<engine>& engines, std::size_t neurons, int ticks, const input_list& inputs) {
    for (const auto& [n, t, v] : inputs)
        for (auto& e : engines)
            if (e.is_local(n)) e.add_input(n, t, v);
    trace out;
    for (int t = 0; t < ticks; ++t) {
        for (auto& e : engines) e.compute();
        std::vector<float> row(neurons);
        for (auto& e : engines)
            for (const auto& s : e.spec().neurons) row[static_cast<std::size_t>(s.index)] = e.output(s.index);
        out.push_back(row);
        test::exchange(engines, t);
    }
    return out;
}

// Node n of two runs the neurons with node_of == n; with `superset`, each node receives every
// neuron of the other (and sends all its own) instead of those it reads.
std::vector<engine_spec> two_nodes(const model::expanded_network& net, const std::vector<std::uint32_t>& node_of,
                                   with_synapses synapses, bool superset) {
    auto specs = partition_specs(net, node_of, 2, {}, synapses);
    if (superset)
        for (std::uint32_t n = 0; n < 2; ++n) {
            std::vector<global_index> mine, theirs;
            for (std::size_t i = 0; i < node_of.size(); ++i) (node_of[i] == n ? mine : theirs).push_back(static_cast<global_index>(i));
            specs[n].peers = {{std::to_string(1 - n), mine, theirs}};
        }
    return specs;
}

std::vector<std::uint32_t> scatter(std::size_t neurons, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<std::uint32_t> node_of(neurons);
    for (auto& n : node_of) n = gen() % 2;
    return node_of;
}

void check_equal(const model::network& share, int ticks, unsigned seed) {
    const auto net = model::expand(share, "g.xml");
    const auto inputs = random_inputs(net.neuron_count(), ticks, seed);
    std::vector<engine> listed;
    listed.emplace_back(whole_network(net));
    const auto expected = run(listed, net.neuron_count(), ticks, inputs);
    {
        // One node: every neuron local, no peers.
        auto spec = whole_network(net);
        spec.in = {};
        spec.in_begin = {};
        std::vector<engine> built;
        built.emplace_back(spec, share);
        CHECK(built[0].synapse_count() == net.synapse_count());
        CHECK(run(built, net.neuron_count(), ticks, inputs) == expected);
    }
    const auto node_of = scatter(net.neuron_count(), seed);
    for (const bool superset : {false, true}) {
        INFO("superset receives: " << superset);
        std::vector<engine> split;
        for (const auto& spec : two_nodes(net, node_of, with_synapses::no, superset)) split.emplace_back(spec, share);
        CHECK(split[0].synapse_count() + split[1].synapse_count() == net.synapse_count());
        const auto got = run(split, net.neuron_count(), ticks, inputs);
        CHECK(got == expected);
        // The same split from listed rows, for good measure.
        std::vector<engine> split_listed;
        for (const auto& spec : two_nodes(net, node_of, with_synapses::yes, superset)) split_listed.emplace_back(spec);
        CHECK(run(split_listed, net.neuron_count(), ticks, inputs) == expected);
    }
}

}  // namespace

TEST_CASE("an engine built from a share equals one built from the listed rows, alone and on two nodes") {
    SECTION("rate neurons: random, all, one-to-one, explicit synapses, several delays") {
        check_equal(parse(R"(<population id="p" size="120" model="tanh" bias="0.1"/>
            <population id="q" size="40" model="step" threshold="0.5"/><neuron id="a" model="relu"/>
            <projection from="p" to="p" kind="random" p="0.1" seed="5" weight="0.3" delay="2"/>
            <synapse from="a" to="p[7]" weight="-0.75" delay="3"/>
            <projection from="q" to="p[0:40]" kind="one-to-one" weight="0.8"/>
            <projection from="p[0:40]" to="q" kind="all" weight="-0.05" autapses="false"/>
            <projection from="q" to="q" kind="random" p="0.3" seed="6" weight="0.6"/>
            <synapse from="p[3]" to="a" weight="2"/>
            <synapse from="p[7]" to="p[7]" weight="0.5" delay="1"/>)"),
                    30, 1);
    }
    SECTION("the CUBA example (lif, sparse activity)") { check_equal(example("cuba/cuba.xml"), 300, 2); }
    SECTION("fixed in-degree, with and without multapses and autapses (lif)") {
        check_equal(parse(R"(<population id="e" size="160" model="lif" seed="2" v-init="-60" v-init-max="-50"/>
            <population id="i" size="40" model="lif" seed="3" v-init="-60" v-init-max="-50"/>
            <projection from="e" to="e" kind="fixed-indegree" indegree="16" seed="7" weight="1.62"/>
            <projection from="e" to="i" kind="fixed-indegree" indegree="16" multapses="false" seed="8" weight="1.62"/>
            <projection from="i" to="e" kind="fixed-indegree" indegree="4" seed="9" weight="-9"/>
            <projection from="i" to="i" kind="fixed-indegree" indegree="39" multapses="false" autapses="false" seed="10" weight="-9"/>)"),
                    300, 5);
    }
    SECTION("fixed out-degree and fixed total number, weights and delays drawn (lif)") {
        check_equal(*protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/tests/data/rules_and_distributions.xml").net, 300, 6);
    }
    SECTION("the tree7 and xor examples") {
        check_equal(example("tree7/tree7.xml"), 20, 3);
        check_equal(example("xor/xor.xml"), 10, 4);
    }
}

TEST_CASE("a share naming a source that no peer sends is an inconsistent config") {
    const auto share = parse(R"(<population id="p" size="10"/>
        <projection from="p[0:5]" to="p[5:10]" kind="all"/>)");
    const auto net = model::expand(share, "g.xml");
    const std::vector<std::uint32_t> node_of{0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    auto specs = two_nodes(net, node_of, with_synapses::no, false);
    REQUIRE(specs[1].peers.size() == 1);
    auto& receives = specs[1].peers[0].receives;
    REQUIRE(receives.size() == 5);
    receives.erase(receives.begin() + 3);  // neuron 3
    try {
        engine e(specs[1], share);
        FAIL("built");
    } catch (const protocol_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("neuron 3 feeds neuron 5") && Catch::Contains("inconsistent"));
    }
    // Node 0 reads nothing remote: its engine builds.
    engine fine(specs[0], share);
    CHECK(fine.synapse_count() == 0);
    CHECK_THROWS_AS(engine(whole_network(net), share), usage_error);  // synapses listed and drawn
}

TEST_CASE("synapses with weights and delays of their own give the reference sums") {
    // So many distinct weights that the engine keeps a weight and a delay per synapse.
    const auto doc = parse(R"(<population id="p" size="300" model="step" threshold="0.5" bias="0.25"/>)");
    const auto net = model::expand(doc, "g.xml");
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> weight(-0.6f, 0.9f);
    auto spec = whole_network(net);
    spec.history = 4;
    spec.in_begin = {0};
    for (std::size_t i = 0; i < 300; ++i) {
        for (int k = 0; k < 12; ++k)
            spec.in.push_back({static_cast<global_index>(gen() % 300), weight(gen), static_cast<std::uint16_t>(1 + gen() % 4)});
        spec.in_begin.push_back(spec.in.size());
    }
    const int ticks = 40;
    const auto inputs = random_inputs(300, ticks, 7);
    std::vector<engine> engines;
    engines.emplace_back(spec);
    const auto got = run(engines, 300, ticks, inputs);
    // The plain reference: u = bias + ext + sum w * y(t - d) in canonical order, in float.
    trace expected;
    std::vector<std::vector<float>> ext(ticks, std::vector<float>(300, 0.0f));
    for (const auto& [n, t, v] : inputs) ext[static_cast<std::size_t>(t)][static_cast<std::size_t>(n)] += v;
    for (int t = 0; t < ticks; ++t) {
        std::vector<float> y(300);
        for (std::size_t i = 0; i < 300; ++i) {
            float u = 0.25f;
            u += ext[static_cast<std::size_t>(t)][i];
            for (auto s = spec.in_begin[i]; s < spec.in_begin[i + 1]; ++s) {
                const auto& x = spec.in[s];
                const tick_t from = t - x.delay;
                u += x.weight * (from < 0 ? 0.0f : expected[static_cast<std::size_t>(from)][static_cast<std::size_t>(x.source)]);
            }
            y[i] = u >= 0.5f ? 1.0f : 0.0f;
        }
        expected.push_back(y);
    }
    CHECK(got == expected);
    std::size_t active = 0;
    for (const auto& row : got)
        for (auto v : row) active += v != 0;
    CHECK(active > 0);
    for (std::size_t s = spec.in_begin[17], k = 0; s < spec.in_begin[18]; ++s, ++k) {
        const auto in = engines[0].incoming(17);
        CHECK(in[k].source == spec.in[s].source);
        CHECK(in[k].weight == spec.in[s].weight);
        CHECK(in[k].delay == spec.in[s].delay);
    }
}

TEST_CASE("on a node that reads remote neurons, sums fed in index order stay in order: under 7 bytes a synapse") {
    // Regression: local neurons take the first slots, so the slot order of a scattered
    // node's sources is not their index order; sums were then taken for out of order and
    // every synapse kept its index in the fan-out (12 bytes a synapse instead of 8). In order,
    // a synapse costs its source slot (4 bytes) and its packed target (2: fan_out.hpp).
    const auto share = parse(R"(<population id="p" size="2000" model="lif" seed="3" v-init="-60" v-init-max="-50"/>
        <projection from="p" to="p" kind="random" p="0.05" seed="9" weight="1.5"/>)");
    const auto net = model::expand(share, "g.xml");
    std::vector<engine> split;
    for (const auto& spec : two_nodes(net, scatter(net.neuron_count(), 7), with_synapses::no, true)) split.emplace_back(spec, share);
    for (const auto& e : split) {
        const double per_synapse = static_cast<double>(e.synapse_bytes()) / static_cast<double>(e.synapse_count());
        CHECK(per_synapse < 7);  // 6.8 with the per-row and per-slot overheads; 8.7 unpacked, 12.7 out of order
    }
}

TEST_CASE("a synapse's own delay shares its slot's word up to 2^20 slots, and keeps two bytes of its own beyond") {
    // Drawn weights and delays (1 to 40 ticks), as the microcircuit's: a synapse costs its
    // slot and delay in one word, its weight, and its fan-out entry (8). Beside 2^20 silent
    // neurons the slots take 21 bits, too many to leave the delays room: the same synapses
    // then keep their delays apart, and the network runs the same.
    const std::string drawn = R"(<population id="P" size="500" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="3"/>
        <projection from="P[0:400]" to="P" kind="fixed-total-number" n="200000" seed="1">
          <weight distribution="normal" mean="9" std="2" min="0"/>
          <delay distribution="normal" mean="1.5" std="1.2" min="0.05" max="4"/>
        </projection>
        <projection from="P[400:500]" to="P" kind="fixed-total-number" n="50000" seed="2">
          <weight distribution="normal" mean="-40" std="4" max="0"/>
          <delay distribution="normal" mean="0.75" std="0.5" min="0.05" max="4"/>
        </projection>
        <poisson to="P" rate="6000" weight="90" seed="5"/>)";
    auto node = [](const model::network& share) {
        auto spec = whole_network(model::expand(share, "g.xml"));
        spec.in = {};
        spec.in_begin = {};
        return engine(spec, share);
    };
    const auto small_share = parse(drawn), large_share = parse(drawn + R"(<population id="Q" size="1048576" model="iaf_psc_delta"/>)");
    engine packed = node(small_share), apart = node(large_share);
    REQUIRE(packed.synapse_count() == 250000);
    REQUIRE(apart.synapse_count() == 250000);
    const double per_synapse = static_cast<double>(packed.synapse_bytes()) / 250000.0;
    CHECK(per_synapse < 18);  // 16.7 with the rows' and slots' overheads; 18.7 with delays apart (tried)
    std::set<std::uint16_t> delays;
    for (global_index i = 0; i < 500; ++i) {
        const auto mine = packed.incoming(i), theirs = apart.incoming(i);
        REQUIRE(mine.size() == theirs.size());
        for (std::size_t s = 0; s < mine.size(); ++s) {
            REQUIRE(mine[s].source == theirs[s].source);
            REQUIRE(mine[s].weight == theirs[s].weight);
            REQUIRE(mine[s].delay == theirs[s].delay);
            delays.insert(mine[s].delay);
        }
    }
    CHECK(delays.size() >= 30);
    std::size_t spikes = 0;
    for (int t = 0; t < 300; ++t) {
        packed.compute();
        apart.compute();
        for (global_index i = 0; i < 500; ++i) {
            spikes += packed.output(i) != 0.0f;
            REQUIRE(packed.output(i) == apart.output(i));
        }
    }
    CHECK(spikes > 500);
}
