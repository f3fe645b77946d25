#include "dnnc/partitioner/multilevel.hpp"

#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metrics.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace dnnc::partitioner;

namespace {

struct named_graph {
    std::string name;
    graph g;
};

std::vector<named_graph> test_graphs() {
    const double pi = 3.14159265358979323846;
    const std::size_t n = 3000;
    std::vector<named_graph> graphs;
    graphs.push_back({"random geometric", random_geometric(n, std::sqrt(10.0 / (static_cast<double>(n) * pi)), 3)});
    graphs.push_back({"watts-strogatz", watts_strogatz(n, 8, 0.05, 4)});
    graphs.push_back({"block model", stochastic_block_model({750, 750, 750, 750}, 0.02, 0.002, 5)});
    return graphs;
}

partition_options with_quality(partition_quality quality, std::uint64_t seed = 1) {
    partition_options options;
    options.quality = quality;
    options.seed = seed;
    return options;
}

// Every part within max((1 + epsilon) x its equal share, the share rounded up).
void require_balanced(const graph& g, const partition& p, double epsilon) {
    std::vector<weight_t> load(p.parts, 0);
    for (vertex_id v = 0; v < g.vertex_count(); ++v) load[p.part_of[v]] += g.vertex_weight(v);
    const double target = static_cast<double>(g.total_vertex_weight()) / static_cast<double>(p.parts);
    for (std::size_t i = 0; i < p.parts; ++i) {
        INFO("part " << i << " weighs " << load[i] << ", target " << target);
        REQUIRE(static_cast<double>(load[i]) <= std::max((1 + epsilon) * target, std::ceil(target)) + 1e-9);
    }
}

}  // namespace

TEST_CASE("strong quality: cut at most fast's, balance kept") {
    for (const named_graph& ng : test_graphs()) {
        for (std::size_t k : {2, 4, 8}) {
            INFO(ng.name << ", k = " << k);
            const partition fast = multilevel_partition(ng.g, k, with_quality(partition_quality::fast));
            const partition strong = multilevel_partition(ng.g, k, with_quality(partition_quality::strong));
            REQUIRE(strong.parts == k);
            REQUIRE(strong.part_of.size() == ng.g.vertex_count());
            require_balanced(ng.g, strong, partition_options{}.imbalance);
            const weight_t fast_cut = evaluate(ng.g, fast).edge_cut;
            const weight_t strong_cut = evaluate(ng.g, strong).edge_cut;
            INFO("fast cut " << fast_cut << ", strong cut " << strong_cut);
            REQUIRE(strong_cut <= fast_cut);
        }
    }
}

TEST_CASE("strong quality: improves the cut somewhere on the test graphs") {
    weight_t fast_total = 0;
    weight_t strong_total = 0;
    for (const named_graph& ng : test_graphs()) {
        for (std::size_t k : {2, 4, 8}) {
            fast_total += evaluate(ng.g, multilevel_partition(ng.g, k, with_quality(partition_quality::fast))).edge_cut;
            strong_total += evaluate(ng.g, multilevel_partition(ng.g, k, with_quality(partition_quality::strong))).edge_cut;
        }
    }
    INFO("fast " << fast_total << ", strong " << strong_total);
    REQUIRE(strong_total < fast_total);
}

TEST_CASE("strong quality: the same seed gives the same partition") {
    const graph g = test_graphs().front().g;
    for (std::uint64_t seed : {1, 7}) {
        const partition a = multilevel_partition(g, 4, with_quality(partition_quality::strong, seed));
        const partition b = multilevel_partition(g, 4, with_quality(partition_quality::strong, seed));
        REQUIRE(a.part_of == b.part_of);
    }
}

TEST_CASE("strong quality: fast is the default and unchanged by the setting") {
    REQUIRE(partition_options{}.quality == partition_quality::fast);
    for (const named_graph& ng : test_graphs()) {
        const partition by_default = multilevel_partition(ng.g, 4);
        const partition fast = multilevel_partition(ng.g, 4, with_quality(partition_quality::fast));
        REQUIRE(fast.part_of == by_default.part_of);
    }
}

TEST_CASE("strong quality: one part and uneven targets") {
    const graph g = test_graphs().front().g;
    const partition one = multilevel_partition(g, 1, with_quality(partition_quality::strong));
    REQUIRE(one.part_of == std::vector<part_id>(g.vertex_count(), 0));
    const std::vector<double> fractions{1, 2, 3};
    const partition fast = multilevel_partition(g, fractions, with_quality(partition_quality::fast));
    const partition strong = multilevel_partition(g, fractions, with_quality(partition_quality::strong));
    REQUIRE(evaluate(g, strong).edge_cut <= evaluate(g, fast).edge_cut);
    std::vector<weight_t> load(3, 0);
    for (vertex_id v = 0; v < g.vertex_count(); ++v) load[strong.part_of[v]] += g.vertex_weight(v);
    for (std::size_t i = 0; i < 3; ++i) {
        const double target = fractions[i] / 6 * static_cast<double>(g.total_vertex_weight());
        REQUIRE(static_cast<double>(load[i]) <= std::max(1.03 * target, std::ceil(target)) + 1e-9);
    }
}
