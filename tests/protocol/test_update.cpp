// Updates of a running network (protocol/update.hpp): parameters, weights, static synapses'
// and plastic synapses' delays and synapse models' parameters may change, anything that
// places, wires or numbers neurons may not, nor a delay beyond the history the nodes keep,
// a synapse model's trace time constants, initial state or weight bound's sign, each refusal
// located at the element.
#include "listed_rule.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/update.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {
network network_of(const std::string& body) {
    return *parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"u\" dt=\"0.1\">\n" + body + "</network></dnnc>", "u.xml").net;
}

// The ticks of output the nodes keep in these tests.
constexpr std::uint16_t kept = 10;

const std::string running_body = R"(<population id="E" size="10" model="iaf_cond_exp" seed="2" I_e="100" v-init="-65"/>
<spike-source id="S" size="2"><spike index="0" t-ms="1"/></spike-source>
<neuron id="a" model="iaf_psc_exp" V_th="-50"/>
<projection from="S" to="E" kind="all" weight="2"/>
<dc to="E" amplitude="5" start="1"/>
<poisson to="E" rate="10" weight="1" seed="3"/>
)";

std::string replaced(std::string body, const std::string& from, const std::string& to) {
    const auto at = body.find(from);
    REQUIRE(at != std::string::npos);
    return body.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("an update may change neurons' parameters, spikes, and generators' amplitudes, rates and windows") {
    const auto running = network_of(running_body);
    auto body = replaced(running_body, R"(I_e="100")", R"(I_e="300" V_th="-52")");
    body = replaced(body, R"(t-ms="1")", R"(t-ms="7")");
    body = replaced(body, R"(V_th="-50")", R"(V_th="-45")");
    body = replaced(body, R"(amplitude="5" start="1")", R"(amplitude="9" start="3" stop="8")");
    body = replaced(body, R"(rate="10")", R"(rate="40")");
    const auto updated = network_of(body);
    CHECK_NOTHROW(check_update(running, updated, kept));
    const auto parameters = parameters_of(updated);
    CHECK(parameters.projections.empty());
    const auto share = with_parameters(running, parameters, kept);
    CHECK(share.populations[0].params.iaf.i_e == 300);
    CHECK(share.currents[0].amplitude == 9);
    CHECK(share.projections == running.projections);
}

TEST_CASE("an update that changes more than parameters is refused, located at the element") {
    const auto running = network_of(running_body);
    const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> refused{
        {{R"(size="10")", R"(size="11")"}, "u.xml:2:1: population 'E' is not the running network's 'E' of the same size"},
        {{R"(model="iaf_cond_exp")", R"(model="iaf_cond_alpha")"}, "u.xml:2:1: population 'E'"},
        {{R"(v-init="-65")", R"(v-init="-60")"}, "u.xml:2:1: population 'E'"},
        {{R"(model="iaf_psc_exp")", R"(model="iaf_psc_alpha")"}, "u.xml:4:1: neuron 'a'"},
        {{R"(kind="all" weight="2")", R"(kind="one-to-one" weight="2")"}, "u.xml:5:1: projection 1 (from 'S' to 'E') is not the running network's"},
        {{R"(to="E" amplitude)", R"(to="E[0:5]" amplitude)"}, "u.xml:6:1: <dc> 1"},
        {{R"(seed="3")", R"(seed="4")"}, "u.xml:7:1: <poisson> 1 changes its targets or seed"},
    };
    for (const auto& [change, message] : refused) {
        INFO(change.second);
        CHECK_THROWS_WITH(check_update(running, network_of(replaced(running_body, change.first, change.second)), kept),
                          Catch::Contains(message) && Catch::Contains("an update changes parameters only"));
    }
    CHECK_THROWS_WITH(check_update(running, network_of(running_body + R"(<dc to="a" amplitude="1"/>)" + "\n"), kept),
                      Catch::Contains("the network has 2 current generators, the running one 1"));
    CHECK_THROWS_AS(with_parameters(running, parameters_of(network_of(replaced(running_body, R"(size="10")", R"(size="9")"))), kept),
                    config_error);
}

TEST_CASE("an update may not change structural plasticity") {
    const std::string body = R"(<population id="E" size="10" model="iaf_psc_alpha">
<synaptic-element name="Axon"/><synaptic-element name="Den" eps="0.05"/>
</population>
<structural-plasticity seed="1">
<structural-synapse id="s" pre_synaptic_element="Axon" post_synaptic_element="Den" weight="2"/>
</structural-plasticity>
)";
    const auto running = network_of(body);
    CHECK_NOTHROW(check_update(running, network_of(body), kept));
    const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> refused{
        {{R"(eps="0.05")", R"(eps="0.1")"}, "u.xml:2:1: population 'E' changes its synaptic elements, tau_Ca or beta_Ca"},
        {{R"(model="iaf_psc_alpha")", R"(model="iaf_psc_alpha" tau_Ca="500")"}, "u.xml:2:1: population 'E' changes its synaptic elements"},
        {{R"(seed="1")", R"(seed="2")"}, "u.xml:5:1: its <structural-plasticity> differs from the running network's"},
        {{R"(weight="2")", R"(weight="3")"}, "u.xml:5:1: its <structural-plasticity> differs"},
    };
    for (const auto& [change, message] : refused) {
        INFO(change.second);
        CHECK_THROWS_WITH(check_update(running, network_of(replaced(body, change.first, change.second)), kept),
                          Catch::Contains(message) && Catch::Contains("an update changes parameters only"));
    }
    CHECK_THROWS_WITH(check_update(network_of("<population id=\"E\" size=\"10\" model=\"iaf_psc_alpha\"/>\n"),
                                   network_of("<population id=\"E\" size=\"10\" model=\"iaf_psc_alpha\" beta_Ca=\"0.01\"/>\n"), kept),
                      Catch::Contains("u.xml:2:1: population 'E' changes its synaptic elements, tau_Ca or beta_Ca"));
}

TEST_CASE("an update may change weights: a projection's, its distribution's, a synapse's, plastic ones too, and a node takes them with its share") {
    const std::string body = R"(<synapse-model id="ee" model="stdp_synapse"/>
<population id="E" size="10" model="iaf_psc_exp" seed="2"/>
<projection from="E" to="E" kind="random" p="0.5" seed="1"><weight distribution="normal" mean="3" std="1"/></projection>
<projection id="plastic" from="E" to="E" kind="random" p="0.1" seed="2" weight="4" synapse-model="ee"/>
<synapse from="E[0]" to="E[1]" weight="2"/>
<synapse from="E[1]" to="E[2]" weight="2" synapse-model="ee"/>
)";
    const auto running = network_of(body);
    auto changed = replaced(body, R"(mean="3")", R"(mean="-5")");
    changed = replaced(changed, R"(to="E[1]" weight="2")", R"(to="E[1]" weight="7")");
    const auto updated = network_of(changed);
    CHECK_NOTHROW(check_update(running, updated, kept));
    CHECK(reweighted_elements(running, updated) == std::vector<std::size_t>{0, 2});  // in connection order
    CHECK(reweighted_elements(running, network_of(body)).empty());
    CHECK(with_parameters(running, parameters_of(updated), kept).projections == running.projections);  // parameters only
    const auto share = with_parameters(running, updated, kept);  // a node's updated share: its wiring too
    CHECK(share.projections[0].weight_distribution->mean == -5);
    CHECK(share.synapses[0].weight == 7);
    // A plastic synapse's weight may be set too (it then learns on from there).
    const auto plastic = network_of(replaced(replaced(body, R"(weight="4")", R"(weight="5")"), R"(to="E[2]" weight="2")", R"(to="E[2]" weight="3")"));
    CHECK_NOTHROW(check_update(running, plastic, kept));
    CHECK(reweighted_elements(running, plastic) == std::vector<std::size_t>{1, 3});
    CHECK_THROWS_WITH(check_update(running, network_of(replaced(body, R"(to="E[1]" weight="2")", R"(to="E[2]" weight="2")")), kept),
                      Catch::Contains("u.xml:6:1: synapse 1 is not the running network's of the same ends and model"));
}

TEST_CASE("an update may change static synapses' delays within the history the nodes keep, and a node takes them with its share") {
    const std::string body = R"(<synapse-model id="ee" model="stdp_synapse"/>
<population id="E" size="10" model="iaf_psc_exp" seed="2"/>
<projection from="E" to="E" kind="random" p="0.5" seed="1" weight="2" delay="3"/>
<projection from="E" to="E" kind="random" p="0.5" seed="3" weight="2"><delay distribution="uniform" min="0.1" max="0.5"/></projection>
<projection id="plastic" from="E" to="E" kind="random" p="0.1" seed="2" weight="4" delay="2" synapse-model="ee"/>
<synapse from="E[0]" to="E[1]" weight="2" delay="4"/>
<synapse from="E[1]" to="E[2]" weight="2" delay="5" synapse-model="ee"/>
)";
    const auto running = network_of(body);
    CHECK_FALSE(changes_delays(running, network_of(body)));
    auto changed = replaced(body, R"(weight="2" delay="3")", R"(weight="2" delay="1")");
    changed = replaced(changed, R"(max="0.5")", R"(max="0.9")");
    changed = replaced(changed, R"(weight="2" delay="4")", R"(weight="2" delay-ms="1")");
    const auto updated = network_of(changed);
    CHECK_NOTHROW(check_update(running, updated, kept));
    CHECK(changes_delays(running, updated));
    CHECK(reweighted_elements(running, updated).empty());
    const auto share = with_parameters(running, updated, kept);  // a node's updated share
    CHECK(share.projections[0].delay == 1);
    CHECK(share.synapses[0].delay_ms == 1.0);
    // Plastic synapses' delays too (the nodes take each spike's events with the delay it was
    // sent with: docs/simulation.md).
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {R"(weight="4" delay="2")", R"(weight="4" delay="3")"}, {R"(delay="5" synapse-model)", R"(delay="4" synapse-model)"}}) {
        const auto plastic = network_of(replaced(body, from, to));
        CHECK_NOTHROW(check_update(running, plastic, kept));
        CHECK(changes_delays(running, plastic));
    }
    const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> refused{
        {{R"(max="0.5")", R"(max="1.1")"}, "the longest delay would be 11 ticks; the nodes keep 10 ticks of output"},
    };
    for (const auto& [change, message] : refused) {
        INFO(change.second);
        CHECK_THROWS_WITH(check_update(running, network_of(replaced(body, change.first, change.second)), kept), Catch::Contains(message));
    }
}

TEST_CASE("an update may change a synapse model's parameters, not those that time traces or give initial state, and a node takes them with its share") {
    const std::string body = R"(<synapse-model id="ee" model="stdp_synapse" lambda="0.02" Wmax="50"/>
<synapse-model id="tm" model="tsodyks2_synapse" U="0.3"/>
<population id="E" size="10" model="iaf_psc_exp" seed="2"/>
<projection from="E" to="E" kind="random" p="0.1" seed="2" weight="4" synapse-model="ee"/>
<projection from="E" to="E" kind="random" p="0.1" seed="3" weight="4" synapse-model="tm"/>
)";
    const auto running = network_of(body);
    CHECK_FALSE(changes_synapse_models(running, network_of(body)));
    // Written or left to its default, a value is the same value.
    CHECK_FALSE(changes_synapse_models(running, network_of(replaced(body, R"(U="0.3")", R"(U="0.3" tau_fac="0")"))));
    auto changed = replaced(body, R"(lambda="0.02" Wmax="50")", R"(Wmax="70" alpha="2" lambda="0.05")");
    changed = replaced(changed, R"(U="0.3")", R"(U="0.6" tau_rec="100" tau_fac="20")");
    const auto updated = network_of(changed);
    CHECK_NOTHROW(check_update(running, updated, kept));
    CHECK(changes_synapse_models(running, updated));
    CHECK(reweighted_elements(running, updated).empty());
    CHECK_FALSE(changes_delays(running, updated));
    const auto share = with_parameters(running, updated, kept);  // a node's updated share
    CHECK(share.synapse_models == updated.synapse_models);
    const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> refused{
        {{R"(lambda="0.02")", R"(lambda="0.02" tau_plus="30")"},
         "u.xml:2:1: <synapse-model> 'ee' changes tau_plus, which times the traces of its synapses' spikes"},
        {{R"(U="0.3")", R"(U="0.3" u="0.9")"}, "u.xml:3:1: <synapse-model> 'tm' changes u, which is its synapses' initial state"},
        {{R"(U="0.3")", R"(U="0.3" x="0.5")"}, "u.xml:3:1: <synapse-model> 'tm' changes x, which is its synapses' initial state"},
        {{R"(Wmax="50")", R"(Wmax="-50")"}, "u.xml:2:1: <synapse-model> 'ee' changes the sign of Wmax"},
        {{R"(model="tsodyks2_synapse")", R"(model="stdp_synapse")"}, "u.xml:3:1: <synapse-model> 'tm' is not the running network's 'tm' of model 'tsodyks2_synapse'"},
    };
    for (const auto& [change, message] : refused) {
        INFO(change.second);
        CHECK_THROWS_WITH(check_update(running, network_of(replaced(body, change.first, change.second)), kept), Catch::Contains(message));
    }
}


TEST_CASE("a drawn projection may become the list of its synapses with new weights, on the lead and in a node's share") {
    const std::string body = R"(<synapse-model id="ee" model="stdp_synapse"/>
<population id="E" size="12" model="iaf_psc_exp" seed="2"/>
<projection from="E" to="E" kind="random" p="0.3" seed="1" delay="2"><weight distribution="normal" mean="3" std="1"/></projection>
<projection id="plastic" from="E" to="E" kind="fixed-indegree" indegree="3" seed="2" weight="4" delay="3" synapse-model="ee"/>
)";
    const auto running = network_of(body);
    for (const std::size_t k : {0, 1}) {
        INFO("projection " << k);
        const auto updated = test::listed_rule(running, k, k, 7.5f);
        REQUIRE(updated.projections[k].connections.size() > 10);
        CHECK_NOTHROW(check_update(running, updated, kept));
        CHECK(reweighted_elements(running, updated) == std::vector<std::size_t>{k});
        CHECK_FALSE(changes_delays(running, updated));  // the list's delays are the drawn ones
        // A node's share lists only its targets' synapses.
        auto share = updated;
        auto& c = share.projections[k].connections;
        const auto mine = static_cast<std::size_t>(std::count_if(c.targets.begin(), c.targets.end(), [](std::uint32_t t) { return t < 6; }));
        for (auto* column : {&c.sources, &c.targets}) column->resize(mine);
        c.weights.resize(mine);
        c.delays.resize(mine);
        CHECK_NOTHROW(check_update(running, share, kept, update_lists::cut_to_targets));
        CHECK_THROWS_WITH(check_update(running, share, kept), Catch::Contains("is not the running network's of the same kind, ends and rule"));
        // A synapse more, or one moved, is another projection.
        auto extra = updated;
        auto& e = extra.projections[k].connections;
        e.sources.insert(e.sources.begin(), 11);
        e.targets.insert(e.targets.begin(), 0);
        e.weights.insert(e.weights.begin(), 1.0f);
        e.delays.insert(e.delays.begin(), 2);
        CHECK_THROWS_WITH(check_update(running, extra, kept), Catch::Contains("projection " + std::string(k ? "'plastic'" : "1 (from 'E' to 'E')")));
    }
    // New delays in the list change delays, a static projection's and a plastic one's.
    auto delayed = test::listed_rule(running, 0, 0, 7.5f);
    delayed.projections[0].connections.delays.assign(delayed.projections[0].connections.size(), 1);
    CHECK_NOTHROW(check_update(running, delayed, kept));
    CHECK(changes_delays(running, delayed));
    auto plastic = test::listed_rule(running, 1, 1, 7.5f);
    plastic.projections[1].connections.delays.assign(plastic.projections[1].connections.size(), 1);
    CHECK_NOTHROW(check_update(running, plastic, kept));
    CHECK(changes_delays(running, plastic));
}

TEST_CASE("a dense projection's delay may not change") {
    const std::string body = R"(<population id="x" size="4" model="linear"/>
<population id="y" size="3" model="relu"/>
<projection from="x" to="y" kind="dense" init="normal" seed="1" delay="2"/>
)";
    CHECK_THROWS_WITH(check_update(network_of(body), network_of(replaced(body, R"(delay="2")", R"(delay="3")")), kept),
                      Catch::Contains("u.xml:4:1: projection 1 (from 'x' to 'y') changes the delay of a dense projection"));
}
