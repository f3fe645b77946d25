// Max-flow min-cut refinement between pairs of parts (partitioner/refinement/flow.hpp): it
// straightens a boundary that single-vertex moves cannot, returns exactly what the cut fell,
// never raises the cut and keeps every part within its limits.
#include "refinement/flow.hpp"

#include "dnnc/core/splitmix64.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/graph.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace dnnc;
using namespace dnnc::partitioner;
using namespace dnnc::partitioner::detail;

namespace {

weight_t cut_of(const level_graph& g, const std::vector<part_id>& part_of) {
    weight_t cut = 0;
    for (vertex_id v = 0; v < g.size(); ++v)
        for (auto e = g.begin[v]; e < g.begin[v + 1]; ++e)
            if (part_of[g.adjacency[e]] != part_of[v]) cut += g.edge_weight[e];
    return cut / 2;
}

std::vector<weight_t> loads(const level_graph& g, const std::vector<part_id>& part_of, std::size_t k) {
    std::vector<weight_t> load(k, 0);
    for (vertex_id v = 0; v < g.size(); ++v) load[part_of[v]] += g.vertex_weight[v];
    return load;
}

graph grid(std::size_t side) {
    graph_builder b(side * side);
    for (std::size_t y = 0; y < side; ++y)
        for (std::size_t x = 0; x < side; ++x) {
            const auto v = static_cast<vertex_id>(y * side + x);
            if (x + 1 < side) b.add_edge(v, v + 1);
            if (y + 1 < side) b.add_edge(v, static_cast<vertex_id>(v + side));
        }
    return std::move(b).build();
}

}  // namespace

TEST_CASE("flows straighten a zigzag boundary of a grid into the straight cut") {
    // 20 x 20, rows alternately 11 and 9 vertices on the left: 200 a side, cut 58 (each row's
    // edge, and two between each pair of rows). The straight cut down the middle is 20.
    const level_graph g = to_level_graph(grid(20));
    std::vector<part_id> part(g.size());
    for (std::size_t y = 0; y < 20; ++y)
        for (std::size_t x = 0; x < 20; ++x) part[y * 20 + x] = x < (y % 2 ? 11u : 9u) ? 0 : 1;
    REQUIRE(cut_of(g, part) == 58);
    const part_limits limits = part_bounds({200.0, 200.0}, 0.1, 0);
    const weight_t gain = flow_refine(g, part, limits, flow_options{});
    CHECK(cut_of(g, part) == 20);
    CHECK(gain == 38);
    for (const auto w : loads(g, part, 2)) {
        CHECK(w >= limits.lower[0]);
        CHECK(w <= limits.upper[0]);
    }
}

TEST_CASE("flows return what the cut fell, never raise it, and keep parts within their limits") {
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
        const std::size_t k = 2 + seed % 4;
        const level_graph g = to_level_graph(random_geometric(600, 0.08, seed));
        // Parts by stripes of vertex index, each within 3% of its share: a poor start.
        std::vector<part_id> part(g.size());
        splitmix64 rng(seed);
        for (vertex_id v = 0; v < g.size(); ++v) part[v] = static_cast<part_id>(v * k / g.size());
        const part_limits limits = part_bounds(std::vector<double>(k, 600.0 / static_cast<double>(k)), 0.03, 0);
        const weight_t before = cut_of(g, part);
        const weight_t gain = flow_refine(g, part, limits, flow_options{});
        INFO("seed " << seed << ", k = " << k << ": cut " << before << " -> " << cut_of(g, part));
        REQUIRE(gain >= 0);
        REQUIRE(cut_of(g, part) == before - gain);
        const auto load = loads(g, part, k);
        for (std::size_t p = 0; p < k; ++p) {
            REQUIRE(load[p] >= limits.lower[p]);
            REQUIRE(load[p] <= limits.upper[p]);
        }
    }
}
