#pragma once
// What every strategy produces and what placement and metrics consume.
#include "dnnc/partitioner/graph.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dnnc::partitioner {

using part_id = std::uint32_t;

// part_of[v] in [0, parts). For multilevel, part i is meant for physical node i (its target
// weight follows that node's capacity); for mincut, parts are classes placed later.
struct partition {
    std::vector<part_id> part_of;
    std::size_t parts = 0;
};

// The physical cluster as the partitioner sees it: node i has capacity[i] > 0; links are
// undirected pairs of node indices. Names are for messages only. link_capacity is empty when
// no link declares one, else one entry per link: what link l carries per unit of time (bits/s
// from a document's <link bandwidth>), +infinity where link l declares nothing (unknown,
// treated as unlimited: it never sets the largest link load).
struct physical_cluster {
    std::vector<std::string> names;
    std::vector<double> capacity;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> links;
    std::vector<double> link_capacity;
    std::size_t size() const { return capacity.size(); }
};

enum class strategy { multilevel, mincut };

// How much time multilevel partitioning spends on the cut: `fast`, one V-cycle; `strong`,
// the fast partition improved by iterated V-cycles, and further tries from other seeds (see
// multilevel.hpp).
enum class partition_quality { fast, strong };

struct partition_options {
    strategy method = strategy::multilevel;
    double imbalance = 0.03;  // epsilon: a part may hold up to (1 + epsilon) x its target
    std::uint64_t seed = 1;
    partition_quality quality = partition_quality::fast;
};

}  // namespace dnnc::partitioner
