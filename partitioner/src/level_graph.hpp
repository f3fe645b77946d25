#pragma once
// The graph one level of the multilevel hierarchy works on: the same CSR layout as `graph`
// (each undirected edge stored in both directions with equal weight, no self-loops), but
// with public fields so that coarsening can build it directly without a builder.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::partitioner::detail {

struct level_graph {
    std::vector<std::uint64_t> begin{0};
    std::vector<vertex_id> adjacency;
    std::vector<weight_t> edge_weight;
    std::vector<weight_t> vertex_weight;
    weight_t total_weight = 0;
    weight_t max_vertex_weight = 0;

    std::size_t size() const { return vertex_weight.size(); }
    std::size_t degree(vertex_id v) const { return begin[v + 1] - begin[v]; }
};

level_graph to_level_graph(const graph& g);

// The subgraph induced by `vertices` (local vertex i is vertices[i]); edges leaving the set
// are dropped. `local_of` is scratch of size g.size(), filled with `none` on entry and on exit.
inline constexpr vertex_id none = ~vertex_id{0};
level_graph induced_subgraph(const level_graph& g, const std::vector<vertex_id>& vertices,
                             std::vector<vertex_id>& local_of);

}  // namespace dnnc::partitioner::detail
