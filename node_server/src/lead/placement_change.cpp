#include "lead/placement_change.hpp"

#include "dnnc/plan/topology.hpp"

#include <algorithm>
#include <map>

namespace dnnc::node_server {

protocol::move_record placement_change(const plan::current_placement& before, const plan::network_plan& after) {
    std::map<std::string, std::pair<std::size_t, std::size_t>> count;  // id -> (before, after)
    for (const auto& id : before.nodes) count[id];
    for (const auto node : before.node_of_neuron) ++count[before.nodes[node]].first;
    const auto& nodes = after.doc.clu->nodes;
    for (std::size_t v = 0; v < nodes.size(); ++v) count[nodes[v].id].second = after.neurons_per_node[v];
    protocol::move_record change;
    for (std::size_t n = 0; n < before.node_of_neuron.size(); ++n)
        change.moved += before.nodes[before.node_of_neuron[n]] != nodes[after.node_of_neuron[n]].id;
    auto add = [&](const std::string& id) {
        change.nodes.push_back({id, count[id].first, count[id].second});
        count.erase(id);
    };
    for (const auto& n : nodes) add(n.id);  // the cluster's order, then the nodes that left
    for (const auto& id : before.nodes)
        if (count.count(id) > 0) add(id);
    return change;
}

std::optional<std::vector<plan::link_time>> carried_link_times(const model::cluster& before,
                                                               const std::vector<plan::link_time>& times,
                                                               const model::cluster& after) {
    for (const auto& n : after.nodes)
        if (std::none_of(before.nodes.begin(), before.nodes.end(),
                         [&](const auto& m) { return m.id == n.id && m.host == n.host && m.port == n.port; }))
            return std::nullopt;
    const plan::topology was(before), is(after);
    std::vector<plan::link_time> carried;
    for (std::size_t l = 0; l < is.link_count(); ++l) {
        const auto [a, b] = is.link(l);
        const auto old = was.link_between(was.index_of(is.id(a)), was.index_of(is.id(b)));
        const auto time = std::find_if(times.begin(), times.end(), [&](const auto& t) { return old && t.link == *old; });
        if (time == times.end()) return std::nullopt;
        carried.push_back(*time);
        carried.back().link = l;
    }
    // The same links with the same emulated delays and bandwidths.
    auto same = [](const model::cluster_link& x, const model::cluster_link& y) {
        return ((x.from == y.from && x.to == y.to) || (x.from == y.to && x.to == y.from)) &&
               x.emulate_delay_ms == y.emulate_delay_ms && x.bandwidth_bps == y.bandwidth_bps;
    };
    for (const auto& l : after.links)
        if (std::none_of(before.links.begin(), before.links.end(), [&](const auto& k) { return same(k, l); })) return std::nullopt;
    return carried;
}

std::set<std::string> reached_from(const model::cluster& cluster, const std::string& from, const std::set<std::string>& left_out) {
    std::set<std::string> reached{from};
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& l : cluster.links) {
            if (left_out.count(l.from) > 0 || left_out.count(l.to) > 0) continue;
            if (reached.count(l.from) > 0 && reached.insert(l.to).second) grew = true;
            if (reached.count(l.to) > 0 && reached.insert(l.from).second) grew = true;
        }
    }
    return reached;
}

}  // namespace dnnc::node_server
