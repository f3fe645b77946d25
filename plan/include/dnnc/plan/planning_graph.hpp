#pragma once
// The neural graph the partitioner places, built from the compact network: its size follows
// the document, never the synapse count.
//
// Segments. The neurons 0..N-1 are cut into segments, runs of consecutive neurons: every
// explicit neuron is one; every population is cut every `chunk` members (the same chunk for
// the whole network, the smallest power of two that keeps the graph within its budget);
// every projection's ranges begin and end at segment boundaries, so each rule's synapse
// count between two segments is exact arithmetic; and the boundaries inside a one-to-one
// projection's target range are mirrored into its source range and back, so that a
// one-to-one chain pairs whole segments and is never cut inside one.
//
// Units (the graph's vertices) are segments, except for the targets of dense projections,
// grouped as before: one heavy unit for the targets of a dense projection that fit within the
// largest node's share (targets of several such projections share one unit), otherwise row
// blocks of consecutive target segments weighing at most 1/16 of the smallest node's share.
//
// Weights. A unit weighs its neurons plus its incoming synapses / fan_in_share (rounded):
// the compute cost of a tick. Between two units, the edge weight is the number of synapses
// the rules give between their segments — exact for `all`, `one-to-one` and explicit
// synapses (parallel explicit synapses count once), the expected count for `random` —
// and, for a dense projection, each source adds 1 toward each unit that holds its rows.
// Small random projections are the exception: smallest first, while their synapses fit in
// max_drawn, their rows are drawn exactly as the nodes will draw them and enter one synapse
// at a time, since on a sparse projection the sample, not its expectation, decides the best
// cut. The lead's memory still does not grow with the network: it draws at most max_drawn.
// With one neuron per segment and every random projection drawn, this is the neuron graph.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::plan {

struct planning_options {
    partitioner::weight_t fan_in_share = 8;
    // The budget the chunk size is chosen for. Explicit neurons and explicit synapses are
    // always their own vertices and edges, whatever the budget.
    std::size_t max_vertices = 250'000;
    std::size_t max_edges = 500'000;
    // Synapses of small random projections drawn one by one (see below), at most.
    std::size_t max_drawn = 500'000;
};

struct planning_graph {
    partitioner::graph g;
    std::uint64_t chunk = 1;  // population members per segment, at most
    // Segment k holds neurons [segment_first[k], segment_first[k + 1]); the last entry is N.
    std::vector<model::neuron_index> segment_first;
    std::vector<partitioner::vertex_id> unit_of_segment;
    std::vector<model::neuron_index> unit_first;  // the first neuron of each unit
    std::vector<std::uint64_t> unit_size;            // neurons in each unit

    std::size_t neuron_count() const { return segment_first.empty() ? 0 : segment_first.back(); }
    std::size_t segment_count() const { return unit_of_segment.size(); }
    std::size_t segment_of(model::neuron_index neuron) const;
    // The node of every neuron, given the node of every unit.
    std::vector<std::uint32_t> spread(const std::vector<std::uint32_t>& node_of_unit) const;
    // "p[3]" for a one-neuron unit, "p[3] +99" for a unit of 100 neurons starting at p[3].
    std::string name(const model::expanded_network& neurons, partitioner::vertex_id unit) const;
};

// The cluster of a DNNC document as the partitioner sees it, nodes in document order; link
// capacities are the links' bandwidths in bits/s (none when no link declares one).
// Throws config_error (located) for a link naming an unknown node, then checks the result
// (partitioner::check_physical_cluster).
partitioner::physical_cluster physical_of(const model::cluster& cluster);

// The network must be checked (model::check_network). Throws usage_error when
// fan_in_share < 1 or the cluster has no node.
planning_graph planning_graph_of(const model::network& net, const partitioner::physical_cluster& cluster,
                                 const planning_options& options = {});

// Units placed on nodes: the multilevel strategy (or the one in `options`) and placement,
// or, with more nodes than units, units round-robin over the nodes (the others idle). With
// a current assignment of the units, re-planned from it (partitioner::assign); with more
// nodes than units, a unit then stays where it is, and only one on no node goes round-robin.
struct placed_units {
    std::vector<std::uint32_t> node_of_unit;
    partitioner::quality quality;
};
placed_units place(const planning_graph& graph, const partitioner::physical_cluster& cluster,
                   const partitioner::partition_options& options = {}, const partitioner::metrics_options& metrics = {},
                   const partitioner::current_assignment* current = nullptr);

}  // namespace dnnc::plan
