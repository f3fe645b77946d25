// The lead's output rows from the nodes' tick reports: columns in document order, a row
// complete once every node waited for has reported it, lanes laid out column by column
// within each lane, spikes kept once per node.
#include "lead/row_assembly.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

// Outputs y1 = a c and y2 = c d over two nodes: a and d on node 0, c on node 1; two lanes.
plan::network_plan two_outputs() {
    auto plan = plan::plan_network(protocol::parse_document(R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="rows">
    <neuron id="a" model="linear"/>
    <neuron id="b" model="linear"/>
    <neuron id="c" model="linear"/>
    <neuron id="d" model="linear"/>
    <synapse from="a" to="b" weight="1"/>
    <output id="y1" neurons="a c"/>
    <output id="y2" neurons="c d"/>
  </network>
  <cluster lead="n0">
    <node id="n0" host="127.0.0.1" port="7100" capacity="1"/>
    <node id="n1" host="127.0.0.1" port="7101" capacity="1"/>
    <link from="n0" to="n1"/>
  </cluster>
  <run batch="2"/>
</dnnc>)", "rows.xml"));
    plan.node_of_neuron = {0, 0, 1, 0};
    return plan;
}

protocol::reported_tick entry(std::int64_t tick, std::vector<float> values, std::vector<std::uint32_t> spikes = {}) {
    protocol::reported_tick e;
    e.tick = tick;
    e.values = std::move(values);
    e.spikes = std::move(spikes);
    return e;
}

const auto everyone = [](std::size_t) { return true; };

}  // namespace

TEST_CASE("an assembled row holds every output neuron's columns, lane after lane, once every node has reported") {
    const auto plan = two_outputs();
    row_assembly rows(plan, 2);
    CHECK(rows.columns() == std::vector<std::string>{"a", "c", "c", "d"});
    CHECK(row_assembly::values_per_row(plan) == 8);
    // Node 0 reports a and d (ascending index), lanes within each neuron; node 1 reports c.
    CHECK(rows.place(0, entry(0, {1, 2, 4, 8}), true));
    CHECK_FALSE(rows.take(0, everyone));
    CHECK(rows.place(1, entry(0, {16, 32}), true));
    const auto row = rows.take(0, everyone);
    REQUIRE(row);
    CHECK(row->values == std::vector<float>{1, 16, 16, 4, 2, 32, 32, 8});
    CHECK_FALSE(rows.take(0, everyone));  // taken once
}

TEST_CASE("a node not waited for leaves its columns at 0, and a report with the wrong count is refused") {
    const auto plan = two_outputs();
    row_assembly rows(plan, 2);
    CHECK(rows.place(0, entry(5, {1, 2, 4, 8}), false));
    const auto row = rows.take(5, [](std::size_t v) { return v != 1; });
    REQUIRE(row);
    CHECK(row->values == std::vector<float>{1, 0, 0, 4, 2, 0, 0, 8});
    CHECK_THROWS_AS(rows.place(1, entry(6, {1, 2, 3}), false), protocol_error);
}

TEST_CASE("the spikes of a row are kept once per node, and only when recording") {
    const auto plan = two_outputs();
    row_assembly rows(plan, 2);
    CHECK(rows.place(1, entry(3, {0, 0}, {2}), true));
    CHECK_FALSE(rows.place(1, entry(3, {0, 0}, {2}), true));  // a repeat
    CHECK(rows.place(0, entry(3, {0, 0, 0, 0}, {0, 3}), true));
    auto row = rows.take(3, everyone);
    REQUIRE(row);
    CHECK(row->spikes == std::vector<std::uint32_t>{2, 0, 3});
    rows.place(0, entry(4, {0, 0, 0, 0}, {0}), false);
    rows.place(1, entry(4, {0, 0}, {2}), false);
    row = rows.take(4, everyone);
    REQUIRE(row);
    CHECK(row->spikes.empty());
}
