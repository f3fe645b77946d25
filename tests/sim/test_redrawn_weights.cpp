// Own weights drawn again rather than kept twice: an engine built from its share of the
// network, whose synapses all keep their own weight, builds its rows without those weights
// and draws them again from the rows' streams while its fan-out index is placed (or into the
// rows, where no index holds them), and so does an update's (engine::set_synapses). Its
// weights, its memory and every tick's bits are those of an engine built from the listed
// rows, with 32-bit and with half weights.
#include "dnnc/sim/engine.hpp"
#include "dnnc/sim/memory.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>
#include <string>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

model::network rules_and_distributions() {
    return *protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/tests/data/rules_and_distributions.xml").net;
}

// Drawn weights beside a list projection (whose weights are read from the list again).
model::network drawn_and_listed() {
    auto net = *protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="e" size="80" model="lif" seed="2" v-init="-55" v-init-max="-50"/>
        <population id="i" size="20" model="lif" seed="3" v-init="-55" v-init-max="-50"/>
        <projection from="e" to="e" kind="random" p="0.2" seed="4">
          <weight distribution="normal" mean="1.9" std="0.4" min="0"/><delay distribution="uniform" min="0.1" max="1.5"/></projection>
        <projection from="i" to="e" kind="all" delay-ms="0.3"/>
        <projection from="e" to="i" kind="fixed-indegree" indegree="12" seed="5">
          <weight distribution="lognormal" mu="0.5" sigma="0.5"/></projection>
        </network></dnnc>)", "g.xml").net;
    // i -> e as a list: each e neuron from two i neurons, weights of their own.
    auto& listed = net.projections[1];
    listed.kind = model::projection_kind::list;
    std::mt19937 gen(6);
    std::uniform_real_distribution<float> weight(-9.0f, -1.0f);
    for (std::uint32_t target = 0; target < 80; ++target)
        for (std::uint32_t source : {target % 20, (target * 7 + 3) % 20}) {
            listed.connections.sources.push_back(source);
            listed.connections.targets.push_back(target);
            listed.connections.weights.push_back(weight(gen));
            listed.connections.delays.push_back(static_cast<std::uint16_t>(1 + gen() % 5));
        }
    return net;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A /proc/self/status field in bytes.
long long status_bytes(const std::string& field) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
    FAIL("no " << field << " in /proc/self/status");
    return 0;
}

// `drawn` (from the share) and `listed` ticked together under the same inputs: every
// neuron's output the same bits every tick.
void check_same_ticks(engine& drawn, engine& listed, std::size_t neurons, int ticks) {
    std::mt19937 gen(8);
    for (int k = 0; k < 3 * ticks; ++k) {
        const auto n = static_cast<global_index>(gen() % neurons);
        const tick_t t = gen() % static_cast<unsigned>(ticks);
        const float value = 200.0f + static_cast<float>(gen() % 400);
        drawn.add_input(n, t, value);
        listed.add_input(n, t, value);
    }
    std::size_t differ = 0, spikes = 0;
    for (int t = 0; t < ticks; ++t) {
        drawn.compute();
        listed.compute();
        for (std::size_t n = 0; n < neurons; ++n) {
            const auto g = static_cast<global_index>(n);
            differ += !same_bits(drawn.output(g), listed.output(g));
            spikes += listed.output(g) != 0.0f;
        }
    }
    CHECK(spikes > 0);
    CHECK(differ == 0);
}

// Every neuron's incoming synapses the same in both: sources, weights to the bit, delays.
void check_same_incoming(const engine& drawn, const engine& listed, std::size_t neurons) {
    std::size_t differ = 0, synapses = 0;
    for (std::size_t n = 0; n < neurons; ++n) {
        const auto a = drawn.incoming(static_cast<global_index>(n)), b = listed.incoming(static_cast<global_index>(n));
        REQUIRE(a.size() == b.size());
        for (std::size_t j = 0; j < a.size(); ++j, ++synapses)
            differ += a[j].source != b[j].source || !same_bits(a[j].weight, b[j].weight) || a[j].delay != b[j].delay;
    }
    CHECK(synapses > 0);
    CHECK(differ == 0);
}

}  // namespace

TEST_CASE("an engine built from its share draws its own weights again instead of keeping two copies, with the listed rows' bits") {
    for (const auto& [name, share] : {std::pair{"fixed out-degree and total number", rules_and_distributions()},
                                      std::pair{"random, fixed in-degree and a list", drawn_and_listed()}}) {
        const auto net = model::expand(share, "g.xml");
        for (const bool half : {false, true}) {
            INFO(name << ", " << (half ? "half" : "32-bit") << " weights");
            auto listed_spec = whole_network(net);
            listed_spec.half_weights = half;
            auto spec = listed_spec;
            spec.in = {};
            spec.in_begin = {};
            engine drawn(spec, share), listed(listed_spec);
            REQUIRE(drawn.synapse_count() == net.synapse_count());
            // Neither keeps a row copy of the weights while ticks take the sparse path.
            CHECK(drawn.synapse_bytes() == listed.synapse_bytes());
            check_same_ticks(drawn, listed, net.neuron_count(), 300);
            check_same_incoming(drawn, listed, net.neuron_count());
        }
    }
}

TEST_CASE("where no fan-out index holds the weights, the rows get them drawn again") {
    const auto share = drawn_and_listed();
    const auto net = model::expand(share, "g.xml");
    for (const bool half : {false, true}) {
        INFO((half ? "half" : "32-bit") << " weights");
        // Two lanes take no sparse path, so build no index.
        auto listed_spec = whole_network(net);
        listed_spec.half_weights = half;
        listed_spec.batch = 2;
        auto spec = listed_spec;
        spec.in = {};
        spec.in_begin = {};
        const engine drawn(spec, share), listed(listed_spec);
        CHECK(drawn.synapse_bytes() == listed.synapse_bytes());
        check_same_incoming(drawn, listed, net.neuron_count());
    }
}

TEST_CASE("an update's new drawn weights and delays are drawn again too, and the rows hold them as listed") {
    const auto before = rules_and_distributions();
    // New weights for e -> e, new delays for i -> i (a transition): the same sources.
    auto after = before;
    after.projections[0].weight_distribution->mean = 2.0;
    after.projections[3].delay_distribution->mu = -0.5;
    const auto net = model::expand(after, "g.xml");
    for (const bool half : {false, true})
        for (const std::uint32_t batch : {1u, 2u}) {
            INFO((half ? "half" : "32-bit") << " weights, " << batch << " lane(s)");
            auto listed_spec = whole_network(net);
            listed_spec.half_weights = half;
            listed_spec.batch = batch;
            auto spec = listed_spec;
            spec.in = {};
            spec.in_begin = {};
            engine updated(spec, before);
            for (int t = 0; t < 20; ++t) updated.compute();
            updated.set_synapses(after, {});
            const engine listed(listed_spec);
            CHECK(updated.synapse_bytes() == listed.synapse_bytes() + (batch == 1 ? (half ? 2 : 4) * listed.synapse_count() : 0));
            check_same_incoming(updated, listed, net.neuron_count());
        }
}

TEST_CASE("an engine built from its share never holds two copies of its own weights, and its build peaks under 14 bytes a synapse") {
    // 30 million synapses with drawn weights and delays (issue #33's aim for such a network:
    // at most 14 bytes a synapse; with both copies the peak was about 17).
    const auto share = *protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="g" dt="0.1">
        <population id="p" size="12000" model="lif"/>
        <projection from="p" to="p" kind="fixed-indegree" indegree="2500" seed="3">
          <weight distribution="normal" mean="0.5" std="0.05" min="0"/>
          <delay distribution="normal" mean="1.5" std="0.75" min="0.05"/></projection>
        </network></dnnc>)", "g.xml").net;
    const auto spec = whole_network(model::expand_neurons(share));  // the neurons alone, as a node gets them
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    const auto before = status_bytes("VmRSS");
    const engine built(spec, share);
    const auto peak = static_cast<double>(status_bytes("VmHWM") - before) / static_cast<double>(built.synapse_count());
    INFO("peak: " << peak << " bytes a synapse");
    REQUIRE(built.synapse_count() == 30000000);
    CHECK(peak < 14.0);
    // What the lead's memory check counts for this share bounds the peak, closely.
    sim::share_size counted_share;
    counted_share.synapses = built.synapse_count();
    counted_share.neurons = counted_share.network_neurons = 12000;
    counted_share.values_per_synapse = true;
    counted_share.longest_row = 2500;
    const auto counted = static_cast<double>(sim::bytes_needed(counted_share)) / static_cast<double>(built.synapse_count());
    INFO("counted: " << counted << " bytes a synapse");
    CHECK(counted >= peak);
    CHECK(counted < 1.1 * peak);
}
