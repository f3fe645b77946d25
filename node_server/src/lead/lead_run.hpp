#pragma once
// The lead's side of a run (private to dnnc_node_server): the clock that grants ticks to
// every node, freeze/step/resume, external inputs routed to the nodes that own their
// neurons, the output rows assembled from every node's per-tick report, and the recorded
// spikes, held until a client reads them.
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/status.hpp"
#include "dnnc/plan/topology.hpp"
#include "lead/checkpoint_folder.hpp"
#include "lead/grant_senders.hpp"
#include "lead/held_spikes.hpp"
#include "lead/load_watch.hpp"
#include "lead/output_rows.hpp"
#include "lead/row_assembly.hpp"
#include "lead/run_links.hpp"
#include "lead/snapshot_pieces.hpp"
#include "lead/state_samples.hpp"
#include "lead/structure_log.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace dnnc::node_server {

class lead_run {
public:
    using links = run_links;
    using checkpoint_settings = checkpoint_folder::settings;
    using storage = run_storage;

    // `first_tick`: the tick the nodes compute next (0, or a restored snapshot's tick, in
    // which case the run starts frozen there).
    // `config_hashes[v]`: the config node v acknowledged; its reports must carry it.
    lead_run(const plan::network_plan& plan, const plan::topology& topo, links l, std::vector<std::string> config_hashes,
             std::int64_t first_tick, const storage& where);
    ~lead_run();

    // A tick's outputs travel in one report and one output row, bounded like a frame:
    // throws usage_error when outputs x lanes exceed max_values_per_tick.
    static constexpr std::size_t max_values_per_tick = 1000000;
    static void check_outputs(const plan::network_plan& plan);

    void on_report(const protocol::tick_report& report);
    // With <run rebalance="auto">: each node's compute time per tick (ms) once the watch
    // (load_watch.hpp) finds the nodes out of balance, taken once; none otherwise.
    std::optional<tick_times> take_rebalance_due();
    // start, resume, step, freeze, progress, input, checkpoint or structure (structure_log::read,
    // or with `recent`: its newest rows); progress says "granted", the last tick the clock has
    // granted, unless it grants without a bound (free-running). A checkpoint `now` writes one
    // of the frozen network at once (into folder `dir` from now on, when given).
    nlohmann::json control(const protocol::control_request& request);
    // Where the run is: control's reply to progress, start, resume and step.
    protocol::run_progress progress();
    // Whether the run is idle or frozen (snapshots and updates need it).
    bool paused() const;
    // The run fails with `why` (as when a node dies): its clock stops.
    void fail(const std::string& why);
    // What the clock is doing: {"state": "running" | "stepping" | "frozen" | ..., "target": the
    // last tick a step computes (frozen: the last tick computed)}.
    nlohmann::json intent() const;
    // Tells the standby that the run goes on as `intent` says, not as it is now: a run
    // restored after a change or a takeover is frozen until the lead resumes it, and a lead
    // lost before that is replaced by a standby that resumes it all the same. Until a clock
    // command (start, resume, step, freeze) comes, intent() says so too.
    void carry_on_as(const nlohmann::json& intent);
    // Freezes the run for a change of the lead's own (a re-balance, a growth) without telling
    // the standby: a standby that replaces a lead lost in the change carries on as the run
    // was asked to, not frozen.
    void freeze_for_change();
    // A binary snapshot of the frozen network (usage_error when it is not frozen); never
    // at the same time as a checkpoint.
    std::string snapshot();
    // A piece of a binary snapshot of the frozen network, for a client that writes it to a
    // file of any size (snapshot_pieces): `from` 0 writes the snapshot (usage_error unless
    // frozen); later pieces read on from it while the network stays at that tick.
    using snapshot_piece = node_server::snapshot_piece;
    snapshot_piece snapshot_piece_at(std::uint64_t from, std::size_t count, std::string buffer = {});
    std::int64_t next_tick() const;
    // Runs `apply` (an update of the frozen network's parameters) with no snapshot or
    // checkpoint under way, usage_error unless frozen; then, with checkpoints on, writes one
    // at once, so that a standby's latest checkpoint holds the update. An update that changes
    // delays starts a transition of `transition_ticks` (engine::set_synapses) in which the
    // nodes take no snapshot: snapshots are refused (usage_error) and checkpoints skipped
    // until it has passed; so is a change of delays at a later tick (more before the next
    // tick act as one).
    void update_parameters(const std::function<void()>& apply, std::int64_t transition_ticks = 0);

    // Periodic checkpoints, however the clock is driven (start/resume or step): the clock
    // stops at every multiple of `every` ticks, the network is snapshotted into `dir`
    // (checkpoint-TICK.dnncs, written atomically), and only the newest `keep` are kept.
    // `dir` is a relative folder name under the storage's checkpoint_root (usage_error for
    // an absolute path or one that climbs out with ".."); empty keeps the current one.
    void set_checkpoints(checkpoint_settings settings);
    checkpoint_settings checkpoints() const;
    // The settings as a "checkpoint" command takes them: {"every", "keep", "dir" (relative)}.
    nlohmann::json checkpoint_settings_json() const;
    // Values per output row: outputs x lanes.
    std::size_t output_width() const { return rows_.width(); }
    // The newest checkpoint written, if any.
    std::string last_checkpoint() const;
    // A binary snapshot of this network at `tick`, its first, becomes its first checkpoint (a
    // run restarted from it after a change or a recovery can then be recovered at once):
    // moved into the checkpoint folder unless it is there, and kept like the ones it writes.
    // Only with checkpoints on; otherwise it stays where it is.
    void adopt_checkpoint(const std::string& file, std::int64_t tick);
    // The output rows still held of the ticks before `tick`, for a run that continues
    // from a checkpoint.
    output_rows rows_before(std::int64_t tick) const;
    // Adopts the rows of the ticks before this run's first tick (and replicates them).
    // `columns`: theirs (column_names), when they may differ from this run's (a population
    // grew by `dnnc grow` under an output that names it all, or a recovery went back before
    // that): each column of this run takes the values of theirs of the same neuron, 0 where
    // they had none (the members had not been born), and columns they alone had go.
    void adopt_rows(const output_rows& earlier, const std::vector<std::string>& columns = {});
    // The output columns' names, as output replies give them.
    std::vector<std::string> column_names() const;
    // The recorded spikes still held (no client has read them) of the ticks before `tick`.
    std::deque<tick_spikes> spikes_before(std::int64_t tick) const;
    // Adopts those of the ticks before this run's first tick (and replicates them).
    void adopt_spikes(const std::deque<tick_spikes>& earlier);
    // The structure log's rows of updates before `tick`, and taking them over (as rows).
    structure_log structure_before(std::int64_t tick) const;
    void adopt_structure(const structure_log& earlier);
    // {"from": T} -> {"columns", "batch", "rows": [[tick, values...]...], "completed", "state",
    // "start": the run's first tick, "first": the oldest tick still held}. Rows start at
    // max(T, first); the rows of ticks [max(T, start), first) were dropped unread. A row
    // holds the columns of lane 0, then those of lane 1, ...
    nlohmann::json output(const nlohmann::json& request);

    // Recorded spikes (<record>), read and drained by a client:
    //   {"from": T(, "groups": true)(, "acknowledge": true)} -> {"recording": bool, "spikes": [[tick, [neuron...]], ...],
    //   "through": L, "completed": C, "lost": N, "state": S, "dt": ms per tick(, "groups": [{"id",
    //   "first", "size", "recorded"}...]), "samples": [[tick, [value...]]...], "samples_lost": N
    //   (, "samplings": state_samples::layout())}.
    // The lead first forgets the spikes of ticks before T (the client has them), then answers
    // those of ticks T..L in tick order, each tick's neurons ascending (global indices; ticks
    // without spikes left out); the next request asks from L + 1. A reply holds at most about
    // held_spikes::max_per_reply spikes; none with "acknowledge" (a client that stops reading says
    // what it has, so that the lead forgets it). The lead holds at most held_spikes::max_held spikes not yet read:
    // beyond that it drops the oldest ticks' spikes and counts them in "lost" (since the run
    // began). "groups" lists the groups with recorded neurons (held_spikes::groups). The samples
    // of <record variables> (state_samples) travel the same way, in the same ticks T..L.
    nlohmann::json spikes(const nlohmann::json& request);
    // The recent spikes of the raster's sample, for a watcher (the live page), apart from
    // those held for clients (reading these drains nothing). The sample is every k-th recorded neuron
    // of each recorded group, at most held_spikes::raster_per_group of them. The lead always keeps their
    // spikes of the newest max_peek_ticks ticks, at most max_peek_spikes, so a page opened at
    // any time has the recent raster at once. Answers those of ticks >= "from", with the groups.
    //   {"from": T} -> {"recording", "spikes": [[tick, [neuron...]]...], "completed", "dt", "groups"}
    nlohmann::json peek_spikes(const nlohmann::json& request);

private:
    enum class state { idle, running, stepping, frozen, failed };
    static const char* name(state s);

    std::vector<protocol::clock_reply> clock_all(const protocol::clock_request& request);
    // Lockstep: to every node in turn, each answering before the next. Window: posted to
    // every node's sender (grants_), so a node that does not answer holds up none.
    void grant_all(std::int64_t last);
    // One clock request to node v, in order with the grants posted to it.
    protocol::clock_reply clock_one(std::size_t v, const protocol::clock_request& request);
    std::int64_t completed() const { return rows_.end() - 1; }
    void start_running();
    void stop_ticker();
    nlohmann::json freeze();
    nlohmann::json input(const std::vector<protocol::input_row>& rows);
    // Lockstep cannot go on without every node, nor when a node waits for signals a peer
    // sent long ago (a broken link): the run fails naming them.
    void check_nodes();
    void complete_rows();

    const plan::network_plan& plan_;
    const plan::topology& topo_;
    links links_;
    model::run_settings run_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    state state_ = state::idle;
    std::string error_;
    std::int64_t target_ = -1;
    nlohmann::json carried_intent_;  // carry_on_as's, until a clock command; null: none
    std::int64_t granted_ = -1;  // the last tick the clock granted (may be "forever")
    std::chrono::steady_clock::time_point started_;
    std::int64_t ticks_at_start_ = 0;
    double step_seconds_ = -1;  // how long the last `step` took, once it is complete

    std::vector<std::string> config_hashes_;
    row_assembly assembly_;  // rows from the nodes' reports, complete ones into rows_
    output_rows rows_;
    std::vector<protocol::node_progress> nodes_;  // from the nodes' tick reports (their load: load_)
    load_watch load_;  // the nodes' compute time per tick (status; rebalance="auto")
    std::optional<tick_times> rebalance_due_;

    structure_log structure_;  // with structural plasticity
    held_spikes spikes_;       // recorded spikes held for clients, and the raster's recent ones

    void drive_to(std::int64_t last);  // the clock's thread: tick period and checkpoints
    void drive(std::int64_t last);      // grants up to `last`, on a thread when it must pace or pause
    // Writes a checkpoint of `tick`, unless new delays are in transition then.
    void write_checkpoint(std::int64_t tick);
    // usage_error while new delays are in transition at next_tick(); under capture_mutex_.
    void check_capturable() const;
    // The standby gets the rows of the ticks before `tick` it does not have yet, then what
    // the clock is doing now.
    void replicate_rows(std::int64_t before);
    void replicate_spikes(std::int64_t before);
    // Whether a scheduled grow falls on a tick up to `last` (population_growth.hpp).
    bool grow_ahead(std::int64_t last) const;
    void replicate_intent(const nlohmann::json& intent);
    void replicate_intent() { replicate_intent(intent()); }

    std::string checkpoint_root_;  // snapshots for clients are written here too
    snapshot_pieces pieces_;       // the one a client reads in pieces; under capture_mutex_
    checkpoint_folder checkpoints_;
    std::int64_t replicated_end_;                 // the standby holds the rows of ticks before this
    std::int64_t spikes_replicated_end_;          // and the unread spikes of ticks before this
    // The samples of <record variables>, read with the spikes (spikes()); a standby does not
    // get them.
    state_samples samples_;

    std::mutex capture_mutex_;  // one capture at a time: a snapshot or a checkpoint
    // New delays are in transition at ticks before this one (from delays_changed_); under capture_mutex_.
    std::int64_t delays_changed_ = 0, delays_settled_ = 0;
    std::thread ticker_;
    bool ticker_stop_ = false;

    std::unique_ptr<grant_senders> grants_;  // window mode's; none in lockstep
};

}  // namespace dnnc::node_server
