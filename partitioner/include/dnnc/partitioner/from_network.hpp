#pragma once
// The neural graph of a DNNC network, as the partitioner sees it. Vertex v is neuron v in
// the expanded network's numbering.
//
// Vertex weight (compute cost per tick): 1 + round(in_degree / fan_in_share), halves rounded
// up, where in_degree counts the neuron's incoming synapses (parallel ones included) plus,
// for each dense block it is a target of, the block's number of sources. With the default
// share of 8, a neuron with 4 inputs weighs 2 and one with 100 inputs weighs 14.
//
// Edge weight (traffic per tick): each ordered pair (source, target) joined by at least one
// synapse adds 1, since the source's output crosses to the target's node once per tick
// however many synapses (e.g. with different delays) join them; a pair joined both ways
// weighs 2. Self-synapses add nothing. A dense block adds 1 for each (source, target) pair
// of distinct neurons when it has at most dense_edge_limit such pairs; a larger block adds
// no edges (its targets still carry the fan-in weight), so the partitioner does not see its
// traffic.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/protocol/expand.hpp"

#include <cstdint>

namespace dnnc::partitioner {

struct network_graph_options {
    weight_t fan_in_share = 8;
    std::uint64_t dense_edge_limit = 1'000'000;
};

// Throws usage_error when fan_in_share < 1.
graph from_network(const protocol::expanded_network& net, const network_graph_options& options = {});

}  // namespace dnnc::partitioner
