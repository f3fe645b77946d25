#include "lead/input_routes.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>

namespace dnnc::node_server {

routed_inputs route_inputs(const plan::network_plan& plan, const std::vector<protocol::input_row>& rows, std::int64_t first_open,
                           std::int32_t batch) {
    const auto& net = plan.net;
    routed_inputs routed;
    for (const auto& row : rows) {
        const auto tick = row.tick, lane = row.lane;
        const auto& target = row.target;
        if (tick < first_open)
            throw usage_error("input for tick " + std::to_string(tick) + " (" + target + "): that tick has already run");
        if (lane < -1 || lane >= batch)
            throw usage_error("input for tick " + std::to_string(tick) + " (" + target + "): lane " + std::to_string(lane) +
                              " is out of range; the run has batch " + std::to_string(batch));
        std::vector<model::neuron_index> neurons;
        const auto port = std::find_if(net.inputs.begin(), net.inputs.end(), [&](const auto& p) { return p.id == target; });
        if (port != net.inputs.end()) {
            neurons = port->neurons;
        } else if (auto i = net.find(target)) {
            neurons.push_back(*i);
        } else {
            throw usage_error("input target '" + target + "' is neither an input id nor a neuron");
        }
        for (auto i : neurons) {
            routed.by_node[plan.node_of_neuron[i]].push_back(nlohmann::json::array({i, tick, row.value, lane}));
            ++routed.values;
        }
    }
    return routed;
}

}  // namespace dnnc::node_server
