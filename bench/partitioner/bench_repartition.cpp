// bench_repartition: adaptive repartitioning (multilevel_repartition) against partitioning
// from scratch, on 4elt and a generated neural graph (layered feed-forward), for k = 4 and 8.
// The current partition is multilevel_partition's of the unperturbed graph; then either
//   (a) 10% more vertices: random vertices are duplicated with their edges (and an edge to
//       the original), the copies have no current part; or
//   (b) part 0's target fraction grows by 10% (a node's capacity changed).
// The perturbed graph is partitioned from scratch (parts relabelled to the current ones by
// remap_parts, to be fair) and adaptively (migration cost = vertex weight, migration weight
// 1, 0.1 and 0.01: one moved vertex costs as much as 1, 0.1 or 0.01 cut edges). Prints
// cut, migration volume, imbalance and time of each, and the ratios adaptive / scratch.
// Targets: migration ratio <= 1/3, cut ratio <= 1.05.
#include "bench_graphs.hpp"
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/multilevel.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace dp = dnnc::partitioner;

namespace {

using dnnc::bench::named_graph;

// g with fraction x n random vertices duplicated: copy i of v gets v's weight, v's edges and
// an edge to v.
dp::graph with_duplicates(const dp::graph& g, double fraction, std::uint64_t seed) {
    const std::size_t n = g.vertex_count();
    std::vector<dp::vertex_id> order(n);
    for (dp::vertex_id v = 0; v < n; ++v) order[v] = v;
    dnnc::splitmix64 rng(seed);
    rng.shuffle(order);
    order.resize(static_cast<std::size_t>(fraction * static_cast<double>(n)));
    dp::graph_builder b(n + order.size());
    for (dp::vertex_id v = 0; v < n; ++v) {
        b.set_vertex_weight(v, g.vertex_weight(v));
        const dp::weight_t* w = g.edge_weights_begin(v);
        for (const dp::vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) {
            if (*u > v) b.add_edge(v, *u, *w);
        }
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
        const dp::vertex_id v = order[i];
        const auto copy = static_cast<dp::vertex_id>(n + i);
        b.set_vertex_weight(copy, g.vertex_weight(v));
        b.add_edge(copy, v);
        const dp::weight_t* w = g.edge_weights_begin(v);
        for (const dp::vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) b.add_edge(copy, *u, *w);
    }
    return std::move(b).build();
}

struct outcome {
    dp::quality q;
    double migration = 0;
    double ms = 0;
};

template <typename F>
outcome measure(const dp::graph& g, const std::vector<double>& fractions, const dp::partition& current, F partition_of) {
    const auto start = std::chrono::steady_clock::now();
    const dp::partition p = partition_of();
    outcome o;
    o.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    dp::physical_cluster cluster;
    cluster.capacity = fractions;
    cluster.names.assign(fractions.size(), "");
    for (std::uint32_t a = 0; a < fractions.size(); ++a) {
        for (std::uint32_t b = a + 1; b < fractions.size(); ++b) cluster.links.emplace_back(a, b);
    }
    o.q = dp::evaluate(g, p.part_of, cluster);
    o.migration = dp::migration_volume(g, current, p);
    return o;
}

// One case: the perturbed graph g with the current partition (no part for added vertices).
void run_case(const std::string& graph_name, const std::string& perturbation, const dp::graph& g,
              const std::vector<double>& fractions, const dp::partition& current, double migration_weight) {
    dp::partition_options options;
    const outcome scratch = measure(g, fractions, current, [&] {
        return dp::remap_parts(g, dp::multilevel_partition(g, fractions, options), fractions, current);
    });
    const outcome adaptive = measure(g, fractions, current, [&] {
        dp::migration_options migration;
        migration.weight = migration_weight;
        return dp::multilevel_repartition(g, fractions, current, migration, options);
    });
    const double migration_ratio = scratch.migration > 0 ? adaptive.migration / scratch.migration : 0;
    const double cut_ratio = static_cast<double>(adaptive.q.edge_cut) / static_cast<double>(scratch.q.edge_cut);
    std::printf("| %s | %s | %zu | %g | %lld | %lld | %.0f | %.0f | %.3f%s | %.3f%s | %.3f | %.3f | %.1f | %.1f |\n",
                graph_name.c_str(), perturbation.c_str(), fractions.size(), migration_weight, static_cast<long long>(scratch.q.edge_cut),
                static_cast<long long>(adaptive.q.edge_cut), scratch.migration, adaptive.migration, migration_ratio,
                migration_ratio <= 1.0 / 3 ? "" : " (miss)", cut_ratio, cut_ratio <= 1.05 ? "" : " (miss)",
                scratch.q.max_imbalance, adaptive.q.max_imbalance, scratch.ms, adaptive.ms);
}

}  // namespace

int main(int argc, char** argv) {
    const auto data = dnnc::bench::data_path(argc, argv, "bench_repartition");
    if (!data) return 2;
    const std::vector<double> weights{1, 0.1, 0.01};
    try {
        const std::vector<named_graph> graphs = dnnc::bench::benchmark_graphs(*data);
        std::printf("| graph | perturbation | k | migration weight | scratch cut | adaptive cut | scratch migration | adaptive migration "
                    "| migration ratio | cut ratio | scratch imb. | adaptive imb. | scratch ms | adaptive ms |\n");
        std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (const named_graph& base : graphs) {
            for (std::size_t k : {4, 8}) {
                const std::vector<double> equal(k, 1.0);
                const dp::partition current = dp::multilevel_partition(base.g, equal);
                std::vector<double> grown = equal;
                grown[0] = 1.1;
                const dp::graph bigger = with_duplicates(base.g, 0.1, 7);
                dp::partition extended = current;
                extended.part_of.resize(bigger.vertex_count(), static_cast<dp::part_id>(k));
                for (double weight : weights) {
                    run_case(base.name, "part 0 target +10%", base.g, grown, current, weight);
                    run_case(base.name, "+10% vertices", bigger, equal, extended, weight);
                }
            }
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "bench_repartition: " << e.what() << '\n';
        return 1;
    }
}
