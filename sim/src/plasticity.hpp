#pragma once
// A node's plastic synapses at work (private to dnnc_sim): the engine's "synapse dynamics"
// phase. At the start of tick t, before the tick's sums, every plastic synapse s (delay d)
// takes the events of synapse time t - d (rules/synapse_rule.hpp): its target's spike of tick
// t - 2d, then its source's spike of tick t - d, whose delivery at tick t then reads the
// weight the rule left. So a delivered spike carries the weight NEST's synapse would send it
// with, and a weight changes only through events that already happened on this node: the
// same bits on any partition.
//
// Spikes are read from the history: local neurons' of tick t - 1, remote ones' of tick
// t - remote_delay, which are complete then. Each neuron a rule reads keeps a short log of
// its recent spikes (the last 2 * the network's longest delay + 1 ticks, and the last one
// before) with its traces' values after each: K+ = K+ e^(-Δ/tau) + 1 at a source spike
// (NEST's synapses' Kplus_), K- at a target spike with the target's tau_minus (NEST's
// archiving node). A trace read "just before" time T is the last logged value before T,
// decayed to T.
//
// Snapshots take a neuron's logs from its own node, the only one whose logs of it are
// complete: so a node logs every local neuron that is a source of a plastic projection or
// synapse anywhere in the network, with that rule's source trace (whoever reads it, now or
// after a restore onto other nodes). Which logs a neuron has depends on the network alone.
#include "fan_out.hpp"
#include "history.hpp"
#include "rules/synapse_rule.hpp"
#include "slots.hpp"
#include "synapse_store.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace dnnc::sim {

class plasticity {
public:
    // The rules of `store`'s plastic classes; nothing to do when it has none. Throws usage_error
    // when there are plastic synapses but no fan-out index to find them by source.
    // `history`: the network's longest delay.
    plasticity(synapse_store& store, const fan_out_index& fan_out, const slot_layout& slots, const std::vector<neuron_spec>& neurons,
               double dt, tick_t remote_delay, tick_t history);
    bool empty() const { return logs_.empty(); }
    std::uint64_t synapse_count() const { return synapses_; }

    // The synapse dynamics of tick t, reading the spikes in `history`.
    void update(tick_t t, const history_ring& history);

    // The weight a user reads for synapse s of class `cls` (its rule's view of the stored weight).
    float weight(std::uint8_t cls, std::uint64_t s) const;

    // Snapshots, between tick next - 1 and tick next. Local neuron k's traces (its logs,
    // complete through tick next - 2: update(next) takes tick next - 1) and its plastic
    // synapses' state.
    void capture(std::uint32_t k, std::vector<protocol::spike_trace>& traces, std::vector<float>& synapses) const;
    // Slot `slot`'s logs from `state` (taken on its own node), less the spikes update() has
    // yet to take here; a local neuron's synapses too. Then restored(next) lists the recent
    // spikes as update() would have. Throw usage_error when the state does not fit.
    void restore(std::uint32_t slot, const neuron_state& state, tick_t next);
    void restored(tick_t next);

private:
    // A neuron's recent spikes, and a trace's value after each (tau 0: times only).
    struct spike_log {
        double tau = 0;
        bool by_inverse = false;  // K- decays as NEST's archiving node computes it: exp(Δ * (1 / tau))
        std::deque<std::pair<tick_t, double>> spikes;
        std::pair<tick_t, double> before{-1, 0.0};  // the last spike dropped from `spikes`
        // A spike at `tick`; spikes more than `horizon` ticks older leave the log.
        void add(tick_t tick, double dt, tick_t horizon);
        // The last spike before `tick` and the trace's value after it ({-1, 0}: none).
        std::pair<tick_t, double> last_before(tick_t tick) const;
        double value_before(tick_t tick, double dt) const;
    };
    struct rule_entry {
        std::unique_ptr<synapse_rule> rule;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // (first synapse, index of it among the rule's)
        std::uint32_t source_log_kind = 0;                           // into source_taus_
    };
    std::size_t index_in_rule(const rule_entry& r, std::uint64_t s) const;
    // f(s, rule) for each plastic synapse s of local neuron k, in row order.
    template <class F>
    void each_plastic_synapse(std::size_t k, F&& f) const {
        auto s = store_.row_begin(k);
        for (auto r = store_.run_begin(k); r < store_.run_begin(k + 1); ++r) {
            const auto end = store_.row_begin(k) + store_.run(r).end;
            const auto& c = store_.classes()[store_.run(r).cls];
            if (c.varies & synapse_store::weight_changes)
                for (; s < end; ++s) f(s, rules_[c.model]);
            s = end;
        }
    }
    // logs_[log].value_before(tick), remembered: a tick's events ask for one neuron's trace at
    // one time again and again, and these two compact arrays answer without reaching the log.
    double trace_before(std::int32_t log, tick_t tick);
    std::uint32_t log_of(std::vector<std::int32_t>& index, std::uint32_t slot, double tau, bool by_inverse);
    void target_events(tick_t t);
    void source_events(tick_t t);

    synapse_store& store_;
    const fan_out_index& fan_out_;
    const slot_layout& slots_;
    double dt_;
    tick_t remote_delay_;
    std::vector<rule_entry> rules_;  // per class of the store (null rule: static)
    std::vector<std::uint16_t> plastic_delays_;
    std::vector<bool> is_plastic_delay_;
    tick_t horizon_ = 1;
    std::uint64_t synapses_ = 0;  // 2 * the longest plastic delay + 1: how far back events look

    std::vector<spike_log> logs_;
    std::vector<tick_t> asked_;    // per log: the tick trace_before last answered for (-1: none)
    std::vector<double> answer_;   // per log: its answer
    std::vector<double> source_taus_;  // the distinct source trace kinds (tau 0: spike times)
    std::vector<std::vector<std::int32_t>> source_log_;  // per kind, per slot: into logs_, -1: none
    std::vector<std::int32_t> target_log_;               // per local neuron: into logs_, -1: none
    std::vector<std::vector<std::uint32_t>> logs_of_slot_;  // every log a slot's spikes go to
    std::vector<std::uint32_t> logged_local_, logged_remote_;  // slots with a log
    // The slots that spiked at tick x, at x mod spiked_.size(): sources and targets alike.
    std::vector<std::vector<std::uint32_t>> spiked_;
    std::vector<bool> is_source_, is_target_;  // per slot
};

}  // namespace dnnc::sim
