#pragma once
// The lead's part of a node (private to dnnc_node_server): a node becomes the lead when a
// document is submitted to it. It plans the network (plan/), measures the links with
// source-routed probes, fans the configs out along the broadcast tree through its own
// worker, runs the clock (lead_run), takes snapshots and checkpoints, recovers from a dead
// node, watches the other nodes with heartbeats, and keeps its standby (standby.hpp) up to
// date; on the standby's node it takes over when the lead is lost.
//
// Messages: submit, tick_report, control, output, spikes, snapshot, weights, weight_histograms.
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"
#include "dnnc/protocol/status.hpp"
#include "dnnc/protocol/xml.hpp"
#include "cluster_probes.hpp"
#include "heartbeat_sender.hpp"
#include "lead_run.hpp"
#include "standby.hpp"
#include "state_stream.hpp"
#include "tasks.hpp"
#include "worker.hpp"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace dnnc::node_server {

struct lead_state;  // lead_state.hpp

class lead final : public module {
public:
    lead(const node_options& options, const server& srv, peer_client& calls, task_pool& tasks, worker& own);
    ~lead() override;

    std::vector<protocol::message_type> handles() const override;
    void handle(const protocol::frame& request, responder respond) override;
    void stop() override;

    // A tick report of this node's own simulation, when it is the lead.
    void report(const protocol::tick_report& report);
    // This node no longer leads: another node's config named another lead.
    void resign();
    // The same, unless the run of `generation` has been replaced since.
    void resign(std::optional<std::uint64_t> generation);
    // A client's command (it may wait for the nodes: call it off the server's threads): the
    // lead handles those that replace the run, the current run the others.
    nlohmann::json control(const protocol::control_request& command);
    // A binary snapshot of the frozen network (usage_error when it is not frozen); it waits
    // for the nodes.
    std::string snapshot();
    // A piece of it, for a client that streams it to a file of any size
    // (lead_run::snapshot_piece_at).
    lead_run::snapshot_piece snapshot_piece_at(std::uint64_t from, std::size_t count, std::string buffer = {});
    // The recorded spikes the lead holds, without forgetting them (lead_run::peek_spikes).
    nlohmann::json peek_spikes(const nlohmann::json& request);
    // The status's fields of the lead: the run's state and tick, the cluster, links and windows.
    void describe(protocol::node_status& status);
    // This node's live page is at `address` (HOST:PORT): its heartbeats name it to the nodes
    // and its status to the page. Called before the node serves frames.
    void serve_page_at(std::string address) { page_ = std::move(address); }
    // Joins the heartbeat threads and releases the run (the node is going away).
    void shutdown();
    // This node was the silent lead's standby: it restores the replica's checkpoint onto the
    // nodes still alive, becomes the lead, and carries on with what the clock was doing.
    void take_over(const replica& r);

private:
    // A DNNC document, a binary snapshot, or {"uploaded": NAME}: a binary snapshot sent before
    // in upload frames (uploads.hpp), checked through once and installed from its file,
    // which then goes.
    nlohmann::json submit(const std::string& payload, bool replace);
    // Plans `doc`, installs it on its cluster and hands the standby `replica_body` as the
    // document the run begins from. A snapshot's states come from its <state>, or, when
    // `state_file` is given, from that binary snapshot, checked already
    // (protocol::check_snapshot_file), whose state holds only the tick.
    // `measured`: the link times of this very cluster, measured by the run it replaces (a grow);
    // null: measure them. `current`: where the neurons run now, for a re-plan that moves few
    // (plan::current_placement); null: planned afresh. `earlier`: what the new run keeps of
    // the run it replaces (rows, spikes, checkpoint settings, what the clock is to do once
    // resumed), which its standby holds before the checkpoint that makes its replica whole;
    // null: nothing. The pipeline's steps (lead_install.cpp) follow.
    struct carried_over;
    nlohmann::json install(protocol::document doc, bool replace, const std::string& state_file, const std::string& replica_body,
                           const std::vector<plan::link_time>* measured = nullptr,
                           const plan::current_placement* current = nullptr, const carried_over* earlier = nullptr);
    // The document checked (this node must be one of its cluster's, serving nothing else
    // unless `replace`), its due grows applied, planned and partitioned, its memory checked
    // against the nodes'; a snapshot's states (none when they come from `state_file`).
    struct planned_install {
        plan::network_plan plan;  // without its state
        std::int64_t first_tick = 0;
        std::vector<protocol::indexed_state> states;
    };
    planned_install plan_install(protocol::document doc, bool replace, const std::string& state_file,
                                 const plan::current_placement* current);
    // The new run's state: its plan and topology, the link times (`measured`, or probed now)
    // and the wait windows they give.
    std::shared_ptr<lead_state> measure(plan::network_plan plan, const std::vector<plan::link_time>* measured);
    // The configs (node_configs_of) sent down the tree; the nodes' acknowledgements, each
    // checked against the hash of the config it was sent (check_acks). `restoring`: every state is restored next (a node
    // whose neurons and synapses stay may keep its engine; the ack says "kept").
    nlohmann::json fan_out(const protocol::node_config& root, bool replace, bool restoring);
    // The run starts, frozen at `first_tick`, with what it keeps of the run before
    // (`earlier`, as install's); heartbeats begin; the standby hears of it all, the checkpoint
    // it restores from last.
    void start_run(const std::shared_ptr<lead_state>& state, const nlohmann::json& acks, std::int64_t first_tick,
                   const std::string& state_file, const std::string& replica_body, const carried_over* earlier);
    // The files a document given to this node may name (node_options::data_dirs).
    protocol::file_access file_access() const;
    std::shared_ptr<lead_run> current_run();
    lead_run::links run_links(const std::shared_ptr<lead_state>& state);
    void capture_snapshot(std::int64_t tick, const std::string& file);
    nlohmann::json weights(const nlohmann::json& request);
    // An update's document (protocol/update.hpp) applied to the frozen network: checked
    // against the running network, then sent to every node, then the lead's document takes
    // it (snapshots and checkpoints hold it). {"tick": the next tick, "nodes": count}.
    nlohmann::json update(const std::string& payload);
    // The frozen network's plastic weights binned per projection, as the weight-histograms
    // frame answers them; kept for the status (the live page).
    nlohmann::json weight_histograms();
    void send_states(const protocol::node_config& root, std::size_t neurons, const state_source& states, std::int64_t tick);
    nlohmann::json recover();
    // Carries on with what a run's clock was doing (lead_run::intent) in a run restored at a tick.
    void resume(lead_run& run, const nlohmann::json& intent);
    // grow: the population grows by `add` members between two ticks, the run going on as
    // before (population_growth.hpp). The reply: the population, added, its size now, its
    // first new member, the tick, the pause in ms.
    nlohmann::json grow(const protocol::control_request& command);
    // The run's clock stopped before `tick` for the scheduled grows due then.
    void grow_scheduled(std::int64_t tick);
    // Whether `run` is still the lead's run.
    bool still_running(const std::shared_ptr<lead_run>& run);
    // The frozen run changed between two ticks by `change` (of its document, at the tick) and
    // restored onto the cluster the document then names from where its neurons are
    // (plan::current_placement with `migration_weight`); lead_restructure.cpp. The reply:
    // install's, with moved (neurons), placement (per node: before, after), paused_ms.
    // `what` names the change in the moves the status lists (note_move).
    // While the run still runs: the partition of the network as `change` leaves it, from where
    // its neurons are, into the memo (last_partition_), so that the install in the pause
    // reuses it; returns that plan. Only a head start: a change that does not plan is left
    // to the install (none).
    std::optional<plan::network_plan> plan_ahead(const std::function<void(protocol::document&, std::int64_t)>& change,
                                                 std::int64_t tick, double migration_weight);
    // With `build_ahead` (a change that does not depend on the tick it is made at: a
    // re-balance, a join, a drain) a running network's nodes also build their new engines
    // before the freeze (prepare_engines), a join's new links measured then too.
    nlohmann::json restructure(const std::shared_ptr<lead_run>& run, const nlohmann::json& intent, const std::string& what,
                               const std::function<void(protocol::document&, std::int64_t)>& change,
                               double migration_weight = plan::current_placement{}.migration_weight,
                               bool build_ahead = false);
    // The run a rebalance, join or drain (`what`) changes; usage_error when there is none.
    std::shared_ptr<lead_run> run_to_change(const std::string& what);
    // rebalance: the neurons re-placed from where they are (with the nodes' capacities
    // changed first), applied unless a dry run or nothing would move; a running network's
    // nodes build their new engines first (prepare_engines). The reply: moved, nodes
    // [{id, before, after, kept, prepared}], edge_cut {before, after}, tick, applied, paused_ms.
    nlohmann::json rebalance(const protocol::control_request& command);
    // The nodes build the engines of `planned` while the run goes on; the link times of its
    // cluster, or none when they did not (lead_restructure.cpp).
    std::optional<std::vector<plan::link_time>> prepare_engines(plan::network_plan planned);
    // join: a node that answers with the cluster's secret and serves no network joins the
    // cluster (linked to the lead unless links are given) and takes its share of the neurons.
    nlohmann::json join(const protocol::control_request& command);
    // drain: the node's neurons move to the others, it leaves the cluster and is released
    // (worker::release). Not the lead; the rest must stay linked.
    nlohmann::json drain(const protocol::control_request& command);
    // <run rebalance="auto">: `run`'s nodes were out of balance (lead_run::take_rebalance_due,
    // each node's time per tick): the next step of load_watch.hpp's next_load_step, a
    // re-balance that gives the slower nodes less capacity and the faster more, a drain of
    // a node whose ticks are slow by themselves, or no more moves by load; nothing if the
    // run was replaced meanwhile.
    void rebalance_by_load(const std::shared_ptr<lead_run>& run, const tick_times& times);
    // Adds a change to the moves the status lists (the newest max_moves_listed).
    void note_move(protocol::move_record move);
    static constexpr std::size_t max_moves_listed = 20;
    // What a run restarted from a checkpoint keeps of the run before: the output rows and
    // the unread recorded spikes of the ticks before it, and the checkpoint settings.
    struct carried_over {
        output_rows rows;
        std::deque<tick_spikes> spikes;
        nlohmann::json checkpoints;  // as lead_run::checkpoint_settings_json; null: the document's
        structure_log structure;      // of structural plasticity (empty: none kept)
        nlohmann::json intent;        // what the clock is to do once resumed (lead_run::carry_on_as); null: stay frozen
        std::vector<std::string> columns;  // the rows' output columns (lead_run::adopt_rows)
    };
    // Restores `doc` (a checkpoint, or the document a run began from) onto the nodes of its
    // cluster that answer and are still linked to this one, leaving out `dead`, with this
    // node as the lead; frozen at its tick. With `state_file`, the states come from that
    // checkpoint (install).
    // `measured`: as install's, used when every node answers; `current`: as install's.
    nlohmann::json restart_on_survivors(protocol::document doc, std::set<std::string> dead, const carried_over& earlier,
                                        const std::string& state_file = {}, const std::vector<plan::link_time>* measured = nullptr,
                                        const plan::current_placement* current = nullptr);
    // `state` becomes the lead's, and its nodes get heartbeats (heartbeat_sender); those of the
    // network before stop. What a node answers goes into `state`; a node that serves another
    // lead's network makes this one resign.
    void start_heartbeats(const std::shared_ptr<lead_state>& state);

    const node_options& options_;
    peer_client& calls_;
    task_pool& tasks_;
    worker& own_;
    cluster_probes probes_;  // which node this is, which answer and how, the links, memory

    std::mutex mutex_;
    bool stopping_ = false;
    std::shared_ptr<lead_state> state_;
    std::shared_ptr<lead_run> run_;
    // While install replaces the run, clients wait for the new one (current_run).
    bool replacing_ = false;
    std::condition_variable run_ready_;
    std::mutex growing_;  // one change (restructure) or submit at a time
    std::deque<protocol::move_record> moves_;  // the newest changes that moved neurons (note_move)
    load_moves by_load_;  // moves by load (rebalance_by_load); anew with a network placed afresh
    plan::partition_memo last_partition_;  // of the last network this node planned
    std::uint64_t generation_ = 0;         // bumps when a new network replaces the old
    std::list<std::unique_ptr<heartbeat_sender>> heartbeats_;  // the newest last; the others stopped
    std::string page_;  // this node's live page; empty: none
};

}  // namespace dnnc::node_server
