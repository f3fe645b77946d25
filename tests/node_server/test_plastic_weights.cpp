// The lead's weight histograms: one per plastic projection and one per synapse model's
// plastic explicit synapses, bins over [0, Wmax], or over the weights seen for a model
// without a bound (a first round), added over the nodes; and a client's page of weights,
// asked of one node and named.
#include "lead/plastic_weights.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"
#include "node_messages.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

// Two nodes' plastic weights, by connection element.
const std::vector<std::map<std::size_t, std::vector<float>>> node_weights{
    {{0, {1.0f, 9.5f}}, {1, {4.0f}}, {3, {-0.5f, 2.0f}}},
    {{0, {10.0f}}, {2, {0.5f, 5.0f}}, {3, {3.0f}}},
};

// What the nodes would answer a weight-bins frame, added up.
void bin_on_both_nodes(weight_groups& groups, int& rounds) {
    ++rounds;
    for (const auto& weights : node_weights)
        for (std::size_t k = 0; k < groups.histograms.size(); ++k) {
            sim::weight_histogram own{groups.histograms[k].lo, groups.histograms[k].hi,
                                      std::vector<std::uint64_t>(groups.histograms[k].bins.size(), 0)};
            for (const auto element : groups.elements[k])
                if (auto it = weights.find(element); it != weights.end())
                    for (const float w : it->second) own.add(w);
            groups.histograms[k].merge(own);
        }
}

}  // namespace

TEST_CASE("weight histograms: a projection each, a synapse model's explicit synapses together, unbounded models binned over what they hold") {
    const std::vector<plastic_element> plastic{
        {0, "ee", false, "stdp_synapse", "stdp_synapse", 10.0},
        {1, "synapse[0]", true, "fast", "stdp_synapse", 5.0},
        {2, "synapse[1]", true, "fast", "stdp_synapse", 5.0},
        {3, "tt", false, "tsodyks2_synapse", "tsodyks2_synapse", std::nullopt},
    };
    int rounds = 0;
    const auto h = weight_histograms_of(plastic, 41, [&](weight_groups& groups) { bin_on_both_nodes(groups, rounds); });
    CHECK(rounds == 2);  // the unbounded model's range first, then the bins
    CHECK(h["tick"] == 41);
    CHECK(h["bins"] == weight_histogram_bins);
    const auto& p = h["projections"];
    REQUIRE(p.size() == 3);
    CHECK(p[0]["projection"] == "ee");
    CHECK(p[0]["lo"] == 0.0);
    CHECK(p[0]["hi"] == 10.0);
    CHECK(p[0]["synapses"] == 3);
    CHECK(p[0]["bins"][2] == 1);   // 1.0
    CHECK(p[0]["bins"][19] == 2);  // 9.5 and Wmax itself
    CHECK(p[1]["projection"] == "synapses (fast)");
    CHECK(p[1]["synapses"] == 3);
    CHECK(p[1]["min"] == 0.5f);
    CHECK(p[1]["max"] == 5.0f);
    CHECK(p[2]["projection"] == "tt");
    CHECK(p[2]["model"] == "tsodyks2_synapse");
    CHECK(p[2]["lo"] == -0.5);
    CHECK(p[2]["hi"] == 3.0);
    CHECK(p[2]["synapses"] == 3);
}

TEST_CASE("weight histograms of a network without plastic synapses ask no node") {
    int rounds = 0;
    const auto h = weight_histograms_of({}, 0, [&](weight_groups& groups) { bin_on_both_nodes(groups, rounds); });
    CHECK(rounds == 0);
    CHECK(h["projections"].empty());
}

TEST_CASE("a page of weights is asked of the node named, at most a page's limit, and its rows named") {
    const auto plan = plan::plan_network(protocol::parse_document(R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="learns">
    <synapse-model id="ee" model="stdp_synapse" Wmax="3"/>
    <population id="E" model="iaf_psc_delta" size="4"/>
    <projection id="E_E" from="E" to="E" kind="all" weight="1" delay-ms="1" synapse-model="ee"/>
  </network>
  <cluster lead="a">
    <node id="a" host="127.0.0.1" port="7100" capacity="1"/>
    <node id="b" host="127.0.0.1" port="7101" capacity="1"/>
    <link from="a" to="b"/>
  </cluster>
</dnnc>)", "learns.xml"));
    const auto plastic = plastic_elements(*plan.doc.net);
    std::size_t asked = 99;
    nlohmann::json page;
    const auto ask = [&](std::size_t node, const nlohmann::json& p) {
        asked = node;
        page = p;
        return nlohmann::json{{"total", 12}, {"rows", {{0, 1, 2, 1.25}}}};
    };
    const auto named = named_weights_page(plan, plastic, {{"node", 1}, {"from", 5}, {"limit", max_weights_page + 1}}, ask);
    CHECK(asked == 1);
    CHECK(page["from"] == 5);
    CHECK(page["limit"] == max_weights_page);
    CHECK(page["grown"] == false);
    CHECK(named["nodes"] == 2);
    CHECK(named["plastic"] == nlohmann::json::array({"E_E"}));
    CHECK(named["total"] == 12);
    CHECK(named["rows"] == nlohmann::json::array({{"E_E", "E[1]", "E[2]", 1.25}}));
    CHECK_THROWS_AS(named_weights_page(plan, plastic, {{"node", 2}, {"from", 0}, {"limit", 1}}, ask), usage_error);
    CHECK_THROWS_WITH(named_weights_page(plan, plastic, {{"grown", true}, {"from", 0}, {"limit", 1}}, ask),
                      Catch::Contains("no structural plasticity"));
}
