// Whether a lockstep run can go on: a node that stopped answering, or a packet a peer has
// sent that has not come after the heartbeat timeout (a broken link), ends it; a node that
// waits within the timeout, or for a peer that has not sent yet, does not.
#include "lead/lockstep_breach.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;
using json = nlohmann::json;

namespace {

model::cluster three_nodes() {
    model::cluster c;
    c.lead = "a";
    for (const char* id : {"a", "b", "c"}) {
        model::cluster_node n;
        n.id = id;
        c.nodes.push_back(n);
    }
    for (const char* to : {"b", "c"}) {
        model::cluster_link l;
        l.from = "a";
        l.to = to;
        c.links.push_back(l);
    }
    return c;
}

std::vector<protocol::node_progress> completed(std::vector<std::int64_t> ticks) {
    std::vector<protocol::node_progress> nodes(ticks.size());
    for (std::size_t v = 0; v < ticks.size(); ++v) nodes[v].completed = ticks[v];
    return nodes;
}

}  // namespace

TEST_CASE("a lockstep run goes on while every node answers and no sent packet is overdue") {
    const auto clu = three_nodes();
    const plan::topology topo(clu);
    const auto alive = [](std::size_t) { return true; };
    CHECK_FALSE(lockstep_breach(topo, alive, {}, completed({5, 5, 5}), 1000));
    // c waits for b's signals of tick 6: within the timeout, or b has not sent them yet.
    const auto waits = [](double ms) {
        return [ms](std::size_t v) { return v == 2 ? json{{"tick", 6}, {"ms", ms}, {"peers", {"b"}}} : json(); };
    };
    CHECK_FALSE(lockstep_breach(topo, alive, waits(500), completed({6, 6, 5}), 1000));
    CHECK_FALSE(lockstep_breach(topo, alive, waits(5000), completed({6, 5, 5}), 1000));
    const auto why = lockstep_breach(topo, alive, waits(5000), completed({6, 6, 5}), 1000);
    REQUIRE(why);
    CHECK(*why == "node 'c' has waited 5000 ms for the signals node 'b' sent at tick 6: the link from 'b' to 'c' is broken");
}

TEST_CASE("a node that stopped answering ends a lockstep run") {
    const auto clu = three_nodes();
    const plan::topology topo(clu);
    const auto why = lockstep_breach(topo, [](std::size_t v) { return v != 1; }, {}, completed({5, 5, 5}), 1000);
    REQUIRE(why);
    CHECK(*why == "node 'b' stopped answering");
}
