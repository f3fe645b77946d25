// New weights and synapse model parameters between ticks (engine::set_synapses): engines
// whose weights or models change at tick T run on as an engine of the new network restored
// from their states at T (snapshots are exact), on one engine and on three in lockstep;
// plastic synapses keep what they learned unless their weights are the ones set, and their
// rule's state when their model's parameters change; a share wired otherwise, or a model
// that would time its traces differently, is refused and changes nothing.
#include "../protocol/listed_rule.hpp"
#include "lockstep.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/update.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <catch2/catch.hpp>

#include <regex>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

const std::string stdp = R"(<synapse-model id="ee" model="stdp_synapse" Wmax="80"/>)";

// Spike sources into a recurrent population: a projection of one weight, one of drawn
// weights, and (with `plastic`) synapses of `model` (id "ee") beside them.
std::string network_text(const std::string& weight, const std::string& mean, bool plastic, const std::string& model = stdp) {
    return R"(<dnnc xmlns="urn:dnnc:1"><network name="w" dt="0.1">)" + std::string(plastic ? model : "") +
           R"(<spike-source id="S" size="4"><spike index="0" t-ms="1"/><spike index="1" t-ms="4.3"/><spike index="2" t-ms="9.1"/>
           <spike index="3" t-ms="14"/><spike index="0" t-ms="21.2"/><spike index="2" t-ms="27.5"/><spike index="1" t-ms="33"/></spike-source>
           <population id="P" size="40" model="iaf_psc_exp" seed="3" I_e="380" v-init="-70" v-init-max="-56"/>
           <projection from="S" to="P" kind="all" weight=")" + weight + R"(" delay="7"/>
           <projection from="P" to="P" kind="random" p="0.15" seed="5" delay="13"><weight distribution="normal" mean=")" + mean +
           R"(" std="4"/></projection>)" +
           (plastic ? R"(<projection from="P" to="P" kind="random" p="0.1" seed="9" weight="30" delay="4" synapse-model="ee"/>)" : "") +
           "</network></dnnc>";
}

model::network network_of(const std::string& weight, const std::string& mean, bool plastic, const std::string& model = stdp) {
    return *protocol::parse_document(network_text(weight, mean, plastic, model), "w.xml").net;
}

// `half`: with half weights (<run weight-precision="half">).
std::vector<engine> engines_of(const model::network& net, std::size_t nodes, bool half = false) {
    const auto expanded = model::expand(net, "w.xml");
    std::vector<std::uint32_t> node_of(expanded.neuron_count());
    for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>(i * 7 % nodes);
    std::vector<engine> engines;
    for (auto& spec : partition_specs(expanded, node_of, nodes, {}, with_synapses::no)) {
        spec.half_weights = half;
        engines.emplace_back(spec, net);
    }
    return engines;
}

std::vector<float> outputs(const std::vector<engine>& engines, std::size_t neurons) {
    std::vector<float> row(neurons);
    for (const auto& e : engines)
        for (const auto& n : e.spec().neurons) row[static_cast<std::size_t>(n.index)] = e.output(n.index);
    return row;
}

void step(std::vector<engine>& engines) {
    const auto t = engines.front().next_tick();
    for (auto& e : engines) e.compute();
    test::exchange(engines, t);
}

// The outputs of `before`'s network on `nodes` engines, with `after`'s weights and synapse
// models from tick `at` on, against one engine of `after`'s network restored from their
// states at `at`, its plastic synapses' weights those `after` gives them where `after` sets
// them (its STDP synapses keep no other state); at the end, their plastic synapses alike.
void check_reweighted(const model::network& before, const model::network& after, std::size_t nodes, tick_t at, tick_t ticks,
                      bool half = false) {
    auto engines = engines_of(before, nodes, half);
    const auto neurons = model::expand(before, "w.xml").neuron_count();
    while (engines.front().next_tick() < at) step(engines);
    std::vector<neuron_state> states;
    for (const auto& e : engines)
        for (auto& s : e.capture()) states.push_back(std::move(s));
    const auto reweighted = protocol::reweighted_elements(before, after);
    for (auto& e : engines) e.set_synapses(after, reweighted);
    auto reference = engines_of(after, 1, half);
    if (!reweighted.empty() && reweighted.back() == 2) {  // the plastic projection's
        const auto set = reference.front().capture();
        for (auto& s : states) s.synapses = set[static_cast<std::size_t>(s.index)].synapses;
    }
    reference.front().restore(states, at);
    std::size_t spikes = 0;
    for (tick_t t = at; t < ticks; ++t) {
        step(engines);
        step(reference);
        const auto row = outputs(engines, neurons);
        REQUIRE(row == outputs(reference, neurons));
        spikes += static_cast<std::size_t>(std::count(row.begin() + 4, row.end(), 1.0f));  // P's
    }
    CHECK(spikes > 20);
    std::vector<std::vector<float>> learned(neurons);
    for (const auto& e : engines)
        for (const auto& s : e.capture()) learned[static_cast<std::size_t>(s.index)] = s.synapses;
    for (const auto& s : reference.front().capture()) REQUIRE(learned[static_cast<std::size_t>(s.index)] == s.synapses);
}

// The plastic synapses' values (weights and rule state) after `ticks` of `net` on one engine.
std::vector<float> plastic_values(const model::network& net, tick_t ticks) {
    auto engines = engines_of(net, 1);
    while (engines.front().next_tick() < ticks) step(engines);
    std::vector<float> values;
    for (const auto& s : engines.front().capture()) values.insert(values.end(), s.synapses.begin(), s.synapses.end());
    return values;
}

}  // namespace

TEST_CASE("static weights set at tick T run on as the network of the new weights restored at T, on 1 and 3 engines") {
    for (const std::size_t nodes : {1, 3}) {
        INFO(nodes << " engines");
        check_reweighted(network_of("60", "-10", false), network_of("-90", "6", false), nodes, 200, 600);
    }
}

TEST_CASE("with half weights, static weights set at tick T run on as the network of the new weights restored at T") {
    for (const std::size_t nodes : {1, 3}) {
        INFO(nodes << " engines");
        check_reweighted(network_of("60.01", "-10", false), network_of("-90.01", "6", false), nodes, 200, 600, true);
    }
    // Not the run of 32-bit weights: the membrane potentials differ.
    auto single = engines_of(network_of("60.01", "-10", false), 1), half = engines_of(network_of("60.01", "-10", false), 1, true);
    for (int t = 0; t < 400; ++t) {
        step(single);
        step(half);
    }
    const auto a = single.front().capture(), b = half.front().capture();
    REQUIRE(a.size() == b.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < a.size(); ++i) differ += a[i].variables != b[i].variables;
    CHECK(differ > 20);
}

TEST_CASE("new static weights leave plastic synapses their learned weights, on 1 and 3 engines") {
    for (const std::size_t nodes : {1, 3}) {
        INFO(nodes << " engines");
        check_reweighted(network_of("60", "-10", true), network_of("120", "2", true), nodes, 250, 600);
        // The same weights again change nothing (the fan-out index rebuilt, as a restore builds it).
        check_reweighted(network_of("60", "-10", true), network_of("60", "-10", true), nodes, 250, 600);
    }
}

TEST_CASE("a plastic projection's weights set at tick T learn on from there, on 1 and 3 engines") {
    for (const std::size_t nodes : {1, 3}) {
        INFO(nodes << " engines");
        auto before = network_of("60", "-10", true), after = before;
        after.projections[2].weight = 45;
        check_reweighted(before, after, nodes, 250, 600);
    }
}

TEST_CASE("drawn projections listed anew with weights of their own at tick T run on as the listed network restored at T, on 1 and 3 engines") {
    // Every weight one number: the store keeps weights per class until the list gives its own.
    auto uniform = network_of("60", "-10", false);
    uniform.projections[1].weight_distribution.reset();
    uniform.projections[1].weight = -8;
    auto listed = test::listed_rule(test::listed_rule(uniform, 0, 0, 95.0f), 1, 1, -3.0f);
    auto& weights = listed.projections[1].connections.weights;
    for (std::size_t i = 0; i < weights.size(); i += 3) weights[i] = -12.0f;
    for (const std::size_t nodes : {1, 3}) {
        INFO(nodes << " engines");
        check_reweighted(uniform, listed, nodes, 200, 600);
    }
}

TEST_CASE("weights from a share wired otherwise are refused, and the engine runs on unchanged") {
    const auto net = network_of("60", "-10", false);
    auto engines = engines_of(net, 1), untouched = engines_of(net, 1);
    for (int t = 0; t < 100; ++t) {
        step(engines);
        step(untouched);
    }
    const auto rewired = *protocol::parse_document(std::regex_replace(network_text("60", "-10", false), std::regex("p=\"0.15\""), "p=\"0.2\""), "w.xml").net;
    CHECK_THROWS_WITH(engines.front().set_synapses(rewired, {}), Catch::Contains("differ from this engine's in their sources or synapse models"));
    const auto reseeded = *protocol::parse_document(std::regex_replace(network_text("60", "-10", false), std::regex("seed=\"5\""), "seed=\"6\""), "w.xml").net;
    CHECK_THROWS_AS(engines.front().set_synapses(reseeded, {}), usage_error);
    for (int t = 0; t < 300; ++t) {
        step(engines);
        step(untouched);
        REQUIRE(outputs(engines, 44) == outputs(untouched, 44));
    }
}

TEST_CASE("a synapse model's parameters set at tick T run on as the network of the new parameters restored at T, on 1 and 3 engines") {
    const std::string tsodyks = R"(<synapse-model id="ee" model="tsodyks2_synapse" U="0.2" tau_rec="300" tau_fac="50"/>)";
    const std::vector<std::pair<std::string, std::string>> changes = {
        {stdp, R"(<synapse-model id="ee" model="stdp_synapse" Wmax="95" lambda="0.05" alpha="1.4" mu_plus="0.5"/>)"},
        {tsodyks, R"(<synapse-model id="ee" model="tsodyks2_synapse" U="0.6" tau_rec="120" tau_fac="400"/>)"}};
    for (const auto& [before, after] : changes) {
        INFO(after);
        // The new parameters change what the synapses learn: the test can tell them apart.
        CHECK(plastic_values(network_of("60", "-10", true, before), 600) != plastic_values(network_of("60", "-10", true, after), 600));
        for (const std::size_t nodes : {1, 3}) {
            INFO(nodes << " engines");
            check_reweighted(network_of("60", "-10", true, before), network_of("60", "-10", true, after), nodes, 250, 600);
        }
    }
}

TEST_CASE("a synapse model whose new parameters would time its traces differently is refused, and the engine runs on unchanged") {
    const auto net = network_of("60", "-10", true);
    auto engines = engines_of(net, 1), untouched = engines_of(net, 1);
    for (int t = 0; t < 100; ++t) {
        step(engines);
        step(untouched);
    }
    const auto retimed = network_of("60", "-10", true, R"(<synapse-model id="ee" model="stdp_synapse" Wmax="80" tau_plus="35"/>)");
    CHECK_THROWS_WITH(engines.front().set_synapses(retimed, {}), Catch::Contains("would time its traces differently"));
    for (int t = 0; t < 300; ++t) {
        step(engines);
        step(untouched);
        REQUIRE(outputs(engines, 44) == outputs(untouched, 44));
    }
}
