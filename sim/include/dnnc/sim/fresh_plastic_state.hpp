#pragma once
// The plastic side of a neuron's state as an install starts it, before any spike, in
// neuron_state's layout (engine.hpp): what the snapshot of a grown network gives its new
// synapses and new members (node_server's population_growth.cpp), so that they start as a
// node would have built them.
#include "dnnc/model/model.hpp"
#include "dnnc/model/synapse_models.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace dnnc::sim {

class synapse_rule;

class fresh_plastic_state {
public:
    // The network's synapse models (model::synapse_rows::synapse_models()).
    explicit fresh_plastic_state(const std::vector<model::resolved_synapse_model>& models);
    ~fresh_plastic_state();
    fresh_plastic_state(const fresh_plastic_state&) = delete;
    fresh_plastic_state& operator=(const fresh_plastic_state&) = delete;

    // Appends the values of a new synapse of plastic model `model` (an index into `models`)
    // with weight `weight`: the weight, then its rule's initial values. Each rule keeps the
    // synapses appended (as an engine does), until this is destroyed.
    void append_synapse(std::uint32_t model, float weight, std::vector<float>& values);
    // Adds to `traces`, unless they hold it, the trace a node logs (with no spike yet) of a
    // source of model `model`'s synapses, or of a target of them with time constant
    // `tau_minus` (none for a rule that takes no target spikes).
    void add_source_trace(std::uint32_t model, std::vector<model::spike_trace>& traces) const;
    void add_target_trace(std::uint32_t model, double tau_minus, std::vector<model::spike_trace>& traces) const;

private:
    std::vector<std::unique_ptr<synapse_rule>> rules_;  // per model; null for a static one
    std::vector<std::size_t> appended_;                 // per model
};

}  // namespace dnnc::sim
