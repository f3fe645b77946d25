// Link capacities: the traffic each physical link carries, the largest traffic ÷ capacity
// (metrics.hpp), and place_parts keeping heavy traffic off slow links (placement.hpp).
#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/partitioner/placement.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace dnnc::partitioner;

namespace {

constexpr double unknown = std::numeric_limits<double>::infinity();

using link_list = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

physical_cluster make_cluster(std::size_t nodes, link_list links, std::vector<double> link_capacity = {}) {
    physical_cluster c;
    c.capacity.assign(nodes, 1.0);
    c.links = std::move(links);
    c.link_capacity = std::move(link_capacity);
    return c;
}

// Four cliques of 6 vertices in a chain A - B - C - D; clique i (vertices 6i..6i+5) is part i.
// Between A and B 10 edges, B and C 5, C and D 1.
graph clique_chain() {
    graph_builder b(24);
    for (vertex_id c = 0; c < 4; ++c) {
        for (vertex_id u = 0; u < 6; ++u) {
            for (vertex_id v = u + 1; v < 6; ++v) b.add_edge(6 * c + u, 6 * c + v);
        }
    }
    const int between[] = {10, 5, 1};
    for (vertex_id c = 0; c < 3; ++c) {
        for (int e = 0; e < between[c]; ++e) b.add_edge(6 * c + e % 6, 6 * (c + 1) + (e + 1) % 6);
    }
    return std::move(b).build();
}

partition four_cliques() {
    partition p;
    p.parts = 4;
    for (vertex_id v = 0; v < 24; ++v) p.part_of.push_back(v / 6);
    return p;
}

}  // namespace

TEST_CASE("link traffic follows the shortest route, and the largest load counts only links with a capacity") {
    // Nodes 0 - 1 - 2 in a line; v0 on node 0, v1 on node 1, v2 on node 2.
    graph_builder b(3);
    b.add_edge(0, 1, 3);
    b.add_edge(1, 2, 5);
    b.add_edge(0, 2, 7);  // two hops: over both links
    const graph g = std::move(b).build();
    const std::vector<std::uint32_t> node_of{0, 1, 2};

    const quality blind = evaluate(g, node_of, make_cluster(3, {{0, 1}, {1, 2}}));
    CHECK(blind.link_traffic.empty());
    CHECK(blind.max_link_load == 0);

    const quality q = evaluate(g, node_of, make_cluster(3, {{0, 1}, {1, 2}}, {10, 4}));
    CHECK(q.link_traffic == std::vector<weight_t>{10, 12});
    CHECK(q.max_link_load == Approx(3.0));
    CHECK(evaluate(g, node_of, make_cluster(3, {{0, 1}, {1, 2}}, {4, unknown})).max_link_load == Approx(2.5));
    CHECK(evaluate(g, node_of, make_cluster(3, {{1, 2}, {0, 1}}, {4, unknown})).max_link_load == Approx(3.0));
}

TEST_CASE("routes: the lowest-index neighbour closer to the destination, the first of parallel links") {
    // A ring 0 - 1 - 2 - 3 - 0 and a second link 0 - 1 listed last.
    const physical_cluster ring = make_cluster(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {1, 0}});
    check_physical_cluster(ring);
    const link_routes routes(ring);
    std::vector<weight_t> traffic(5, 0);
    routes.add(2, 0, 1, traffic);   // 0 -> 1 -> 2, from the lower index
    routes.add(1, 3, 10, traffic);  // 1 -> 0 -> 3
    routes.add(3, 2, 100, traffic);
    CHECK(traffic == std::vector<weight_t>{11, 1, 100, 10, 0});
    CHECK(routes.hops(0, 2) == 2);
}

TEST_CASE("link capacities are checked: one per link, each above zero") {
    CHECK_THROWS_AS(check_physical_cluster(make_cluster(2, {{0, 1}}, {1, 2})), dnnc::usage_error);
    CHECK_THROWS_AS(check_physical_cluster(make_cluster(2, {{0, 1}}, {0})), dnnc::usage_error);
    CHECK_THROWS_AS(check_physical_cluster(make_cluster(2, {{0, 1}}, {std::nan("")})), dnnc::usage_error);
    CHECK_NOTHROW(check_physical_cluster(make_cluster(2, {{0, 1}}, {unknown})));
    CHECK_FALSE(has_link_capacities(make_cluster(2, {{0, 1}}, {unknown})));
    CHECK(has_link_capacities(make_cluster(2, {{0, 1}}, {1e9})));
}

TEST_CASE("place_parts keeps heavy traffic off a slow link, condition 1 first") {
    // Nodes in a line 0 - 1 - 2 - 3; the link 0 - 1 is a hundred times slower than the others.
    const graph g = clique_chain();
    const physical_cluster blind_cluster = make_cluster(4, {{0, 1}, {1, 2}, {2, 3}});
    physical_cluster slow = blind_cluster;
    slow.link_capacity = {1, 100, 100};

    // Blind: A - B (10 edges) stays on the slow link.
    const placement blind = place_parts(g, four_cliques(), blind_cluster);
    CHECK(blind.node_of_part == std::vector<std::uint32_t>{0, 1, 2, 3});
    CHECK(evaluate(g, blind.node_of_vertex, slow).max_link_load == Approx(10.0));

    // Aware: the chain reversed, C - D (1 edge) on the slow link, still along the links.
    const placement aware = place_parts(g, four_cliques(), slow);
    CHECK(aware.node_of_part == std::vector<std::uint32_t>{3, 2, 1, 0});
    const quality q = evaluate(g, aware.node_of_vertex, slow);
    CHECK(q.violation_count == 0);
    CHECK(q.max_link_load == Approx(1.0));
}

TEST_CASE("a multilevel placement with one slow link loads it less than the capacity-blind one") {
    const graph g = grid_2d(40, 40);
    // 6 nodes, every pair linked; the link 0 - 1 (the first) is slow.
    physical_cluster blind_cluster = complete_cluster(6);
    physical_cluster slow = blind_cluster;
    slow.link_capacity.assign(slow.links.size(), 1e9);
    slow.link_capacity[0] = 1e7;
    const assignment blind = assign(g, blind_cluster);
    const assignment aware = assign(g, slow);
    const quality blind_on_slow = evaluate(g, blind.place.node_of_vertex, slow);
    CHECK(aware.metrics.violation_count <= blind_on_slow.violation_count);
    CHECK(aware.metrics.max_link_load < blind_on_slow.max_link_load);
    CHECK(aware.metrics.max_imbalance <= 1.03 + 1e-9);
    // The parts are those the vertices ended on.
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
        CHECK(aware.place.node_of_part[aware.parts.part_of[v]] == aware.place.node_of_vertex[v]);
    }
}

TEST_CASE("unload_links moves a vertex off a slow link when the nodes' limits allow it") {
    // A triangle of nodes, the link 0 - 1 a hundred times slower; two vertices per node.
    // Vertex 1 (node 0) talks to vertex 2 (node 1) over the slow link and to vertex 4 (node 2).
    const physical_cluster cluster = make_cluster(3, {{0, 1}, {1, 2}, {0, 2}}, {1, 100, 100});
    graph_builder b(6);
    for (const auto& [u, v] : link_list{{0, 1}, {2, 3}, {4, 5}, {1, 2}, {1, 4}}) b.add_edge(u, v);
    const graph g = std::move(b).build();
    const std::vector<std::uint32_t> start{0, 0, 1, 1, 2, 2};
    CHECK(evaluate(g, start, cluster).max_link_load == Approx(1.0));

    std::vector<std::uint32_t> node_of = start;
    unload_links(g, cluster, 0.5, node_of);  // node 2 may hold 3 vertices, node 0 keep 1
    CHECK(node_of == std::vector<std::uint32_t>{0, 2, 1, 1, 2, 2});
    const quality q = evaluate(g, node_of, cluster);
    CHECK(q.max_link_load == Approx(0.01));
    CHECK(q.violation_count == 0);

    node_of = start;
    unload_links(g, cluster, 0, node_of);  // no room on node 2
    CHECK(node_of == start);
    unload_links(g, make_cluster(3, {{0, 1}, {1, 2}, {0, 2}}), 0.5, node_of);  // no capacities: nothing to do
    CHECK(node_of == start);
    std::vector<std::uint32_t> off_cluster{0, 0, 1, 1, 2, 3};
    CHECK_THROWS_AS(unload_links(g, cluster, 0.5, off_cluster), dnnc::usage_error);
}

TEST_CASE("without link capacities, placements are those of a cluster that never had any") {
    const graph g = grid_2d(30, 30);
    const link_list ring{{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    const assignment none = assign(g, make_cluster(4, ring));
    const assignment unknowns = assign(g, make_cluster(4, ring, {unknown, unknown, unknown, unknown}));
    CHECK(unknowns.place.node_of_vertex == none.place.node_of_vertex);
    CHECK(unknowns.metrics.link_traffic.empty());
    CHECK(none.metrics.max_link_load == 0);
}
