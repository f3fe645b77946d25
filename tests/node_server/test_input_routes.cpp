// External input routed to the nodes that run its neurons: input ports and neuron names,
// ticks that have run, lanes outside the batch and unknown targets refused.
#include "lead/input_routes.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;
using json = nlohmann::json;

namespace {

plan::network_plan xor_on_two_nodes() {
    auto plan = plan::plan_network(protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/xor/xor.xml"));
    plan.node_of_neuron = {0, 1, 0, 1, 0};  // a, b, h1, h2, out
    return plan;
}

protocol::input_row row(std::int64_t tick, std::string target, float value, std::int64_t lane = -1) {
    protocol::input_row r;
    r.tick = tick;
    r.target = std::move(target);
    r.value = value;
    r.lane = lane;
    return r;
}

}  // namespace

TEST_CASE("an input port's values go to the nodes of its neurons, a neuron's to its own") {
    const auto plan = xor_on_two_nodes();
    const auto routed = route_inputs(plan, {row(3, "x", 1.0f), row(4, "h2", 0.5f)}, 3, 1);
    CHECK(routed.values == 3);
    REQUIRE(routed.by_node.size() == 2);
    CHECK(routed.by_node.at(0) == json::array({json::array({0, 3, 1.0, -1})}));
    CHECK(routed.by_node.at(1) == json::array({json::array({1, 3, 1.0, -1}), json::array({3, 4, 0.5, -1})}));
}

TEST_CASE("input for a tick that has run, a lane outside the batch or an unknown target is refused") {
    const auto plan = xor_on_two_nodes();
    CHECK_THROWS_AS(route_inputs(plan, {row(2, "x", 1.0f)}, 3, 1), usage_error);
    CHECK_THROWS_AS(route_inputs(plan, {row(3, "x", 1.0f, 1)}, 3, 1), usage_error);
    CHECK_THROWS_AS(route_inputs(plan, {row(3, "x", 1.0f, -2)}, 3, 1), usage_error);
    CHECK_THROWS_WITH(route_inputs(plan, {row(3, "nobody", 1.0f)}, 3, 1), Catch::Contains("neither an input id nor a neuron"));
    CHECK(route_inputs(plan, {row(3, "x", 1.0f, 1)}, 3, 2).values == 2);
}
