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
// One seed's partitions differ from another's by a few percent of cut, as much as the cut
// target allows, so every case runs with seeds 1..N (`--seeds N`, default 5; the seed of the
// current partition, the scratch one and the adaptive one): the table shows seed 1 (the
// default seed), the summary every case over all seeds.
#include "bench_graphs.hpp"
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/multilevel.hpp"

#include <chrono>
#include <map>
#include <tuple>
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

// A case's sums over the seeds.
struct over_seeds {
    double scratch_cut = 0, adaptive_cut = 0, scratch_migration = 0, adaptive_migration = 0;
    int runs = 0, met = 0;
};
using case_key = std::tuple<std::string, std::string, std::size_t, double>;

// One case: the perturbed graph g with the current partition (no part for added vertices);
// its row is printed for seed 1.
void run_case(const std::string& graph_name, const std::string& perturbation, const dp::graph& g,
              const std::vector<double>& fractions, const dp::partition& current, double migration_weight,
              std::uint64_t seed, over_seeds& sums) {
    dp::partition_options options;
    options.seed = seed;
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
    sums.scratch_cut += static_cast<double>(scratch.q.edge_cut);
    sums.adaptive_cut += static_cast<double>(adaptive.q.edge_cut);
    sums.scratch_migration += scratch.migration;
    sums.adaptive_migration += adaptive.migration;
    ++sums.runs;
    sums.met += migration_ratio <= 1.0 / 3 && cut_ratio <= 1.05 ? 1 : 0;
    if (seed != 1) return;
    std::printf("| %s | %s | %zu | %g | %lld | %lld | %.0f | %.0f | %.3f%s | %.3f%s | %.3f | %.3f | %.1f | %.1f |\n",
                graph_name.c_str(), perturbation.c_str(), fractions.size(), migration_weight, static_cast<long long>(scratch.q.edge_cut),
                static_cast<long long>(adaptive.q.edge_cut), scratch.migration, adaptive.migration, migration_ratio,
                migration_ratio <= 1.0 / 3 ? "" : " (miss)", cut_ratio, cut_ratio <= 1.05 ? "" : " (miss)",
                scratch.q.max_imbalance, adaptive.q.max_imbalance, scratch.ms, adaptive.ms);
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t seeds = 5;
    // --seeds N anywhere; the rest goes to data_path.
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) != "--seeds") {
            rest.push_back(argv[i]);
            continue;
        }
        const auto n = i + 1 < argc ? dnnc::bench::positive_count(argv[++i]) : std::nullopt;
        seeds = n.value_or(0);
        if (seeds == 0) {
            std::cerr << "bench_repartition: --seeds takes a positive count\n";
            return 2;
        }
    }
    const auto data = dnnc::bench::data_path(static_cast<int>(rest.size()), rest.data(), "bench_repartition [--seeds N]");
    if (!data) return 2;
    const std::vector<double> weights{1, 0.1, 0.01};
    try {
        const std::vector<named_graph> graphs = dnnc::bench::benchmark_graphs(*data);
        std::printf("| graph | perturbation | k | migration weight | scratch cut | adaptive cut | scratch migration | adaptive migration "
                    "| migration ratio | cut ratio | scratch imb. | adaptive imb. | scratch ms | adaptive ms |\n");
        std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        std::map<case_key, over_seeds> sums;
        std::vector<case_key> order;
        auto sums_of = [&](const case_key& key) -> over_seeds& {
            if (sums.count(key) == 0) order.push_back(key);
            return sums[key];
        };
        for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
            for (const named_graph& base : graphs) {
                for (std::size_t k : {4, 8}) {
                    const std::vector<double> equal(k, 1.0);
                    dp::partition_options options;
                    options.seed = seed;
                    const dp::partition current = dp::multilevel_partition(base.g, equal, options);
                    std::vector<double> grown = equal;
                    grown[0] = 1.1;
                    const dp::graph bigger = with_duplicates(base.g, 0.1, 7);
                    dp::partition extended = current;
                    extended.part_of.resize(bigger.vertex_count(), static_cast<dp::part_id>(k));
                    for (double weight : weights) {
                        run_case(base.name, "part 0 target +10%", base.g, grown, current, weight, seed,
                                 sums_of({base.name, "part 0 target +10%", k, weight}));
                        run_case(base.name, "+10% vertices", bigger, equal, extended, weight, seed,
                                 sums_of({base.name, "+10% vertices", k, weight}));
                    }
                }
            }
        }
        std::printf("\nOver seeds 1..%llu (ratios of the sums over the seeds; seeds that meet both targets):\n\n",
                    static_cast<unsigned long long>(seeds));
        std::printf("| graph | perturbation | k | migration weight | migration ratio | cut ratio | both met |\n");
        std::printf("|---|---|---|---|---|---|---|\n");
        std::map<std::pair<std::string, bool>, std::pair<int, int>> met;  // (graph, weight < 1): met, runs
        for (const case_key& key : order) {
            const over_seeds& o = sums[key];
            std::printf("| %s | %s | %zu | %g | %.3f | %.3f | %d of %d |\n", std::get<0>(key).c_str(),
                        std::get<1>(key).c_str(), std::get<2>(key), std::get<3>(key),
                        o.scratch_migration > 0 ? o.adaptive_migration / o.scratch_migration : 0,
                        o.adaptive_cut / o.scratch_cut, o.met, o.runs);
            auto& m = met[{std::get<0>(key), std::get<3>(key) < 1}];
            m.first += o.met;
            m.second += o.runs;
        }
        for (const auto& [graph_and_weight, counts] : met) {
            std::printf("%s, migration weight %s: both targets met in %d of %d runs\n", graph_and_weight.first.c_str(),
                        graph_and_weight.second ? "0.1 or 0.01" : "1", counts.first, counts.second);
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "bench_repartition: " << e.what() << '\n';
        return 1;
    }
}
