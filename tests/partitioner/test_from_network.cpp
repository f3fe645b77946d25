#include "dnnc/partitioner/from_network.hpp"

#include "dnnc/protocol/error.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace dnnc::partitioner;
using dnnc::protocol::expanded_network;

namespace {

// Five neurons. Synapses (source -> target): 0->1 twice (two delays), 1->0, 2->2, 3->4.
// A dense block from {0, 1} to {2, 3}.
expanded_network small_network() {
    expanded_network net;
    net.group_of.assign(5, 0);
    net.in_begin = {0, 1, 3, 4, 4, 5};
    net.in_source = {1, 0, 0, 2, 3};
    net.in_weight.assign(5, 1.0F);
    net.in_delay = {1, 1, 2, 1, 1};
    dnnc::protocol::dense_block block;
    block.sources = {0, 1};
    block.targets = {2, 3};
    block.weights.assign(4, 0.5F);
    block.element = 0;
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

TEST_CASE("from_network: traffic edges merge parallel synapses and drop self-synapses") {
    const graph g = from_network(small_network());
    REQUIRE(g.vertex_count() == 5);
    CHECK(edge_weight(g, 0, 1) == 2);  // 0->1 (twice, one signal) and 1->0
    CHECK(edge_weight(g, 1, 0) == 2);
    CHECK(edge_weight(g, 3, 4) == 1);
    CHECK(edge_weight(g, 0, 2) == 1);  // dense
    CHECK(edge_weight(g, 1, 2) == 1);
    CHECK(edge_weight(g, 0, 3) == 1);
    CHECK(edge_weight(g, 1, 3) == 1);
    CHECK(edge_weight(g, 2, 2) == 0);
    CHECK(g.edge_count() == 6);
}

TEST_CASE("from_network: vertex weight is 1 plus the rounded fan-in share") {
    // Fan-in: n0 1, n1 2, n2 1 (self) + 2 (dense), n3 2 (dense), n4 1.
    network_graph_options options;
    CHECK(from_network(small_network(), options).vertex_weights() == std::vector<weight_t>{1, 1, 1, 1, 1});
    options.fan_in_share = 1;
    CHECK(from_network(small_network(), options).vertex_weights() == std::vector<weight_t>{2, 3, 4, 3, 2});
    options.fan_in_share = 2;  // 1 + round(d / 2), halves up
    CHECK(from_network(small_network(), options).vertex_weights() == std::vector<weight_t>{2, 2, 3, 2, 2});
    options.fan_in_share = 0;
    CHECK_THROWS_AS(from_network(small_network(), options), dnnc::usage_error);
}

TEST_CASE("from_network: dense blocks above the limit add no edges but keep their fan-in") {
    network_graph_options options;
    options.dense_edge_limit = 3;
    options.fan_in_share = 1;
    const graph g = from_network(small_network(), options);
    CHECK(edge_weight(g, 0, 2) == 0);
    CHECK(edge_weight(g, 1, 3) == 0);
    CHECK(g.edge_count() == 2);
    CHECK(g.vertex_weights() == std::vector<weight_t>{2, 3, 4, 3, 2});
}
