#pragma once
// Strategy `multilevel` (the default): coarsen by sorted heavy-edge matching, split the
// coarsest graph by recursive multilevel bisection, then uncoarsen with boundary k-way FM
// refinement under the imbalance bound; multilevel_repartition starts from a current
// partition and weighs migration against cut. See docs/partitioner.md.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <vector>

namespace dnnc::partitioner {

// Splits g into target_fractions.size() parts. Part i aims at target_fractions[i] / Σ of the
// total vertex weight and holds at most (1 + options.imbalance) times that whenever vertex
// weights allow it (never less than the target rounded up). The same graph, fractions and
// options.seed give the same partition. options.method is not consulted.
// With options.quality strong, the fast partition is improved by iterated V-cycles (KaFFPa,
// METIS): coarsen merging only vertices of one part, keep the partition as the coarsest
// solution, refine it on every level; repeated while the cut improves. Further tries start
// from other seeds' partitions; the best (least excess weight, then least cut) is kept, so
// strong is never worse than fast.
// Throws usage_error for an empty graph, no parts, more parts than vertices, a fraction that
// is not positive and finite, or a negative imbalance.
partition multilevel_partition(const graph& g, const std::vector<double>& target_fractions,
                               const partition_options& options = {});

// `parts` parts of equal target weight.
partition multilevel_partition(const graph& g, std::size_t parts, const partition_options& options = {});

// What moving a vertex away from its current part costs (its state and synapse bytes, say).
// One unit of migration cost counts as `weight` units of edge cut: repartitioning minimises
//   cut + weight x Σ cost(v) over the vertices that leave their part,
// ParMETIS's  ITR x cut + migration  divided by ITR (its default ITR, 1000, is weight 0.001).
// A cut edge costs on every tick and a move once, so a weight below 1 suits a long run.
struct migration_options {
    std::vector<double> cost;  // per vertex, each >= 0 and finite; empty: the vertex weight
    double weight = 1.0;       // >= 0 and finite
};

// Adaptive repartitioning: a partition under the same balance bound as multilevel_partition
// that starts from `current` and weighs migration against cut. current.part_of has one entry
// per vertex of g; a part >= target_fractions.size() (for example >= current.parts for
// vertices added since) means the vertex has no part yet: it may go anywhere at no cost.
// Three candidates are computed and the one with the lowest cut + migration penalty is kept
// (ParMETIS's unified repartitioning, Schloegel, Karypis and Kumar):
//   diffusion      — a V-cycle whose coarsening merges only vertices of one current part, whose
//                    coarsest partition is the current one, rebalanced by the cheapest moves;
//   coarse remap   — the same V-cycle started from a from-scratch partition of its coarsest
//                    level, relabelled to the current parts;
//   scratch-remap  — multilevel_partition, its parts relabelled by remap_parts.
// The first two count migration in every refinement gain, on every level. Penalties are
// weight x cost rounded to 1/1024 of a unit of edge weight.
// An empty current.part_of gives multilevel_partition's result, bit for bit. The same
// inputs and options.seed give the same partition.
// Throws usage_error as multilevel_partition does, and for a current partition of another
// size, migration options out of range, or edge weights and penalties whose sums overflow.
partition multilevel_repartition(const graph& g, const std::vector<double>& target_fractions,
                                 const partition& current, const migration_options& migration = {},
                                 const partition_options& options = {});

// `fresh` with its parts relabelled to keep as much migration cost where `current` has it:
// greedily, the pair (fresh part, part) of largest common cost first, and only between parts
// of equal target fraction, so that the balance of `fresh` is kept. Same arguments as above.
partition remap_parts(const graph& g, const partition& fresh, const std::vector<double>& target_fractions,
                      const partition& current, const std::vector<double>& migration_cost = {});

}  // namespace dnnc::partitioner
