// The configs a lead sends down its broadcast tree: a fresh epoch, the lead's first child as
// its standby, a node behind a sub-lead told to reach the lead through it; and the nodes'
// acknowledgements checked against the configs sent.
#include "lead/config_tree.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;
using json = nlohmann::json;

namespace {

lead_state chain_state() {
    auto plan = plan::plan_network(protocol::parse_document(R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="tree">
    <population id="p" model="lif" size="6"/>
    <projection from="p" to="p" kind="all" weight="1" delay-ms="0.5"/>
  </network>
  <cluster lead="a">
    <node id="a" host="127.0.0.1" port="7100" capacity="1"/>
    <node id="b" host="127.0.0.1" port="7101" capacity="1"/>
    <node id="c" host="127.0.0.1" port="7102" capacity="1"/>
    <link from="a" to="b"/>
    <link from="b" to="c"/>
  </cluster>
</dnnc>)", "tree.xml"));
    lead_state state(std::move(plan), nullptr);
    state.windows.assign(state.plan.net.neuron_count(), 0.0);
    return state;
}

// Every config of the tree, by node.
std::map<std::string, const model::node_config*> by_node(const model::node_config& root) {
    std::map<std::string, const model::node_config*> configs;
    std::vector<const model::node_config*> stack{&root};
    while (!stack.empty()) {
        const auto* c = stack.back();
        stack.pop_back();
        configs[c->node] = c;
        for (const auto& child : c->children) stack.push_back(&child);
    }
    return configs;
}

}  // namespace

TEST_CASE("the configs go down the tree under a fresh epoch, the lead's first child standing by") {
    auto state = chain_state();
    const auto root = node_configs_of(state, {{"c", "b"}});
    CHECK(root.node == "a");
    CHECK(state.epoch != 0);
    const auto configs = by_node(root);
    REQUIRE(configs.size() == 3);
    CHECK(configs.at("c")->lead_via == "127.0.0.1:7101");  // behind its sub-lead b
    CHECK(configs.at("b")->lead_via.empty());
    REQUIRE(state.standby);
    CHECK(state.standby_id == root.children.front().node);
    CHECK(state.history == root.history);
    const auto again = node_configs_of(state, {});
    CHECK(again.epoch != root.epoch);
}

TEST_CASE("the nodes' acknowledgements must name every config sent, each with its hash") {
    auto state = chain_state();
    const auto root = node_configs_of(state, {});
    json acks = json::array();
    for (const auto& [node, config] : by_node(root)) acks.push_back({{"node", node}, {"hash", plan::config_hash(*config)}});
    CHECK_NOTHROW(check_acks(root, acks));
    json wrong = acks;
    wrong[1]["hash"] = "0";
    CHECK_THROWS_WITH(check_acks(root, wrong), Catch::Contains("acknowledged a config that differs"));
    json missing = acks;
    missing.erase(2);
    CHECK_THROWS_WITH(check_acks(root, missing), Catch::Contains("did not acknowledge its config"));
}

TEST_CASE("an install lists its nodes in order with the hash each acknowledged and whether it kept or prepared its engine") {
    auto state = chain_state();
    const json acks = json::array({{{"node", "c"}, {"hash", "3c"}, {"prepared", true}}, {{"node", "a"}, {"hash", "1a"}, {"kept", true}}});
    const auto nodes = installed_nodes(state, acks);
    REQUIRE(nodes.size() == 3);
    CHECK(nodes[0]["id"] == "a");
    CHECK(nodes[0]["hash"] == "1a");
    CHECK(nodes[0]["kept"] == true);
    CHECK(nodes[0]["prepared"] == false);
    CHECK(nodes[1]["hash"] == "");  // b did not acknowledge
    CHECK(nodes[1]["kept"] == false);
    CHECK(nodes[2]["prepared"] == true);
    std::size_t neurons = 0;
    for (const auto& n : nodes) neurons += n["neurons"].get<std::size_t>();
    CHECK(neurons == 6);
}
