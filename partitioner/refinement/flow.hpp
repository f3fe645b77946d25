#pragma once
// Max-flow min-cut refinement of a k-way partition, pair of parts by pair (after KaFFPa's,
// Sanders and Schulz 2011). For two parts a and b that share cut edges, a corridor is grown
// from their common boundary into each part by breadth-first search, up to a weight; the
// vertices outside the corridor stay where they are. Among all ways to split the corridor
// between a and b, a minimum cut of the flow network (source: a's vertices outside it,
// sink: b's, capacities the edge weights) has the least a-b cut, and it is taken when it cuts
// less than the current split and leaves both parts within their limits. Of the minimum cuts,
// the one whose source side is smallest and the one whose source side is largest are tried.
// Corridors start at alpha_max times the parts' imbalance allowance and are halved while the
// cut they find would unbalance the parts. The cut never grows, and parts within their limits
// stay within them. When the level is repartitioned (level_graph::repartitioning), a vertex
// whose home is a or b pays its migration penalty on the other side, so the cut plus the
// migration penalty is what never grows, and what the returned gain counts.
#include "refinement/kway_fm.hpp"
#include "src/level_graph.hpp"

#include <cstddef>
#include <vector>

namespace dnnc::partitioner::detail {

struct flow_options {
    // The largest corridor, per side, in units of the other part's allowance above its target
    // ((upper - lower) / 2); halved down to 1 while a cut would unbalance the parts.
    double alpha_max = 8;
    // Passes over every pair of adjacent parts, while one lowers the cut.
    std::size_t max_passes = 2;
};

// Refines `part_of` (k = limits.upper.size() parts) of g; returns how much the cut fell.
// Does nothing when more than half of the edge weight is cut (no locality to exploit).
weight_t flow_refine(const level_graph& g, std::vector<part_id>& part_of, const part_limits& limits, const flow_options& options);

}  // namespace dnnc::partitioner::detail
