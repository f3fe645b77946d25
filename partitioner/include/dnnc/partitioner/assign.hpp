#pragma once
// The whole pipeline the CLI and the lead node call: partition by the chosen strategy, place
// the parts on the physical nodes, measure the result.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/partition.hpp"
#include "dnnc/partitioner/placement.hpp"

namespace dnnc::partitioner {

struct assignment {
    partition parts;
    placement place;
    quality metrics;
};

// multilevel: one part per node with target weights proportional to the capacities, then
// place_parts. mincut: cluster.size() classes, then place_classes. Throws usage_error for a
// bad cluster (check_physical_cluster) or more nodes than vertices.
assignment assign(const graph& g, const physical_cluster& cluster,
                  const partition_options& options = {}, const metrics_options& metrics = {});

}  // namespace dnnc::partitioner
