// Weights in 16 bits (engine_spec::half_weights, <run weight-precision="half">): every weight
// is the nearest binary16 of the one given; the sparse path, the lanes path and partitions
// all give the same bits with them (threads: test_batch; updates: test_set_weights), and so
// does a restore; they take 4 bytes a synapse less; a weight beyond 16 bits is refused.
#include "lane_outputs.hpp"
#include "restore_check.hpp"
#include "dnnc/sim/runner.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <mutex>
#include <random>


using namespace dnnc;
using namespace dnnc::sim;

namespace {

using trace = test::lane_trace;  // outputs[tick][neuron * lanes + lane]

model::expanded_network network(const std::string& body) {
    const auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"g\" dt=\"0.1\">" + body + "</network></dnnc>", "g.xml");
    return model::expand(*doc.net, "g.xml");
}

engine_spec half(engine_spec spec) {
    spec.half_weights = true;
    return spec;
}

trace run(const engine_spec& spec, std::uint32_t lanes, int ticks) { return test::lane_outputs(spec, lanes, ticks); }

// The nearest binary16 of w, ties to even, by its spacing (2^-24 below 2^-14).
float nearest_half(float w) {
    const double x = w;
    if (x == 0) return w;
    const int exponent = std::max(std::ilogb(x), -14);
    const double spacing = std::ldexp(1.0, exponent - 10);
    return static_cast<float>(std::nearbyint(x / spacing) * spacing);
}

// As the microcircuit: every synapse its own drawn weight and delay, excitatory and inhibitory.
const char* const drawn = R"(<population id="P" size="500" model="iaf_psc_exp" seed="3" v-init="-65" v-init-std="3"/>
    <projection from="P[0:400]" to="P" kind="fixed-total-number" n="20000" seed="1">
      <weight distribution="normal" mean="90" std="20" min="0"/>
      <delay distribution="normal" mean="1.5" std="1.2" min="0.05"/>
    </projection>
    <projection from="P[400:500]" to="P" kind="fixed-total-number" n="5000" seed="2">
      <weight distribution="normal" mean="-400" std="40" max="0"/>
      <delay distribution="normal" mean="0.75" std="0.5" min="0.05"/>
    </projection>
    <poisson to="P" rate="6000" weight="90" seed="5"/>)";

}  // namespace

TEST_CASE("half weights are the nearest binary16 of the weights given, shared ones too") {
    const auto net = network(std::string(drawn) + R"(<population id="Q" size="50" model="relu"/>
        <projection from="P" to="Q" kind="random" p="0.2" weight="0.1" delay="2" seed="7"/>)");
    const engine single(whole_network(net)), halved(half(whole_network(net)));
    REQUIRE(halved.synapse_count() == single.synapse_count());
    std::size_t changed = 0;
    for (global_index k = 0; k < 550; ++k) {
        const auto given = single.incoming(k), kept = halved.incoming(k);
        REQUIRE(kept.size() == given.size());
        for (std::size_t s = 0; s < given.size(); ++s) {
            INFO("neuron " << k << ", synapse " << s << ", weight " << given[s].weight);
            REQUIRE(kept[s].source == given[s].source);
            REQUIRE(kept[s].delay == given[s].delay);
            REQUIRE(kept[s].weight == nearest_half(given[s].weight));
            changed += kept[s].weight != given[s].weight;
        }
    }
    CHECK(changed > single.synapse_count() * 9 / 10);  // drawn floats are rarely halves already
    CHECK(halved.incoming(520).at(0).weight == 0.0999755859375f);
}

TEST_CASE("with half weights the sparse path gives the lanes path's spikes, bit for bit") {
    const auto spec = half(whole_network(network(drawn)));
    const int ticks = 600;
    const auto lanes = run(spec, 2, ticks);
    const auto sparse = run(spec, 1, ticks);
    std::size_t spikes = 0;
    for (std::size_t t = 0; t < sparse.size(); ++t)
        for (std::size_t i = 0; i < 500; ++i) {
            spikes += sparse[t][i] != 0.0f;
            REQUIRE(sparse[t][i] == lanes[t][2 * i]);
        }
    CHECK(spikes > 500);
    CHECK(spikes < 500 * ticks / 40);
    // Not the single-precision run: the weights differ in their low bits.
    CHECK(run(whole_network(network(drawn)), 1, ticks) != sparse);
}

TEST_CASE("half weights on several nodes give the whole network's bits") {
    const auto net = network(drawn);
    const int ticks = 400;
    const auto whole = run(half(whole_network(net)), 1, ticks);
    for (const std::size_t nodes : {2, 3}) {
        std::mt19937 gen(static_cast<unsigned>(nodes));
        std::vector<std::uint32_t> node_of(net.neuron_count());
        for (auto& v : node_of) v = static_cast<std::uint32_t>(gen() % nodes);
        auto specs = partition_specs(net, node_of, nodes);
        for (auto& s : specs) s.half_weights = true;
        local_exchange exchange(std::move(specs));
        trace out(ticks, std::vector<float>(net.neuron_count()));
        std::mutex m;
        for (std::size_t v = 0; v < nodes; ++v)
            exchange.observe(v, [&](tick_t t, const engine& e) {
                const std::lock_guard<std::mutex> lock(m);
                for (const auto& s : e.spec().neurons) out[static_cast<std::size_t>(t)][static_cast<std::size_t>(s.index)] = e.output(s.index);
            });
        exchange.run_until(ticks - 1);
        INFO(nodes << " nodes");
        CHECK(out == whole);
    }
}

TEST_CASE("an engine with half weights restored from its capture runs on alike") {
    CHECK(test::check_restore_continues(half(whole_network(network(drawn)))) > 50);
}

TEST_CASE("half weights take 4 bytes a synapse less") {
    // Own weights: 2 bytes in the rows rather than 4; compact fan-out entries: 6 bytes rather than 8.
    // Single weights as the rows keep them once they have read them (incoming() takes them
    // back from the fan-out, test_released_weights.cpp).
    const auto spec = whole_network(network(drawn));
    const engine single(spec), halved(half(spec));
    const double synapses = static_cast<double>(single.synapse_count());
    const double released_single = static_cast<double>(single.synapse_bytes()) / synapses;
    const double released_half = static_cast<double>(halved.synapse_bytes()) / synapses;
    single.incoming(0);
    halved.incoming(0);
    const double single_bytes = static_cast<double>(single.synapse_bytes()) / synapses;
    const double half_bytes = static_cast<double>(halved.synapse_bytes()) / synapses;
    INFO("bytes a synapse: " << single_bytes << " single, " << half_bytes << " half; released " << released_single << " and "
                             << released_half);
    // Less a little: the halves beside the fan-out span its headers too (4 words a source
    // here, of 50 synapses).
    CHECK(single_bytes - half_bytes > 3.8);
    CHECK(single_bytes - half_bytes < 4.1);
    // Released, the rows hold none: 8-byte entries against 6-byte ones.
    CHECK(released_single - released_half > 1.8);
    CHECK(released_single - released_half < 2.1);
}

TEST_CASE("a weight beyond 16 bits is refused") {
    // Shared weights (a class each).
    auto spec = whole_network(network(R"(<population id="P" size="3" model="relu"/>)"));
    spec.in_begin = {0, 1, 2, 4};
    spec.in = {{1, 0.5f, 1}, {2, -3.0f, 2}, {0, 1.0f, 1}, {1, -70000.0f, 3}};
    CHECK_NOTHROW(engine(spec));
    CHECK_THROWS_WITH(engine(half(spec)), Catch::Contains("synapse weight -70000") && Catch::Contains("does not fit 16 bits"));
    spec.in[3].weight = -65519.0f;  // rounds to the largest half
    CHECK(engine(half(spec)).incoming(2).at(1).weight == -65504.0f);
    // Own weights, drawn: the first row with one is named.
    const auto drawn_large = whole_network(network(R"(<population id="P" size="200" model="relu"/>
        <projection from="P" to="P" kind="random" p="0.1" seed="1"><weight distribution="normal" mean="60000" std="3000"/></projection>)"));
    CHECK_NOTHROW(engine(drawn_large));
    CHECK_THROWS_WITH(engine(half(drawn_large)), Catch::Contains("into neuron ") && Catch::Contains("does not fit 16 bits"));
}

TEST_CASE("half weights shared by a projection cost no byte beside the fan-out") {
    // One weight and delay per projection: classes, no own weights, nothing kept in 16 bits.
    const auto spec = whole_network(network(R"(<population id="P" size="400" model="iaf_psc_exp"/>
        <projection from="P" to="P" kind="random" p="0.1" weight="20.01" delay="2" seed="1"/>
        <projection from="P[0:100]" to="P" kind="random" p="0.1" weight="-80.01" delay="3" seed="2"/>)"));
    const engine single(spec), halved(half(spec));
    CHECK(halved.synapse_bytes() == single.synapse_bytes());
    CHECK(halved.incoming(5).at(0).weight != single.incoming(5).at(0).weight);
}
