// What an engine sends each peer and what each peer's packet fills: slots by the peers'
// lists, every value or the non-zero ones in position order, looked up from a tick's
// non-zero slots when those are known, with the same packet either way.
#include "peer_routes.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::sim;

namespace {

// Local neurons 10, 11, 12 (slots 0..2); peer "p" sends 20 and 21, peer "q" sends 22.
struct three_local {
    slot_layout slots{{{10, {}, 0, 0}, {11, {}, 0, 0}, {12, {}, 0, 0}}};
    std::vector<peer_spec> peers{{"p", {12, 10}, {20, 21}}, {"q", {11, 12}, {22}}};
    peer_routes routes;
    three_local() {
        for (const auto& p : peers)
            for (auto g : p.receives) slots.slot_for(g);
        routes.route(peers, slots);
    }
};

}  // namespace

TEST_CASE("peer routes take each peer's lists as slots") {
    three_local t;
    REQUIRE(t.routes.peer_count() == 2);
    CHECK(t.routes.sends(0) == std::vector<std::uint32_t>{2, 0});
    CHECK(t.routes.receives(0) == std::vector<std::uint32_t>{3, 4});
    CHECK(t.routes.sends(1) == std::vector<std::uint32_t>{1, 2});
    CHECK(t.routes.receives(1) == std::vector<std::uint32_t>{5});
    CHECK_THROWS_AS(t.routes.sends(2), std::out_of_range);
}

TEST_CASE("a packet to a peer holds its neurons' values in its order, every lane") {
    three_local t;
    const std::vector<float> row{1, 2, 3, 0, 0, 0};
    std::vector<float> values;
    t.routes.outgoing(0, row.data(), 1, values);
    CHECK(values == std::vector<float>{3, 1});
    const std::vector<float> lanes{1, -1, 2, -2, 3, -3};  // two lanes a slot
    t.routes.outgoing(1, lanes.data(), 2, values);
    CHECK(values == std::vector<float>{2, -2, 3, -3});
}

TEST_CASE("the non-zero values of a packet are the same whether the row's non-zero slots are known or not") {
    three_local t;
    const std::vector<float> row{0.5f, 0, 2, 0, 0, 0};
    const std::vector<std::uint32_t> nonzero{0, 2};
    for (std::size_t peer = 0; peer < 2; ++peer) {
        std::vector<std::pair<std::uint32_t, float>> scanned, looked_up;
        t.routes.outgoing_nonzero(peer, row.data(), 1, nullptr, scanned);
        t.routes.outgoing_nonzero(peer, row.data(), 1, &nonzero, looked_up);
        CHECK(scanned == looked_up);
    }
    std::vector<std::pair<std::uint32_t, float>> to_p;
    t.routes.outgoing_nonzero(0, row.data(), 1, &nonzero, to_p);
    CHECK(to_p == std::vector<std::pair<std::uint32_t, float>>{{0, 2.0f}, {1, 0.5f}});
    // Two lanes: positions k * 2 + lane.
    const std::vector<float> lanes{0, 4, 0, 0, 5, 0};
    t.routes.outgoing_nonzero(1, lanes.data(), 2, nullptr, to_p);
    CHECK(to_p == std::vector<std::pair<std::uint32_t, float>>{{2, 5.0f}});
}

TEST_CASE("routing anew replaces the routes") {
    three_local t;
    t.routes.route({{"p", {11}, {20}}}, t.slots);
    REQUIRE(t.routes.peer_count() == 1);
    CHECK(t.routes.sends(0) == std::vector<std::uint32_t>{1});
    const std::vector<float> row{7, 8, 9, 0, 0, 0};
    const std::vector<std::uint32_t> nonzero{0, 1, 2};
    std::vector<std::pair<std::uint32_t, float>> values;
    t.routes.outgoing_nonzero(0, row.data(), 1, &nonzero, values);
    CHECK(values == std::vector<std::pair<std::uint32_t, float>>{{0, 8.0f}});
    CHECK_THROWS_AS(three_local().routes.route({{"p", {20}, {}}}, t.slots), usage_error);  // a sent neuron must be local
}
