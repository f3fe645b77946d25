#include "lead/network_changes.hpp"
#include "lead/lead_state.hpp"

#include "dnnc/core/files.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/model/resolve.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "lead/placement_change.hpp"
#include "lead/population_growth.hpp"

#include <algorithm>
#include <filesystem>

#include <unistd.h>

namespace dnnc::node_server {

using json = nlohmann::json;
using protocol::frame;
using protocol::message_type;

namespace {
// The migration weight a request gives, or plan::current_placement's.
double migration_weight_of(const protocol::control_request& command) {
    return command.migration_weight.value_or(plan::current_placement{}.migration_weight);
}

// Carries on with what a run's clock was doing (lead_run::intent) in a run restored at a
// tick: running, or stepping to its target (also frozen at a target after the tick restored).
void resume(lead_run& run, const json& intent) {
    using kind = protocol::control_request::kind;
    if (intent.value("state", std::string()) == "running") {
        run.control(protocol::control_request(kind::start));
        return;
    }
    const auto completed = run.next_tick() - 1;
    const auto target = intent.value("target", completed);
    if (target <= completed) return;
    protocol::control_request step(kind::step);
    step.ticks = target - completed;
    run.control(step);
}

}  // namespace

network_changes::network_changes(const node_options& options, peer_client& calls, cluster_probes& probes, network_host& lead)
    : options_(options), calls_(calls), probes_(probes), lead_(lead) {}

// ---- recovery ----

json network_changes::recover() {
    const auto old_run = lead_.current_run();
    const std::string file = old_run->last_checkpoint();
    if (file.empty()) throw error("there is no checkpoint to recover from (set checkpoint-every or dnnc checkpoint)");
    // Read through and checked once before anything changes; sent in a second pass.
    model::document doc = protocol::check_snapshot_file(file, lead_.file_access());
    // Silent to the heartbeats: dead (the others are asked again).
    const auto tick = doc.state->tick;
    json summary = restart_on_survivors(std::move(doc), lead_.silent_nodes(),
                                        {old_run->rows_before(tick), old_run->spikes_before(tick), old_run->checkpoint_settings_json(),
                                         old_run->structure_before(tick), json(), old_run->column_names()},
                                        file);
    lead_.current_run()->adopt_checkpoint(file, tick);  // recoverable again at once
    summary["recovered_from"] = file;
    DNNC_LOG(info, "recovered from " << file << " at tick " << tick << " without " << summary["removed"].dump());
    return summary;
}

json network_changes::restart_on_survivors(model::document doc, std::set<std::string> dead, const carried_over& earlier,
                                           const std::string& state_file, const std::vector<plan::link_time>* measured,
                                           const plan::current_placement* current) {
    const auto self = doc.clu->nodes[probes_.find_self(*doc.clu)].id;
    // Dead: named so, or answering a heartbeat now neither directly nor through a sub-lead
    // among the others.
    const auto silent = probes_.reach_nodes(*doc.clu, dead);
    dead.insert(silent.begin(), silent.end());
    // Nodes that only the dead linked to this one are cut off: out as well.
    const auto reached = reached_from(*doc.clu, self, dead);
    for (const auto& n : doc.clu->nodes)
        if (reached.count(n.id) == 0) dead.insert(n.id);
    auto& nodes = doc.clu->nodes;
    nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [&](const auto& n) { return dead.count(n.id) > 0; }), nodes.end());
    auto& links = doc.clu->links;
    links.erase(std::remove_if(links.begin(), links.end(),
                               [&](const auto& l) { return dead.count(l.from) > 0 || dead.count(l.to) > 0; }),
                links.end());
    if (doc.run) doc.run->clock.clear();
    doc.clu->lead = self;
    model::check_cluster(*doc.clu);
    std::string replica_body;
    if (state_file.empty()) replica_body = protocol::serialize(doc);
    json summary = lead_.install(std::move(doc), true, state_file, replica_body, dead.empty() ? measured : nullptr, current, &earlier);
    json removed = json::array();
    for (const auto& d : dead) removed.push_back(d);
    summary["removed"] = removed;
    return summary;
}

void network_changes::take_over(const replica& r) {
    const bool from_checkpoint = !r.checkpoint_file.empty();
    const auto access = lead_.file_access();
    model::document doc = from_checkpoint ? protocol::check_snapshot_file(r.checkpoint_file, access)
                             : protocol::is_binary_snapshot(r.document)
                                 ? protocol::decode_binary_snapshot(r.document, "replicated document", access)
                                 : protocol::parse_document(r.document, "replicated document", access);
    const std::int64_t tick = doc.state ? doc.state->tick : r.first_tick;
    const json summary = restart_on_survivors(std::move(doc), {r.lead}, {r.rows.before(tick), r.spikes, r.intent.value("checkpoints", json()), {}, r.intent, {}},
                                              from_checkpoint ? r.checkpoint_file : std::string());
    resume(*lead_.current_run(), r.intent);
    const auto was = r.intent.value("state", std::string());
    DNNC_LOG(warn, "took over network '" << r.network << "' from lead '" << r.lead << "' at tick " << tick
                                        << (from_checkpoint ? " (its last checkpoint)" : " (its first tick)") << " on "
                                        << summary["nodes"].size() << " nodes, without " << summary["removed"].dump()
                                        << (was.empty() ? "" : "; the clock was " + was));
}

// ---- growing populations ----

json network_changes::grow(const protocol::control_request& command) {
    const auto& population = command.population;
    const auto add = command.add;
    std::lock_guard<std::mutex> one_at_a_time(changing_);
    const auto run = lead_.current_run();
    const auto intent = run->intent();
    auto summary = restructure(run, intent, "grow of " + population + " by " + std::to_string(add),
                               [&](model::document& doc, std::int64_t tick) { add_applied_grow(*doc.net, population, add, tick); });
    std::uint64_t size = 0;
    lead_.read_network([&](const lead_state& state) {
        const auto& net = *state.plan.doc.net;
        size = model::members_in(model::symbol_table(net).extents(population, net.where));
    });
    return {{"population", population},
            {"added", add},
            {"size", size},
            {"first_new", population + "[" + std::to_string(size - static_cast<std::uint64_t>(add)) + "]"},
            {"tick", summary["tick"]},
            {"paused_ms", summary["paused_ms"]},
            {"moved", summary["moved"]},
            {"nodes", summary["nodes"]}};
}

void network_changes::grow_scheduled(std::int64_t tick) {
    try {
        std::lock_guard<std::mutex> one_at_a_time(changing_);
        const auto run = lead_.current_run();
        if (run->next_tick() != tick) return;  // frozen and moved on meanwhile: its clock meets the grow again
        const auto summary = restructure(run, run->intent(), "scheduled growth",
                                         [](model::document& doc, std::int64_t at) { apply_due_grows(*doc.net, at); });
        DNNC_LOG(info, "scheduled growth at tick " << tick << ": " << summary.dump());
    } catch (const std::exception& e) {
        // The run cannot go past a growth of its document's.
        const auto run = lead_.run_now();
        if (run && run->next_tick() == tick) run->fail("the growth at tick " + std::to_string(tick) + " failed: " + e.what());
    }
}

std::optional<plan::network_plan> network_changes::plan_ahead(const std::function<void(model::document&, std::int64_t)>& change,
                                                   std::int64_t tick, double migration_weight) {
    model::document doc;
    plan::current_placement placed;
    lead_.read_network([&](const lead_state& state) {
        doc = state.plan.doc;
        placed = plan::placement_of(state.plan);
    });
    placed.migration_weight = migration_weight;
    try {
        change(doc, tick);
        return lead_.plan_remembered(std::move(doc), &placed);  // a re-balance's proposal is remembered already
    } catch (const std::exception& e) {
        DNNC_LOG(info, "the change was not planned ahead: " << e.what());
        return std::nullopt;
    }
}

// The frozen run, snapshotted at its next tick T, changed by `change` (its document, at T)
// and restored onto the cluster the document then names, from where the neurons are (new
// ones go where there is room), with the rows and spikes before T; then it carries on as
// `intent` says. A change that does not check (or does not fit the nodes' memory) changes
// nothing: the run carries on and the error goes to the caller. The links that stay keep
// their measured times; a new link is measured.
json network_changes::restructure(const std::shared_ptr<lead_run>& run, const json& intent, const std::string& what,
                       const std::function<void(model::document&, std::int64_t)>& change, double migration_weight,
                       bool build_ahead) {
    namespace fs = std::filesystem;
    // The cluster planned ahead and its link times, when the nodes built their engines ahead.
    std::optional<std::pair<model::cluster, std::vector<plan::link_time>>> ahead;
    if (!run->paused()) {
        auto planned = plan_ahead(change, run->next_tick(), migration_weight);
        if (build_ahead && planned) {
            const auto cluster = *planned->doc.clu;
            if (auto times = lead_.prepare_engines(std::move(*planned))) ahead.emplace(cluster, std::move(*times));
        }
    }
    const auto started = clock_type::now();
    if (!run->paused()) run->freeze_for_change();
    const auto tick = run->next_tick();
    const fs::path dir = fs::path(options_.state_dir) / "growth";
    fs::create_directories(dir);
    // Named by this process too: every node of a user shares the state folder.
    const auto named = [&](const std::string& kind) {
        return (dir / (kind + "-" + std::to_string(::getpid()) + "-" + std::to_string(tick) + ".dnncs")).string();
    };
    const removed_at_exit before(named("before")), after(named("changed"));
    std::size_t neurons_before = 0;
    plan::current_placement placed;
    const carried_over earlier{run->rows_before(tick), run->spikes_before(tick), run->checkpoint_settings_json(),
                               run->structure_before(tick), intent, run->column_names()};
    bool captured = false;
    json summary;
    try {
        lead_.capture_snapshot(tick, before.path());
        captured = true;
        model::document changed = protocol::snapshot_reader(before.path(), lead_.file_access()).doc();
        neurons_before = model::symbol_table(*changed.net).neuron_count();
        const auto cluster_before = *changed.clu;
        change(changed, tick);
        write_grown_snapshot(before.path(), changed, after.path());
        std::vector<plan::link_time> measured;
        lead_.read_network([&](const lead_state& state) {
            measured = state.times;
            placed = plan::placement_of(state.plan);
        });
        placed.migration_weight = migration_weight;
        // The links that stay keep their measured times; a new one is measured (ahead, or now).
        const auto carried = ahead ? carried_link_times(ahead->first, ahead->second, *changed.clu)
                                   : carried_link_times(cluster_before, measured, *changed.clu);
        summary = restart_on_survivors(protocol::check_snapshot_file(after.path(), lead_.file_access()), {}, earlier, after.path(),
                                       carried ? &*carried : nullptr, &placed);
    } catch (const std::exception& e) {
        DNNC_LOG(warn, "the change at tick " << tick << " failed: " << e.what());
        if (lead_.run_now() == run) {
            // Nothing changed while the old run is the lead's: it carries on.
            try {
                resume(*run, intent);
            } catch (const std::exception& also) {
                DNNC_LOG(warn, "the run could not carry on after the failed change: " << also.what());
            }
            throw;
        }
        if (!captured) throw;
        // The old run had gone when the change failed (a node lost while the new one was
        // installed): the network as it was at T goes back onto the nodes that answer.
        const std::string at = "tick " + std::to_string(tick);
        try {
            restart_on_survivors(protocol::check_snapshot_file(before.path(), lead_.file_access()), {}, earlier, before.path(), nullptr, &placed);
            resume(*lead_.current_run(), intent);
        } catch (const std::exception& also) {
            throw error(std::string(e.what()) + "; the network could not go back to " + at + " either: " + also.what());
        }
        throw error(std::string(e.what()) + "; the network went back to how it was at " + at + ", on the nodes that answer");
    }
    const auto fresh = lead_.current_run();
    fresh->adopt_checkpoint(after.path(), tick);  // what it was restored from: recoverable at once
    resume(*fresh, intent);
    protocol::move_record move;
    lead_.read_network([&](const lead_state& state) { move = placement_change(placed, state.plan); });
    for (auto& node : move.nodes)
        for (const auto& installed : summary["nodes"])
            if (installed["id"] == node.id) {
                node.kept = installed.value("kept", false);
                node.prepared = installed.value("prepared", false);
            }
    move.what = what;
    move.tick = summary["tick"].get<std::int64_t>();
    move.paused_ms = elapsed_ms(started);
    summary["moved"] = move.moved;
    summary["placement"] = protocol::encode(move)["nodes"];
    summary["neurons_before"] = neurons_before;
    summary["paused_ms"] = move.paused_ms;
    note_move(std::move(move));
    return summary;
}

// ---- re-balancing, and nodes that join and leave ----

std::shared_ptr<lead_run> network_changes::run_to_change(const std::string& what) {
    if (!lead_.has_network()) throw usage_error(what + ": this node is not the lead of a network; submit one first");
    return lead_.current_run();
}

json network_changes::rebalance(const protocol::control_request& command) {
    const bool dry_run = command.dry_run;
    const double weight = migration_weight_of(command);
    std::lock_guard<std::mutex> one_at_a_time(changing_);
    const auto run = run_to_change("rebalance");
    model::document doc;
    plan::current_placement placed;
    partitioner::weight_t cut_before = 0;
    lead_.read_network([&](const lead_state& state) {
        doc = state.plan.doc;
        placed = plan::placement_of(state.plan);
        cut_before = state.plan.quality.edge_cut;
    });
    placed.migration_weight = weight;
    // New capacities first: a node found slower or faster than its document said.
    for (const auto& [id, capacity] : command.capacities) {
        auto node = std::find_if(doc.clu->nodes.begin(), doc.clu->nodes.end(), [&](const auto& n) { return n.id == id; });
        if (node == doc.clu->nodes.end()) throw usage_error("rebalance: the cluster has no node '" + id + "'");
        node->capacity = capacity;
    }
    // Planned while the network runs; the lead remembers the partition for the install (plan_ahead).
    const auto proposal = lead_.plan_remembered(doc, &placed);
    const auto change = placement_change(placed, proposal);
    json answer{{"moved", change.moved}, {"nodes", protocol::encode(change)["nodes"]}};
    answer["edge_cut"] = {{"before", cut_before}, {"after", proposal.quality.edge_cut}};
    answer["tick"] = run->next_tick();
    answer["applied"] = false;
    if (dry_run || answer["moved"] == 0) return answer;
    const auto summary = restructure(run, run->intent(), command.by_load ? "rebalance by load" : "rebalance",
                                     [&](model::document& d, std::int64_t) { d.clu = doc.clu; }, weight, true);
    lead_.read_network([&](const lead_state& state) { answer["edge_cut"]["after"] = state.plan.quality.edge_cut; });
    answer["moved"] = summary["moved"];
    answer["nodes"] = summary["placement"];
    answer["tick"] = summary["tick"];
    answer["paused_ms"] = summary["paused_ms"];
    answer["applied"] = true;
    return answer;
}

void network_changes::rebalance_by_load(const std::shared_ptr<lead_run>& run, const tick_times& times) {
    const auto& ms_per_tick = times.ms;
    std::vector<node_load> now, at_last_move;
    std::size_t lead_index = 0;
    double pause_share = model::run_settings{}.rebalance_pause_share;
    {
        // Given up, or the pauses' share is spent for now.
        std::lock_guard<std::mutex> lock(mutex_);
        if (!by_load_.may_move(clock_type::now())) return;
        at_last_move = by_load_.at_last_move();
    }
    if (lead_.run_now() != run) return;  // replaced meanwhile
    try {
        lead_.read_network([&](const lead_state& state) {
            if (const auto& settings = state.plan.doc.run) pause_share = settings->rebalance_pause_share;
            const auto& nodes = state.plan.doc.clu->nodes;
            const auto& neurons = state.plan.neurons_per_node;
            for (std::size_t v = 0; v < nodes.size(); ++v)
                now.push_back({nodes[v].id, nodes[v].capacity, v < neurons.size() ? static_cast<std::int64_t>(neurons[v]) : 0,
                               v < ms_per_tick.size() ? ms_per_tick[v] : 0.0, v < times.cpu_wait_ms.size() ? times.cpu_wait_ms[v] : 0.0});
            lead_index = state.topo.lead();
        });
        const auto step = next_load_step(now, at_last_move, lead_index);
        json reply;
        if (step.what == load_step::kind::stop) {
            std::lock_guard<std::mutex> lock(mutex_);
            by_load_.stop();
            DNNC_LOG(warn, "re-balancing by load stops for this network: moving more neurons would not make its slowest node faster "
                           "(ms per tick " << json(ms_per_tick).dump() << ", of it CPU wait " << json(times.cpu_wait_ms).dump() << ")");
            return;
        }
        if (step.what == load_step::kind::drain) {
            protocol::control_request command(protocol::control_request::kind::drain);
            command.node = now[step.node].id;
            command.by_load = true;
            reply = drain(command);
            DNNC_LOG(info, "drained '" << now[step.node].id << "' by load: it lost neurons and its ticks did not get faster (ms per tick "
                                       << json(ms_per_tick).dump() << "); " << reply["moved"] << " neurons moved");
        } else {
            protocol::control_request command(protocol::control_request::kind::rebalance);
            command.by_load = true;
            for (std::size_t v = 0; v < now.size(); ++v) command.capacities[now[v].id] = step.capacity[v];
            reply = rebalance(command);
            DNNC_LOG(info, "re-balanced by load (ms per tick " << json(ms_per_tick).dump() << ", capacities "
                                                               << json(command.capacities).dump() << "): " << reply["moved"]
                                                               << " neurons moved");
        }
        std::lock_guard<std::mutex> lock(mutex_);
        by_load_.moved(std::move(now), clock_type::now(), reply.value("paused_ms", 0.0), pause_share);
    } catch (const std::exception& e) {
        DNNC_LOG(warn, "the re-balance by load failed: " << e.what());
    }
}

void network_changes::note_move(protocol::move_record move) {
    std::lock_guard<std::mutex> lock(mutex_);
    moves_.push_back(std::move(move));
    while (moves_.size() > max_moves_listed) moves_.pop_front();
}

std::vector<protocol::move_record> network_changes::moves() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {moves_.begin(), moves_.end()};
}

void network_changes::forget_moves() {
    std::lock_guard<std::mutex> lock(mutex_);
    moves_.clear();
    by_load_ = {};
}

json network_changes::join(const protocol::control_request& command) {
    model::cluster_node node;
    node.id = command.node;
    const std::string what = "join of '" + node.id + "'";
    const auto at = parse_endpoint(command.address);
    node.host = at.host;
    node.port = at.port;
    node.capacity = command.capacity;
    std::lock_guard<std::mutex> one_at_a_time(changing_);
    const auto run = run_to_change(what);
    std::vector<std::string> links;
    lead_.read_network([&](const lead_state& state) {
        const auto& nodes = state.plan.doc.clu->nodes;
        auto known = [&](const std::string& id) { return std::any_of(nodes.begin(), nodes.end(), [&](const auto& n) { return n.id == id; }); };
        if (known(node.id)) throw usage_error(what + ": the cluster has a node '" + node.id + "' already");
        for (const auto& l : command.links) {
            if (!known(l)) throw usage_error(what + ": a link to '" + l + "', which the cluster has no node of");
            links.push_back(l);
        }
        if (links.empty()) links.push_back(state.topo.id(state.topo.lead()));  // linked to the lead
    });
    // It answers with the cluster's secret and serves no network: nothing is lost on it.
    json beat;
    try {
        beat = json::parse(calls_.call(at, frame{message_type::heartbeat, 0, 0, {}}, std::chrono::seconds(2)).payload);
    } catch (const std::exception& e) {
        throw usage_error(what + ": the node at " + at.text() + " does not answer as a node of this cluster: " + e.what());
    }
    if (beat.contains("lead"))
        throw usage_error(what + ": the node at " + at.text() + " serves a network of lead '" + beat["lead"].get<std::string>() +
                          "'; only a node that serves none joins");
    auto summary = restructure(run, run->intent(), what, [&](model::document& doc, std::int64_t) {
        doc.clu->nodes.push_back(node);
        for (const auto& other : links) doc.clu->links.push_back({other, node.id, 0.0, std::nullopt, {}});
    }, migration_weight_of(command), true);
    return {{"joined", node.id}, {"tick", summary["tick"]}, {"moved", summary["moved"]}, {"nodes", summary["placement"]},
            {"paused_ms", summary["paused_ms"]}};
}

json network_changes::drain(const protocol::control_request& command) {
    const auto& id = command.node;
    const std::string what = "drain of '" + id + "'" + (command.by_load ? " by load" : "");
    std::lock_guard<std::mutex> one_at_a_time(changing_);
    const auto run = run_to_change(what);
    endpoint at;
    std::uint64_t epoch = 0;
    lead_.read_network([&](const lead_state& state) {
        const auto& nodes = state.plan.doc.clu->nodes;
        const auto node = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.id == id; });
        if (node == nodes.end()) throw usage_error(what + ": the cluster has no node '" + id + "'");
        if (id == state.topo.id(state.topo.lead()))
            throw usage_error(what + ": it is the lead, which runs the clock; only another node drains");
        at = {node->host, static_cast<std::uint16_t>(node->port)};
        epoch = state.epoch;
        const auto& cluster = *state.plan.doc.clu;
        const auto reached = reached_from(cluster, state.topo.id(state.topo.lead()), {id});
        for (const auto& n : cluster.nodes)
            if (n.id != id && reached.count(n.id) == 0)
                throw usage_error(what + ": node '" + n.id + "' would be cut off from the lead: its every chain of links to it passes '" +
                                  id + "'");
    });
    auto summary = restructure(run, run->intent(), what, [&](model::document& doc, std::int64_t) {
        auto& nodes = doc.clu->nodes;
        nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.id == id; }), nodes.end());
        auto& links = doc.clu->links;
        links.erase(std::remove_if(links.begin(), links.end(), [&](const auto& l) { return l.from == id || l.to == id; }), links.end());
    }, migration_weight_of(command), true);
    // Out of the cluster, it still holds the installation it left: it lets it go.
    bool released = true;
    try {
        calls_.call(at, frame{message_type::release, 0, 0, json{{"epoch", std::to_string(epoch)}}.dump()}, std::chrono::seconds(10));
    } catch (const std::exception& e) {
        released = false;
        DNNC_LOG(warn, "node '" << id << "' was drained but did not let its installation go: " << e.what());
    }
    return {{"drained", id}, {"released", released}, {"tick", summary["tick"]}, {"moved", summary["moved"]},
            {"nodes", summary["placement"]}, {"paused_ms", summary["paused_ms"]}};
}

}  // namespace dnnc::node_server
