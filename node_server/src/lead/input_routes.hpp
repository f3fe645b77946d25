#pragma once
// External input for a run, routed to the nodes that run its neurons (private to
// dnnc_node_server): a row's target is an input port's id (its neurons) or a neuron's name.
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/control_plane.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <vector>

namespace dnnc::node_server {

// The rows' values by node: [[neuron index, tick, value, lane]...] for each node that runs
// one of their neurons, and how many values they make. usage_error for a row of a tick
// before `first_open` (it has run, or is running), a lane outside -1..batch-1 (-1: every
// lane), or a target that is neither an input id nor a neuron.
struct routed_inputs {
    std::map<std::size_t, nlohmann::json> by_node;
    std::size_t values = 0;
};
routed_inputs route_inputs(const plan::network_plan& plan, const std::vector<protocol::input_row>& rows, std::int64_t first_open,
                           std::int32_t batch);

}  // namespace dnnc::node_server
