#pragma once
// The physical cluster as a graph: checks, hop distances, and the ways to obtain one (a
// DNNC document's <cluster> becomes one in plan/, plan::physical_of).
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::partitioner {

// Throws usage_error unless the cluster has at least one node, every capacity is positive and
// finite, names are absent or one per node, every link joins two distinct existing nodes, and
// the links connect all nodes.
void check_physical_cluster(const physical_cluster& cluster);

// Hops between nodes along links, row-major: hops[a * size + b]. The cluster must be checked.
std::vector<std::uint32_t> hop_distances(const physical_cluster& cluster);

// Whether nodes a and b are joined by a link, row-major like hop_distances.
std::vector<char> link_matrix(const physical_cluster& cluster);

// `nodes` nodes of the given capacities (all 1 when empty), every pair linked: the cluster
// that `--parts K` stands for.
physical_cluster complete_cluster(std::size_t nodes, std::vector<double> capacities = {});

}  // namespace dnnc::partitioner
