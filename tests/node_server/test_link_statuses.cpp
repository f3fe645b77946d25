// The links as the lead's status shows them: measured times, declared bandwidth, and what
// the nodes' tick reports count each way, by sender where it arrives.
#include "lead/link_statuses.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

model::cluster two_linked() {
    model::cluster c;
    c.lead = "a";
    for (const char* id : {"a", "b"}) {
        model::cluster_node n;
        n.id = id;
        c.nodes.push_back(n);
    }
    model::cluster_link l;
    l.from = "a";
    l.to = "b";
    l.bandwidth_bps = 1e9;
    c.links.push_back(l);
    return c;
}

}  // namespace

TEST_CASE("link statuses give each measured link's times and declared bandwidth, counts only with a run") {
    const auto clu = two_linked();
    const plan::topology topo(clu);
    plan::link_time t;
    t.link = 0;
    t.latency_ms = 0.25;
    t.round_trip_ms = 0.5;
    t.compressed = true;
    const auto links = link_statuses(topo, {t}, clu.links, nullptr);
    REQUIRE(links.size() == 1);
    CHECK(links[0].from == "a");
    CHECK(links[0].to == "b");
    CHECK(links[0].latency_ms == 0.25);
    CHECK(links[0].compressed);
    CHECK_FALSE(links[0].throughput_bps);  // not measured
    CHECK(links[0].bandwidth_bps == 1e9);
    CHECK_FALSE(links[0].signals_sent);
}

TEST_CASE("link statuses add both ends' counts, and count late and missing packets by sender") {
    const auto clu = two_linked();
    const plan::topology topo(clu);
    protocol::run_progress progress;
    progress.nodes.resize(2);
    auto& a = progress.nodes[0];
    auto& b = progress.nodes[1];
    a.sent_to = {{"b", 10}};
    b.sent_to = {{"a", 7}};
    a.packet_bytes_to = {{"b", 100}};
    b.payload_bytes_to = {{"a", 50}};
    b.late_from = {{"a", 3}};      // b saw 3 of a's packets late
    a.missing_from = {{"b", 2}};   // a missed 2 of b's
    const auto links = link_statuses(topo, {plan::link_time{}}, clu.links, &progress);
    REQUIRE(links.size() == 1);
    const auto& l = links[0];
    CHECK(l.signals_sent == 17);
    CHECK(l.packet_bytes == 100);
    CHECK(l.payload_bytes == 50);
    CHECK(l.packets_late == std::map<std::string, std::int64_t>{{"a", 3}, {"b", 0}});
    CHECK(l.packets_missing == std::map<std::string, std::int64_t>{{"a", 0}, {"b", 2}});
}
