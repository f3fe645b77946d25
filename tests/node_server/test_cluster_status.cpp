// The cluster as the lead's status shows it: roles, neurons, silence and the dead, each
// population's spread over the nodes, the wait windows, and pages served on every address
// named by their node's host.
#include "lead/cluster_status.hpp"

#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

lead_state three_node_state() {
    auto plan = plan::plan_network(protocol::parse_document(R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="status">
    <population id="p" model="lif" size="6"/>
    <neuron id="x" model="linear"/>
    <projection from="p" to="p" kind="all" weight="1"/>
  </network>
  <cluster lead="a">
    <node id="a" host="10.0.0.1" port="7100" capacity="1"/>
    <node id="b" host="10.0.0.2" port="7101" capacity="1"/>
    <node id="c" host="10.0.0.3" port="7102" capacity="1"/>
    <link from="a" to="b"/>
    <link from="b" to="c"/>
  </cluster>
  <run clock="b" heartbeat-timeout="1000"/>
</dnnc>)", "status.xml"));
    plan.node_of_neuron = {0, 0, 1, 1, 2, 2, 0};
    plan.neurons_per_node = {3, 2, 2};
    lead_state state(std::move(plan), nullptr);
    const auto now = clock_type::now();
    state.last_seen = {now, now, now - std::chrono::seconds(5)};
    state.last_error = {"", "", "connection refused"};
    state.waiting.assign(3, nlohmann::json());
    state.pages = {"", "10.0.0.2:8080", ""};
    state.windows = {0.0, 2.0, 4.0, 0.0};
    return state;
}

}  // namespace

TEST_CASE("the lead's status names each node's roles and neurons, and the silent ones as dead") {
    auto state = three_node_state();
    const auto c = cluster_status_of(state, {{"c", "b"}}, "0.0.0.0:9000", std::nullopt);
    REQUIRE(c.nodes.size() == 3);
    CHECK(c.nodes[0].roles == std::vector<std::string>{"lead"});
    CHECK(c.nodes[1].roles == std::vector<std::string>{"clock", "sub-lead"});
    CHECK(c.nodes[2].roles == std::vector<std::string>{"worker"});
    CHECK(c.nodes[2].via == "b");
    CHECK(c.nodes[0].page == "10.0.0.1:9000");  // served on every address: reached at its host
    CHECK(c.nodes[1].page == "10.0.0.2:8080");
    CHECK(c.nodes[1].neurons == 2);
    CHECK(c.nodes[1].alive);
    CHECK_FALSE(c.nodes[2].alive);
    CHECK(c.nodes[2].error == "connection refused");
    CHECK(c.dead == std::vector<std::string>{"c"});
}

TEST_CASE("the lead's status spreads each population over the nodes, and the windows of remote inputs") {
    auto state = three_node_state();
    const auto c = cluster_status_of(state, {}, "", std::nullopt);
    REQUIRE(c.populations.size() == 2);
    CHECK(c.populations[0].id == "p");
    CHECK(c.populations[0].nodes == std::vector<std::uint64_t>{2, 2, 2});
    CHECK(c.populations[1].id == "(neurons)");
    CHECK(c.populations[1].nodes == std::vector<std::uint64_t>{1, 0, 0});
    CHECK(c.wait_windows.neurons_with_remote_inputs == 2);
    CHECK(c.wait_windows.min_ms == 2.0);
    CHECK(c.wait_windows.max_ms == 4.0);
    CHECK(state.populations.size() == 2);  // counted once, kept
}

TEST_CASE("a page served on every address is reached at its node's host") {
    CHECK(reachable_page("0.0.0.0:8080", "10.1.2.3") == "10.1.2.3:8080");
    CHECK(reachable_page("[::]:8080", "h") == "h:8080");
    CHECK(reachable_page("127.0.0.1:8080", "h") == "127.0.0.1:8080");
    CHECK(reachable_page("", "h").empty());
}
