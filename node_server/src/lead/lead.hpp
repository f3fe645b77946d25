#pragma once
// The lead's part of a node (private to dnnc_node_server): a node becomes the lead when a
// document is submitted to it. It plans the network (plan/), measures the links with
// source-routed probes, fans the configs out along the broadcast tree through its own
// worker, runs the clock (lead_run), takes snapshots and checkpoints, recovers from a dead
// node and changes the running network (network_changes), watches the other nodes with
// heartbeats, and keeps its standby (standby.hpp) up to date; on the standby's node it takes
// over when the lead is lost.
//
// Messages: submit, tick_report, control, output, spikes, snapshot, weights, weight_histograms,
// update, upload.
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"
#include "dnnc/protocol/status.hpp"
#include "dnnc/protocol/xml.hpp"
#include "lead/cluster_probes.hpp"
#include "lead/heartbeat_sender.hpp"
#include "lead/lead_run.hpp"
#include "lead/network_changes.hpp"
#include "lead/standby.hpp"
#include "state_stream.hpp"
#include "tasks.hpp"
#include "worker/worker.hpp"

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

class lead final : public module, private network_host {
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
    // This node was the silent lead's standby (network_changes::take_over).
    void take_over(const replica& r) { changes_.take_over(r); }

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
    nlohmann::json install(model::document doc, bool replace, const std::string& state_file, const std::string& replica_body,
                           const std::vector<plan::link_time>* measured, const plan::current_placement* current,
                           const carried_over* earlier) override;
    // The document checked (this node must be one of its cluster's, serving nothing else
    // unless `replace`), its due grows applied, planned and partitioned, its memory checked
    // against the nodes'; a snapshot's states (none when they come from `state_file`).
    struct planned_install {
        plan::network_plan plan;  // without its state
        std::int64_t first_tick = 0;
        std::vector<protocol::indexed_state> states;
    };
    planned_install plan_install(model::document doc, bool replace, const std::string& state_file,
                                 const plan::current_placement* current);
    // The new run's state: its plan and topology, the link times (`measured`, or probed now)
    // and the wait windows they give.
    std::shared_ptr<lead_state> measure(plan::network_plan plan, const std::vector<plan::link_time>* measured);
    // The configs (node_configs_of) sent down the tree; the nodes' acknowledgements, each
    // checked against the hash of the config it was sent (check_acks). `restoring`: every state is restored next (a node
    // whose neurons and synapses stay may keep its engine; the ack says "kept").
    nlohmann::json fan_out(const model::node_config& root, bool replace, bool restoring);
    // The run starts on the nodes `installed` (installed_nodes), frozen at `first_tick`, with
    // what it keeps of the run before (`earlier`, as install's); heartbeats begin; the standby
    // hears of it all, the checkpoint it restores from last.
    void start_run(const std::shared_ptr<lead_state>& state, const nlohmann::json& installed, std::int64_t first_tick,
                   const std::string& state_file, const std::string& replica_body, const carried_over* earlier);
    // network_host's (network_changes.hpp).
    protocol::file_access file_access() const override;
    std::shared_ptr<lead_run> current_run() override;
    std::shared_ptr<lead_run> run_now() override;
    bool has_network() override;
    void read_network(const std::function<void(const lead_state&)>& read) override;
    std::set<std::string> silent_nodes() override;
    void capture_snapshot(std::int64_t tick, const std::string& file) override;
    plan::network_plan plan_remembered(model::document doc, const plan::current_placement* current) override;
    // Only where the old and the new engines fit in memory at once; the links that stay keep
    // their times (lead_install.cpp).
    std::optional<std::vector<plan::link_time>> prepare_engines(plan::network_plan planned) override;

    lead_run::links run_links(const std::shared_ptr<lead_state>& state);
    nlohmann::json weights(const nlohmann::json& request);
    // An update's document (protocol/update.hpp) applied to the frozen network: checked
    // against the running network, then sent to every node, then the lead's document takes
    // it (snapshots and checkpoints hold it). {"tick": the next tick, "nodes": count}.
    nlohmann::json update(const std::string& payload);
    // The frozen network's plastic weights binned per projection, as the weight-histograms
    // frame answers them; kept for the status (the live page).
    nlohmann::json weight_histograms();
    void send_states(const model::node_config& root, std::size_t neurons, const state_source& states, std::int64_t tick);
    // `state` becomes the lead's, and its nodes get heartbeats (heartbeat_sender); those of the
    // network before stop. What a node answers goes into `state`; a node that serves another
    // lead's network makes this one resign.
    void start_heartbeats(const std::shared_ptr<lead_state>& state);

    const node_options& options_;
    peer_client& calls_;
    task_pool& tasks_;
    worker& own_;
    cluster_probes probes_;  // which node this is, which answer and how, the links, memory
    network_changes changes_;  // recovery, takeover, and the changes of the running network

    std::mutex mutex_;
    bool stopping_ = false;
    std::shared_ptr<lead_state> state_;
    std::shared_ptr<lead_run> run_;
    // While install replaces the run, clients wait for the new one (current_run).
    bool replacing_ = false;
    std::condition_variable run_ready_;
    plan::partition_memo last_partition_;  // of the last network this node planned (plan_remembered)
    std::uint64_t generation_ = 0;         // bumps when a new network replaces the old
    std::list<std::unique_ptr<heartbeat_sender>> heartbeats_;  // the newest last; the others stopped
    std::string page_;  // this node's live page; empty: none
};

}  // namespace dnnc::node_server
