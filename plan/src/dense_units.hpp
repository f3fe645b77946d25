#pragma once
// How the targets of dense projections become units (private to dnnc_plan), shared by the
// planning graph (its items are segments) and the reference neuron graph (neurons).
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstddef>
#include <vector>

namespace dnnc::plan::detail {

// The target items of one dense projection, in row order.
struct dense_targets {
    std::vector<std::size_t> items;
    bool split_rows = false;
};

struct item_units {
    std::vector<partitioner::vertex_id> unit_of_item;
    std::vector<std::size_t> first_item;  // of each unit; units are numbered in item order
};

// Every item is a unit of its own, except dense targets: those of an unsplit dense
// projection (joined with every projection sharing targets with it) form one unit when they
// weigh at most the largest node's share of the total; otherwise, or with split rows, they
// form row blocks of consecutive targets weighing at most 1/16 of the smallest node's share.
item_units group_units(const std::vector<partitioner::weight_t>& weight, const std::vector<dense_targets>& dense,
                       const partitioner::physical_cluster& cluster);

}  // namespace dnnc::plan::detail
