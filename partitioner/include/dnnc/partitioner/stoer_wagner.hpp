#pragma once
// Exact global minimum cut of a weighted undirected graph: Stoer and Wagner's maximum-
// adjacency phases (1997) with Nagamochi and Ibaraki's rule that also merges, in the same
// phase, every edge whose connectivity bound reaches the best cut found. Each phase is one
// pass over the contracted graph with an indexed binary heap, O(m log n); at most n - 1
// phases, usually a handful. Among several minimum cuts, the first one met is returned.
#include "dnnc/partitioner/graph.hpp"

#include <vector>

namespace dnnc::partitioner {

struct min_cut {
    weight_t value = 0;
    // The vertices on one side (ascending, the smaller side by count); the rest of the
    // vertex set forms the other.
    std::vector<vertex_id> side;
};

// The minimum cut of the whole graph. A disconnected graph has a cut of value 0 whose side is
// a union of components. Throws usage_error for fewer than 2 vertices.
min_cut stoer_wagner(const graph& g);

// The minimum cut of the subgraph induced by `vertices` (distinct, at least 2); edges that
// leave the subset are ignored and `side` is a subset of `vertices`.
min_cut stoer_wagner(const graph& g, const std::vector<vertex_id>& vertices);

}  // namespace dnnc::partitioner
