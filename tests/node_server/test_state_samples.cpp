// The lead's samples of <record variables>: the nodes' values merged into canonical order
// (by neuron, then the record's variables), only the neurons due at a tick, a count that
// disagrees refused, replies within a budget.
#include "lead/state_samples.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;
using nlohmann::json;

namespace {

model::expanded_network sampled_network() {
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="s" dt="0.1">
    <population id="E" size="6" model="iaf_cond_exp"/><population id="A" size="2" model="aeif_cond_exp"/>
    <record neurons="A" variables="w V_m"/>
    <record neurons="E[3] E[0]" variables="V_m" interval-ms="0.2"/>
  </network></dnnc>)",
                                              "s.xml");
    return model::expand(*doc.net, "s.xml");
}

}  // namespace

TEST_CASE("samples from several nodes come out by time, then neuron, then the record's variables") {
    const auto net = sampled_network();
    // E[0] (0) and A[1] (7) on node 0; E[3] (3) and A[0] (6) on node 1
    const std::vector<std::uint32_t> node_of{0, 0, 0, 1, 1, 1, 1, 0};
    state_samples s(net, node_of, 2);
    CHECK(s.sampling());
    CHECK(s.layout().size() == 2);
    CHECK(s.layout()[1]["neurons"] == json::parse(R"([[0, "E", 0], [3, "E", 3]])"));
    CHECK(s.layout()[1]["every"] == 2);
    // Tick 0 reports sample 0 (the initial state: every record is due; node 0 sends E[0] V_m,
    // A[1] w V_m; node 1 E[3] V_m, A[0] w V_m) and sample 1 (the state after it: only A).
    s.add(1, 0, json::array({30, 60, -60}));
    s.add(0, 0, json::array({0, 70, -70}));
    CHECK_THROWS_AS(s.add(0, 1, json::array({0, 71, -71})), protocol_error);
    s.add(0, 1, json::array({71, -71}));
    s.add(1, 1, json::array({61, -61}));
    s.complete(0);
    // Tick 1 reports sample 2: every record is due.
    s.add(0, 2, json::array({2, 72, -72}));
    s.add(1, 2, json::array({32, 62, -62}));
    s.complete(1);
    std::int64_t through = 5;
    CHECK(s.answer(0, through, 100) ==
          json::parse("[[0, [0, 30, 60, -60, 70, -70]], [1, [61, -61, 71, -71]], [2, [2, 32, 62, -62, 72, -72]]]"));
    CHECK(through == 5);
    // A budget of 6 values ends the answer after tick 0, whose two samples go together.
    CHECK(s.answer(0, through, 6) == json::parse("[[0, [0, 30, 60, -60, 70, -70]], [1, [61, -61, 71, -71]]]"));
    CHECK(through == 0);
    s.forget_before(1);
    through = 5;
    CHECK(s.answer(0, through, 100) == json::parse("[[2, [2, 32, 62, -62, 72, -72]]]"));
    CHECK(s.lost() == 0);
    // A node the lead stopped waiting for (window mode): NaN for its neurons, null in JSON.
    s.add(0, 4, json::array({4, 74, -74}));
    s.complete(3);
    through = 5;
    CHECK(s.answer(3, through, 100).dump() == "[[4,[4.0,null,null,null,74.0,-74.0]]]");
}

TEST_CASE("a network that samples nothing has no samples") {
    const auto doc = protocol::parse_document(R"(<dnnc xmlns="urn:dnnc:1"><network name="s">
    <population id="E" size="3" model="lif"/><record neurons="E"/></network></dnnc>)",
                                              "n.xml");
    const auto net = model::expand(*doc.net, "n.xml");
    state_samples s(net, {0, 0, 0}, 1);
    CHECK_FALSE(s.sampling());
    CHECK(s.layout().empty());
}
