#include "dnnc/partitioner/metrics.hpp"

#include "dnnc/partitioner/physical.hpp"
#include "dnnc/core/error.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

namespace dnnc::partitioner {

quality evaluate(const graph& g, const std::vector<std::uint32_t>& node_of_vertex,
                 const physical_cluster& cluster, const metrics_options& options) {
    const std::size_t nodes = cluster.size();
    if (node_of_vertex.size() != g.vertex_count()) {
        throw usage_error("metrics: " + std::to_string(node_of_vertex.size()) +
                          " assignments for " + std::to_string(g.vertex_count()) + " vertices");
    }
    for (const auto node : node_of_vertex) {
        if (node >= nodes) {
            throw usage_error("metrics: node " + std::to_string(node) + " of " +
                              std::to_string(nodes));
        }
    }
    check_physical_cluster(cluster);
    const auto hops = hop_distances(cluster);
    // Routes cost memory and time in the square of the node count: only for link loads.
    std::optional<link_routes> routes;
    if (has_link_capacities(cluster)) routes.emplace(cluster);
    // Cut weight per pair of nodes (lower index first), routed onto the links at the end.
    std::unordered_map<std::uint64_t, weight_t> between;
    quality q;
    q.load.assign(nodes, 0);
    q.traffic.assign(nodes, 0);
    std::vector<vertex_id> last_seen(nodes, ~vertex_id{0});
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
        const auto a = node_of_vertex[v];
        q.load[a] += g.vertex_weight(v);
        const weight_t* w = g.edge_weights_begin(v);
        for (const vertex_id* it = g.neighbors_begin(v); it != g.neighbors_end(v); ++it, ++w) {
            const auto b = node_of_vertex[*it];
            if (a == b) continue;
            if (last_seen[b] != v) {
                last_seen[b] = v;
                ++q.communication_volume;
            }
            const auto h = hops[a * nodes + b];
            q.traffic[a] += *w * h;
            if (*it < v) continue;
            if (routes) between[std::min(a, b) * std::uint64_t{nodes} + std::max(a, b)] += *w;
            q.edge_cut += *w;
            q.hop_weighted_cut += *w * h;
            if (h > 1) {
                if (q.violations.size() < options.max_listed_violations) {
                    q.violations.push_back({v, *it, a, b, *w});
                }
                ++q.violation_count;
            }
        }
    }
    if (routes) {
        q.link_traffic.assign(cluster.links.size(), 0);
        for (const auto& [pair, w] : between) {
            routes->add(static_cast<std::uint32_t>(pair / nodes), static_cast<std::uint32_t>(pair % nodes), w,
                        q.link_traffic);
        }
        q.max_link_load = max_link_load(cluster, q.link_traffic);
    }
    double total_capacity = 0;
    for (const double c : cluster.capacity) total_capacity += c;
    const auto total_weight = static_cast<double>(g.total_vertex_weight());
    for (std::size_t i = 0; i < nodes; ++i) {
        const auto load = static_cast<double>(q.load[i]);
        if (total_weight > 0) {
            const double share = cluster.capacity[i] / total_capacity * total_weight;
            q.max_imbalance = std::max(q.max_imbalance, load / share);
        }
        q.tick_cost = std::max(q.tick_cost, load / cluster.capacity[i] +
                                                options.hop_cost * static_cast<double>(q.traffic[i]));
    }
    return q;
}

quality evaluate(const graph& g, const partition& p, const metrics_options& options) {
    return evaluate(g, p.part_of, complete_cluster(p.parts), options);
}

double migration_volume(const graph& g, const partition& before, const partition& after,
                        const std::vector<double>& migration_cost) {
    const std::size_t n = g.vertex_count();
    if (before.part_of.size() != n || after.part_of.size() != n ||
        (!migration_cost.empty() && migration_cost.size() != n)) {
        throw usage_error("migration volume: partitions and costs must have one entry per vertex (" +
                          std::to_string(n) + ")");
    }
    double volume = 0;
    for (vertex_id v = 0; v < n; ++v) {
        const part_id was = before.part_of[v];
        if (was < before.parts && was != after.part_of[v]) volume += migration_cost_of(g, migration_cost, v);
    }
    return volume;
}

}  // namespace dnnc::partitioner
