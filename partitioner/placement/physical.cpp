#include "dnnc/partitioner/physical.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <string>

namespace dnnc::partitioner {
namespace {

constexpr std::uint32_t unreachable = std::numeric_limits<std::uint32_t>::max();

std::string node_name(const physical_cluster& cluster, std::size_t i) {
    return i < cluster.names.size() ? cluster.names[i] : "node " + std::to_string(i);
}

std::vector<std::uint32_t> distances_from(const std::vector<std::vector<std::uint32_t>>& adj,
                                          std::uint32_t source) {
    std::vector<std::uint32_t> dist(adj.size(), unreachable);
    std::deque<std::uint32_t> queue{source};
    dist[source] = 0;
    while (!queue.empty()) {
        const auto a = queue.front();
        queue.pop_front();
        for (const auto b : adj[a]) {
            if (dist[b] == unreachable) {
                dist[b] = dist[a] + 1;
                queue.push_back(b);
            }
        }
    }
    return dist;
}

std::vector<std::vector<std::uint32_t>> adjacency(const physical_cluster& cluster) {
    std::vector<std::vector<std::uint32_t>> adj(cluster.size());
    for (const auto& [a, b] : cluster.links) {
        adj[a].push_back(b);
        adj[b].push_back(a);
    }
    return adj;
}

}  // namespace

void check_physical_cluster(const physical_cluster& cluster) {
    const std::size_t n = cluster.size();
    if (n == 0) throw usage_error("cluster: no nodes");
    if (!cluster.names.empty() && cluster.names.size() != n) {
        throw usage_error("cluster: " + std::to_string(cluster.names.size()) + " names for " +
                          std::to_string(n) + " nodes");
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!(cluster.capacity[i] > 0) || !std::isfinite(cluster.capacity[i])) {
            throw usage_error("cluster: " + node_name(cluster, i) + " has capacity " +
                              std::to_string(cluster.capacity[i]) + "; capacities must be > 0");
        }
    }
    for (const auto& [a, b] : cluster.links) {
        if (a >= n || b >= n) {
            throw usage_error("cluster: a link names node index " + std::to_string(std::max(a, b)) +
                              " of " + std::to_string(n));
        }
        if (a == b) throw usage_error("cluster: " + node_name(cluster, a) + " is linked to itself");
    }
    if (!cluster.link_capacity.empty() && cluster.link_capacity.size() != cluster.links.size()) {
        throw usage_error("cluster: " + std::to_string(cluster.link_capacity.size()) + " link capacities for " +
                          std::to_string(cluster.links.size()) + " links");
    }
    for (std::size_t l = 0; l < cluster.link_capacity.size(); ++l) {
        if (!(cluster.link_capacity[l] > 0)) {
            const auto [a, b] = cluster.links[l];
            throw usage_error("cluster: the link " + node_name(cluster, a) + " - " + node_name(cluster, b) +
                              " has capacity " + std::to_string(cluster.link_capacity[l]) +
                              "; link capacities must be > 0");
        }
    }
    const auto dist = distances_from(adjacency(cluster), 0);
    for (std::size_t i = 0; i < n; ++i) {
        if (dist[i] == unreachable) {
            throw usage_error("cluster: the links do not connect " + node_name(cluster, i) +
                              " to " + node_name(cluster, 0) +
                              "; the physical graph must be connected");
        }
    }
}

std::vector<std::uint32_t> hop_distances(const physical_cluster& cluster) {
    const auto adj = adjacency(cluster);
    const std::size_t n = cluster.size();
    std::vector<std::uint32_t> hops;
    hops.reserve(n * n);
    for (std::uint32_t a = 0; a < n; ++a) {
        const auto row = distances_from(adj, a);
        hops.insert(hops.end(), row.begin(), row.end());
    }
    return hops;
}

std::vector<char> link_matrix(const physical_cluster& cluster) {
    const std::size_t n = cluster.size();
    std::vector<char> linked(n * n, 0);
    for (const auto& [a, b] : cluster.links) {
        linked[a * n + b] = 1;
        linked[b * n + a] = 1;
    }
    return linked;
}

bool has_link_capacities(const physical_cluster& cluster) {
    return std::any_of(cluster.link_capacity.begin(), cluster.link_capacity.end(),
                       [](double c) { return std::isfinite(c); });
}

link_routes::link_routes(const physical_cluster& cluster)
    : size_(cluster.size()), hops_(hop_distances(cluster)), next_(cluster.size()) {
    for (std::uint32_t l = 0; l < cluster.links.size(); ++l) {
        const auto [a, b] = cluster.links[l];
        next_[a].emplace_back(b, l);
        next_[b].emplace_back(a, l);
    }
    for (auto& row : next_) {
        // Stable, so that of parallel links the first listed comes first and stays.
        std::stable_sort(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        row.erase(std::unique(row.begin(), row.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
                  row.end());
    }
}

void link_routes::add(std::uint32_t a, std::uint32_t b, weight_t amount, std::vector<weight_t>& traffic) const {
    std::uint32_t at = std::min(a, b);
    const std::uint32_t to = std::max(a, b);
    while (at != to) {
        const auto& row = next_[at];
        const auto remaining = hops(at, to);
        auto step = row.begin();
        if (remaining == 1) {
            step = std::lower_bound(row.begin(), row.end(), std::make_pair(to, std::uint32_t{0}));
        } else {
            while (hops(step->first, to) != remaining - 1) ++step;
        }
        traffic[step->second] += amount;
        at = step->first;
    }
}

double max_link_load(const physical_cluster& cluster, const std::vector<weight_t>& link_traffic) {
    double largest = 0;
    for (std::size_t l = 0; l < cluster.link_capacity.size(); ++l) {
        largest = std::max(largest, static_cast<double>(link_traffic[l]) / cluster.link_capacity[l]);
    }
    return largest;
}

physical_cluster complete_cluster(std::size_t nodes, std::vector<double> capacities) {
    if (nodes == 0) throw usage_error("cluster: the number of nodes must be at least 1");
    if (capacities.empty()) capacities.assign(nodes, 1.0);
    if (capacities.size() != nodes) {
        throw usage_error("cluster: " + std::to_string(capacities.size()) + " capacities for " +
                          std::to_string(nodes) + " nodes");
    }
    physical_cluster cluster;
    cluster.capacity = std::move(capacities);
    for (std::uint32_t a = 0; a < nodes; ++a) {
        cluster.names.push_back("part" + std::to_string(a));
        for (std::uint32_t b = a + 1; b < nodes; ++b) cluster.links.emplace_back(a, b);
    }
    check_physical_cluster(cluster);
    return cluster;
}

}  // namespace dnnc::partitioner
