#include "dnnc/partitioner/stoer_wagner.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

using namespace dnnc::partitioner;

namespace {

struct rng {
    std::uint64_t state;
    std::uint64_t next() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    }
    std::uint64_t below(std::uint64_t n) { return next() % n; }
};

weight_t cut_value(const graph& g, const std::vector<char>& in_side,
                   const std::vector<vertex_id>& vertices) {
    std::vector<char> member(g.vertex_count(), 0);
    for (const auto v : vertices) member[v] = 1;
    weight_t cut = 0;
    for (const auto v : vertices) {
        const weight_t* w = g.edge_weights_begin(v);
        for (const vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) {
            if (member[*u] && in_side[v] && !in_side[*u]) cut += *w;
        }
    }
    return cut;
}

// The minimum over all 2^(n-1) - 1 bipartitions of `vertices`.
weight_t brute_force(const graph& g, const std::vector<vertex_id>& vertices) {
    const std::size_t n = vertices.size();
    weight_t best = std::numeric_limits<weight_t>::max();
    std::vector<char> in_side(g.vertex_count(), 0);
    for (std::uint32_t mask = 1; mask < (1u << (n - 1)); ++mask) {
        for (std::size_t i = 0; i < n; ++i) in_side[vertices[i]] = (mask >> i) & 1;
        best = std::min(best, cut_value(g, in_side, vertices));
    }
    return best;
}

void check_cut(const graph& g, const std::vector<vertex_id>& vertices, const min_cut& cut) {
    REQUIRE(!cut.side.empty());
    REQUIRE(2 * cut.side.size() <= vertices.size());
    REQUIRE(std::is_sorted(cut.side.begin(), cut.side.end()));
    std::vector<char> in_side(g.vertex_count(), 0);
    for (const auto v : cut.side) {
        REQUIRE(std::find(vertices.begin(), vertices.end(), v) != vertices.end());
        in_side[v] = 1;
    }
    CHECK(cut_value(g, in_side, vertices) == cut.value);
}

graph random_graph(rng& r, std::size_t n) {
    graph_builder b(n);
    const auto density = 1 + r.below(8);  // edge probability density / 8
    const auto max_weight = 1 + r.below(5);
    for (vertex_id u = 0; u < n; ++u) {
        for (vertex_id v = u + 1; v < n; ++v) {
            if (r.below(8) < density) b.add_edge(u, v, static_cast<weight_t>(1 + r.below(max_weight)));
        }
    }
    return std::move(b).build();
}

std::vector<vertex_id> all_of(const graph& g) {
    std::vector<vertex_id> all(g.vertex_count());
    for (vertex_id v = 0; v < all.size(); ++v) all[v] = v;
    return all;
}

// The textbook O(n^3) Stoer–Wagner on a dense matrix: a second opinion for larger graphs.
weight_t dense_reference(const graph& g) {
    const std::size_t n = g.vertex_count();
    std::vector<std::vector<weight_t>> w(n, std::vector<weight_t>(n, 0));
    for (vertex_id v = 0; v < n; ++v) {
        const weight_t* x = g.edge_weights_begin(v);
        for (auto u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++x) w[v][*u] = *x;
    }
    std::vector<std::size_t> alive(n);
    for (std::size_t i = 0; i < n; ++i) alive[i] = i;
    weight_t best = std::numeric_limits<weight_t>::max();
    while (alive.size() > 1) {
        std::vector<weight_t> key(n, 0);
        std::vector<char> added(n, 0);
        std::size_t prev = alive[0], last = alive[0];
        for (std::size_t step = 0; step < alive.size(); ++step) {
            std::size_t pick = n;
            for (const auto v : alive) {
                if (!added[v] && (pick == n || key[v] > key[pick])) pick = v;
            }
            added[pick] = 1;
            prev = last;
            last = pick;
            for (const auto v : alive) key[v] += w[pick][v];
        }
        best = std::min(best, key[last] - w[last][last]);
        for (const auto v : alive) {
            w[prev][v] += w[last][v];
            w[v][prev] = w[prev][v];
        }
        w[prev][prev] = 0;
        alive.erase(std::find(alive.begin(), alive.end(), last));
    }
    return best;
}

}  // namespace

TEST_CASE("stoer_wagner agrees with a dense textbook version on larger graphs") {
    rng r{99};
    for (int trial = 0; trial < 60; ++trial) {
        // Two random halves joined by a few heavy or many light edges, so that the minimum
        // cut is sometimes between the halves and sometimes around one vertex.
        const std::size_t half = 20 + r.below(60);
        graph_builder b(2 * half);
        for (int side = 0; side < 2; ++side) {
            for (vertex_id u = 0; u < half; ++u) {
                for (int e = 0; e < 4; ++e) {
                    b.add_edge(static_cast<vertex_id>(side * half + u),
                               static_cast<vertex_id>(side * half + r.below(half)),
                               static_cast<weight_t>(1 + r.below(6)));
                }
            }
        }
        const auto joins = 1 + r.below(8);
        for (std::uint64_t e = 0; e < joins; ++e) {
            b.add_edge(static_cast<vertex_id>(r.below(half)),
                       static_cast<vertex_id>(half + r.below(half)),
                       static_cast<weight_t>(1 + r.below(3)));
        }
        const graph g = std::move(b).build();
        const min_cut cut = stoer_wagner(g);
        INFO("trial " << trial);
        CHECK(cut.value == dense_reference(g));
        check_cut(g, all_of(g), cut);
    }
}

TEST_CASE("stoer_wagner matches brute force on random graphs up to 14 vertices") {
    rng r{42};
    for (int trial = 0; trial < 3000; ++trial) {
        const std::size_t n = 2 + r.below(13);
        const graph g = random_graph(r, n);
        const auto vertices = all_of(g);
        const min_cut cut = stoer_wagner(g);
        INFO("trial " << trial << ", n = " << n);
        REQUIRE(cut.value == brute_force(g, vertices));
        check_cut(g, vertices, cut);
    }
}

TEST_CASE("stoer_wagner on vertex subsets matches brute force on the induced subgraph") {
    rng r{7};
    for (int trial = 0; trial < 1000; ++trial) {
        const graph g = random_graph(r, 20);
        std::vector<vertex_id> vertices;
        for (vertex_id v = 0; v < 20; ++v) {
            if (r.below(2)) vertices.push_back(v);
        }
        if (vertices.size() < 2 || vertices.size() > 14) continue;
        std::reverse(vertices.begin(), vertices.end());
        const min_cut cut = stoer_wagner(g, vertices);
        INFO("trial " << trial);
        REQUIRE(cut.value == brute_force(g, vertices));
        check_cut(g, vertices, cut);
    }
}

TEST_CASE("stoer_wagner gives cut 0 and a component on disconnected graphs") {
    graph_builder b(5);
    b.add_edge(0, 1, 3);
    b.add_edge(1, 2, 3);
    b.add_edge(3, 4, 1);
    const graph g = std::move(b).build();
    const min_cut cut = stoer_wagner(g);
    CHECK(cut.value == 0);
    CHECK(cut.side == std::vector<vertex_id>{3, 4});
    const min_cut isolated = stoer_wagner(graph_builder(3).build());
    CHECK(isolated.value == 0);
    CHECK(isolated.side.size() == 1);
}

TEST_CASE("stoer_wagner finds the bridge between two cliques") {
    graph_builder b(40);
    for (vertex_id c = 0; c < 2; ++c) {
        for (vertex_id u = 0; u < 20; ++u) {
            for (vertex_id v = u + 1; v < 20; ++v) b.add_edge(20 * c + u, 20 * c + v);
        }
    }
    b.add_edge(5, 27);
    const graph g = std::move(b).build();
    const min_cut cut = stoer_wagner(g);
    CHECK(cut.value == 1);
    REQUIRE(cut.side.size() == 20);
    CHECK((cut.side.front() == 0 || cut.side.front() == 20));
}

TEST_CASE("stoer_wagner on a large sparse graph keeps its cut consistent") {
    rng r{3};
    const std::size_t n = 600;
    graph_builder b(n);
    for (vertex_id v = 1; v < n; ++v) b.add_edge(v, static_cast<vertex_id>(r.below(v)), 3);
    for (int e = 0; e < 3000; ++e) {
        b.add_edge(static_cast<vertex_id>(r.below(n)), static_cast<vertex_id>(r.below(n)),
                   static_cast<weight_t>(1 + r.below(4)));
    }
    const graph g = std::move(b).build();
    const auto vertices = all_of(g);
    const min_cut cut = stoer_wagner(g);
    check_cut(g, vertices, cut);
    weight_t min_degree = std::numeric_limits<weight_t>::max();
    for (vertex_id v = 0; v < n; ++v) {
        weight_t d = 0;
        for (const weight_t* w = g.edge_weights_begin(v); w != g.edge_weights_begin(v) + g.degree(v); ++w) d += *w;
        min_degree = std::min(min_degree, d);
    }
    CHECK(cut.value <= min_degree);
}

TEST_CASE("stoer_wagner rejects fewer than two vertices and bad subsets") {
    graph_builder b(3);
    b.add_edge(0, 1);
    const graph g = std::move(b).build();
    CHECK_THROWS_AS(stoer_wagner(graph_builder(1).build()), dnnc::usage_error);
    CHECK_THROWS_AS(stoer_wagner(g, {0}), dnnc::usage_error);
    CHECK_THROWS_AS(stoer_wagner(g, {0, 0}), dnnc::usage_error);
    CHECK_THROWS_AS(stoer_wagner(g, {0, 3}), dnnc::usage_error);
}
