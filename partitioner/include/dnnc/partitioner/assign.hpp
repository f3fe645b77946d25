#pragma once
// The whole pipeline the CLI and the lead node call: partition by the chosen strategy, place
// the parts on the physical nodes, measure the result.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/multilevel.hpp"
#include "dnnc/partitioner/partition.hpp"
#include "dnnc/partitioner/placement.hpp"

namespace dnnc::partitioner {

struct assignment {
    partition parts;
    placement place;
    quality metrics;
};

// Where the vertices run now, for a re-plan that should move few of them: node_of_vertex has
// one entry per vertex, a node >= cluster.size() for a vertex on no node yet (added since,
// or on a node that left); moving a vertex costs as migration says.
struct current_assignment {
    std::vector<std::uint32_t> node_of_vertex;
    migration_options migration;
};

// multilevel: one part per node with target weights proportional to the capacities, then
// place_parts; with a current assignment, multilevel_repartition from it instead, part i
// staying on node i (condition 1 is then only reported: a permutation of the parts would
// move whole parts). mincut: cluster.size() classes, then place_classes. Throws usage_error for a
// bad cluster (check_physical_cluster), more nodes than vertices, or a current assignment
// with mincut or of another size.
assignment assign(const graph& g, const physical_cluster& cluster, const partition_options& options = {},
                  const metrics_options& metrics = {}, const current_assignment* current = nullptr);

}  // namespace dnnc::partitioner
