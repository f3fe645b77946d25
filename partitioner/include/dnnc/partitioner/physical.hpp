#pragma once
// The physical cluster as a graph: checks, hop distances, and the ways to obtain one (a
// DNNC document's <cluster> becomes one in plan/, plan::physical_of).
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::partitioner {

// Throws usage_error unless the cluster has at least one node, every capacity is positive and
// finite, names are absent or one per node, every link joins two distinct existing nodes, the
// links connect all nodes, and link capacities are absent or one per link, each > 0 (+infinity
// for unknown).
void check_physical_cluster(const physical_cluster& cluster);

// Hops between nodes along links, row-major: hops[a * size + b]. The cluster must be checked.
std::vector<std::uint32_t> hop_distances(const physical_cluster& cluster);

// Whether nodes a and b are joined by a link, row-major like hop_distances.
std::vector<char> link_matrix(const physical_cluster& cluster);

// Whether some link has a finite capacity, so that link loads mean something.
bool has_link_capacities(const physical_cluster& cluster);

// The route of the traffic between two nodes: a shortest path of links (as hop_distances
// counts them) that from each node goes on to the lowest-index neighbour closer to the
// destination. One fixed route per pair, taken from the lower-index node, so both directions
// share it; between nodes joined by several links the traffic takes the first one listed.
class link_routes {
public:
    // The cluster must be checked.
    explicit link_routes(const physical_cluster& cluster);

    std::uint32_t hops(std::uint32_t a, std::uint32_t b) const { return hops_[a * size_ + b]; }

    // Adds `amount` to traffic[l] for each link l on the route between nodes a != b;
    // traffic has one entry per link.
    void add(std::uint32_t a, std::uint32_t b, weight_t amount, std::vector<weight_t>& traffic) const;

private:
    std::size_t size_;
    std::vector<std::uint32_t> hops_;
    // Per node, (neighbour, link) sorted by neighbour, one entry per neighbour.
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> next_;
};

// max over links with a finite capacity of traffic[l] / link_capacity[l]; 0 when none has one.
double max_link_load(const physical_cluster& cluster, const std::vector<weight_t>& link_traffic);

// `nodes` nodes of the given capacities (all 1 when empty), every pair linked: the cluster
// that `--parts K` stands for.
physical_cluster complete_cluster(std::size_t nodes, std::vector<double> capacities = {});

}  // namespace dnnc::partitioner
