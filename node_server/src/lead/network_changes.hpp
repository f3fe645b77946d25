#pragma once
// The lead's changes that replace its run by one restored onto the cluster (private to
// dnnc_node_server): recovery from a lost node's checkpoint, a standby's takeover, and the
// changes of a running network: populations that grow, a re-balance of the neurons over the
// nodes, nodes that join and leave. A change is made the same way each time (restructure):
// the run is frozen at a tick, snapshotted, the snapshot's document changed and restored
// onto the cluster it names (restart_on_survivors) from where the neurons are, so the run
// goes on bit for bit and only what must move moves. What it needs of the lead is
// network_host, which the lead implements.
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/status.hpp"
#include "dnnc/protocol/xml.hpp"
#include "lead/cluster_probes.hpp"
#include "lead/lead_run.hpp"
#include "lead/load_watch.hpp"
#include "lead/standby.hpp"

#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dnnc::node_server {

struct lead_state;  // lead_state.hpp

// What a run restarted from a checkpoint keeps of the run before: the output rows and the
// unread recorded spikes of the ticks before it, and the checkpoint settings.
struct carried_over {
    output_rows rows;
    std::deque<tick_spikes> spikes;
    nlohmann::json checkpoints;        // as lead_run::checkpoint_settings_json; null: the document's
    structure_log structure;           // of structural plasticity (empty: none kept)
    nlohmann::json intent;             // what the clock is to do once resumed (lead_run::carry_on_as); null: stay frozen
    std::vector<std::string> columns;  // the rows' output columns (lead_run::adopt_rows)
};

// The lead, as its changes see it.
class network_host {
public:
    // The lead's run; while the lead installs a new one, the new one once installed. Throws
    // error when there is none.
    virtual std::shared_ptr<lead_run> current_run() = 0;
    // The lead's run now, without waiting (null: none, or one being installed).
    virtual std::shared_ptr<lead_run> run_now() = 0;
    // Whether the lead runs a network or installs one.
    virtual bool has_network() = 0;
    // `read` called under the lead's lock with the network it runs (it must not call back
    // into the lead, nor take the changes' own lock); error when there is none.
    virtual void read_network(const std::function<void(const lead_state&)>& read) = 0;
    // The nodes the heartbeats find silent, but for those reached through a sub-lead (which
    // may be silent only because their sub-lead is).
    virtual std::set<std::string> silent_nodes() = 0;
    // The files a document given to this node may name (node_options::data_dirs).
    virtual protocol::file_access file_access() const = 0;
    // A binary snapshot of the frozen run at `tick` into `file`.
    virtual void capture_snapshot(std::int64_t tick, const std::string& file) = 0;
    // `doc` planned with the partitions the lead remembers (a re-plan's head start); the
    // partition made is remembered in turn.
    virtual plan::network_plan plan_remembered(model::document doc, const plan::current_placement* current) = 0;
    // The nodes build the engines of `planned` while the run goes on; the link times of its
    // cluster, or none when they did not.
    virtual std::optional<std::vector<plan::link_time>> prepare_engines(plan::network_plan planned) = 0;
    // The install pipeline (lead::install): `doc` planned, installed on its cluster and run.
    virtual nlohmann::json install(model::document doc, bool replace, const std::string& state_file,
                                   const std::string& replica_body, const std::vector<plan::link_time>* measured,
                                   const plan::current_placement* current, const carried_over* earlier) = 0;

protected:
    ~network_host() = default;
};

class network_changes {
public:
    network_changes(const node_options& options, peer_client& calls, cluster_probes& probes, network_host& lead);

    // Taken by each change and by the lead's submit: one change or submit at a time (their
    // installs would otherwise interleave on the nodes).
    std::mutex& one_at_a_time() { return changing_; }

    // Restores the last checkpoint onto the nodes still alive and keeps the outputs before it,
    // so the run goes on as if the failure had not happened; frozen at the checkpoint.
    nlohmann::json recover();
    // This node was the silent lead's standby: it restores the replica's checkpoint onto the
    // nodes still alive, becomes the lead, and carries on with what the clock was doing.
    void take_over(const replica& r);
    // grow: the population grows by `add` members between two ticks, the run going on as
    // before (population_growth.hpp). The reply: the population, added, its size now, its
    // first new member, the tick, the pause in ms.
    nlohmann::json grow(const protocol::control_request& command);
    // The run's clock stopped before `tick` for the scheduled grows due then.
    void grow_scheduled(std::int64_t tick);
    // rebalance: the neurons re-placed from where they are (with the nodes' capacities
    // changed first), applied unless a dry run or nothing would move; a running network's
    // nodes build their new engines first (prepare_engines). The reply: moved, nodes
    // [{id, before, after, kept, prepared}], edge_cut {before, after}, tick, applied, paused_ms.
    nlohmann::json rebalance(const protocol::control_request& command);
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

    // The newest changes that moved neurons, oldest first (at most max_moves_listed).
    std::vector<protocol::move_record> moves();
    // A network placed afresh: the moves listed and the moves by load were another placement's.
    void forget_moves();
    static constexpr std::size_t max_moves_listed = 20;

    // Restores `doc` (a checkpoint, or the document a run began from) onto the nodes of its
    // cluster that answer and are still linked to this one, leaving out `dead`, with this
    // node as the lead; frozen at its tick. With `state_file`, the states come from that
    // checkpoint (install). `measured`: as install's, used when every node answers;
    // `current`: as install's.
    nlohmann::json restart_on_survivors(model::document doc, std::set<std::string> dead, const carried_over& earlier,
                                        const std::string& state_file = {}, const std::vector<plan::link_time>* measured = nullptr,
                                        const plan::current_placement* current = nullptr);

private:
    // While the run still runs: the partition of the network as `change` leaves it, from where
    // its neurons are (the lead remembers it, so that the install in the pause reuses it);
    // returns that plan. Only a head start: a change that does not plan is left to the
    // install (none).
    std::optional<plan::network_plan> plan_ahead(const std::function<void(model::document&, std::int64_t)>& change,
                                                 std::int64_t tick, double migration_weight);
    // The frozen run changed between two ticks by `change` (of its document, at the tick) and
    // restored onto the cluster the document then names from where its neurons are
    // (plan::current_placement with `migration_weight`). The reply: install's, with moved
    // (neurons), placement (per node: before, after), paused_ms. `what` names the change in
    // the moves listed (note_move). With `build_ahead` (a change that does not depend on the
    // tick it is made at: a re-balance, a join, a drain) a running network's nodes also
    // build their new engines before the freeze (prepare_engines), a join's new links
    // measured then too.
    nlohmann::json restructure(const std::shared_ptr<lead_run>& run, const nlohmann::json& intent, const std::string& what,
                               const std::function<void(model::document&, std::int64_t)>& change,
                               double migration_weight = plan::current_placement{}.migration_weight, bool build_ahead = false);
    // The run a rebalance, join or drain (`what`) changes; usage_error when there is none.
    std::shared_ptr<lead_run> run_to_change(const std::string& what);
    // Adds a change to the moves listed (the newest max_moves_listed).
    void note_move(protocol::move_record move);

    const node_options& options_;
    peer_client& calls_;
    cluster_probes& probes_;
    network_host& lead_;
    std::mutex changing_;  // one change or submit at a time (one_at_a_time)
    std::mutex mutex_;     // of what follows; the lead's lock is never taken under it
    std::deque<protocol::move_record> moves_;  // the newest changes that moved neurons (note_move)
    load_moves by_load_;  // moves by load (rebalance_by_load); anew with a network placed afresh
};

}  // namespace dnnc::node_server
