#include "dnnc/partitioner/generators.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dnnc::partitioner;

namespace {

bool same(const graph& a, const graph& b) {
    return a.offsets() == b.offsets() && a.adjacency() == b.adjacency();
}

bool has_edge(const graph& g, vertex_id u, vertex_id v) {
    return std::find(g.neighbors_begin(u), g.neighbors_end(u), v) != g.neighbors_end(u);
}

}  // namespace

TEST_CASE("generators are deterministic for a seed") {
    CHECK(same(erdos_renyi(300, 0.05, 9), erdos_renyi(300, 0.05, 9)));
    CHECK_FALSE(same(erdos_renyi(300, 0.05, 9), erdos_renyi(300, 0.05, 10)));
    CHECK(same(watts_strogatz(200, 6, 0.2, 1), watts_strogatz(200, 6, 0.2, 1)));
    CHECK(same(barabasi_albert(200, 3, 1), barabasi_albert(200, 3, 1)));
    CHECK(same(random_geometric(500, 0.08, 4), random_geometric(500, 0.08, 4)));
    CHECK(same(layered_feed_forward({10, 20, 5}, 0.3, 2), layered_feed_forward({10, 20, 5}, 0.3, 2)));
}

TEST_CASE("a fixed seed gives a fixed graph on every platform") {
    // Regression values: the generators use only integer arithmetic, IEEE doubles and log1p.
    CHECK(erdos_renyi(1000, 0.01, 1).edge_count() == 5097);
    CHECK(random_geometric(1000, 0.05, 1).edge_count() == 3917);
}

TEST_CASE("erdos_renyi has about p n (n-1) / 2 edges") {
    const graph g = erdos_renyi(2000, 0.01, 3);
    const double expected = 0.01 * 2000 * 1999 / 2;
    CHECK(std::abs(static_cast<double>(g.edge_count()) - expected) < 4 * std::sqrt(expected));
    CHECK(erdos_renyi(50, 1.0, 1).edge_count() == 50 * 49 / 2);
    CHECK(erdos_renyi(50, 0.0, 1).edge_count() == 0);
}

TEST_CASE("stochastic_block_model plants its blocks") {
    const std::vector<std::size_t> sizes{100, 150, 50};
    const graph g = stochastic_block_model(sizes, 0.2, 0.01, 5);
    const partition planted = planted_blocks(sizes);
    REQUIRE(g.vertex_count() == 300);
    REQUIRE(planted.parts == 3);
    CHECK(planted.part_of[99] == 0);
    CHECK(planted.part_of[100] == 1);
    CHECK(planted.part_of[299] == 2);
    std::size_t inside = 0, across = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
        for (auto u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u) {
            (planted.part_of[*u] == planted.part_of[v] ? inside : across) += 1;
        }
    }
    const double inside_pairs = (100.0 * 99 + 150.0 * 149 + 50.0 * 49) / 2;
    const double across_pairs = 100.0 * 150 + 100.0 * 50 + 150.0 * 50;
    CHECK(std::abs(static_cast<double>(inside / 2) / inside_pairs - 0.2) < 0.02);
    CHECK(std::abs(static_cast<double>(across / 2) / across_pairs - 0.01) < 0.003);
}

TEST_CASE("watts_strogatz keeps n k / 2 edges and rewires some of them") {
    const graph lattice = watts_strogatz(100, 4, 0.0, 1);
    CHECK(lattice.edge_count() == 200);
    CHECK(has_edge(lattice, 0, 99));
    CHECK(has_edge(lattice, 0, 98));
    const graph rewired = watts_strogatz(100, 4, 0.3, 1);
    CHECK(rewired.edge_count() == 200);
    CHECK_FALSE(same(lattice, rewired));
}

TEST_CASE("barabasi_albert adds m edges per vertex and grows hubs") {
    const graph g = barabasi_albert(1000, 3, 7);
    CHECK(g.edge_count() == 6 + (1000 - 4) * 3);
    std::size_t max_degree = 0;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) max_degree = std::max(max_degree, g.degree(v));
    CHECK(max_degree > 30);
}

TEST_CASE("grids") {
    const graph g2 = grid_2d(3, 4);
    CHECK(g2.vertex_count() == 12);
    CHECK(g2.edge_count() == 3 * 3 + 2 * 4);
    CHECK(has_edge(g2, 0, 1));
    CHECK(has_edge(g2, 0, 4));
    const graph g3 = grid_3d(3, 4, 5);
    CHECK(g3.vertex_count() == 60);
    CHECK(g3.edge_count() == 2 * 4 * 5 + 3 * 3 * 5 + 3 * 4 * 4);
    CHECK(has_edge(g3, 0, 12));
}

TEST_CASE("random_geometric joins exactly the close pairs") {
    // The points as the generator draws them: x then y from one splitmix64 stream.
    std::uint64_t state = 11;
    const auto uniform = [&] {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
    };
    const std::size_t n = 400;
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = uniform();
        y[i] = uniform();
    }
    const graph g = random_geometric(n, 0.1, 11);
    std::size_t close = 0;
    for (vertex_id i = 0; i < n; ++i) {
        for (vertex_id j = i + 1; j < n; ++j) {
            const double dx = x[i] - x[j], dy = y[i] - y[j];
            const bool near = dx * dx + dy * dy <= 0.01;
            close += near;
            if (near != has_edge(g, i, j)) FAIL("pair " << i << ", " << j);
        }
    }
    CHECK(g.edge_count() == close);
    CHECK(random_geometric(n, 2.0, 11).edge_count() == n * (n - 1) / 2);
}

TEST_CASE("layered_feed_forward joins consecutive layers only") {
    const graph g = layered_feed_forward({5, 6, 7}, 1.0, 1);
    CHECK(g.vertex_count() == 18);
    CHECK(g.edge_count() == 5 * 6 + 6 * 7);
    CHECK_FALSE(has_edge(g, 0, 11));
    CHECK(has_edge(g, 0, 5));
}

TEST_CASE("generators reject bad parameters") {
    CHECK_THROWS_AS(erdos_renyi(0, 0.1, 1), dnnc::usage_error);
    CHECK_THROWS_AS(erdos_renyi(10, 1.5, 1), dnnc::usage_error);
    CHECK_THROWS_AS(stochastic_block_model({}, 0.1, 0.1, 1), dnnc::usage_error);
    CHECK_THROWS_AS(stochastic_block_model({10, 0}, 0.1, 0.1, 1), dnnc::usage_error);
    CHECK_THROWS_AS(watts_strogatz(10, 3, 0.1, 1), dnnc::usage_error);
    CHECK_THROWS_AS(watts_strogatz(10, 10, 0.1, 1), dnnc::usage_error);
    CHECK_THROWS_AS(barabasi_albert(10, 0, 1), dnnc::usage_error);
    CHECK_THROWS_AS(barabasi_albert(10, 10, 1), dnnc::usage_error);
    CHECK_THROWS_AS(grid_2d(0, 3), dnnc::usage_error);
    CHECK_THROWS_AS(random_geometric(10, 0, 1), dnnc::usage_error);
    CHECK_THROWS_AS(layered_feed_forward({3}, -0.1, 1), dnnc::usage_error);
}
