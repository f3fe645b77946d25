// What a change of placement or cluster means: the neurons that moved and each node's count
// before and after; the link times that still hold for the new cluster; the nodes a chain
// of links still joins.
#include "lead/placement_change.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

model::cluster chain(const std::vector<std::string>& ids) {
    model::cluster c;
    c.lead = ids.front();
    for (const auto& id : ids) {
        model::cluster_node n;
        n.id = id;
        n.host = "127.0.0.1";
        n.port = 7000 + static_cast<int>(c.nodes.size());
        c.nodes.push_back(n);
    }
    for (std::size_t k = 1; k < ids.size(); ++k) {
        model::cluster_link l;
        l.from = ids[k - 1];
        l.to = ids[k];
        c.links.push_back(l);
    }
    return c;
}

plan::link_time time_of(std::size_t link, double latency_ms) {
    plan::link_time t;
    t.link = link;
    t.latency_ms = latency_ms;
    return t;
}

}  // namespace

TEST_CASE("a placement change counts the neurons on another node, and each node's before and after") {
    const plan::current_placement before{{0, 0, 1, 1}, {"a", "b"}, 1.0};
    plan::network_plan after;
    after.doc.clu = chain({"b", "c"});
    after.node_of_neuron = {0, 1, 0, 1, 1};  // a's two neurons to b and c; one grown on c
    after.neurons_per_node = {2, 3};
    const auto change = placement_change(before, after);
    CHECK(change.moved == 3);
    REQUIRE(change.nodes.size() == 3);
    CHECK(change.nodes[0].id == "b");
    CHECK(change.nodes[0].before == 2);
    CHECK(change.nodes[0].after == 2);
    CHECK(change.nodes[1].id == "c");
    CHECK(change.nodes[1].after == 3);
    CHECK(change.nodes[2].id == "a");  // it left
    CHECK(change.nodes[2].before == 2);
    CHECK(change.nodes[2].after == 0);
}

TEST_CASE("link times carry over to a cluster with the same nodes and links, not to one with new ones") {
    const auto before = chain({"a", "b", "c"});
    const std::vector<plan::link_time> times{time_of(0, 1.5), time_of(1, 2.5)};
    auto same = before;
    std::reverse(same.links.begin(), same.links.end());
    const auto carried = carried_link_times(before, times, same);
    REQUIRE(carried);
    CHECK((*carried)[0].link == 0);
    CHECK((*carried)[0].latency_ms == 2.5);  // b - c, first in the new order
    CHECK((*carried)[1].latency_ms == 1.5);
    auto fewer = chain({"a", "b"});
    CHECK(carried_link_times(before, times, fewer));
    auto moved = before;
    moved.nodes[2].port = 9999;  // c at another address
    CHECK_FALSE(carried_link_times(before, times, moved));
    auto slower = before;
    slower.links[0].emulate_delay_ms = 5;
    CHECK_FALSE(carried_link_times(before, times, slower));
    auto joined = before;
    model::cluster_link l;
    l.from = "a";
    l.to = "c";
    joined.links.push_back(l);
    CHECK_FALSE(carried_link_times(before, times, joined));
}

TEST_CASE("the nodes a chain of links joins, some left out") {
    const auto c = chain({"a", "b", "c", "d"});
    CHECK(reached_from(c, "a", {}) == std::set<std::string>{"a", "b", "c", "d"});
    CHECK(reached_from(c, "a", {"c"}) == std::set<std::string>{"a", "b"});
    CHECK(reached_from(c, "d", {"b"}) == std::set<std::string>{"c", "d"});
}
