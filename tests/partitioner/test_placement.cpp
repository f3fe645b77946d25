#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/partitioner/placement.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace dnnc::partitioner;

namespace {

using link_list = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

physical_cluster make_cluster(std::vector<double> capacity, link_list links) {
    physical_cluster c;
    c.capacity = std::move(capacity);
    c.links = std::move(links);
    return c;
}

// One clique of `size` vertices per cluster node; a single edge between the cliques of two
// linked nodes. Clique i holds vertices [i * size, (i + 1) * size).
graph cliques_like(const physical_cluster& cluster, vertex_id size) {
    const auto k = static_cast<vertex_id>(cluster.size());
    graph_builder b(k * size);
    for (vertex_id c = 0; c < k; ++c) {
        for (vertex_id u = 0; u < size; ++u) {
            for (vertex_id v = u + 1; v < size; ++v) b.add_edge(c * size + u, c * size + v);
        }
    }
    for (const auto& [x, y] : cluster.links) b.add_edge(x * size + 1, y * size + 2);
    return std::move(b).build();
}

physical_cluster tree() {  // 0 - 1, 0 - 2, 1 - 3, 1 - 4, 2 - 5
    return make_cluster({1, 1, 1, 1, 1, 1}, {{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 5}});
}
physical_cluster star() {  // 0 in the middle
    return make_cluster({1, 1, 1, 1, 1}, {{0, 1}, {0, 2}, {0, 3}, {0, 4}});
}
physical_cluster ring() {
    return make_cluster({1, 1, 1, 1, 1, 1}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}});
}

}  // namespace

TEST_CASE("condition 1 holds on tree, star and ring clusters") {
    const std::pair<const char*, physical_cluster> clusters[] = {
        {"tree", tree()}, {"star", star()}, {"ring", ring()}};
    for (const auto& [name, cluster] : clusters) {
        const graph g = cliques_like(cluster, 12);
        for (const auto method : {strategy::mincut, strategy::multilevel}) {
            partition_options options;
            options.method = method;
            const assignment a = assign(g, cluster, options);
            INFO(name << (method == strategy::mincut ? " mincut" : " multilevel"));
            CHECK(a.metrics.violation_count == 0);
            CHECK(a.metrics.edge_cut == static_cast<weight_t>(cluster.links.size()));
            CHECK(a.metrics.max_imbalance == Approx(1.0));
            CHECK(a.metrics.hop_weighted_cut == a.metrics.edge_cut);
        }
    }
}

TEST_CASE("place_parts finds a permutation that keeps condition 1") {
    const physical_cluster cluster = ring();
    const graph g = cliques_like(cluster, 8);
    // The right parts, numbered so that part i is not meant for node i.
    const std::vector<part_id> relabel{3, 0, 5, 1, 4, 2};
    partition p;
    p.parts = 6;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) p.part_of.push_back(relabel[v / 8]);
    const placement pl = place_parts(g, p, cluster);
    CHECK(evaluate(g, pl.node_of_vertex, cluster).violation_count == 0);
    std::vector<std::uint32_t> nodes = pl.node_of_part;
    std::sort(nodes.begin(), nodes.end());
    CHECK(nodes == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("place_parts keeps each part on a node of its own capacity") {
    const physical_cluster cluster = make_cluster({2, 1, 1, 2}, {{0, 1}, {1, 2}, {2, 3}});
    const graph g = cliques_like(make_cluster({1, 1, 1, 1}, {{0, 3}, {3, 1}, {1, 2}}), 6);
    partition p;
    p.parts = 4;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) p.part_of.push_back(v / 6);
    const placement pl = place_parts(g, p, cluster);
    for (part_id i = 0; i < 4; ++i) {
        CHECK(cluster.capacity[pl.node_of_part[i]] == cluster.capacity[i]);
    }
}

TEST_CASE("when condition 1 cannot hold, violations are listed and hops minimised") {
    // Parts a, b, c pairwise joined (a-b and b-c heavily), nodes in a line: b must sit in
    // the middle and only a-c breaks condition 1.
    graph_builder b(3);
    b.add_edge(0, 1, 5);
    b.add_edge(1, 2, 5);
    b.add_edge(0, 2, 1);
    const graph g = std::move(b).build();
    partition p;
    p.parts = 3;
    p.part_of = {0, 1, 2};
    const physical_cluster line = make_cluster({1, 1, 1}, {{0, 1}, {1, 2}});
    const placement pl = place_parts(g, p, line);
    CHECK(pl.node_of_part[1] == 1);
    const quality q = evaluate(g, pl.node_of_vertex, line);
    REQUIRE(q.violation_count == 1);
    CHECK(q.violations[0].u == 0);
    CHECK(q.violations[0].v == 2);
    CHECK(q.hop_weighted_cut == 5 + 5 + 2);
}

TEST_CASE("place_classes stays on the current node when no free node keeps condition 1") {
    // Three classes, each joined to the two others; a line of three nodes cannot host them
    // apart, so the third class shares a node instead of breaking condition 1.
    graph_builder b(6);
    b.add_edge(0, 1);
    b.add_edge(2, 3);
    b.add_edge(4, 5);
    b.add_edge(0, 2);
    b.add_edge(2, 4);
    b.add_edge(4, 0);
    const graph g = std::move(b).build();
    partition p;
    p.parts = 3;
    p.part_of = {0, 0, 1, 1, 2, 2};
    const physical_cluster line = make_cluster({1, 3, 1}, {{0, 1}, {1, 2}});
    const placement pl = place_classes(g, p, line);
    CHECK(pl.node_of_part[0] == 1);
    CHECK(evaluate(g, pl.node_of_vertex, line).violation_count == 0);
    CHECK(pl.node_of_part[2] == pl.node_of_part[1]);
}

TEST_CASE("bad clusters are refused with a clear error") {
    CHECK_THROWS_AS(check_physical_cluster(make_cluster({}, {})), dnnc::usage_error);
    CHECK_THROWS_WITH(check_physical_cluster(make_cluster({1, 0}, {{0, 1}})),
                      Catch::Contains("capacit"));
    CHECK_THROWS_AS(check_physical_cluster(make_cluster({1, -2}, {{0, 1}})), dnnc::usage_error);
    CHECK_THROWS_WITH(check_physical_cluster(make_cluster({1, 1, 1}, {{0, 1}})),
                      Catch::Contains("connected"));
    CHECK_THROWS_AS(check_physical_cluster(make_cluster({1, 1}, {{0, 2}})), dnnc::usage_error);
    CHECK_THROWS_AS(check_physical_cluster(make_cluster({1, 1}, {{0, 1}, {1, 1}})),
                    dnnc::usage_error);
    const graph g = cliques_like(star(), 3);
    CHECK_THROWS_AS(assign(g, make_cluster({1, 1, 1}, {{0, 1}})), dnnc::usage_error);
    CHECK_THROWS_AS(complete_cluster(0), dnnc::usage_error);
    CHECK_THROWS_AS(complete_cluster(2, {1, 0}), dnnc::usage_error);
}

TEST_CASE("hop distances") {
    const auto hops = hop_distances(ring());
    CHECK(hops[0 * 6 + 3] == 3);
    CHECK(hops[1 * 6 + 5] == 2);
    CHECK(hops[4 * 6 + 4] == 0);
}
