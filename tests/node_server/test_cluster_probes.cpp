// The lead's questions to a cluster's nodes, over real sockets: which node it is, which
// nodes answer, the links' times, and whether a plan fits the memory the nodes report.
#include "lead/cluster_probes.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/xml.hpp"

#include "live_node.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

const std::string& secret = test::cluster_secret;
using test::live_node;

// A network of two neurons on the lead (port `self`) and the nodes at `others`, linked in a
// chain from the lead.
plan::network_plan plan_on(std::uint16_t self, const std::vector<std::uint16_t>& others) {
    std::string nodes = R"(<node id="n0" host="127.0.0.1" port=")" + std::to_string(self) + R"(" capacity="1"/>)";
    std::string links;
    for (std::size_t k = 0; k < others.size(); ++k) {
        const auto id = "n" + std::to_string(k + 1);
        nodes += R"(<node id=")" + id + R"(" host="127.0.0.1" port=")" + std::to_string(others[k]) + R"(" capacity="1"/>)";
        links += R"(<link from="n)" + std::to_string(k) + R"(" to=")" + id + R"("/>)";
    }
    return plan::plan_network(protocol::parse_document(R"(<?xml version="1.0"?>
<dnnc xmlns="urn:dnnc:1">
  <network name="probes">
    <neuron id="a" model="linear"/>
    <neuron id="b" model="linear"/>
    <synapse from="a" to="b" weight="1"/>
  </network>
  <cluster lead="n0">)" + nodes + links + R"(</cluster>
  <run probes="3" throughput-probes="1"/>
</dnnc>)", "probes.xml"));
}

}  // namespace

TEST_CASE("the lead finds itself among a cluster's nodes by its port, and refuses a cluster it is not in") {
    set_log_level(log_level::error);
    test::lead_parts lead;
    cluster_probes probes(lead.options, *lead.srv, lead.calls, *lead.own);
    const auto plan = plan_on(lead.srv->port(), {1});
    CHECK(probes.find_self(*plan.doc.clu) == 0);
    auto elsewhere = *plan.doc.clu;
    elsewhere.nodes[0].port = 1;
    CHECK_THROWS_AS(probes.find_self(elsewhere), usage_error);
}

TEST_CASE("the lead reaches the nodes that answer, names the others, and measures the links to them") {
    set_log_level(log_level::error);
    test::lead_parts lead;
    const auto peer = live_node();
    cluster_probes probes(lead.options, *lead.srv, lead.calls, *lead.own);
    const auto plan = plan_on(lead.srv->port(), {peer->port(), 1});
    CHECK(probes.reach_nodes(*plan.doc.clu, {}) == std::set<std::string>{"n2"});
    CHECK(probes.reach_nodes(*plan.doc.clu, {"n2"}).empty());
    CHECK(probes.subleads().empty());
    const auto two = plan_on(lead.srv->port(), {peer->port()});
    const plan::topology topo(*two.doc.clu);
    const auto times = probes.measure_links(two, topo);
    REQUIRE(times.size() == 1);
    CHECK(times[0].latency_ms > 0);
    CHECK(times[0].throughput_bps > 0);
    probes.check_memory(two, false);  // two neurons fit
}
