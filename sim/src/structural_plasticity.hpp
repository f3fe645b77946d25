#pragma once
// Structural plasticity (private to dnnc_sim): NEST's homeostatic rule (Butz & van Ooyen
// 2013; NEST's sp_manager) on a node, with synapses that grow and vanish while the network
// runs (docs/simulation.md, "Structural plasticity").
//
// Every node keeps the same picture of every neuron with synaptic elements: its calcium, its
// elements and every grown synapse's two ends. It can, because every such neuron's outputs
// reach every node that has one (the planner adds them to the peers' lists), and because the
// picture changes only through those outputs and draws keyed by (seed, update, pairing). So
// the synapses an update creates or deletes are the same on every node and every partition,
// without a message of their own; a node keeps the rows of the grown synapses into its own
// neurons beside the rule rows of the synapse store.
//
// Timing. The rule's time T is the start of tick T. An update at T takes the spikes of ticks
// before T (a spike of tick s counts at (s + 1) dt, as in NEST). A grown synapse carries the
// spikes emitted at ticks >= its birth, a deleted one those before its death: synapse (b, d)
// adds w y_pre(t - delay) to tick t when b <= t - delay < d. A node learns all outputs of tick
// s before it computes tick s + lag (lag: the shortest delay of a grown synapse, which the
// peers' lockstep honours), so it takes tick s's spikes then and runs the update at T when
// it computes tick T - 1 + lag: before any tick that a synapse born at T feeds.
#include "history.hpp"
#include "neurons.hpp"
#include "slots.hpp"

#include "dnnc/model/structure.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::sim {

class structural_plasticity {
public:
    // `slots` must give every member of every group a slot (local or received); else
    // protocol_error naming `node`.
    structural_plasticity(const model::resolved_structure& structure, const slot_layout& slots, const std::string& node);

    // The ticks between an output and the moment it counts (see above).
    tick_t lag() const { return lag_; }

    // Before tick t is computed: takes the spikes of tick t - lag from `history` and runs the
    // update due at t - lag + 1, if one is; then sums the grown synapses' terms of tick t,
    // spike by spike: per target, by delay, then source, then the target's row order.
    void before(tick_t t, const history_ring& history);
    // After a restore to tick `next`: the spikes of the ticks before it that grown synapses
    // may still deliver, from `history`.
    void restored(tick_t next, const history_ring& history);

    // Adds the grown synapses' terms that before() summed for local neuron k, once.
    void add_terms(std::size_t k, float& excitatory, float& inhibitory) {
        if (!touched_[k]) return;
        excitatory += excitatory_[k];
        inhibitory += inhibitory_[k];
        excitatory_[k] = inhibitory_[k] = 0.0f;
        touched_[k] = false;
    }
    // The local neurons that add_terms has terms for this tick, in the order they got them.
    const std::vector<std::uint32_t>& touched() const { return touched_list_; }

    // What the updates so far did; take_records() hands over those not taken yet.
    std::vector<structure_record> take_records();
    // f(source, target, pairing) for `limit` live grown synapses from the `from`-th on, in the
    // order they were made.
    template <class F>
    void for_each_grown(std::uint64_t from, std::uint64_t limit, F&& f) const {
        for (auto k = from; k < grown_.size() && k - from < limit; ++k)
            f(members_[grown_[k].pre].index, members_[grown_[k].post].index, grown_[k].pairing);
    }
    // The calcium of a neuron with synaptic elements as of the last spike or update.
    double calcium(global_index neuron) const;
    std::uint64_t synapse_count() const { return live_; }
    // Wall seconds spent in structural updates (pairing, deletion, decay of vacant elements).
    double update_seconds() const { return update_seconds_; }

    // Snapshots (engine.hpp, neuron_state::growth): member `neuron`'s growth vector
    //   [ca, ca_tick, next_seq, z_0..z_{E-1}, connected_0..connected_{E-1}, n,
    //    n x (source global index, pairing, seq, born, dies)]
    // E: its group's element kinds in group order; the n entries: the grown synapses into it
    // as its rows hold them (live and dying, in row order), dies -1 for never. Called where
    // the member is local (its rows are there); usage_error for a neuron that is not a local
    // member.
    std::vector<double> capture(global_index neuron) const;
    // Whether `neuron` has synaptic elements; its position among the members, or -1.
    std::int64_t member_position(global_index neuron) const;
    std::size_t member_count() const { return members_.size(); }
    // What restore() installs, checked: build it with prepare(), before anything changes.
    struct restore_state;
    // Every member's growth vector (by member position, none missing), checked against each
    // other: the layout, sane values, sources that are members, connected counts that the
    // live grown synapses imply, one next_seq. Throws usage_error naming the neuron; nothing
    // changes.
    restore_state prepare(const std::vector<const std::vector<double>*>& growth, tick_t next) const;
    // Installs it: calcium, elements, grown synapses, the rows of the local targets; no records.
    void restore(restore_state&& state);

private:
    struct member {
        global_index index;
        std::uint32_t slot;
        std::uint32_t group;
        double ca = 0;
        tick_t ca_tick = 0;          // when ca was last brought up to date
        std::uint32_t elements = 0;  // its elements in z_, connected_: [elements, elements + the group's kinds)
    };
    // The elements of one group with the same growth curve shape share its integral.
    struct curve_family {
        double xi, zeta;
        std::vector<std::uint32_t> positions;  // into the group's kinds
    };
    struct grown {
        std::uint32_t pre, post;  // members
        std::uint32_t pairing;
        std::uint64_t seq;  // creation order
    };
    struct row_synapse {
        std::uint32_t slot;
        float weight;
        std::uint16_t delay;
        tick_t born, dies;
        std::uint64_t seq;
        std::uint32_t pairing;
    };

    // A grown synapse into a local neuron, as the spikes of its source reach it.
    struct out_synapse {
        std::uint32_t target;  // local neuron
        float weight;
        std::uint16_t delay;
        tick_t born, dies;
    };

    void bring_up_to_date(member& m, tick_t t);
    void take_spikes(tick_t s, const history_ring& history);
    void deliver(tick_t t, const history_ring& history);
    void index_rows();
    void update(tick_t t);
    // floor(z) - connected of member m's element kind `kind` (0 when it has none).
    std::int64_t vacant(std::uint32_t m, std::uint32_t kind) const;
    std::int32_t* connected(std::uint32_t m, std::uint32_t kind);
    void remove(std::size_t position, tick_t t, std::vector<structure_record>& records);
    void create(std::uint32_t pre, std::uint32_t post, std::uint32_t pairing, tick_t t, std::vector<structure_record>& records);

    model::resolved_structure structure_;
    std::vector<std::vector<curve_family>> families_;  // per group
    std::vector<std::vector<std::int32_t>> position_of_kind_;  // per group, per kind: its position or -1
    std::vector<member> members_;  // ascending by index
    std::vector<double> z_;
    std::vector<std::int32_t> connected_;
    std::size_t local_ = 0;
    tick_t lag_ = 1;
    std::vector<grown> grown_;  // live, in creation order
    std::uint64_t next_seq_ = 0, live_ = 0;
    std::vector<std::vector<row_synapse>> rows_;  // per local neuron
    // Derived from rows_ (index_rows, when rows_changed_): per member, its grown synapses into
    // local neurons, by target, each target's in row order.
    std::vector<std::vector<out_synapse>> out_;
    std::vector<std::int32_t> member_of_slot_;  // -1: no member
    bool rows_changed_ = true;
    std::vector<std::uint16_t> delays_;  // of the pairings, ascending, each once
    // The members that spiked at tick spiked_tick_[s % size], by member; kept for the longest delay.
    std::vector<std::vector<std::uint32_t>> spiked_;
    std::vector<tick_t> spiked_tick_;
    // This tick's sums per local neuron, and which have some.
    std::vector<float> excitatory_, inhibitory_;
    std::vector<bool> touched_;
    std::vector<std::uint32_t> touched_list_;
    std::vector<structure_record> records_;
    double update_seconds_ = 0;

public:
    struct restore_state {
        std::vector<double> ca;
        std::vector<tick_t> ca_tick;
        std::vector<double> z;
        std::vector<std::int32_t> connected;
        std::vector<grown> grown_synapses;
        std::uint64_t next_seq = 0;
        std::vector<std::vector<row_synapse>> rows;
    };
};

}  // namespace dnnc::sim
