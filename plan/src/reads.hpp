#pragma once
// Which neuron outputs cross between nodes (private to dnnc_plan): what the configs' peer
// routes carry every tick, derived from the rules without expanding a synapse.
#include "dnnc/model/resolve.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::plan {

// The connections of a network as the lead sees them, without expanding a synapse: pieces
// in which every source may reach every target (`all`, `random`, dense projections) and
// pieces that pair sources with targets in order (`one-to-one`, an explicit synapse).
struct connection_piece {
    model::neuron_range from, to;
    bool paired;
};
std::vector<connection_piece> pieces_of(const model::network& net);

// The nodes that hold some neuron of a range.
std::vector<bool> nodes_holding(model::neuron_range r, const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes);

// reads[b][i]: node b reads the output of neuron i, which lies on another node. For pieces
// whose every source may reach every target, a node that holds a target reads every source
// of the range: the lead does not draw random rows, so this is a superset of what a node's
// rows read (an unread source costs the reader a slot and the sender a value, never a result).
std::vector<std::vector<bool>> remote_reads(const std::vector<connection_piece>& pieces,
                                            const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes);

}  // namespace dnnc::plan
