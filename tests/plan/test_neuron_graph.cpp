#include "dnnc/plan/neuron_graph.hpp"
#include "dnnc/partitioner/physical.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace dnnc::partitioner;
using namespace dnnc::plan;
using dnnc::model::expanded_network;

namespace {

// Five neurons. Synapses (source -> target): 0->1 twice (two delays), 1->0, 2->2, 3->4.
// A dense block from {0, 1} to {2, 3}. The neurons are population n.
expanded_network small_network(bool split_rows) {
    expanded_network net;
    net.groups.push_back({"n", 0, 5, true, 0, {}, 0, {}});
    net.group_of.assign(5, 0);
    net.in_begin = {0, 1, 3, 4, 4, 5};
    net.in_source = {1, 0, 0, 2, 3};
    net.in_weight.assign(5, 1.0F);
    net.in_delay = {1, 1, 2, 1, 1};
    dnnc::model::dense_block block;
    block.sources = {0, 1};
    block.targets = {2, 3};
    block.weights.assign(4, 0.5F);
    block.element = 0;
    block.split_rows = split_rows;
    net.dense.push_back(block);
    return net;
}

weight_t edge_weight(const graph& g, vertex_id u, vertex_id v) {
    for (auto it = g.neighbors_begin(u); it != g.neighbors_end(u); ++it) {
        if (*it == v) return g.edge_weights_begin(u)[it - g.neighbors_begin(u)];
    }
    return 0;
}

}  // namespace

TEST_CASE("units_of: traffic edges merge parallel synapses and drop self-synapses, split rows stay apart") {
    const network_units units = units_of(small_network(true), complete_cluster(1));
    const graph& g = units.g;
    REQUIRE(g.vertex_count() == 5);
    CHECK(edge_weight(g, 0, 1) == 2);  // 0->1 (twice, one signal) and 1->0
    CHECK(edge_weight(g, 1, 0) == 2);
    CHECK(edge_weight(g, 3, 4) == 1);
    CHECK(edge_weight(g, 0, 2) == 1);  // dense: each source to each row block
    CHECK(edge_weight(g, 1, 2) == 1);
    CHECK(edge_weight(g, 0, 3) == 1);
    CHECK(edge_weight(g, 1, 3) == 1);
    CHECK(edge_weight(g, 2, 2) == 0);
    CHECK(g.edge_count() == 6);
}

TEST_CASE("units_of: unit weight sums 1 plus the rounded fan-in share of its neurons") {
    // Fan-in: n0 1, n1 2, n2 1 (self) + 2 (dense), n3 2 (dense), n4 1.
    const auto weights = [](weight_t share) {
        network_graph_options options;
        options.fan_in_share = share;
        return units_of(small_network(true), complete_cluster(1), options).g.vertex_weights();
    };
    CHECK(weights(8) == std::vector<weight_t>{1, 1, 1, 1, 1});
    CHECK(weights(1) == std::vector<weight_t>{2, 3, 4, 3, 2});
    CHECK(weights(2) == std::vector<weight_t>{2, 2, 3, 2, 2});  // 1 + round(d / 2), halves up
    CHECK_THROWS_AS(weights(0), dnnc::usage_error);
}

TEST_CASE("units_of: a dense projection's rows are one heavy unit when they fit on a node") {
    // Total weight 5; on two equal nodes a node's share is 2.5, and the rows weigh 2.
    const network_units units = units_of(small_network(false), complete_cluster(2));
    const graph& g = units.g;
    REQUIRE(g.vertex_count() == 4);
    CHECK(units.unit_of_neuron == std::vector<vertex_id>{0, 1, 2, 2, 3});
    CHECK(g.vertex_weights() == std::vector<weight_t>{1, 1, 2, 1});
    CHECK(edge_weight(g, 0, 1) == 2);
    CHECK(edge_weight(g, 0, 2) == 1);  // the source vector: one per source
    CHECK(edge_weight(g, 1, 2) == 1);
    CHECK(edge_weight(g, 2, 3) == 1);  // n3 -> n4
    CHECK(g.edge_count() == 4);
    CHECK(units.spread({0, 1, 0, 1}) == std::vector<std::uint32_t>{0, 1, 0, 0, 1});
    CHECK(units.name(small_network(false), 2) == "n[2] +1");
    CHECK(units.name(small_network(false), 3) == "n[4]");
    // On four nodes a share is 1.25: the rows do not fit and become row blocks.
    CHECK(units_of(small_network(false), complete_cluster(4)).g.vertex_count() == 5);
}
