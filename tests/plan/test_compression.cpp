// The lead's compression decision: a link is compressed when a tick's packets across it take
// longer to send at its measured throughput than the tick lasts; routes across it follow;
// <run compress> overrides; the decision travels in the node configs.
#include "dnnc/plan/compression.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace dnnc;
using namespace dnnc::plan;

namespace {
// 600 tanh neurons on a chain of three nodes, h1 - h2 - h3.
model::document chain(const std::string& run) {
    return protocol::parse_document(
        "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"chain\">"
        "<population id=\"p\" size=\"600\" model=\"tanh\"/>"
        "<projection from=\"p\" to=\"p\" kind=\"random\" p=\"0.05\" seed=\"5\"/>"
        "<output id=\"y\" neurons=\"p[0:30]\"/></network>"
        "<cluster lead=\"h1\"><node id=\"h1\" port=\"7001\"/><node id=\"h2\" port=\"7002\"/><node id=\"h3\" port=\"7003\"/>"
        "<link from=\"h1\" to=\"h2\"/><link from=\"h2\" to=\"h3\"/></cluster>" +
            run + "</dnnc>",
        "chain.xml");
}

struct decided {
    std::vector<link_time> times;
    std::map<std::pair<std::string, std::string>, bool> routes;  // (node, peer): compressed
};

// The decision with h1 - h2 at `fast_bps` and h2 - h3 at `slow_bps` (0: not measured).
decided decide(const std::string& run, double fast_bps, double slow_bps) {
    const auto plan = plan_network(chain(run));
    const topology topo(*plan.doc.clu);
    const std::vector<double> latency(topo.link_count(), 0.5);
    auto root = build_configs(plan, topo, latency, wait_windows(plan, topo, latency));
    decided d;
    d.times.resize(2);
    for (std::size_t l = 0; l < 2; ++l) d.times[l].link = l;
    d.times[0].throughput_bps = fast_bps;
    d.times[1].throughput_bps = slow_bps;
    decide_compression(root, plan, topo, d.times);
    std::vector<const model::node_config*> stack{&root};
    while (!stack.empty()) {
        const auto* c = stack.back();
        stack.pop_back();
        for (const auto& p : c->peers) d.routes[{c->node, p.id}] = p.compress;
        for (const auto& child : c->children) stack.push_back(&child);
    }
    return d;
}
}  // namespace

TEST_CASE("a link too slow for a tick's packets is compressed, and so is every route across it") {
    const auto d = decide("", 10e9, 10e6);
    CHECK_FALSE(d.times[0].compressed);
    CHECK(d.times[1].compressed);
    CHECK_FALSE(d.routes.at({"h1", "h2"}));
    CHECK_FALSE(d.routes.at({"h2", "h1"}));
    CHECK(d.routes.at({"h2", "h3"}));
    CHECK(d.routes.at({"h3", "h2"}));
    CHECK(d.routes.at({"h1", "h3"}));  // via h2
    CHECK(d.routes.at({"h3", "h1"}));
}

TEST_CASE("a link whose packets fit in the tick, or whose throughput was not measured, is not compressed") {
    // A tick period of 50 ms leaves a 10 Mbit/s link time for about 60 kB a tick.
    const auto paced = decide("<run tick-period=\"50\"/>", 10e9, 10e6);
    CHECK_FALSE(paced.times[1].compressed);
    const auto unmeasured = decide("", 0, 0);
    CHECK_FALSE(unmeasured.times[0].compressed);
    CHECK_FALSE(unmeasured.times[1].compressed);
    for (const auto& [route, compressed] : unmeasured.routes) CHECK_FALSE(compressed);
}

TEST_CASE("compress=always and compress=never override the measurement") {
    for (const auto& [run, expected] : {std::pair{"<run compress=\"always\"/>", true}, std::pair{"<run compress=\"never\"/>", false}}) {
        const auto d = decide(run, 0, 10e6);
        for (const auto& t : d.times) CHECK(t.compressed == expected);
        for (const auto& [route, compressed] : d.routes) CHECK(compressed == expected);
    }
}

TEST_CASE("a tick's estimated compute time grows with the node's neurons and synapses") {
    CHECK(tick_compute_ms({}) > 0);
    CHECK(tick_compute_ms({1000, 0}) > tick_compute_ms({}));
    CHECK(tick_compute_ms({1000, 1e6}) > tick_compute_ms({1000, 0}));
}
