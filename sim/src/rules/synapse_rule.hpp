#pragma once
// A synapse rule (private to dnnc_sim): how the synapses of one plastic synapse model change
// as spikes pass, after NEST's models/<name>.h. One file per rule implements this interface;
// rules/registry.cpp names them. The engine's plasticity (plasticity.hpp) finds each
// synapse's events and hands them over; a rule never sees the summation, the planner or the
// wire.
//
// Events in synapse time, as NEST's synapses see them with the whole delay dendritic: a
// spike of the source at tick τ reaches the synapse at τ; a spike of the target at tick p
// reaches it at p + delay. One synapse's events come in time order, and at one time the
// target's spike before the source's. Times are ticks × dt, in ms.
#include "dnnc/protocol/synapse_models.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace dnnc::sim {

class synapse_rule {
public:
    virtual ~synapse_rule() = default;

    // The time constant (ms) of the source's trace it reads (K+, +1 at each of the source's
    // spikes, decaying between them); 0: none.
    virtual double source_trace_tau() const = 0;
    // Whether it reads the target's trace K- (time constant: the target's tau_minus).
    virtual bool reads_target_trace() const = 0;

    // Its synapses, in the store's order: `weights` are their weights as built. The rule keeps
    // whatever else it holds per synapse (synapse i: the i-th of these).
    virtual void add_synapses(const std::vector<float>& weights) { (void)weights; }
    // How many values it keeps per synapse (snapshots carry them), and synapse i's.
    virtual std::size_t state_size() const { return 0; }
    virtual void save_state(std::size_t i, float* values) const {
        (void)i;
        (void)values;
    }
    virtual void load_state(std::size_t i, const float* values) {
        (void)i;
        (void)values;
    }
    bool has_synapse_state() const { return state_size() != 0; }

    // A target spike reaches synapse i, of weight w; `source_trace`: K+ just before.
    virtual void target_spike(std::size_t i, float& w, double source_trace) const {
        (void)i;
        (void)w;
        (void)source_trace;
    }
    // A source spike reaches synapse i, of weight w. `target_trace`: K- of the target just
    // before (the spike's time less the delay); `since_ms`: the time since the source's
    // previous spike (since 0 for its first); `at_ms`: the spike's time. w becomes the weight
    // this spike is delivered with.
    virtual void source_spike(std::size_t i, float& w, double target_trace, double since_ms) = 0;

    // The weight a user reads for synapse i whose stored weight is w (a rule may store the
    // weight of the next delivery, as tsodyks2_synapse does).
    virtual float weight(std::size_t i, float w) const {
        (void)i;
        return w;
    }
};

// The rule of a plastic synapse model (protocol::synapse_model_info::plastic), with its
// parameters; throws usage_error for a model without one.
std::unique_ptr<synapse_rule> make_synapse_rule(const protocol::resolved_synapse_model& model);

}  // namespace dnnc::sim
