#include "row_sources.hpp"

#include "slots.hpp"
#include "synapse_store.hpp"

#include <limits>

namespace dnnc::sim {

void build_from_share(synapse_store& store, const model::network& share, const std::vector<neuron_spec>& neurons,
                      const slot_layout& slots, const std::string& node, bool half_weights) {
    for (const auto& n : neurons)
        if (n.index < 0 || n.index > std::numeric_limits<model::neuron_index>::max())
            throw protocol_error("neuron " + std::to_string(n.index) + " lies outside any network");
    std::vector<model::neuron_index> targets;
    targets.reserve(neurons.size());
    for (const auto& n : neurons) targets.push_back(static_cast<model::neuron_index>(n.index));
    // Only this node's rows are drawn (fixed-outdegree rows come from every source's draws).
    const model::synapse_rows rows(share, std::move(targets));
    for (std::size_t e = 0; e < rows.element_count(); ++e)
        if (rows.is_dense(e))
            throw protocol_error(format_located(rows.where(e), "a node's share of a network carries no dense projections"));
    for (const auto& n : neurons)
        if (n.index < 0 || static_cast<std::uint64_t>(n.index) >= rows.neuron_count())
            throw protocol_error("neuron " + std::to_string(n.index) + " lies outside the share's " +
                                 std::to_string(rows.neuron_count()) + " neurons");
    store.build(share_rows(rows, neurons), neurons, slots, node, half_weights);
}

}  // namespace dnnc::sim
