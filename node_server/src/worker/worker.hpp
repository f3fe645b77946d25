#pragma once
// Every node's own part of a network (private to dnnc_node_server): the config it installed
// and its simulation (engine, runner, signal links), the subtree of the broadcast tree it
// forwarded configs to, and the probes that pass through it. The lead is a worker too; it
// reaches its own simulation through this class.
//
// Messages: configure (install this node's config, forward the subtrees, gather the acks),
// probe, clock, inputs, capture (a piece of this node's states), restore_state
// (state_stream.hpp) and release (a drained node stops serving its installation).
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/outbox.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/status.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "worker/node_simulation.hpp"
#include "probe_route.hpp"
#include "tasks.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

class worker final : public module {
public:
    // What a worker needs of the node around it: where its tick reports go when it is the
    // lead itself, and what to do when a config names another node as the lead.
    struct hooks {
        std::function<void(const protocol::tick_report& report)> report_to_own_lead;
        std::function<void()> resign_lead;
        // A new config led by the node named is being installed: a replica held for
        // another lead is void (standby::forget_unless_led_by).
        std::function<void(const std::string& lead)> drop_replica;
        // This node was released: it holds no replica.
        std::function<void()> forget_replica;
    };

    worker(const node_options& options, peer_client& calls, signal_inbox& signals_in, task_pool& tasks, hooks h);
    ~worker() override;

    std::vector<protocol::message_type> handles() const override;
    void handle(const protocol::frame& request, responder respond) override;

    // Installs the subtree's root config here and forwards each child's subtree, with the
    // same `flags`: replace_flag replaces what runs; restoring_flag says every state is
    // restored next, so a node whose neurons and synapses stay keeps its engine;
    // prepare_flag only builds the config's engine and holds it for the install that follows
    // (taken when that install's config asks for the same neurons and synapses: the engine
    // of a move built while the run goes on). Returns the acks [{"node", "hash", "kept",
    // "prepared"}...] of the subtree ("kept": it kept its engine; "prepared": it took the one
    // built ahead).
    nlohmann::json configure_subtree(const model::node_config& subtree, std::uint16_t flags);
    // Throws when this node serves no network.
    std::shared_ptr<node_simulation> simulation();
    // A restore_state payload (state_stream.hpp): i64 tick, u8 last, states. The pieces are
    // kept until the last, which installs them all so that the next tick is `tick`.
    void restore_state(const std::string& payload);
    // A parameters payload (an update's parameters_of, protocol/update.hpp): the frozen
    // network's neurons and generators take them, this node keeping the spikes of its own
    // spike-source neurons; config_error when they do not fit the share.
    void set_parameters(const std::string& payload);
    // Whether a network is installed here, and its name.
    std::optional<std::string> network() const;
    // The status's fields of this node: state, role, memory, work (below), and once
    // configured its network's: node, network, lead, lead_address, neurons, config_hash, epoch.
    void describe(protocol::node_status& status) const;
    // A heartbeat's answer: the lead and epoch of the installation it serves, once
    // configured; {"waiting": node_simulation::waiting()} while a tick waits for peers'
    // packets, and {"work": [{"task", "seconds"}...]} while this node installs a share (its
    // own and its subtree's), captures or restores states for another node: what keeps that
    // node waiting (peer_client::call_while_alive), and for how long.
    nlohmann::json heartbeat() const;
    // Stops the simulation (the node is going away).
    void shutdown();
    // The lead drained this node: when it serves the installation of `epoch`, it stops and
    // forgets it (and any replica it held as that lead's standby), free for another network.
    void release(const std::string& epoch);

private:
    // How a node's new simulation got its engine.
    enum class engine_source { built, kept, prepared };
    // Returns where the new simulation's engine came from: the old one's (only when
    // `restoring`), the one prepared ahead, or built now.
    engine_source install(const model::node_config& own, bool restoring);
    // Builds own's engine and holds it in prepared_ (prepare_flag).
    void prepare(const model::node_config& own);
    // A clock command stamped with an epoch other than the installed config's comes from a
    // lead this node no longer follows: refused (error).
    void check_installation(const nlohmann::json& command) const;
    void forward_probe(const probe& p);
    double extra_delay_to(const std::string& peer) const;
    class doing;  // lists a task in work_ for as long as it lives
    nlohmann::json work() const;  // work_ as heartbeats say it; the caller holds mutex_

    const node_options& options_;
    peer_client& calls_;
    task_pool& tasks_;
    hooks hooks_;
    signal_inbox& signals_in_;
    outbox reports_out_;  // tick reports to the lead

    mutable std::mutex mutex_;
    std::optional<model::node_config> config_;  // its own, without the subtree
    // An engine built ahead for a config (prepare), until the next install or release.
    struct prepared_engine {
        model::node_config config;
        sim::engine engine;
    };
    std::optional<prepared_engine> prepared_;
    std::string config_hash_;
    std::shared_ptr<node_simulation> simulation_;
    std::vector<protocol::indexed_state> restoring_;  // pieces of states until the last (restore_state)
    struct task_under_way {
        std::string what;
        std::chrono::steady_clock::time_point since;
    };
    std::list<task_under_way> work_;  // oldest first
};

}  // namespace dnnc::node_server
