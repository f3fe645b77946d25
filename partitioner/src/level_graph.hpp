#pragma once
// The graph one level of the multilevel hierarchy works on: the same CSR layout as `graph`
// (each undirected edge stored in both directions with equal weight, no self-loops), but
// with public fields so that coarsening can build it directly without a builder.
// When repartitioning, each vertex also has a home (the part it is in now, or no_home) and a
// migration penalty (in cut units, charged when it ends outside its home); both stay empty
// otherwise. Coarsening merges only vertices of one home, so homes project onto every level.
// A V-cycle that starts from a partition (quality strong, and refining a repartitioning's
// candidates) sets it as each vertex's group: coarsening merges only vertices of one group
// too, so the partition projects onto every level with the same cut.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::partitioner::detail {

inline constexpr part_id no_home = ~part_id{0};

struct level_graph {
    std::vector<std::uint64_t> begin{0};
    std::vector<vertex_id> adjacency;
    std::vector<weight_t> edge_weight;
    std::vector<weight_t> vertex_weight;
    weight_t total_weight = 0;
    weight_t max_vertex_weight = 0;
    std::vector<part_id> home;
    std::vector<weight_t> migration;
    std::vector<part_id> group;

    std::size_t size() const { return vertex_weight.size(); }
    std::size_t degree(vertex_id v) const { return begin[v + 1] - begin[v]; }
    bool repartitioning() const { return !home.empty(); }
    // Whether u and v may become one coarse vertex: one group, and one home (a vertex without a
    // home joins any).
    bool may_merge(vertex_id u, vertex_id v) const {
        return (group.empty() || group[u] == group[v]) &&
               (home.empty() || home[u] == home[v] || home[u] == no_home || home[v] == no_home);
    }
    // What moving v from part `from` to part `to` adds to the migration penalty.
    weight_t migration_change(vertex_id v, part_id from, part_id to) const {
        if (home.empty()) return 0;
        return (to != home[v] ? migration[v] : 0) - (from != home[v] ? migration[v] : 0);
    }
};

level_graph to_level_graph(const graph& g);

// The subgraph induced by `vertices` (local vertex i is vertices[i]); edges leaving the set
// are dropped. `local_of` is scratch of size g.size(), filled with `none` on entry and on exit.
inline constexpr vertex_id none = ~vertex_id{0};
level_graph induced_subgraph(const level_graph& g, const std::vector<vertex_id>& vertices,
                             std::vector<vertex_id>& local_of);

}  // namespace dnnc::partitioner::detail
