#include "dnnc/node_server/node.hpp"

#include "dnnc/plan/plan.hpp"
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/plan/topology.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "lead_run.hpp"
#include "node_simulation.hpp"
#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/xml.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <condition_variable>
#include <future>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include <unistd.h>

namespace dnnc::node_server {

using json = nlohmann::json;
using clock_type = std::chrono::steady_clock;
using protocol::frame;
using protocol::message_type;

namespace {

double elapsed_ms(clock_type::time_point since) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - since).count();
}

// Emulated link delay: sleeps most of it, then spins to the deadline, because a plain sleep
// overshoots by the timer slack and the overshoot would add to every measured latency.
void hold_back(double ms) {
    if (ms <= 0) return;
    const auto deadline = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                                  std::chrono::duration<double, std::milli>(ms));
    const auto spin = std::chrono::microseconds(300);
    if (deadline - clock_type::now() > spin) std::this_thread::sleep_until(deadline - spin);
    while (clock_type::now() < deadline) std::this_thread::yield();
}

frame reply_of(message_type type, std::string payload = {}) { return frame{type, 0, 0, std::move(payload)}; }

// A probe's source route: who to visit, and the emulated delay of the link into each hop.
struct probe_hop {
    std::string id;
    endpoint at;
    double link_delay_ms = 0;
};

json route_to_json(const std::vector<probe_hop>& route, std::size_t hop) {
    json r = json::array();
    for (const auto& h : route) r.push_back({{"id", h.id}, {"host", h.at.host}, {"port", h.at.port}, {"delay", h.link_delay_ms}});
    return {{"route", r}, {"hop", hop}};
}

std::pair<std::vector<probe_hop>, std::size_t> route_from_json(const std::string& payload) {
    const json j = json::parse(payload);
    std::vector<probe_hop> route;
    for (const auto& h : j.at("route"))
        route.push_back({h.at("id").get<std::string>(), {h.at("host").get<std::string>(), h.at("port").get<std::uint16_t>()},
                         h.at("delay").get<double>()});
    const auto hop = j.at("hop").get<std::size_t>();
    if (route.size() < 2 || route.size() > 1024 || hop == 0 || hop >= route.size()) throw protocol_error("malformed probe route");
    return {route, hop};
}

}  // namespace

struct node::impl {
    node_options options;
    signal_inbox signals_in;  // outlives the server, whose thread adopts links into it
    server srv;
    peer_client calls;       // configure, probes
    std::mutex mutex;
    std::condition_variable changed;
    bool stopping = false;

    // What this node runs (its own config, without the subtree) and its simulation.
    std::optional<protocol::node_config> config;
    std::string config_hash;
    outbox signals_out;  // opens signal links
    outbox reports_out;  // tick reports to the lead
    std::shared_ptr<node_simulation> simulation;
    std::vector<std::pair<std::string, endpoint>> tree_children;  // where this node forwarded configs
    plan::partition_memo last_partition;  // of the last network this node planned as the lead

    // Only on the lead.
    struct lead_state {
        plan::network_plan plan;
        plan::topology topo;
        std::vector<plan::link_time> times;
        std::vector<double> windows;
        std::vector<clock_type::time_point> last_seen;
        std::vector<std::string> last_error;
        clock_type::time_point since;
    };
    std::shared_ptr<lead_state> lead;
    std::shared_ptr<lead_run> run;
    std::uint64_t lead_generation = 0;  // bumps when a new network replaces the old
    std::list<std::thread> heartbeat_threads;
    std::list<std::future<void>> tasks;

    explicit impl(node_options o)
        : options(std::move(o)),
          signals_in(options.server.secret, options.server.max_payload),
          srv(options.server),
          calls(options.server.secret, options.server.max_payload),
          signals_out(protocol::encode_frame(frame{message_type::signal_link, 0, 0, {}}, options.server.secret)) {
        srv.hand_over(message_type::signal_link, [this](const frame&, int socket) { signals_in.adopt(socket); });
    }

    // Long operations (fan-out, a whole submit) leave the server's threads free.
    void run_task(std::function<void()> task) {
        std::lock_guard<std::mutex> lock(mutex);
        tasks.remove_if([](std::future<void>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
        tasks.push_back(std::async(std::launch::async, std::move(task)));
    }

    double extra_delay_to(const std::string& peer) const {
        const auto it = options.emulate_delay_ms.find(peer);
        return it == options.emulate_delay_ms.end() ? 0.0 : it->second;
    }

    // ---- configure: install own config, forward the subtrees, gather acks ----

    json configure_subtree(const protocol::node_config& subtree, bool replace) {
        protocol::node_config own = subtree;
        own.children.clear();
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (config && !replace)
                throw error("node '" + own.node + "' already serves network '" + config->network +
                            "'; submit with --replace to replace it");
        }
        // Each subtree travels in one frame: refuse before anything changes when one is too big.
        std::vector<std::string> payloads;
        for (const auto& child : subtree.children) {
            payloads.push_back(protocol::serialize(child));
            if (payloads.back().size() > options.server.max_payload)
                throw error("the configs of node '" + child.node + "' and its subtree take " +
                            std::to_string(payloads.back().size() >> 20) + " MiB, above the frame limit of " +
                            std::to_string(options.server.max_payload >> 20) +
                            " MiB: this network has too many synapses per node to be distributed");
        }
        // The children's subtrees travel while this node installs its own share.
        std::vector<std::future<json>> children;
        for (std::size_t k = 0; k < subtree.children.size(); ++k)
            children.push_back(std::async(std::launch::async, [this, &child = subtree.children[k], &payload = payloads[k], replace] {
                const endpoint to{child.host, static_cast<std::uint16_t>(child.port)};
                frame request{message_type::configure, replace ? protocol::replace_flag : std::uint16_t{0}, 0, payload};
                try {
                    return json::parse(calls.call(to, std::move(request), options.call_timeout).payload);
                } catch (const remote_error& e) {
                    throw remote_error(e.what());
                } catch (const std::exception& e) {
                    throw remote_error("node '" + child.node + "' (" + to.text() + "): " + e.what());
                }
            }));
        std::exception_ptr own_failure;
        try {
            install(own);
            std::lock_guard<std::mutex> lock(mutex);
            tree_children.clear();
            for (const auto& child : subtree.children)
                tree_children.push_back({child.node, {child.host, static_cast<std::uint16_t>(child.port)}});
        } catch (...) {
            own_failure = std::current_exception();
        }
        json acks = json::array({{{"node", own.node}, {"hash", config_hash}}});
        std::string failure;
        for (auto& f : children) {
            try {
                for (auto& a : f.get()) acks.push_back(a);
            } catch (const std::exception& e) {
                if (failure.empty()) failure = e.what();
            }
        }
        if (own_failure) std::rethrow_exception(own_failure);
        DNNC_LOG(info, "node '" << own.node << "' installed its share of network '" << own.network << "': "
                                << own.neurons.size() << " neurons");
        if (!failure.empty()) throw remote_error(failure);
        return acks;
    }

    // Replaces what this node runs: the old simulation stops before the new one starts.
    void install(const protocol::node_config& own) {
        std::shared_ptr<node_simulation> old;
        std::shared_ptr<lead_run> old_run;
        {
            std::lock_guard<std::mutex> lock(mutex);
            old = std::move(simulation);
            if (own.lead != own.node) {
                lead.reset();
                old_run = std::move(run);
                ++lead_generation;
            }
        }
        // Released without the lock: a run's clock thread takes it on its way out.
        old_run.reset();
        old.reset();
        const endpoint lead_at{own.lead_host, static_cast<std::uint16_t>(own.lead_port)};
        const bool is_lead = own.lead == own.node;
        auto reporter = [this, lead_at, is_lead](const json& report) {
            if (is_lead) {
                std::shared_ptr<lead_run> r;
                {
                    std::lock_guard<std::mutex> lock(mutex);
                    r = run;
                }
                // Runs on the runner's thread, which must never see an exception.
                try {
                    if (r) r->on_report(report);
                } catch (const std::exception& e) {
                    DNNC_LOG(warn, "tick report dropped: " << e.what());
                }
                return;
            }
            reports_out.send(lead_at, protocol::encode_frame(frame{message_type::tick_report, 0, 0, report.dump()},
                                                              options.server.secret));
        };
        auto fresh = std::make_shared<node_simulation>(own, options.server.secret, signals_out, signals_in, reporter,
                                                       options.emulate_delay_ms, options.device);
        std::lock_guard<std::mutex> lock(mutex);
        config = own;
        config_hash = plan::config_hash(own);
        simulation = std::move(fresh);
    }

    std::shared_ptr<node_simulation> current_simulation() {
        std::lock_guard<std::mutex> lock(mutex);
        if (!simulation) throw error("this node serves no network");
        return simulation;
    }

    std::shared_ptr<lead_run> current_run() {
        std::lock_guard<std::mutex> lock(mutex);
        if (!run) throw error("this node is not the lead of a network");
        return run;
    }

    // The lead's way to reach node v for clock and inputs: itself directly, others by call.
    lead_run::links run_links(const std::shared_ptr<lead_state>& state) {
        auto call = [this, state](std::size_t v, message_type type, const json& body) {
            const auto& n = state->plan.doc.clu->nodes[v];
            const auto reply = calls.call({n.host, static_cast<std::uint16_t>(n.port)}, frame{type, 0, 0, body.dump()},
                                          std::chrono::seconds(10));
            return reply.payload.empty() ? json() : json::parse(reply.payload);
        };
        lead_run::links l;
        l.clock = [this, state, call](std::size_t v, const json& request) {
            if (v == state->topo.lead()) return current_simulation()->clock(request);
            return call(v, message_type::clock, request);
        };
        l.inputs = [this, state, call](std::size_t v, const json& inputs) {
            if (v == state->topo.lead())
                current_simulation()->add_inputs(inputs);
            else
                call(v, message_type::inputs, inputs);
        };
        l.capture = [this](std::int64_t tick) { return capture_snapshot(tick); };
        l.alive = [this, state](std::size_t v) {
            if (v == state->topo.lead()) return true;
            const double timeout_ms = state->plan.doc.run ? state->plan.doc.run->heartbeat_timeout_ms
                                                          : protocol::run_settings{}.heartbeat_timeout_ms;
            std::lock_guard<std::mutex> lock(mutex);
            return elapsed_ms(state->last_seen[v]) <= timeout_ms;
        };
        return l;
    }

    // ---- snapshots ----

    // This node's states and those of its subtree, gathered along the broadcast tree.
    std::vector<protocol::indexed_state> capture_subtree() {
        auto states = current_simulation()->capture();
        std::vector<std::pair<std::string, endpoint>> children;
        {
            std::lock_guard<std::mutex> lock(mutex);
            children = tree_children;
        }
        std::vector<std::future<std::string>> replies;
        for (const auto& [id, at] : children)
            replies.push_back(std::async(std::launch::async, [this, id = id, at = at] {
                try {
                    return calls.call(at, frame{message_type::capture, 0, 0, {}}, options.call_timeout).payload;
                } catch (const remote_error&) {
                    throw;
                } catch (const std::exception& e) {
                    throw remote_error("node '" + id + "' (" + at.text() + "): " + e.what());
                }
            }));
        for (auto& r : replies)
            for (auto& s : protocol::decode_states(r.get())) states.push_back(std::move(s));
        return states;
    }

    std::string snapshot() {
        const auto r = current_run();
        if (!r->paused()) throw usage_error("the network must be frozen before a snapshot (dnnc freeze)");
        return capture_snapshot(r->next_tick());
    }

    // A binary snapshot at `tick`; every node's runner must be paused there. Called from a
    // run's ticker thread for checkpoints, so it holds no reference to a run: were the run
    // replaced meanwhile, that reference could be the last, ending the run on its own thread.
    std::string capture_snapshot(std::int64_t tick) {
        std::shared_ptr<lead_state> state;
        {
            std::lock_guard<std::mutex> lock(mutex);
            state = lead;
        }
        if (const auto& settings = state->plan.doc.run; settings && settings->batch > 1)
            throw usage_error("this run has batch " + std::to_string(settings->batch) +
                              ": snapshots hold one lane, so batched runs cannot be snapshotted");
        auto states = capture_subtree();
        std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
        const auto& net = state->plan.net;
        if (states.size() != net.neuron_count())
            throw error("the nodes returned " + std::to_string(states.size()) + " neuron states for " +
                        std::to_string(net.neuron_count()) + " neurons");
        protocol::document doc = state->plan.doc;
        doc.state = protocol::snapshot_state{tick, {}, {}};
        doc.state->neurons.reserve(states.size());
        for (const auto& s : states)
            doc.state->neurons.push_back({net.neuron_name(static_cast<protocol::neuron_index>(s.index)), s.output,
                                          {s.variables.begin(), s.variables.end()}, {s.history.begin(), s.history.end()}, {}});
        return protocol::encode_binary_snapshot(doc, net);
    }

    // Sends every node the states it needs: its own neurons and the remote ones it reads.
    void distribute_states(const protocol::node_config& root, const std::vector<protocol::indexed_state>& states,
                           std::int64_t tick) {
        std::vector<const protocol::node_config*> all{&root};
        for (std::size_t k = 0; k < all.size(); ++k)
            for (const auto& child : all[k]->children) all.push_back(&child);
        std::vector<std::future<void>> sent;
        for (const auto* c : all) {
            std::vector<protocol::indexed_state> part;
            std::set<std::int64_t> wanted;
            for (const auto& n : c->neurons) wanted.insert(n.index);
            for (const auto& peer : c->peers) wanted.insert(peer.receives.begin(), peer.receives.end());
            for (auto i : wanted) part.push_back(states[static_cast<std::size_t>(i)]);
            std::string payload(sizeof tick, '\0');
            std::memcpy(payload.data(), &tick, sizeof tick);
            payload += protocol::encode_states(part);
            if (c == &root) {
                current_simulation()->restore(part, tick);
                continue;
            }
            const endpoint at{c->host, static_cast<std::uint16_t>(c->port)};
            const std::string id = c->node;
            sent.push_back(std::async(std::launch::async, [this, at, id, payload = std::move(payload)] {
                try {
                    calls.call(at, frame{message_type::restore_state, 0, 0, payload}, options.call_timeout);
                } catch (const std::exception& e) {
                    throw error("node '" + id + "' did not take its state: " + e.what());
                }
            }));
        }
        for (auto& f : sent) f.get();
    }

    void restore_state(const std::string& payload) {
        std::int64_t tick = 0;
        if (payload.size() < sizeof tick) throw protocol_error("restore payload is truncated");
        std::memcpy(&tick, payload.data(), sizeof tick);
        current_simulation()->restore(protocol::decode_states(std::string_view(payload).substr(sizeof tick)), tick);
    }

    // Restores the last checkpoint onto the nodes still alive and keeps the outputs before
    // it, so the run goes on as if the failure had not happened; frozen at the checkpoint.
    json recover() {
        const auto old_run = current_run();
        std::shared_ptr<lead_state> state;
        {
            std::lock_guard<std::mutex> lock(mutex);
            state = lead;
        }
        const std::string file = old_run->last_checkpoint();
        if (file.empty()) throw error("there is no checkpoint to recover from (set checkpoint-every or dnnc checkpoint)");
        protocol::document doc = protocol::load_snapshot(file);
        const auto alive = run_links(state).alive;
        std::set<std::string> dead;
        for (std::size_t v = 0; v < state->topo.node_count(); ++v)
            if (!alive(v)) dead.insert(state->topo.id(v));
        auto& nodes = doc.clu->nodes;
        nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [&](const auto& n) { return dead.count(n.id) > 0; }), nodes.end());
        auto& links = doc.clu->links;
        links.erase(std::remove_if(links.begin(), links.end(),
                                   [&](const auto& l) { return dead.count(l.from) > 0 || dead.count(l.to) > 0; }),
                    links.end());
        if (doc.run) doc.run->clock.clear();
        protocol::check_cluster(*doc.clu);
        const auto tick = doc.state->tick;
        auto earlier = old_run->rows_before(tick);
        const auto checkpoints = old_run->checkpoints();
        json summary = submit(protocol::serialize(doc), true);
        const auto fresh = current_run();
        fresh->adopt_rows(std::move(earlier));
        fresh->set_checkpoints(checkpoints);
        json removed = json::array();
        for (const auto& d : dead) removed.push_back(d);
        summary["recovered_from"] = file;
        summary["removed"] = removed;
        DNNC_LOG(info, "recovered from " << file << " at tick " << tick << " without " << removed.dump());
        return summary;
    }

    // ---- probes ----

    // Forwards a probe one hop further, or answers it at the far end; both directions hold
    // back the link's emulated delay.
    void forward_probe(const std::vector<probe_hop>& route, std::size_t hop) {
        if (hop + 1 < route.size()) {
            const auto& next = route[hop + 1];
            hold_back(next.link_delay_ms + extra_delay_to(next.id));
            calls.call(next.at, frame{message_type::probe, 0, 0, route_to_json(route, hop + 1).dump()}, options.call_timeout);
        }
        hold_back(route[hop].link_delay_ms + extra_delay_to(route[hop - 1].id));
    }

    // One round trip from the lead along `route` (node indices), in ms.
    double probe_once(const plan::network_plan& plan, const std::vector<std::size_t>& path) {
        std::vector<probe_hop> route;
        for (std::size_t k = 0; k < path.size(); ++k) {
            const auto& node = plan.doc.clu->nodes[path[k]];
            const double delay = k > 0 ? plan::emulate_delay(plan.doc.clu->links, plan.doc.clu->nodes[path[k - 1]].id, node.id) : 0.0;
            route.push_back({node.id, {node.host, static_cast<std::uint16_t>(node.port)}, delay});
        }
        const auto start = clock_type::now();
        hold_back(route[1].link_delay_ms + extra_delay_to(route[1].id));
        try {
            calls.call(route[1].at, frame{message_type::probe, 0, 0, route_to_json(route, 1).dump()}, options.call_timeout);
        } catch (const std::exception& e) {
            std::string names;
            for (const auto& h : route) names += (names.empty() ? "" : " -> ") + h.id;
            throw error("latency probe along " + names + " failed: " + e.what());
        }
        return elapsed_ms(start);
    }

    std::vector<plan::link_time> measure_links(const plan::network_plan& plan, const plan::topology& topo) {
        const auto paths = plan::plan_probes(topo);
        const int rounds = plan.doc.run ? plan.doc.run->probes : protocol::run_settings{}.probes;
        std::vector<std::vector<double>> samples(paths.size());
        for (std::size_t p = 0; p < paths.size(); ++p) {
            probe_once(plan, paths[p].route);  // warm-up: opens the connections on the way
            for (int r = 0; r < rounds; ++r) samples[p].push_back(probe_once(plan, paths[p].route));
        }
        auto times = plan::link_times(paths, samples);
        for (const auto& t : times) {
            const auto [a, b] = topo.link(t.link);
            DNNC_LOG(info, "link " << topo.id(a) << " - " << topo.id(b) << ": " << t.latency_ms << " ms (round trip "
                                   << t.round_trip_ms << " ms" << (t.clamped ? ", clamped" : "")
                                   << (t.noisy ? ", noisy" : "") << ")");
        }
        return times;
    }

    // ---- submit: this node becomes the lead ----

    std::size_t find_self(const protocol::cluster& clu) const {
        const auto my_port = srv.port();
        std::optional<std::size_t> loopback_match;
        for (std::size_t i = 0; i < clu.nodes.size(); ++i) {
            const auto& n = clu.nodes[i];
            if (n.port != my_port) continue;
            if (n.host == options.server.bind) return i;
            if (is_loopback_host(n.host) && is_loopback_host(options.server.bind)) loopback_match = i;
        }
        if (loopback_match) return *loopback_match;
        throw usage_error("this node (" + options.server.bind + ":" + std::to_string(my_port) +
                          ") is not one of the cluster's nodes; submit to a node the document names");
    }

    json submit(const std::string& payload, bool replace) {
        const auto started = clock_type::now();
        protocol::document doc = protocol::is_binary_snapshot(payload)
                                     ? protocol::decode_binary_snapshot(payload, "submitted snapshot")
                                     : protocol::parse_document(payload, "submitted document");
        protocol::check_document(doc);
        if (!doc.net || !doc.clu) throw usage_error("a submitted document needs a <network> and a <cluster>");
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (config && !replace)
                throw error("this node already serves network '" + config->network + "'; submit with --replace to replace it");
        }
        doc.clu->lead = doc.clu->nodes[find_self(*doc.clu)].id;
        DNNC_LOG(info, "document read and checked in " << elapsed_ms(started) << " ms");
        plan::partition_memo memo;
        {
            std::lock_guard<std::mutex> lock(mutex);
            memo = last_partition;
        }
        plan::network_plan plan = plan::plan_network(std::move(doc), &memo);
        lead_run::check_outputs(plan);
        {
            std::lock_guard<std::mutex> lock(mutex);
            last_partition = std::move(memo);
        }
        DNNC_LOG(info, "expanded and partitioned in " << elapsed_ms(started) << " ms");
        // A snapshot's state is checked before anything changes on the cluster.
        const auto states = plan.doc.state ? protocol::states_of(plan.doc, plan.net) : std::vector<protocol::indexed_state>{};
        {
            // The run being replaced stops its clock first, released without the lock.
            std::shared_ptr<lead_run> previous;
            {
                std::lock_guard<std::mutex> lock(mutex);
                previous = std::move(run);
            }
        }
        const std::int64_t first_tick = plan.doc.state ? plan.doc.state->tick : 0;
        plan.doc.state.reset();
        plan::topology topo(*plan.doc.clu);
        auto state = std::make_shared<lead_state>(lead_state{std::move(plan), std::move(topo), {}, {}, {}, {}, {}});
        state->times = measure_links(state->plan, state->topo);
        std::vector<double> latency(state->topo.link_count(), 0.0);
        for (const auto& t : state->times) latency[t.link] = t.latency_ms;
        state->windows = plan::wait_windows(state->plan, state->topo, latency);
        DNNC_LOG(info, "links measured after " << elapsed_ms(started) << " ms");
        const protocol::node_config root = plan::build_configs(state->plan, state->topo, latency, state->windows, plan::draw_epoch());
        DNNC_LOG(info, "configs built after " << elapsed_ms(started) << " ms");

        std::map<std::string, std::string> expected;
        std::vector<const protocol::node_config*> stack{&root};
        while (!stack.empty()) {
            const auto* c = stack.back();
            stack.pop_back();
            expected[c->node] = plan::config_hash(*c);
            for (const auto& child : c->children) stack.push_back(&child);
        }
        const json acks = configure_subtree(root, replace);
        for (const auto& a : acks) {
            const auto node = a.at("node").get<std::string>();
            if (expected[node] != a.at("hash").get<std::string>())
                throw error("node '" + node + "' acknowledged a config that differs from the one sent");
            expected.erase(node);
        }
        if (!expected.empty()) throw error("node '" + expected.begin()->first + "' did not acknowledge its config");

        DNNC_LOG(info, "configs installed after " << elapsed_ms(started) << " ms");
        if (!states.empty()) distribute_states(root, states, first_tick);

        state->since = clock_type::now();
        state->last_seen.assign(state->topo.node_count(), state->since);
        state->last_error.assign(state->topo.node_count(), {});
        std::vector<std::string> hashes;
        for (std::size_t v = 0; v < state->topo.node_count(); ++v) hashes.push_back(acks_hash(acks, state->topo.id(v)));
        auto new_run = std::make_shared<lead_run>(state->plan, state->topo, run_links(state), std::move(hashes), first_tick);
        {
            std::lock_guard<std::mutex> lock(mutex);
            run = std::move(new_run);
        }
        start_heartbeats(state);

        json nodes = json::array();
        for (std::size_t v = 0; v < state->topo.node_count(); ++v)
            nodes.push_back({{"id", state->topo.id(v)}, {"neurons", state->plan.neurons_per_node[v]},
                             {"hash", acks_hash(acks, state->topo.id(v))}});
        DNNC_LOG(info, "network '" << state->plan.net.name << "' installed on " << nodes.size() << " nodes in "
                                   << elapsed_ms(started) << " ms");
        return {{"network", state->plan.net.name}, {"lead", state->topo.id(state->topo.lead())}, {"nodes", nodes},
                {"tick", first_tick},
                {"edge_cut", state->plan.quality.edge_cut}, {"seconds", elapsed_ms(started) / 1000}};
    }

    static std::string acks_hash(const json& acks, const std::string& node) {
        for (const auto& a : acks)
            if (a.at("node") == node) return a.at("hash");
        return {};
    }

    // ---- heartbeats (lead only) ----

    void start_heartbeats(const std::shared_ptr<lead_state>& state) {
        std::lock_guard<std::mutex> guard(mutex);
        lead = state;
        const auto generation = ++lead_generation;
        const double timeout_ms = state->plan.doc.run ? state->plan.doc.run->heartbeat_timeout_ms
                                                      : protocol::run_settings{}.heartbeat_timeout_ms;
        const auto period = std::chrono::duration<double, std::milli>(std::clamp(timeout_ms / 4, 20.0, 500.0));
        for (std::size_t v = 0; v < state->topo.node_count(); ++v) {
            if (v == state->topo.lead()) continue;
            heartbeat_threads.emplace_back([this, state, v, generation, period, timeout_ms] {
                peer_client pinger(options.server.secret);
                const auto& n = state->plan.doc.clu->nodes[v];
                const endpoint to{n.host, static_cast<std::uint16_t>(n.port)};
                const auto wait = std::chrono::milliseconds(static_cast<long>(std::max(10.0, timeout_ms / 2)));
                while (true) {
                    {
                        std::unique_lock<std::mutex> lock(mutex);
                        changed.wait_for(lock, period, [&] { return stopping || lead_generation != generation; });
                        if (stopping || lead_generation != generation) return;
                    }
                    try {
                        pinger.call(to, frame{message_type::heartbeat, 0, 0, {}}, wait);
                        std::lock_guard<std::mutex> lock(mutex);
                        state->last_seen[v] = clock_type::now();
                        state->last_error[v].clear();
                    } catch (const std::exception& e) {
                        std::lock_guard<std::mutex> lock(mutex);
                        if (state->last_error[v].empty())
                            DNNC_LOG(warn, "heartbeat to node '" << n.id << "' failed: " << e.what());
                        state->last_error[v] = e.what();
                    }
                }
            });
        }
        changed.notify_all();
    }

    // ---- status ----

    json status() {
        std::shared_ptr<lead_run> r;
        {
            std::lock_guard<std::mutex> lock(mutex);
            r = run;
        }
        // Asked without the node's lock: the run takes it to see which nodes are alive.
        const json progress = r ? r->control(json{{"command", "progress"}}) : json();
        std::lock_guard<std::mutex> lock(mutex);
        // The pid tells a starter which process answers on the port (see start_local_cluster).
        json s{{"state", config ? "idle" : "unconfigured"}, {"tick", 0}, {"pid", getpid()}};
        if (r) {
            s["state"] = progress["state"];
            s["tick"] = progress["completed"];
            if (progress.contains("error")) s["error"] = progress["error"];
        }
        if (config) {
            s["node"] = config->node;
            s["network"] = config->network;
            s["lead"] = config->lead;
            s["neurons"] = config->neurons.size();
            s["config_hash"] = config_hash;
            s["epoch"] = std::to_string(config->epoch);  // a string: JSON readers may hold doubles only
        }
        if (!lead) {
            s["role"] = config ? "worker" : "none";
            return s;
        }
        s["role"] = "lead";
        const auto& topo = lead->topo;
        const auto& doc = lead->plan.doc;
        const std::string clock = doc.run && !doc.run->clock.empty() ? doc.run->clock : topo.id(topo.lead());
        const double timeout_ms = doc.run ? doc.run->heartbeat_timeout_ms : protocol::run_settings{}.heartbeat_timeout_ms;
        json nodes = json::array(), dead = json::array();
        for (std::size_t v = 0; v < topo.node_count(); ++v) {
            json roles = json::array();
            if (v == topo.lead()) roles.push_back("lead");
            if (topo.id(v) == clock) roles.push_back("clock");
            if (roles.empty()) roles.push_back("worker");
            const double silent_ms = v == topo.lead() ? 0.0 : elapsed_ms(lead->last_seen[v]);
            const bool alive = silent_ms <= timeout_ms;
            const auto& n = doc.clu->nodes[v];
            json entry{{"id", n.id}, {"address", n.host + ":" + std::to_string(n.port)}, {"roles", roles},
                       {"capacity", n.capacity}, {"neurons", lead->plan.neurons_per_node[v]}, {"alive", alive},
                       {"silent_ms", silent_ms}};
            if (!alive) {
                entry["error"] = lead->last_error[v];
                dead.push_back(n.id);
            }
            nodes.push_back(entry);
        }
        json links = json::array();
        for (const auto& t : lead->times) {
            const auto [a, b] = topo.link(t.link);
            links.push_back({{"from", topo.id(a)}, {"to", topo.id(b)}, {"latency_ms", t.latency_ms},
                             {"round_trip_ms", t.round_trip_ms}, {"clamped", t.clamped}, {"noisy", t.noisy}});
        }
        std::vector<double> remote;
        for (double w : lead->windows)
            if (w > 0) remote.push_back(w);
        json windows{{"neurons_with_remote_inputs", remote.size()}};
        if (!remote.empty()) {
            windows["min_ms"] = *std::min_element(remote.begin(), remote.end());
            windows["median_ms"] = plan::median(remote);
            windows["max_ms"] = *std::max_element(remote.begin(), remote.end());
        }
        s["nodes"] = nodes;
        s["links"] = links;
        s["wait_windows"] = windows;
        s["dead"] = dead;
        s["edge_cut"] = lead->plan.quality.edge_cut;
        s["imbalance"] = lead->plan.quality.max_imbalance;
        return s;
    }

    void shutdown_all() {
        {
            std::lock_guard<std::mutex> lock(mutex);
            stopping = true;
            lead_generation++;
        }
        changed.notify_all();
    }
};

namespace {

// submit, configure, probe.
class neural_module final : public module {
public:
    explicit neural_module(node::impl& n) : node_(n) {}
    std::vector<message_type> handles() const override {
        // Signals come only over signal links, which leave the server (signal_inbox.hpp).
        return {message_type::submit, message_type::configure, message_type::probe, message_type::tick_report, message_type::clock, message_type::inputs, message_type::control,
                message_type::output, message_type::snapshot, message_type::capture, message_type::restore_state};
    }
    void handle(const frame& request, responder respond) override {
        const bool replace = request.flags & protocol::replace_flag;
        switch (request.type) {
        case message_type::submit:
            node_.run_task([this, payload = request.payload, replace, respond] {
                respond_with(respond, [&] { return reply_of(message_type::submit_reply, node_.submit(payload, replace).dump()); });
            });
            return;
        case message_type::configure:
            node_.run_task([this, payload = request.payload, replace, respond] {
                respond_with(respond, [&] {
                    const auto config = protocol::parse_node_config(payload, "node config");
                    return reply_of(message_type::configure_reply, node_.configure_subtree(config, replace).dump());
                });
            });
            return;
        case message_type::probe: {
            std::vector<probe_hop> route;
            std::size_t hop = 0;
            try {
                std::tie(route, hop) = route_from_json(request.payload);
            } catch (const json::exception& e) {
                throw protocol_error(std::string("malformed probe: ") + e.what());
            }
            // Forwarding waits for the rest of the route: off the server's thread.
            node_.run_task([this, route = std::move(route), hop, respond] {
                respond_with(respond, [&] {
                    node_.forward_probe(route, hop);
                    return reply_of(message_type::probe_reply);
                });
            });
            return;
        }
        case message_type::tick_report: node_.current_run()->on_report(parse(request.payload)); return;
        case message_type::clock:
            respond(reply_of(message_type::clock_reply, node_.current_simulation()->clock(parse(request.payload)).dump()));
            return;
        case message_type::inputs:
            node_.current_simulation()->add_inputs(parse(request.payload));
            respond(reply_of(message_type::inputs_reply));
            return;
        case message_type::control: {
            // Freezing waits for the nodes: it runs off the server's threads.
            auto r = node_.current_run();
            node_.run_task([this, r, payload = request.payload, respond] {
                respond_with(respond, [&] {
                    const json command = parse(payload);
                    // Recovery replaces the run itself, so the node handles it.
                    const json reply = command.value("command", "") == "recover" ? node_.recover() : r->control(command);
                    return reply_of(message_type::control_reply, reply.dump());
                });
            });
            return;
        }
        case message_type::output:
            respond(reply_of(message_type::output_reply, node_.current_run()->output(parse(request.payload)).dump()));
            return;
        case message_type::snapshot:
            node_.run_task([this, respond] {
                respond_with(respond, [&] { return reply_of(message_type::snapshot_reply, node_.snapshot()); });
            });
            return;
        case message_type::capture:
            node_.run_task([this, respond] {
                respond_with(respond, [&] {
                    return reply_of(message_type::capture_reply, protocol::encode_states(node_.capture_subtree()));
                });
            });
            return;
        case message_type::restore_state:
            node_.run_task([this, payload = request.payload, respond] {
                respond_with(respond, [&] {
                    node_.restore_state(payload);
                    return reply_of(message_type::restore_reply);
                });
            });
            return;
        default: throw protocol_error("unexpected frame");
        }
    }

private:
    static json parse(const std::string& payload) {
        try {
            return json::parse(payload);
        } catch (const json::exception& e) {
            throw protocol_error(std::string("malformed JSON payload: ") + e.what());
        }
    }
    static void respond_with(const responder& respond, const std::function<frame()>& work) {
        try {
            respond(work());
        } catch (const std::exception& e) {
            DNNC_LOG(warn, "request failed: " << e.what());
            respond(reply_of(message_type::error_reply, e.what()));
        }
    }
    node::impl& node_;
};

// status, heartbeat, shutdown.
class admin_module final : public module {
public:
    explicit admin_module(node::impl& n) : node_(n) {}
    std::vector<message_type> handles() const override {
        return {message_type::status, message_type::heartbeat, message_type::shutdown};
    }
    void handle(const frame& request, responder respond) override {
        switch (request.type) {
        case message_type::status: respond(reply_of(message_type::status_reply, node_.status().dump())); return;
        case message_type::heartbeat: respond(reply_of(message_type::heartbeat_reply)); return;
        case message_type::shutdown:
            DNNC_LOG(info, "shutdown requested");
            respond(reply_of(message_type::shutdown_reply));
            node_.srv.stop();
            return;
        default: throw protocol_error("unexpected frame");
        }
    }
    void stop() override { node_.shutdown_all(); }

private:
    node::impl& node_;
};

}  // namespace

node::node(node_options options) : impl_(std::make_unique<impl>(std::move(options))) {
    impl_->srv.add_module(std::make_shared<neural_module>(*impl_));
    impl_->srv.add_module(std::make_shared<admin_module>(*impl_));
}

node::~node() {
    stop();
    impl_->srv.stop();
    std::shared_ptr<node_simulation> simulation;
    std::shared_ptr<lead_run> run;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        simulation = std::move(impl_->simulation);
        run = std::move(impl_->run);
    }
    run.reset();
    simulation.reset();
    for (auto& t : impl_->heartbeat_threads) t.join();
    for (auto& f : impl_->tasks) f.wait();
}

void node::start() { impl_->srv.start(); }
std::uint16_t node::port() const { return impl_->srv.port(); }
void node::wait() { impl_->srv.wait(); }
void node::stop() {
    impl_->shutdown_all();
    impl_->srv.stop();
}

}  // namespace dnnc::node_server
