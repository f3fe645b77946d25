#pragma once
// The neuron graph of an expanded network: the reference that the lead's planning graph
// (planning_graph.hpp, built from the compact network) is measured against — they are
// equal for small networks without random projections (tests/plan), and bench/plan compares
// the cuts they lead to. One vertex per unit. A unit is one neuron, except for the targets
// of dense projections:
// - the targets of a dense projection form one heavy unit (its rows computed as one product
//   on one node) when their weight fits within the largest node's share of the network;
//   targets of several such projections share one unit;
// - otherwise, or with split="rows", they form row blocks: runs of consecutive targets, each
//   weighing at most 1/16 of the smallest node's share, so that the blocks can be balanced.
//
// Unit weight (compute cost per tick): the sum over its neurons of 1 + round(in_degree /
// fan_in_share), halves rounded up, where in_degree counts the neuron's incoming synapses
// (parallel ones included) plus, for each dense projection it is a target of, the
// projection's number of sources. With the default share of 8, a neuron with 4 inputs
// weighs 2 and one with 100 inputs weighs 14.
//
// Edge weight (traffic per tick): each ordered pair of neurons (source, target) in
// different units joined by at least one synapse adds 1 between their units, since the
// source's output crosses to the target's node once per tick however many synapses join
// them. A dense projection adds 1 between each source and each unit that holds its rows:
// the source vector crosses once per tick to every node that computes rows. Nothing inside
// a unit counts.
#include "dnnc/model/expand.hpp"
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::plan {

struct network_graph_options {
    partitioner::weight_t fan_in_share = 8;
};

struct network_units {
    partitioner::graph g;
    std::vector<partitioner::vertex_id> unit_of_neuron;
    std::vector<model::neuron_index> first_neuron;  // of each unit
    std::vector<std::uint32_t> size;                   // neurons in each unit

    // The node of every neuron, given the node of every unit.
    std::vector<std::uint32_t> spread(const std::vector<std::uint32_t>& node_of_unit) const;
    // "p[3]" for a one-neuron unit, "p[3] +99" for a unit of 100 neurons starting at p[3].
    std::string name(const model::expanded_network& net, partitioner::vertex_id unit) const;
};

// Throws usage_error when fan_in_share < 1 or the cluster has no node.
network_units units_of(const model::expanded_network& net, const partitioner::physical_cluster& cluster,
                       const network_graph_options& options = {});

}  // namespace dnnc::plan
