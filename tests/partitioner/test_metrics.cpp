#include "dnnc/partitioner/metrics.hpp"

#include "dnnc/partitioner/physical.hpp"
#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

using namespace dnnc::partitioner;

namespace {

// The path 0-1-2-3-4 with edge weights 1, 2, 3, 4 and vertex 4 of weight 3.
graph weighted_path() {
    graph_builder b(5);
    for (vertex_id v = 0; v < 4; ++v) b.add_edge(v, v + 1, v + 1);
    b.set_vertex_weight(4, 3);
    return std::move(b).build();
}

// Nodes n0 - n1 - n2 in a line, capacities 1, 1, 2.
physical_cluster line_cluster() {
    physical_cluster c;
    c.names = {"n0", "n1", "n2"};
    c.capacity = {1, 1, 2};
    c.links = {{0, 1}, {1, 2}};
    return c;
}

}  // namespace

TEST_CASE("metrics on a hand-computed example") {
    const graph g = weighted_path();
    const std::vector<std::uint32_t> node_of{0, 0, 2, 1, 1};
    const quality q = evaluate(g, node_of, line_cluster());
    CHECK(q.load == std::vector<weight_t>{2, 4, 1});
    CHECK(q.edge_cut == 5);
    CHECK(q.hop_weighted_cut == 2 * 2 + 3 * 1);
    CHECK(q.communication_volume == 4);
    CHECK(q.max_imbalance == Approx(4.0 / (1.0 / 4.0 * 7.0)));
    CHECK(q.traffic == std::vector<weight_t>{4, 3, 7});
    CHECK(q.tick_cost == Approx(0.5 + 7));
    REQUIRE(q.violation_count == 1);
    REQUIRE(q.violations.size() == 1);
    CHECK(q.violations[0].u == 1);
    CHECK(q.violations[0].v == 2);
    CHECK(q.violations[0].node_u == 0);
    CHECK(q.violations[0].node_v == 2);
    CHECK(q.violations[0].weight == 2);

    metrics_options options;
    options.hop_cost = 0.5;
    options.max_listed_violations = 0;
    const quality cheap = evaluate(g, node_of, line_cluster(), options);
    CHECK(cheap.tick_cost == Approx(4 + 1.5));
    CHECK(cheap.violation_count == 1);
    CHECK(cheap.violations.empty());
}

TEST_CASE("metrics of a partition alone: equal capacities, every part linked") {
    const graph g = weighted_path();
    partition p;
    p.parts = 2;
    p.part_of = {0, 0, 0, 1, 1};
    const quality q = evaluate(g, p);
    CHECK(q.edge_cut == 3);
    CHECK(q.hop_weighted_cut == 3);
    CHECK(q.violation_count == 0);
    CHECK(q.load == std::vector<weight_t>{3, 4});
    CHECK(q.max_imbalance == Approx(4.0 / 3.5));
}

TEST_CASE("metrics reject assignments that do not fit") {
    const graph g = weighted_path();
    CHECK_THROWS_AS(evaluate(g, {0, 0, 0}, line_cluster()), dnnc::usage_error);
    CHECK_THROWS_AS(evaluate(g, {0, 0, 0, 0, 3}, line_cluster()), dnnc::usage_error);
}

TEST_CASE("migration volume: the cost of the vertices whose part changed") {
    const graph g = weighted_path();
    const partition before{{0, 0, 1, 1, 2}, 2};  // vertex 4 had no part (2 >= parts)
    const partition after{{0, 1, 1, 0, 0}, 2};
    // Vertex weights: vertices 1 and 3 moved, weight 1 each; vertex 4 is free.
    REQUIRE(migration_volume(g, before, after) == 2.0);
    REQUIRE(migration_volume(g, before, after, {1, 10, 100, 1000, 10000}) == 1010.0);
    REQUIRE(migration_volume(g, before, before) == 0.0);
    REQUIRE_THROWS_AS(migration_volume(g, before, partition{{0, 0}, 2}), dnnc::usage_error);
    REQUIRE_THROWS_AS(migration_volume(g, before, after, {1, 2}), dnnc::usage_error);
}
