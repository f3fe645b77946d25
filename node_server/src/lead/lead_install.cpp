// The lead's install pipeline (lead.hpp): a document (or snapshot) checked and planned, the
// links measured (cluster_probes), every node's config built and fanned out down the
// broadcast tree, the states sent, and the run started.
#include "lead/lead.hpp"
#include "lead/lead_state.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/protocol/xml.hpp"
#include "lead/config_tree.hpp"
#include "node_messages.hpp"
#include "lead/placement_change.hpp"
#include "lead/population_growth.hpp"
#include "state_stream.hpp"
#include "lead/uploads.hpp"

#include <algorithm>
#include <filesystem>

namespace dnnc::node_server {

using json = nlohmann::json;
using protocol::frame;
using protocol::message_type;

// Sends every node the states it needs, a piece at a time (state_sender): its own neurons'
// and the remote ones' it reads; each node installs them with its last piece.
void lead::send_states(const model::node_config& root, std::size_t neurons, const state_source& states, std::int64_t tick) {
    state_sender sender(root, neurons, [&](const model::node_config& c, const std::string& piece, bool last) {
        const auto payload = encode_restore_piece(tick, last, piece);
        if (&c == &root) return own_.restore_state(payload);
        try {
            calls_.call_while_alive({c.host, static_cast<std::uint16_t>(c.port)}, frame{message_type::restore_state, 0, 0, payload},
                                    options_.silence_limit);
        } catch (const std::exception& e) {
            throw error("node '" + c.node + "' did not take its state: " + e.what());
        }
    });
    states([&](const protocol::indexed_state& s) { sender.add(s); });
    sender.finish();
    DNNC_LOG(info, "states sent, at most " << sender.peak_bytes() << " bytes of them held at once");
}

// ---- submit: this node becomes the lead ----

protocol::file_access lead::file_access() const {
    if (!options_.server.secret.empty()) return {};
    return {false, options_.data_dirs};
}

json lead::submit(const std::string& payload, bool replace) {
    // A change of the running network (a grow, a move) ends before another network replaces
    // it: the two installs would otherwise interleave on the nodes.
    std::lock_guard<std::mutex> one_at_a_time(changes_.one_at_a_time());
    if (!payload.empty() && payload.front() == '{') {
        const auto path = upload_path(options_.state_dir, parse_payload(payload).at("uploaded").get<std::string>());
        const removed_at_exit done(path);
        if (!std::filesystem::exists(path)) throw usage_error("no upload of that name on this node");
        return install(protocol::check_snapshot_file(path, file_access()), replace, path, {}, nullptr, nullptr, nullptr);
    }
    return install(protocol::is_binary_snapshot(payload) ? protocol::decode_binary_snapshot(payload, "submitted snapshot", file_access())
                                                         : protocol::parse_document(payload, "submitted document", file_access()),
                   replace, {}, payload, nullptr, nullptr, nullptr);
}

// Submit, recovery, takeover and growth all come here: plan -> measure -> node_configs_of ->
// fan_out -> start_run, each step a function of its own.
json lead::install(model::document doc, bool replace, const std::string& state_file, const std::string& replica_body,
                   const std::vector<plan::link_time>* measured, const plan::current_placement* current, const carried_over* earlier) {
    const auto started = clock_type::now();
    planned_install planned = plan_install(std::move(doc), replace, state_file, current);
    if (!current) changes_.forget_moves();  // a network placed afresh
    DNNC_LOG(info, "planned and partitioned in " << elapsed_ms(started) << " ms");
    // Clients wait for the new run (current_run) while the old one goes and the new one is
    // installed; if the install fails, for no run.
    struct replacing {
        lead& self;
        explicit replacing(lead& l) : self(l) {
            std::lock_guard<std::mutex> lock(self.mutex_);
            self.replacing_ = true;
        }
        ~replacing() {
            {
                std::lock_guard<std::mutex> lock(self.mutex_);
                self.replacing_ = false;
            }
            self.run_ready_.notify_all();
        }
    } replacing_run(*this);
    {
        // The run being replaced stops its clock first, released without the lock.
        std::shared_ptr<lead_run> previous;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            previous = std::move(run_);
        }
    }
    const auto state = measure(std::move(planned.plan), measured);
    DNNC_LOG(info, "links measured after " << elapsed_ms(started) << " ms");
    const model::node_config root = node_configs_of(*state, probes_.subleads());
    DNNC_LOG(info, "configs built after " << elapsed_ms(started) << " ms");
    // With states to restore, a node whose neurons and synapses stay keeps its engine.
    const bool restoring = !state_file.empty() || !planned.states.empty();
    const json acks = fan_out(root, replace, restoring);
    DNNC_LOG(info, "configs installed after " << elapsed_ms(started) << " ms");
    const auto neurons = state->plan.net.neuron_count();
    if (!state_file.empty()) send_states(root, neurons, states_in_file(state_file, file_access()), planned.first_tick);
    if (!planned.states.empty()) send_states(root, neurons, states_in(planned.states), planned.first_tick);
    const json nodes = installed_nodes(*state, acks);
    start_run(state, nodes, planned.first_tick, state_file, replica_body, earlier);
    DNNC_LOG(info, "network '" << state->plan.net.name << "' installed on " << nodes.size() << " nodes in "
                               << elapsed_ms(started) << " ms");
    json reply{{"network", state->plan.net.name}, {"lead", state->topo.id(state->topo.lead())}, {"nodes", nodes},
               {"tick", planned.first_tick},   {"edge_cut", state->plan.quality.edge_cut},        {"seconds", elapsed_ms(started) / 1000}};
    if (!state->plan.placement_note.empty()) reply["placement"] = state->plan.placement_note;
    return reply;
}

lead::planned_install lead::plan_install(model::document doc, bool replace, const std::string& state_file,
                                         const plan::current_placement* current) {
    const auto started = clock_type::now();
    model::check_document(doc);
    if (!doc.net || !doc.clu) throw usage_error("a submitted document needs a <network> and a <cluster>");
    if (const auto serving = own_.network(); serving && !replace)
        throw error("this node already serves network '" + *serving + "'; submit with --replace to replace it");
    doc.clu->lead = doc.clu->nodes[probes_.find_self(*doc.clu)].id;
    if (const auto silent = probes_.reach_nodes(*doc.clu, {}); !silent.empty()) {
        const auto& clu = *doc.clu;
        const auto n = std::find_if(clu.nodes.begin(), clu.nodes.end(), [&](const auto& c) { return c.id == *silent.begin(); });
        std::string linked;
        for (const auto& l : clu.links)
            if (l.from == n->id || l.to == n->id) linked += (linked.empty() ? "" : ", ") + (l.from == n->id ? l.to : l.from);
        // A cluster that cannot be run as written: bad input (exit 2), named by the node's id
        // (the lead's line numbers would be those of the document as the client re-wrote it).
        throw config_error({}, "cluster: node '" + n->id + "' (" + n->host + ":" + std::to_string(n->port) +
                                   ") answers neither the lead nor through the nodes linked to it (" +
                                   (linked.empty() ? "none" : linked) + "); nothing was changed on the cluster");
    }
    // A new network starts with the grows due at its first tick (a restored one has them).
    if (!doc.state) apply_due_grows(*doc.net, 0);
    DNNC_LOG(info, "document read and checked in " << elapsed_ms(started) << " ms");
    planned_install planned{plan_remembered(std::move(doc), current), 0, {}};
    auto& plan = planned.plan;
    if (!plan.placement_note.empty()) DNNC_LOG(info, "placement: " << plan.placement_note);
    lead_run::check_outputs(plan);
    probes_.check_memory(plan, replace);
    // A snapshot's state is checked before anything changes on the cluster (a file's, by
    // check_snapshot_file, before it came here).
    if (plan.doc.state && state_file.empty()) planned.states = protocol::states_of(plan.doc, plan.net);
    planned.first_tick = plan.doc.state ? plan.doc.state->tick : 0;
    plan.doc.state.reset();
    return planned;
}

std::shared_ptr<lead_state> lead::measure(plan::network_plan plan, const std::vector<plan::link_time>* measured) {
    auto state = std::make_shared<lead_state>(
        std::move(plan), std::make_shared<peer_client>(options_.server.secret, protocol::default_max_payload, options_.server.tls));
    state->times = measured ? *measured : probes_.measure_links(state->plan, state->topo);
    state->windows = plan::wait_windows(state->plan, state->topo, link_latencies(*state));
    return state;
}

plan::network_plan lead::plan_remembered(model::document doc, const plan::current_placement* current) {
    plan::partition_memo memo;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        memo = last_partition_;
    }
    auto planned = plan::plan_network(std::move(doc), &memo, current);
    std::lock_guard<std::mutex> lock(mutex_);
    last_partition_ = std::move(memo);
    return planned;
}

// The nodes build the engines of `planned` while the run goes on (prepare_flag), so that the
// install of the move that follows finds them built and its pause is the snapshot and the
// restore, not the building. The links that stay keep their times; a new one (a join's) is
// measured now. Only where the old and the new engines fit in memory at once (check_memory
// without the old network's memory counted free); what fails leaves the move to build its
// engines (and measure) in the pause as before. Returns the link times of planned's cluster.
std::optional<std::vector<plan::link_time>> lead::prepare_engines(plan::network_plan planned) {
    std::optional<std::vector<plan::link_time>> carried;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!state_) return std::nullopt;
        carried = carried_link_times(*state_->plan.doc.clu, state_->times, *planned.doc.clu);
    }
    const auto started = clock_type::now();
    try {
        probes_.check_memory(planned, false);
        const auto state = measure(std::move(planned), carried ? &*carried : nullptr);
        own_.configure_subtree(node_configs_of(*state, probes_.subleads()), protocol::prepare_flag);
        DNNC_LOG(info, "the nodes built the move's engines ahead in " << elapsed_ms(started) << " ms");
        return state->times;
    } catch (const std::exception& e) {
        DNNC_LOG(info, "the move's engines were not built ahead: " << e.what());
        return std::nullopt;
    }
}

json lead::fan_out(const model::node_config& root, bool replace, bool restoring) {
    json acks = own_.configure_subtree(root, static_cast<std::uint16_t>((replace ? protocol::replace_flag : 0) |
                                                                        (restoring ? protocol::restoring_flag : 0)));
    check_acks(root, acks);
    return acks;
}

void lead::start_run(const std::shared_ptr<lead_state>& state, const json& installed, std::int64_t first_tick,
                     const std::string& state_file, const std::string& replica_body, const carried_over* earlier) {
    state->since = clock_type::now();
    state->last_seen.assign(state->topo.node_count(), state->since);
    state->last_error.assign(state->topo.node_count(), {});
    state->waiting.assign(state->topo.node_count(), nullptr);
    state->pages.assign(state->topo.node_count(), {});
    std::vector<std::string> hashes;
    for (const auto& node : installed) hashes.push_back(node.at("hash").get<std::string>());
    const lead_run::storage storage{options_.output_memory, (std::filesystem::path(options_.state_dir) / "checkpoints").string()};
    auto links = run_links(state);
    const auto new_run = std::make_shared<lead_run>(state->plan, state->topo, links, std::move(hashes), first_tick, storage);
    const auto row_width = new_run->output_width();
    // The standby starts over with what the run begins from.
    const auto& self = state->plan.doc.clu->nodes[state->topo.lead()];
    links.replicate({{"kind", "document"},
                     {"network", state->plan.net.name},
                     {"lead", self.id},
                     {"lead_at", self.host + ":" + std::to_string(self.port)},
                     {"heartbeat_timeout_ms", state->plan.doc.run ? state->plan.doc.run->heartbeat_timeout_ms
                                                                  : model::run_settings{}.heartbeat_timeout_ms},
                     {"tick", first_tick},
                     {"width", row_width}},
                    replica_body);
    // Before the checkpoint that makes the replica whole: a standby that takes over from it
    // has the rows and spikes before it and carries on as the run was asked to, not frozen.
    if (earlier) {
        if (earlier->intent.is_object() && earlier->intent.contains("state")) new_run->carry_on_as(earlier->intent);
        new_run->adopt_rows(earlier->rows, earlier->columns);
        new_run->adopt_spikes(earlier->spikes);
        new_run->adopt_structure(earlier->structure);
        if (!earlier->checkpoints.is_null()) {
            json command = earlier->checkpoints;
            command["command"] = "checkpoint";
            new_run->control(protocol::decode_control_request(command));
        }
    }
    // Clients see the run only now, with the rows and spikes of the ticks before it.
    {
        std::lock_guard<std::mutex> lock(mutex_);
        run_ = new_run;
    }
    start_heartbeats(state);
    // Restored from a file: the standby holds it as its checkpoint.
    if (!state_file.empty()) replicate_checkpoint(links.replicate, first_tick, state_file);
}

}  // namespace dnnc::node_server
