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
// target's spike before the source's. Times are ticks × dt, in ms. A rule keeps nothing but
// per-synapse state, so events of different synapses may come in any order, and batches
// of different synapses at once (from several threads).
#include "dnnc/model/synapse_models.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dnnc::sim {

// One kind of event (target spikes or source spikes) reaching a batch of one rule's
// synapses: event j reaches synapse synapses[j], whose weight is weights[synapses[j]].
struct synapse_events {
    float* weights;                 // the store's weights, by synapse index
    const std::uint32_t* synapses;  // the store's indices of the synapses
    const std::uint32_t* state;     // their indices among the rule's synapses (rules with state; else null)
    const double* traces;           // per event, the other neuron's trace just before (null: the rule reads none)
    std::size_t size;
    double since_ms;  // source spikes (of one source): the time since its previous spike (since 0 for its first)
};

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

    // Target spikes reach the synapses of `e`; traces: K+ of each one's source just before.
    virtual void target_spikes(const synapse_events& e) const = 0;
    // Source spikes reach the synapses of `e`: traces: K- of each one's target just before
    // (the spike's time less the delay). Each weight becomes the one this spike is delivered
    // with.
    virtual void source_spikes(const synapse_events& e) = 0;

    // The weight a user reads for synapse i whose stored weight is w (a rule may store the
    // weight of the next delivery, as tsodyks2_synapse does).
    virtual float weight(std::size_t i, float w) const {
        (void)i;
        return w;
    }
};

// The batches of a rule from its events one synapse at a time, in loops the compiler sees
// whole. Rule says what it reads and keeps:
//   static constexpr bool uses_source_trace, uses_target_trace, keeps_state;
// and takes the events (i: the synapse's index among the rule's; 0 without state):
//   void target_spike(std::size_t i, float& w, double source_trace) const;  (uses_source_trace)
//   void source_spike(std::size_t i, float& w, double target_trace, double since_ms);
template <class Rule>
class synapse_rule_of : public synapse_rule {
public:
    bool reads_target_trace() const final { return Rule::uses_target_trace; }
    void target_spikes(const synapse_events& e) const final {
        if constexpr (Rule::uses_source_trace) {
            const auto& rule = static_cast<const Rule&>(*this);
            for (std::size_t j = 0; j < e.size; ++j) rule.target_spike(index(e, j), e.weights[e.synapses[j]], e.traces[j]);
        } else {
            (void)e;
        }
    }
    void source_spikes(const synapse_events& e) final {
        auto& rule = static_cast<Rule&>(*this);
        // A source's synapses lie at random places in the store: ask for weights ahead.
        constexpr std::size_t ahead = 32;
        for (std::size_t j = 0; j < e.size && j < ahead; ++j) __builtin_prefetch(e.weights + e.synapses[j], 1);
        for (std::size_t j = 0; j < e.size; ++j) {
            if (j + ahead < e.size) __builtin_prefetch(e.weights + e.synapses[j + ahead], 1);
            rule.source_spike(index(e, j), e.weights[e.synapses[j]], Rule::uses_target_trace ? e.traces[j] : 0.0, e.since_ms);
        }
    }

private:
    static std::size_t index(const synapse_events& e, std::size_t j) {
        if constexpr (Rule::keeps_state) return e.state[j];
        (void)e;
        (void)j;
        return 0;
    }
};

// Whether a node logs the spikes of the rule's synapses' targets (they take target spikes):
// when it reads their trace or its sources' (a rule that reads neither takes none).
inline bool logs_targets(const synapse_rule& rule) { return rule.reads_target_trace() || rule.source_trace_tau() > 0; }

// The rule of a plastic synapse model (model::synapse_model_info::plastic), with its
// parameters; throws usage_error for a model without one.
std::unique_ptr<synapse_rule> make_synapse_rule(const model::resolved_synapse_model& model);

}  // namespace dnnc::sim
