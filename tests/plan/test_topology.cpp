// Routes, the probe plan over the transition graph, and link times from round trips.
#include "dnnc/plan/topology.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::plan;

namespace {
model::cluster make_cluster(const std::string& lead, std::vector<std::string> ids,
                               std::vector<std::pair<std::string, std::string>> links) {
    model::cluster c;
    c.lead = lead;
    int port = 7000;
    for (auto& id : ids) c.nodes.push_back({id, "127.0.0.1", port++, 1, {}});
    for (auto& [a, b] : links) c.links.push_back({a, b, 0, std::nullopt, {}});
    return c;
}
}  // namespace

TEST_CASE("routes take the fewest hops") {
    const topology t(make_cluster("a", {"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"c", "d"}, {"a", "d"}}));
    CHECK(t.route(0, 2).size() == 3);
    CHECK(t.route(0, 3) == std::vector<std::size_t>{0, 3});
    CHECK(t.route(1, 1) == std::vector<std::size_t>{1});
    CHECK(t.link_between(0, 1));
    CHECK_FALSE(t.link_between(0, 2));
}

TEST_CASE("a cluster is joined when its links join every node, and a route to a node they do not join is an error") {
    CHECK(topology(make_cluster("a", {"a", "b", "c"}, {{"a", "b"}, {"b", "c"}})).joined());
    CHECK(topology(make_cluster("a", {"a"}, {})).joined());
    const topology split(make_cluster("a", {"a", "b", "c", "d"}, {{"a", "b"}, {"c", "d"}}));
    CHECK_FALSE(split.joined());
    CHECK_THROWS_AS(split.route(0, 2), usage_error);
    CHECK(split.route(2, 3) == std::vector<std::size_t>{2, 3});
}

TEST_CASE("the probe plan reaches every link once, through links sharing a node") {
    // Triangle a-b-c plus a tail c-d; lead a.
    const topology t(make_cluster("a", {"a", "b", "c", "d"}, {{"a", "b"}, {"b", "c"}, {"c", "a"}, {"c", "d"}}));
    const auto plan = plan_probes(t);
    REQUIRE(plan.size() == 4);
    // Level 1: the links at the lead.
    CHECK(plan[0].route == std::vector<std::size_t>{0, 1});
    CHECK_FALSE(plan[0].parent);
    CHECK(plan[1].route == std::vector<std::size_t>{0, 2});
    // b-c is reached from a-b: a, b, c.
    CHECK(plan[2].route == std::vector<std::size_t>{0, 1, 2});
    CHECK(plan[2].parent == 0u);
    // c-d from a-c: a, c, d.
    CHECK(plan[3].route == std::vector<std::size_t>{0, 2, 3});
    CHECK(plan[3].parent == 1u);
}

TEST_CASE("link times follow t(1,i) = T/2 and t(k,j) = (T(1,j) - T(1,k))/2, clamped at 0") {
    const topology t(make_cluster("a", {"a", "b", "c"}, {{"a", "b"}, {"b", "c"}}));
    const auto plan = plan_probes(t);
    REQUIRE(plan.size() == 2);
    auto times = link_times(plan, {{10, 10, 10}, {30, 30, 31}});
    CHECK(times[0].latency_ms == Approx(5));
    CHECK(times[1].round_trip_ms == Approx(30));
    CHECK(times[1].latency_ms == Approx(10));
    CHECK_FALSE(times[1].clamped);
    times = link_times(plan, {{10}, {8}});
    CHECK(times[1].latency_ms == 0);
    CHECK(times[1].clamped);
    times = link_times(plan, {{1, 1, 20, 40}, {50}});
    CHECK(times[0].noisy);
}

TEST_CASE("a link's throughput is the load over its least loaded less its least unloaded round trip, the slower way") {
    // 1 MB in 8 ms more one way (1 Gbit/s), 16 ms more the other (0.5 Gbit/s).
    CHECK(link_throughput(1'000'000, {{2, 2, 3}, {10, 11, 12}}, {{2, 3, 2}, {18, 42, 18}}) == Approx(0.5e9));
    CHECK(link_throughput(1'000'000, {{1}, {17}}, {{1}, {9}}) == Approx(0.5e9));
    CHECK(link_throughput(1'000'000, {{1, 1}, {9, 9}}, {{1, 1}, {0.9, 1.1}}) == Approx(1e9));  // too fast to tell back
    CHECK(link_throughput(1'000'000, {{1}, {0.9}}, {{1}, {1}}) == 0);                          // both ways
    // A machine busy with other work (CI's other tests) stretched two of a fast link's three
    // loads: the least loaded round trip keeps it as fast as it is.
    CHECK(link_throughput(256 << 10, {{0.3, 0.3, 0.3}, {1.2, 7.8, 10.1}}, {{0.3, 0.3, 0.3}, {1.1, 1.4, 12.3}}) ==
          Approx(8.0 * (256 << 10) / 0.9e-3));
    // It also stretched every unloaded probe one way (CI's failure at 3a76eca: the added
    // times all came out negative and the fast link read as not measured); a load's least
    // round trip less the least unloaded one still finds it.
    CHECK(link_throughput(256 << 10, {{0.3, 0.4, 0.3}, {1.2, 1.3, 1.2}}, {{3.1, 2.9, 5.0}, {1.2, 1.5, 2.0}}) ==
          Approx(8.0 * (256 << 10) / 0.9e-3));
}


TEST_CASE("a direction's throughput samples are settled once two loads agree within a quarter") {
    CHECK_FALSE(throughput_settled({{}, {}}));
    CHECK_FALSE(throughput_settled({{0.3}, {1.2}}));             // one load says nothing
    CHECK_FALSE(throughput_settled({{0.3, 0.3}, {1.2, 15.0}}));  // one stretched by a busy machine
    CHECK_FALSE(throughput_settled({{0.3, 0.3, 0.3}, {16.0, 1.2, 1.6}}));
    CHECK(throughput_settled({{0.3, 0.3, 0.3}, {16.0, 1.2, 1.4}}));
    CHECK(throughput_settled({{0.3, 0.3}, {210.0, 209.5}}));  // a shaped link
}

TEST_CASE("median of even and odd samples") {
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == 2.5);
    CHECK(median({}) == 0);
}
