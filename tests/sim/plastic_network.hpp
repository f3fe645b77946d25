#pragma once
// A recurrent network with all three plasticity rules, for partition and move tests, and the
// check that two runs ended with the same plastic weights.
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

namespace dnnc::test {

// stdp on E->E (delay 5 ticks), tsodyks2 on E->I (delays 2..15 ticks), vogels_sprekeler on I->E
// (delay 2 ticks); other delays given as the attributes' text.
inline model::network recurrent_plastic_network(const std::string& ee_delay = "5", const std::string& ei_max_ms = "1.5",
                                                   const std::string& ie_delay = "2") {
    auto net = *protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="p">
        <population id="E" size="80" model="iaf_psc_delta" seed="1" v-init="-70" v-init-max="-55"/>
        <population id="I" size="20" model="iaf_psc_delta" seed="2" v-init="-70" v-init-max="-55"/>
        <projection from="E" to="E" kind="fixed-indegree" indegree="10" weight="1.5" delay=")" + ee_delay + R"(" seed="3"/>
        <projection from="E" to="I" kind="fixed-indegree" indegree="10" weight="2" seed="4">
          <delay distribution="uniform" min="0.2" max=")" + ei_max_ms + R"("/></projection>
        <projection from="I" to="E" kind="fixed-indegree" indegree="5" weight="-3" delay=")" + ie_delay + R"(" seed="5"/>
        <projection from="I" to="I" kind="fixed-indegree" indegree="5" weight="-2" delay="2" seed="6"/>
        <poisson to="E I" rate="2000" weight="0.8" seed="7"/></network></dnnc>)",
                                         "p.xml")
                   .net;
    net.populations[0].params.tau_minus = 15;
    net.synapse_models = {{"ee", "stdp_synapse", {{"lambda", 0.05}, {"Wmax", 4}, {"mu_plus", 0}, {"mu_minus", 0}}, {}},
                          {"ei", "tsodyks2_synapse", {{"U", 0.3}, {"u", 0.3}, {"tau_fac", 20}}, {}},
                          {"ie", "vogels_sprekeler_synapse", {{"eta", 0.05}, {"Wmax", -6}}, {}}};
    net.projections[0].synapse_model = "ee";
    net.projections[1].synapse_model = "ei";
    net.projections[2].synapse_model = "ie";
    return net;
}

inline void require_same_weights(const std::map<sim::global_index, std::vector<sim::synapse_weight>>& weights,
                                 const std::map<sim::global_index, std::vector<sim::synapse_weight>>& expected_weights) {
    REQUIRE(weights.size() == expected_weights.size());
    for (const auto& [target, list] : weights) {
        const auto& expected = expected_weights.at(target);
        REQUIRE(list.size() == expected.size());
        for (std::size_t k = 0; k < list.size(); ++k) {
            REQUIRE(list[k].element == expected[k].element);
            REQUIRE(list[k].source == expected[k].source);
            REQUIRE(list[k].weight == expected[k].weight);
        }
    }
}

}  // namespace dnnc::test
