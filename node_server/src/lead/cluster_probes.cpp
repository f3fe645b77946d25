#include "lead/cluster_probes.hpp"

#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/node_server/log.hpp"
#include "dnnc/protocol/rate.hpp"
#include "lead/memory_fit.hpp"
#include "node_messages.hpp"
#include "probe_route.hpp"
#include "net/relays.hpp"

#include <algorithm>

namespace dnnc::node_server {

using protocol::frame;
using protocol::message_type;

// One round trip from the lead along `path` (node indices), in ms, with `load` bytes carried
// across its last link.
double cluster_probes::probe_once(const plan::network_plan& plan, const std::vector<std::size_t>& path, std::size_t load) {
    probe p{{}, 1, load};
    for (std::size_t k = 0; k < path.size(); ++k) {
        const auto& node = plan.doc.clu->nodes[path[k]];
        const double delay = k > 0 ? plan::emulate_delay(plan.doc.clu->links, plan.doc.clu->nodes[path[k - 1]].id, node.id) : 0.0;
        p.route.push_back({node.id, {node.host, static_cast<std::uint16_t>(node.port)}, delay});
    }
    const auto extra = options_.emulate_delay_ms.find(p.route[1].id);
    const auto start = clock_type::now();
    hold_back(p.route[1].link_delay_ms + (extra == options_.emulate_delay_ms.end() ? 0.0 : extra->second));
    try {
        calls_.call(p.route[1].at, frame{message_type::probe, 0, 0, probe_payload(p)}, options_.silence_limit);
    } catch (const std::exception& e) {
        std::string names;
        for (const auto& h : p.route) names += (names.empty() ? "" : " -> ") + h.id;
        throw error(std::string(load > 0 ? "throughput" : "latency") + " probe along " + names + " failed: " + e.what());
    }
    return elapsed_ms(start);
}

// Latencies first (link_times), then each link's throughput: `throughput-probes` probes
// each way that carry throughput_probe_load bytes across the link, each after an unloaded
// one along the same route (plan::link_throughput), and more pairs, up to three times as
// many, in a direction whose loads a busy machine stretched (plan::throughput_settled).
std::vector<plan::link_time> cluster_probes::measure_links(const plan::network_plan& plan, const plan::topology& topo) {
    const auto paths = plan::plan_probes(topo);
    const auto run = plan.doc.run ? *plan.doc.run : model::run_settings{};
    std::vector<std::vector<double>> samples(paths.size());
    for (const auto& path : paths) probe_once(plan, path.route);  // warm-up: opens the connections on the way
    // Round by round across the links: a burst of load on the machine then stretches a few
    // probes of every link, which their medians leave out, rather than all of one link's.
    for (int r = 0; r < run.probes; ++r)
        for (std::size_t p = 0; p < paths.size(); ++p) samples[p].push_back(probe_once(plan, paths[p].route));
    auto times = plan::link_times(paths, samples);
    for (std::size_t p = 0; p < paths.size() && run.throughput_probes > 0; ++p) {
        auto back = paths[p].route;  // over the link and back to its near end
        back.push_back(back[back.size() - 2]);
        plan::throughput_samples there, and_back;
        auto sample = [&](const std::vector<std::size_t>& route, plan::throughput_samples& into) {
            into.unloaded_ms.push_back(probe_once(plan, route));
            into.loaded_ms.push_back(probe_once(plan, route, throughput_probe_load));
        };
        for (int r = 0; r < run.throughput_probes; ++r) {
            sample(paths[p].route, there);
            sample(back, and_back);
        }
        for (int r = run.throughput_probes; r < 3 * run.throughput_probes; ++r) {
            if (!plan::throughput_settled(there)) sample(paths[p].route, there);
            if (!plan::throughput_settled(and_back)) sample(back, and_back);
        }
        times[p].throughput_bps = plan::link_throughput(throughput_probe_load, there, and_back);
    }
    for (const auto& t : times) {
        const auto [a, b] = topo.link(t.link);
        DNNC_LOG(info, "link " << topo.id(a) << " - " << topo.id(b) << ": " << t.latency_ms << " ms (round trip "
                               << t.round_trip_ms << " ms" << (t.clamped ? ", clamped" : "") << (t.noisy ? ", noisy" : "")
                               << "), " << (t.throughput_bps > 0 ? protocol::rate_human(t.throughput_bps) : "throughput not measured"));
    }
    return times;
}

std::size_t cluster_probes::find_self(const model::cluster& clu) const {
    const auto my_port = srv_.port();
    std::optional<std::size_t> loopback_match;
    for (std::size_t i = 0; i < clu.nodes.size(); ++i) {
        const auto& n = clu.nodes[i];
        if (n.port != my_port) continue;
        if (n.host == options_.server.bind) return i;
        if (is_loopback_host(n.host) && is_loopback_host(options_.server.bind)) loopback_match = i;
    }
    if (loopback_match) return *loopback_match;
    throw usage_error("this node (" + options_.server.bind + ":" + std::to_string(my_port) +
                      ") is not one of the cluster's nodes; submit to a node the document names");
}

std::set<std::string> cluster_probes::reach_nodes(const model::cluster& clu, const std::set<std::string>& skip) {
    const auto self = find_self(clu);
    auto at = [&](std::size_t v) { return endpoint{clu.nodes[v].host, static_cast<std::uint16_t>(clu.nodes[v].port)}; };
    auto answers = [&](std::size_t v) {
        try {
            calls_.call(at(v), frame{message_type::heartbeat, 0, 0, {}}, std::chrono::seconds(2));
            return true;
        } catch (const remote_error&) {
            return true;  // a refusal is an answer
        } catch (const std::exception&) {
            calls_.forget(at(v));
            return false;
        }
    };
    std::map<std::string, std::size_t> index;
    for (std::size_t v = 0; v < clu.nodes.size(); ++v) index[clu.nodes[v].id] = v;
    auto counts = [&](std::size_t v) { return v != self && skip.count(clu.nodes[v].id) == 0; };
    // A node served through a sub-lead of this cluster that still carries for it keeps its
    // route (a growth or a re-balance changes nothing there); the others are asked straight.
    std::map<std::string, std::string> subleads;
    std::vector<bool> direct(clu.nodes.size(), false);
    for (std::size_t v = 0; v < clu.nodes.size(); ++v) {
        if (!counts(v)) continue;
        if (const auto through = relays::via(at(v))) {
            const auto u = std::find_if(clu.nodes.begin(), clu.nodes.end(), [&](const auto& n) {
                return n.host == through->host && n.port == through->port;
            });
            if (u != clu.nodes.end() && counts(static_cast<std::size_t>(u - clu.nodes.begin())) && answers(v)) {
                subleads[clu.nodes[v].id] = u->id;
                continue;
            }
        }
        relays::unroute(at(v));
        calls_.forget(at(v));
        direct[v] = answers(v);
    }
    // Rounds: a node reached through a sub-lead may serve the nodes linked to it in the next
    // (a route's sub-lead is reached through its own route, relays.hpp).
    auto reached = [&](std::size_t u) { return direct[u] || subleads.count(clu.nodes[u].id) > 0; };
    for (bool more = true; more;) {
        more = false;
        for (std::size_t v = 0; v < clu.nodes.size(); ++v) {
            if (!counts(v) || reached(v)) continue;
            const auto& id = clu.nodes[v].id;
            for (const auto& l : clu.links) {
                const std::string other = l.from == id ? l.to : l.to == id ? l.from : std::string();
                if (other.empty()) continue;
                const auto u = index.at(other);
                if (!counts(u) || !reached(u)) continue;
                relays::route(at(v), at(u), options_.server.secret, options_.server.tls);
                calls_.forget(at(v));
                if (answers(v)) {
                    subleads[id] = other;
                    more = true;
                    break;
                }
                relays::unroute(at(v));
            }
        }
    }
    std::set<std::string> silent;
    for (std::size_t v = 0; v < clu.nodes.size(); ++v)
        if (counts(v) && !reached(v)) silent.insert(clu.nodes[v].id);
    std::lock_guard<std::mutex> lock(mutex_);
    subleads_ = std::move(subleads);
    return silent;
}

// Refuses, before anything changes on the cluster, a network whose shares would not fit in
// the memory of the machines they go to: each node's share is known from the rules
// (plan::loads_of), and every node says what its machine can still give and its own limit.
// Nodes on one host share its memory; what their current networks hold counts as free when
// they are replaced.
void cluster_probes::check_memory(const plan::network_plan& plan, bool replace) {
    const auto& nodes = plan.doc.clu->nodes;
    const auto self = find_self(*plan.doc.clu);
    std::vector<std::optional<protocol::node_status>> statuses(nodes.size());
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        if (v == self) {
            own_.describe(statuses[v].emplace());
            continue;
        }
        try {
            const endpoint at{nodes[v].host, static_cast<std::uint16_t>(nodes[v].port)};
            statuses[v] = protocol::decode_node_status(
                parse_payload(calls_.call(at, frame{message_type::status, 0, 0, {}}, options_.silence_limit).payload));
        } catch (const std::exception&) {
            // the probes name a node that does not answer
        }
    }
    check_memory_fit(plan, statuses, replace);
}

std::map<std::string, std::string> cluster_probes::subleads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return subleads_;
}

}  // namespace dnnc::node_server
