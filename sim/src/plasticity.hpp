#pragma once
// A node's plastic synapses at work (private to dnnc_sim): the engine's "synapse dynamics"
// phase. At the start of tick t, before the tick's sums, every plastic synapse s (delay d)
// takes the events of synapse time t - d (rules/synapse_rule.hpp): its target's spike of tick
// t - 2d, then its source's spike of tick t - d, whose delivery at tick t then reads the
// weight the rule left. So a delivered spike carries the weight NEST's synapse would send it
// with, and a weight changes only through events that already happened on this node: the
// same bits on any partition. A source event also writes that weight into the synapse's
// fan-out entry, where the sparse path reads it in the same tick (the synapses a tick
// delivers are those whose source events it just took), in the order of the fan-out.
// A tick's events come in batches of one rule's synapses (a target run's synapses of one
// delay, a source's fan-out entries of one delay), which touch disjoint synapses and only
// read traces: a busy tick takes them on several threads, with the same bits.
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

#include <tbb/enumerable_thread_specific.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace dnnc::sim {

class plasticity {
public:
    // The rules of `store`'s plastic classes; nothing to do when it has none. Throws usage_error
    // when there are plastic synapses but no fan-out index to find them by source.
    // `history`: the network's longest delay.
    plasticity(synapse_store& store, fan_out_index& fan_out, const slot_layout& slots, const std::vector<neuron_spec>& neurons,
               double dt, tick_t remote_delay, tick_t history);
    bool empty() const { return logs_.empty(); }
    std::uint64_t synapse_count() const { return synapses_; }

    // The synapse dynamics of tick t, reading the spikes in `history`.
    void update(tick_t t, const history_ring& history);

    // Plastic synapses' delays changed between tick from - 1 and tick from (engine::set_synapses):
    // the store and the fan-out index hold the new ones now; `before` (kept by the engine
    // until settled()) holds the synapses as they were, `before_fan_out` the index as it was.
    // A spike sent before `from` takes its synapses' events with the delays it was sent
    // with, one sent from then on with the new ones: a source's spike of tick e reaches a
    // synapse at e + its delay then, a target's spike of tick p at p + 2 x its delay then.
    // Each event is taken once, at that tick; of the events a synapse takes at one tick,
    // those of spikes sent before `from` come first. `remote_delay`: the shortest delay
    // from a peer's neuron now (spikes of peers are taken that much later).
    void redelay(const synapse_store& before, fan_out_index before_fan_out, tick_t from, tick_t remote_delay);
    // The first tick at which no event is due with the delays from before the last redelay.
    tick_t settled() const { return before_ ? before_->until : 0; }
    // Spikes of every tick take the store's delays (a restore is under way).
    void forget_old_delays() {
        before_.reset();
        sent_from_ = 0;
    }

    // Rule m (a class of the store) takes the parameters of `model`, its synapses' state as it
    // is: between two ticks. check_model throws usage_error, changing nothing, when they would
    // time the traces differently (protocol::check_update refuses such an update first).
    void check_model(std::size_t m, const model::resolved_synapse_model& model) const;
    void set_model(std::size_t m, const model::resolved_synapse_model& model);

    // The weight a user reads for synapse s of class `cls` (its rule's view of the stored weight).
    float weight(std::uint8_t cls, std::uint64_t s) const;
    // `limit` plastic synapses' weights from the `from`-th on: local neurons in slot order,
    // each one's synapses in canonical order (engine::plastic_weights).
    std::vector<synapse_weight> weights(std::uint64_t from, std::uint64_t limit) const;

    // Snapshots, between tick next - 1 and tick next. Local neuron k's traces (its logs,
    // complete through tick next - 2: update(next) takes tick next - 1) and its plastic
    // synapses' state.
    void capture(std::uint32_t k, std::vector<model::spike_trace>& traces, std::vector<float>& synapses) const;
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
        // The factor a value decays by from a spike `back` ticks (<= 0) before a time.
        double decay(tick_t back, double dt) const;
    };
    // A log's two latest spikes ((tick, value) after each, the latest first), kept beside the
    // log so that a trace is read without reaching it: a tick reads a neuron's trace at a
    // time after both in nearly every case. tick max: not known (the log holds fewer).
    struct trace_head {
        tick_t tick[2];
        double value[2];
        std::uint32_t decay;  // into decays_ (no_table: the log has none)
    };
    static constexpr std::uint32_t no_table = ~std::uint32_t{0};
    static constexpr tick_t decay_ticks = 2048;  // a table's length: decays of 0 .. 2047 ticks
    struct rule_entry {
        std::unique_ptr<synapse_rule> rule;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // (first synapse, index of it among the rule's)
        std::uint32_t source_log_kind = 0;                           // into source_taus_
        bool reads_target_trace = false, has_state = false;          // the rule's answers, asked once
        std::uint64_t synapses = 0;                                  // how many it has
    };
    // A run of a target's plastic synapses that take its spikes (their rule reads K+).
    struct target_run {
        std::uint64_t first, end;  // synapses [first, end)
        std::uint64_t index;       // first's index among its rule's synapses
        std::uint32_t rule;        // into rules_
        std::uint16_t delay;       // its synapses' one delay (0: several)
    };
    // A tick's batches: a target run's synapses of one delay (all of it, or `size` synapses
    // from `first` in the synapses of its tick's due_), or a source's entries in one fan-out
    // segment of one delay (the words [first, last) of its block).
    struct target_batch {
        std::uint32_t run;  // into target_runs_
        std::uint16_t delay;
        std::uint32_t first, size;  // size 0: the whole run
        const double* traces;       // its sources' K+ by slot (a trace_table), or null
    };
    // The target batches due at a tick: a target's spike of tick p reaches its synapses of
    // delay d at tick p + 2d. A run whose synapses have several delays is sorted by delay
    // once, when the spike is taken, into the synapses of the ticks each delay is due.
    struct due_batches {
        std::vector<target_batch> batches;
        std::vector<std::uint32_t> synapses;
    };
    struct source_batch {
        fan_out_index* fan_out;  // where its entries are (the index of its spike's delays)
        std::uint32_t slot, rule;
        std::uint32_t first, last;
        std::uint16_t delay;
        double since_ms;
        const double* traces;  // its targets' K- by local neuron (a trace_table), or null
    };
    // A tick's traces of one kind at one time, for every neuron at once (by slot for source
    // traces, by local neuron for K-): when a tick reads about as many as there are, one pass
    // in order over the heads costs less than reaching a head per event.
    struct trace_table {
        const std::vector<std::int32_t>* logs;  // source_log_[kind] or target_log_
        tick_t at;
        std::vector<double> values;
    };
    // A batch's events, gathered before its rule takes them: room for n.
    struct event_batch {
        std::vector<std::uint32_t> synapses, state;
        std::vector<double> traces;
        void make_room(std::size_t n) {
            if (synapses.size() >= n) return;
            synapses.resize(n);
            state.resize(n);
            traces.resize(n);
        }
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
    // logs_[log].value_before(tick), the same bits, from its head and its decay table.
    double trace_before(std::int32_t log, tick_t tick) const {
        const auto l = static_cast<std::size_t>(log);
        const auto& h = heads_[l];
        const int i = h.tick[0] < tick ? 0 : h.tick[1] < tick ? 1 : -1;
        if (i >= 0 && h.tick[i] < 0) return 0.0;
        if (i < 0 || h.decay == no_table || tick - h.tick[i] >= decay_ticks) return logs_[l].value_before(tick, dt_);
        return h.value[i] * decays_[std::size_t{h.decay} * decay_ticks + static_cast<std::size_t>(tick - h.tick[i])];
    }
    // The tick of logs_[log]'s last spike before `tick` (-1: none).
    tick_t last_tick_before(std::int32_t log, tick_t tick) const;
    // heads_[log] from logs_[log]: after its spikes changed.
    void refresh_head(std::size_t log);
    std::uint32_t log_of(std::vector<std::int32_t>& index, std::uint32_t slot, double tau, bool by_inverse);
    // Puts target k's spike of tick p into due_, for the ticks from `from` on.
    void schedule_target_spike(std::uint32_t k, tick_t p, tick_t from);
    // What is derived from logs_ and spiked_ (heads_, due_), anew for tick `next` (the next
    // update): for whoever writes them other than update() does, as a restore would.
    void rebuild_derived(tick_t next);
    std::uint16_t longest_plastic_delay() const { return plastic_delays_.empty() ? 0 : plastic_delays_.back(); }
    void target_events(tick_t t);
    void source_events(tick_t t);
    // The source batches of the spikes that `delays` (ascending) bring to tick t through
    // `fan_out`, of ticks before `from` when `sent_before`, else from it on.
    void gather_source_batches(tick_t t, fan_out_index& fan_out, const std::vector<std::uint16_t>& delays, tick_t from,
                               bool sent_before, std::uint64_t& synapses);
    // The plastic delays of store_, ascending, and each target run's one delay (0: several).
    void time_runs();
    // The traces of `logs` just before `at` as a table of this tick, when `reads` of them pay
    // for one; null: read each one at its head.
    const double* trace_table_of(const std::vector<std::int32_t>& logs, tick_t at, std::uint64_t reads);
    void take_batch(tick_t t, const target_batch& batch, event_batch& events) const;
    void take_batch(tick_t t, const source_batch& batch, event_batch& events);
    // f(i, events) for every i < n, on several threads when `synapses` (events in all) pays for it.
    template <class F>
    void for_each_batch(std::size_t n, std::uint64_t synapses, F&& f);

    synapse_store& store_;
    fan_out_index& fan_out_;
    const slot_layout& slots_;
    double dt_;
    tick_t remote_delay_;
    std::vector<rule_entry> rules_;  // per class of the store (null rule: static)
    std::vector<std::uint16_t> plastic_delays_;
    tick_t horizon_ = 1;  // 2 * the network's longest delay + 1: how far back events look
    std::uint64_t synapses_ = 0;
    tick_t remote_taken_ = -1;  // peers' spikes are taken through this tick
    // While events of spikes sent before the last redelay are due (redelay).
    struct old_delays {
        const synapse_store* store;
        fan_out_index fan_out;
        std::vector<std::uint16_t> plastic_delays;
        std::vector<std::uint16_t> run_delay;  // per target run
        tick_t from, until;
    };
    std::optional<old_delays> before_;
    // Spikes sent from this tick on take the store's delays (the last redelay's tick): the
    // new delays reach back before it for a while after before_ is gone.
    tick_t sent_from_ = 0;
    // The store whose delays a spike of tick `sent` takes its events with.
    const synapse_store& timing_of(tick_t sent) const { return before_ && sent < before_->from ? *before_->store : store_; }

    std::vector<spike_log> logs_;
    // Derived from logs_ (refresh_head after a log changes, rebuild_derived after a restore):
    // per log its head; per kind of decay (a tau and how it divides) the factors decay(-n)
    // for n < decay_ticks.
    std::vector<trace_head> heads_;
    std::vector<double> decays_;
    std::vector<double> source_taus_;  // the distinct source trace kinds (tau 0: spike times)
    std::vector<std::vector<std::int32_t>> source_log_;  // per kind, per slot: into logs_, -1: none
    std::vector<std::int32_t> target_log_;               // per local neuron: into logs_, -1: none
    std::vector<std::vector<std::uint32_t>> logs_of_slot_;  // every log a slot's spikes go to
    std::vector<std::uint32_t> logged_local_, logged_remote_;  // slots with a log
    // The slots that spiked at tick x, at x mod spiked_.size(): sources and targets alike.
    std::vector<std::vector<std::uint32_t>> spiked_;
    std::vector<bool> is_source_, is_target_;  // per slot
    std::vector<std::uint64_t> target_runs_begin_;  // per local neuron + 1: its runs in target_runs_
    std::vector<target_run> target_runs_;
    // Derived from spiked_: per tick mod spiked_.size(), the target batches due then
    // (schedule_target_spike, as each local target's spike is taken; rebuild_derived after a restore).
    std::vector<due_batches> due_;
    std::vector<std::uint32_t> count_of_delay_;  // while scheduling: per delay
    std::vector<source_batch> source_batches_;
    std::vector<trace_table> tables_;  // this tick's
    std::size_t tables_used_ = 0;
    struct trace_group {  // the batches that read the traces of `logs` at `at`
        const std::vector<std::int32_t>* logs;
        tick_t at;
        std::uint64_t reads;
        const double* table;
    };
    std::vector<trace_group> groups_;
    tbb::enumerable_thread_specific<event_batch> events_;  // each thread's
};

}  // namespace dnnc::sim
