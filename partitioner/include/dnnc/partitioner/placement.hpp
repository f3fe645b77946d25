#pragma once
// Placement: which physical node simulates each part. Condition 1 — every edge of the
// neural graph lies inside one node or along one physical link — is kept wherever the rule
// can keep it; edges that still break it are reported by evaluate() (metrics.hpp), and
// among placements that break it the one with the smaller hop-weighted cut is preferred.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::partitioner {

struct placement {
    std::vector<std::uint32_t> node_of_part;
    std::vector<std::uint32_t> node_of_vertex;
};

// The original rule, for the classes of strategy `mincut`: the heaviest class goes to the
// most capable node; the others follow in order of their connection to classes already
// placed, each onto the most capable unused node that keeps condition 1 for its edges to
// placed classes; when no unused node does, the class stays on the current node (the node
// of the class placed last). Ties: classes by weight, then by number of neighbouring
// classes; nodes by number of unused linked nodes, then index. When the current node breaks condition 1 as well, the class
// goes to the node with the fewest violating edges, then the least hop-weighted traffic.
// Several classes may share a node and nodes may stay empty.
placement place_classes(const graph& g, const partition& p, const physical_cluster& cluster);

// For strategy `multilevel`, whose part i was sized for node i: parts are only permuted
// among nodes of equal capacity, so every part keeps its capacity target. Starting from part
// i on node i, a bounded backtracking search looks for a permutation without condition-1
// violations; if none is found, pairwise swaps reduce (violating edges, hop-weighted cut).
// When some link has a capacity, the swaps run in any case and reduce (violating edges,
// largest link load, hop-weighted cut): condition 1 first, then the busiest link (metrics.hpp,
// max_link_load). Requires p.parts == cluster.size().
placement place_parts(const graph& g, const partition& p, const physical_cluster& cluster);

// After place_parts, when some link has a capacity (nothing otherwise): greedy passes in
// vertex order move single vertices to the node of one of their neighbours when that lowers
// (condition-1 violations, largest link load, edge cut) and keeps both nodes within
// (1 ± imbalance) x their capacity share of the weight (multilevel's limits). Throws
// usage_error unless node_of_vertex gives each vertex of g a node of the cluster.
void unload_links(const graph& g, const physical_cluster& cluster, double imbalance,
                  std::vector<std::uint32_t>& node_of_vertex);

// place_classes for mincut, place_parts for multilevel.
placement place(const graph& g, const partition& p, const physical_cluster& cluster,
                strategy method);

}  // namespace dnnc::partitioner
