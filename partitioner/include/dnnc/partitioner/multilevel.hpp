#pragma once
// Strategy `multilevel` (the default): coarsen by sorted heavy-edge matching, split the
// coarsest graph by recursive multilevel bisection, then uncoarsen with boundary k-way FM
// refinement under the imbalance bound. See docs/partitioner.md.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <vector>

namespace dnnc::partitioner {

// Splits g into target_fractions.size() parts. Part i aims at target_fractions[i] / Σ of the
// total vertex weight and holds at most (1 + options.imbalance) times that whenever vertex
// weights allow it (never less than the target rounded up). The same graph, fractions and
// options.seed give the same partition. options.method is not consulted.
// Throws usage_error for an empty graph, no parts, more parts than vertices, a fraction that
// is not positive and finite, or a negative imbalance.
partition multilevel_partition(const graph& g, const std::vector<double>& target_fractions,
                               const partition_options& options = {});

// `parts` parts of equal target weight.
partition multilevel_partition(const graph& g, std::size_t parts, const partition_options& options = {});

}  // namespace dnnc::partitioner
