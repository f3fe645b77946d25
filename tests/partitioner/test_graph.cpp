#include "dnnc/partitioner/graph.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

using namespace dnnc::partitioner;

TEST_CASE("graph_builder stores each edge in both directions, sorted") {
    graph_builder b(4);
    b.add_edge(2, 0, 3);
    b.add_edge(0, 1);
    b.add_edge(3, 2, 2);
    const graph g = std::move(b).build();
    REQUIRE(g.vertex_count() == 4);
    REQUIRE(g.edge_count() == 3);
    REQUIRE(g.degree(0) == 2);
    CHECK(g.neighbors_begin(0)[0] == 1);
    CHECK(g.neighbors_begin(0)[1] == 2);
    CHECK(g.edge_weights_begin(0)[1] == 3);
    CHECK(g.degree(2) == 2);
    CHECK(g.edge_weights_begin(2)[0] == 3);
    CHECK(g.edge_weights_begin(2)[1] == 2);
    CHECK(g.total_vertex_weight() == 4);
}

TEST_CASE("graph_builder merges parallel edges and ignores self-loops") {
    graph_builder b(3, 2);
    b.add_edge(0, 1, 1);
    b.add_edge(1, 0, 4);
    b.add_edge(1, 1, 7);
    b.set_vertex_weight(2, 5);
    const graph g = std::move(b).build();
    REQUIRE(g.edge_count() == 1);
    CHECK(g.edge_weights_begin(0)[0] == 5);
    CHECK(g.edge_weights_begin(1)[0] == 5);
    CHECK(g.degree(2) == 0);
    CHECK(g.total_vertex_weight() == 9);
}

TEST_CASE("graph_builder rejects bad arguments") {
    graph_builder b(3);
    CHECK_THROWS_AS(b.add_edge(0, 3), dnnc::usage_error);
    CHECK_THROWS_AS(b.add_edge(0, 1, 0), dnnc::usage_error);
    CHECK_THROWS_AS(b.add_edge(0, 1, -2), dnnc::usage_error);
    CHECK_THROWS_AS(b.set_vertex_weight(3, 1), dnnc::usage_error);
    CHECK_THROWS_AS(b.set_vertex_weight(0, -1), dnnc::usage_error);
}

TEST_CASE("graph_builder refuses weights whose sums overflow") {
    constexpr weight_t most = INT64_MAX;
    graph_builder vertices(2);
    vertices.set_vertex_weight(0, most);
    CHECK_THROWS_AS(std::move(vertices).build(), dnnc::usage_error);
    graph_builder edges(2);
    edges.add_edge(0, 1, most);
    edges.add_edge(1, 0, 1);
    CHECK_THROWS_AS(std::move(edges).build(), dnnc::usage_error);
    graph_builder fits(2);
    fits.set_vertex_weight(0, most - 1);
    fits.add_edge(0, 1, most - 1);
    fits.add_edge(1, 0, 1);
    CHECK(std::move(fits).build().total_vertex_weight() == most);
}

TEST_CASE("an empty graph builds") {
    const graph g = graph_builder(0).build();
    CHECK(g.vertex_count() == 0);
    CHECK(g.edge_count() == 0);
    CHECK(g.offsets().size() == 1);
}
