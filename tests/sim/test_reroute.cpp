// engine::reroute: a node whose neurons stay where they are keeps its engine through a
// re-balance and only takes new peers; the run then goes on bit for bit as one that never
// moved, with plastic synapses and Poisson input, and a reroute that would read other
// remote neurons (or send another node's) is refused.
#include "plastic_network.hpp"
#include "share_cluster.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dnnc;
using namespace dnnc::sim;
using dnnc::test::cluster;
using dnnc::test::recurrent_plastic_network;
using dnnc::test::require_same_weights;
using dnnc::test::scatter;

TEST_CASE("a node that keeps its neurons keeps its engine through a move, and the run goes on bit for bit") {
    const auto net = recurrent_plastic_network();
    const int ticks = 1500, at = 700;
    cluster straight(net, scatter(100, 1, 1), 1);
    std::vector<std::vector<float>> reference;
    for (int t = 0; t < ticks; ++t) reference.push_back(straight.tick());

    // Three nodes; then node 0 and node 1 trade half of their neurons and node 2 keeps its own.
    const auto before = scatter(100, 3, 5);
    auto after = before;
    bool to_one = true;
    std::size_t moved = 0;
    for (auto& node : after) {
        if (node == 2) continue;
        if (to_one) {
            moved += node != 1;
            node = 1;
        } else {
            moved += node != 0;
            node = 0;
        }
        to_one = !to_one;
    }
    REQUIRE(moved > 20);
    cluster moving(net, before, 3);
    for (int t = 0; t < at; ++t) REQUIRE(moving.tick() == reference[static_cast<std::size_t>(t)]);
    const auto states = moving.capture();
    const auto kept = moving.place_anew(after, 3);
    REQUIRE(kept == std::vector<std::size_t>{2});
    moving.restore(states, at);
    for (int t = at; t < ticks; ++t) REQUIRE(moving.tick() == reference[static_cast<std::size_t>(t)]);
    require_same_weights(moving.weights(), straight.weights());
}

TEST_CASE("a reroute that would change which remote neurons an engine reads is refused and changes nothing") {
    const auto net = recurrent_plastic_network();
    const auto expanded = model::expand(net, "p.xml");
    const auto before = scatter(100, 3, 5);
    const auto specs = partition_specs(expanded, before, 3, {}, with_synapses::no);
    engine e(specs[2], net);
    SECTION("a neuron of its own moved away") {
        auto after = before;
        const auto mine = std::find(after.begin(), after.end(), 2u);
        REQUIRE(mine != after.end());
        *mine = 0;
        REQUIRE_FALSE(e.reroute(partition_specs(expanded, after, 3, {}, with_synapses::no)[2]));
    }
    SECTION("a neuron it reads that no peer would send") {
        auto spec = specs[2];
        REQUIRE(!spec.peers.front().receives.empty());
        spec.peers.front().receives.pop_back();
        REQUIRE_FALSE(e.reroute(spec));
    }
    SECTION("a neuron sent that is not its own") {
        auto spec = specs[2];
        REQUIRE(!spec.peers.front().receives.empty());
        spec.peers.front().sends.push_back(spec.peers.front().receives.front());
        REQUIRE_FALSE(e.reroute(spec));
    }
    SECTION("the same placement is taken") { REQUIRE(e.reroute(specs[2])); }
    // Unchanged: its packets still have the old sizes.
    for (std::size_t p = 0; p < specs[2].peers.size(); ++p) {
        REQUIRE(e.receive_count(p) == specs[2].peers[p].receives.size());
        REQUIRE(e.send_count(p) == specs[2].peers[p].sends.size());
    }
}
