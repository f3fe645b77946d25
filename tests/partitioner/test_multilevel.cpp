#include "dnnc/partitioner/multilevel.hpp"

#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace dnnc::partitioner;

namespace {

std::vector<weight_t> loads(const graph& g, const partition& p) {
    std::vector<weight_t> w(p.parts, 0);
    for (vertex_id v = 0; v < g.vertex_count(); ++v) w[p.part_of[v]] += g.vertex_weight(v);
    return w;
}

void require_valid(const graph& g, const partition& p, std::size_t parts) {
    REQUIRE(p.parts == parts);
    REQUIRE(p.part_of.size() == g.vertex_count());
    for (part_id q : p.part_of) REQUIRE(q < parts);
}

// Every part within (1 + epsilon) x its share of the total weight.
void require_balanced(const graph& g, const partition& p, const std::vector<double>& fractions,
                      double epsilon) {
    double sum = 0;
    for (double f : fractions) sum += f;
    const std::vector<weight_t> w = loads(g, p);
    for (std::size_t i = 0; i < w.size(); ++i) {
        const double target = fractions[i] / sum * static_cast<double>(g.total_vertex_weight());
        INFO("part " << i << " weighs " << w[i] << ", target " << target);
        REQUIRE(static_cast<double>(w[i]) <= std::max((1 + epsilon) * target, std::ceil(target)) + 1e-9);
    }
}

}  // namespace

TEST_CASE("multilevel: planted blocks of a stochastic block model are recovered exactly") {
    // 4 x 250, p_in = 0.1, p_out = 0.01: a vertex has ~25 neighbours in its block and ~2.5 in
    // each other block, well above the threshold where the planted partition is the optimum.
    const std::vector<std::size_t> blocks{250, 250, 250, 250};
    for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
        const graph g = stochastic_block_model(blocks, 0.1, 0.01, seed);
        partition_options options;
        options.seed = seed;
        const partition p = multilevel_partition(g, 4, options);
        require_valid(g, p, 4);
        const partition planted = planted_blocks(blocks);
        // The same partition up to the names of the parts.
        std::map<part_id, part_id> name;
        for (vertex_id v = 0; v < g.vertex_count(); ++v) {
            const auto [it, fresh] = name.emplace(planted.part_of[v], p.part_of[v]);
            INFO("graph seed " << seed << ", vertex " << v);
            REQUIRE(it->second == p.part_of[v]);
        }
        std::set<part_id> distinct;
        for (const auto& entry : name) distinct.insert(entry.second);
        REQUIRE(distinct.size() == 4);
    }
}

TEST_CASE("multilevel: eight planted blocks into four parts keep two whole blocks a part") {
    // The benchmark's block model (BENCHMARKS.md, "Partition quality"): 8 blocks of 4,096,
    // about 16 neighbours inside the block and 4 outside. The optimum at k = 4 puts two whole
    // blocks in each part. With k-way passes stopped after 100 moves without a new best,
    // seeds 1, 3 and 5 settled about 50% above it.
    const std::vector<std::size_t> blocks(8, 4096);
    const graph g = stochastic_block_model(blocks, 16.0 / 4095, 4.0 / (7 * 4096), 1);
    partition paired = planted_blocks(blocks);
    for (auto& part : paired.part_of) part /= 2;
    paired.parts = 4;
    const weight_t optimum = evaluate(g, paired).edge_cut;
    for (std::uint64_t seed : {1, 3, 5}) {
        partition_options options;
        options.seed = seed;
        const partition p = multilevel_partition(g, 4, options);
        require_valid(g, p, 4);
        INFO("seed " << seed << ": cut " << evaluate(g, p).edge_cut << ", two blocks a part " << optimum);
        REQUIRE(evaluate(g, p).edge_cut <= optimum + optimum / 100);
    }
}

TEST_CASE("multilevel: capacities 1:2:3:4 give loads of 10/20/30/40 percent within epsilon") {
    // Refinement keeps every load between (1 - epsilon) and (1 + epsilon) x its share.
    const graph g = random_geometric(20000, 0.015, 7);
    const std::vector<double> capacity{1, 2, 3, 4};
    for (double epsilon : {0.03, 0.01, 0.1}) {
        partition_options options;
        options.imbalance = epsilon;
        const partition p = multilevel_partition(g, capacity, options);
        require_valid(g, p, 4);
        const std::vector<weight_t> w = loads(g, p);
        for (std::size_t i = 0; i < 4; ++i) {
            const double share = static_cast<double>(w[i]) / static_cast<double>(g.total_vertex_weight());
            INFO("epsilon " << epsilon << ", node " << i << " holds " << share);
            CHECK(share <= (1 + epsilon) * capacity[i] / 10 + 1e-9);
            CHECK(share >= (1 - epsilon) * capacity[i] / 10 - 1e-9);
        }
        // The metrics module sees the same: imbalance against the capacity shares.
        const quality q = evaluate(g, p.part_of, complete_cluster(4, capacity));
        CHECK(q.max_imbalance <= 1 + epsilon + 1e-9);
    }
}

TEST_CASE("multilevel: the same seed gives the same partition") {
    const graph g = random_geometric(5000, 0.03, 3);
    for (std::size_t k : {2, 5, 16}) {
        partition_options options;
        options.seed = 42;
        const partition a = multilevel_partition(g, k, options);
        const partition b = multilevel_partition(g, k, options);
        CHECK(a.part_of == b.part_of);
    }
}

TEST_CASE("multilevel: balanced on grids, weighted vertices and many parts") {
    SECTION("grid, k = 2..64") {
        const graph g = grid_2d(60, 70);
        for (std::size_t k : {2, 3, 7, 16, 64}) {
            const partition p = multilevel_partition(g, k);
            require_valid(g, p, k);
            require_balanced(g, p, std::vector<double>(k, 1.0), 0.03);
            // A grid cut into k strips or blocks never needs more than k * 70 edges.
            CHECK(evaluate(g, p).edge_cut <= static_cast<weight_t>(k) * 70);
        }
    }
    SECTION("vertex weights 1..10") {
        const graph plain = random_geometric(3000, 0.04, 11);
        graph_builder builder(plain.vertex_count());
        for (vertex_id v = 0; v < plain.vertex_count(); ++v) {
            builder.set_vertex_weight(v, 1 + v % 10);
            for (auto it = plain.neighbors_begin(v); it != plain.neighbors_end(v); ++it) {
                if (*it > v) builder.add_edge(v, *it);
            }
        }
        const graph g = std::move(builder).build();
        const partition p = multilevel_partition(g, 6);
        require_balanced(g, p, std::vector<double>(6, 1.0), 0.03);
    }
    SECTION("as many parts as vertices") {
        const graph g = grid_2d(3, 4);
        const partition p = multilevel_partition(g, 12);
        require_valid(g, p, 12);
        CHECK(std::set<part_id>(p.part_of.begin(), p.part_of.end()).size() == 12);
    }
    SECTION("one part") {
        const graph g = grid_2d(5, 5);
        const partition p = multilevel_partition(g, 1);
        require_valid(g, p, 1);
    }
}

TEST_CASE("multilevel: disconnected graphs split between components") {
    // 40 disjoint triangles and 20 isolated vertices: 4 parts of 35 with no edge cut.
    graph_builder builder(140);
    for (vertex_id t = 0; t < 40; ++t) {
        builder.add_edge(3 * t, 3 * t + 1);
        builder.add_edge(3 * t + 1, 3 * t + 2);
        builder.add_edge(3 * t, 3 * t + 2);
    }
    const graph g = std::move(builder).build();
    const partition p = multilevel_partition(g, 4);
    require_valid(g, p, 4);
    require_balanced(g, p, std::vector<double>(4, 1.0), 0.03);
    CHECK(evaluate(g, p).edge_cut <= 3);
}

TEST_CASE("multilevel: 4elt cuts stay near gpmetis's") {
    const std::string path = DNNC_SOURCE_DIR "/../shared/data/4elt.graph";
    if (!std::ifstream(path)) {
        WARN("skipped: " << path << " is absent");
        return;
    }
    const graph g = read_metis(path);
    // gpmetis 5.1, 3% imbalance (DESIGN.md, "Partition and placement"). A single run varies
    // by several percent with the seed, so the mean of four seeds is compared; the benchmark
    // (BENCHMARKS.md) holds the full comparison.
    const std::map<std::size_t, weight_t> metis{{2, 150}, {4, 341}, {8, 624}, {16, 1120}, {32, 1779}, {64, 2816}};
    for (const auto& [k, reference] : metis) {
        double sum = 0;
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
            partition_options options;
            options.seed = seed;
            const partition p = multilevel_partition(g, k, options);
            require_balanced(g, p, std::vector<double>(k, 1.0), 0.03);
            sum += static_cast<double>(evaluate(g, p).edge_cut);
        }
        INFO("k = " << k << ": mean cut " << sum / 4 << ", gpmetis " << reference);
        CHECK(sum / 4 <= 1.10 * static_cast<double>(reference));
    }
}

TEST_CASE("multilevel: bad arguments are usage errors") {
    const graph g = grid_2d(4, 4);
    CHECK_THROWS_AS(multilevel_partition(g, 0), dnnc::usage_error);
    CHECK_THROWS_AS(multilevel_partition(g, 17), dnnc::usage_error);
    CHECK_THROWS_AS(multilevel_partition(graph{}, 2), dnnc::usage_error);
    CHECK_THROWS_AS(multilevel_partition(g, std::vector<double>{1, 0}), dnnc::usage_error);
    CHECK_THROWS_AS(multilevel_partition(g, std::vector<double>{1, -2}), dnnc::usage_error);
    CHECK_THROWS_AS(multilevel_partition(g, std::vector<double>{1, std::nan("")}), dnnc::usage_error);
    partition_options negative;
    negative.imbalance = -0.1;
    CHECK_THROWS_AS(multilevel_partition(g, 2, negative), dnnc::usage_error);
}
