#include "lead/cluster_status.hpp"

#include "lead/link_statuses.hpp"

#include <algorithm>

namespace dnnc::node_server {

std::string reachable_page(const std::string& page, const std::string& host) {
    for (const std::string any : {"0.0.0.0:", ":::", "[::]:"})
        if (page.rfind(any, 0) == 0) return host + ":" + page.substr(any.size());
    return page;
}

namespace {
// How every population is spread over the nodes; neurons outside populations are counted
// together under "(neurons)".
std::vector<protocol::population_spread> spread_of(const plan::network_plan& plan) {
    const auto nodes = plan.neurons_per_node.size();
    std::vector<protocol::population_spread> spread;
    protocol::population_spread singles{"(neurons)", std::nullopt, 0, std::vector<std::uint64_t>(nodes, 0)};
    std::map<std::string, std::size_t> entry_of;  // a grown population's extents make one entry
    for (const auto& g : plan.net.groups) {
        std::vector<std::uint64_t> on(nodes, 0);
        auto& counts = g.is_population ? on : singles.nodes;
        for (std::size_t i = g.first; i < g.first + g.size; ++i) ++counts[plan.node_of_neuron[i]];
        if (!g.is_population) {
            singles.size += g.size;
        } else if (const auto known = entry_of.find(g.id); known != entry_of.end()) {
            auto& entry = spread[known->second];
            entry.size += g.size;
            for (std::size_t v = 0; v < nodes; ++v) entry.nodes[v] += on[v];
        } else {
            entry_of[g.id] = spread.size();
            spread.push_back({g.id, g.first, g.size, std::move(on)});
        }
    }
    if (singles.size > 0) spread.push_back(std::move(singles));
    return spread;
}

// The wait windows of the neurons with remote inputs (a window of 0: none).
protocol::wait_window_spread spread_of(const std::vector<double>& windows) {
    std::vector<double> remote;
    for (double w : windows)
        if (w > 0) remote.push_back(w);
    protocol::wait_window_spread spread{remote.size(), std::nullopt, std::nullopt, std::nullopt};
    if (!remote.empty()) {
        spread.min_ms = *std::min_element(remote.begin(), remote.end());
        spread.median_ms = plan::median(remote);
        spread.max_ms = *std::max_element(remote.begin(), remote.end());
    }
    return spread;
}

}  // namespace

protocol::lead_status cluster_status_of(lead_state& state, const std::map<std::string, std::string>& subleads, const std::string& page,
                                        const std::optional<protocol::run_progress>& progress) {
    protocol::lead_status c;
    if (state.standby) c.standby_node = state.standby_id;
    const auto& topo = state.topo;
    const auto& doc = state.plan.doc;
    const std::string clock = doc.run && !doc.run->clock.empty() ? doc.run->clock : topo.id(topo.lead());
    const double timeout_ms = doc.run ? doc.run->heartbeat_timeout_ms : model::run_settings{}.heartbeat_timeout_ms;
    const auto reported = [&](std::size_t v) { return progress && v < progress->nodes.size(); };
    for (std::size_t v = 0; v < topo.node_count(); ++v) {
        const auto& n = doc.clu->nodes[v];
        protocol::cluster_node_status entry;
        entry.id = n.id;
        entry.address = n.host + ":" + std::to_string(n.port);
        if (v == topo.lead()) entry.roles.push_back("lead");
        if (topo.id(v) == clock) entry.roles.push_back("clock");
        if (entry.roles.empty()) entry.roles.push_back("worker");
        for (const auto& [served, sublead] : subleads) {
            if (served == n.id) entry.via = sublead;
            if (sublead == n.id && std::find(entry.roles.begin(), entry.roles.end(), "sub-lead") == entry.roles.end())
                entry.roles.push_back("sub-lead");
        }
        entry.capacity = n.capacity;
        entry.neurons = state.plan.neurons_per_node[v];
        entry.silent_ms = v == topo.lead() ? 0.0 : elapsed_ms(state.last_seen[v]);
        entry.alive = entry.silent_ms <= timeout_ms;
        if (reported(v)) {
            const auto& p = progress->nodes[v];
            entry.completed = p.completed;
            entry.signals_sent = p.sent;
            entry.ms_per_tick = p.ms_per_tick;
            entry.cpu_wait_ms_per_tick = p.cpu_wait_ms_per_tick;
        }
        entry.page = v == topo.lead() ? reachable_page(page, n.host) : state.pages[v];
        if (!entry.alive) {
            entry.error = state.last_error[v];
            c.dead.push_back(n.id);
        }
        c.nodes.push_back(std::move(entry));
    }
    c.links = link_statuses(topo, state.times, doc.clu->links, progress ? &*progress : nullptr);
    c.wait_windows = spread_of(state.windows);
    if (state.populations.empty()) state.populations = spread_of(state.plan);
    c.populations = state.populations;
    c.dt_ms = state.plan.net.dt;
    c.edge_cut = state.plan.quality.edge_cut;
    c.imbalance = state.plan.quality.max_imbalance;
    return c;
}

}  // namespace dnnc::node_server
