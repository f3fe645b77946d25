#include "dnnc/plan/neuron_graph.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <vector>

namespace dnnc::plan {

using partitioner::graph_builder;
using partitioner::physical_cluster;
using partitioner::vertex_id;
using partitioner::weight_t;

namespace {

using protocol::neuron_index;

std::vector<weight_t> neuron_weights(const protocol::expanded_network& net, weight_t fan_in_share) {
    const std::size_t n = net.neuron_count();
    std::vector<std::uint64_t> in_degree(n, 0);
    for (std::size_t v = 0; v < n; ++v) in_degree[v] = net.in_begin[v + 1] - net.in_begin[v];
    for (const auto& block : net.dense)
        for (neuron_index target : block.targets) in_degree[target] += block.sources.size();
    const auto share = static_cast<std::uint64_t>(fan_in_share);
    std::vector<weight_t> weight(n);
    for (std::size_t v = 0; v < n; ++v) weight[v] = static_cast<weight_t>(1 + (in_degree[v] + share / 2) / share);
    return weight;
}

// Union-find over neurons, for the targets of unsplit dense projections.
class target_groups {
public:
    explicit target_groups(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), neuron_index{0}); }
    neuron_index root(neuron_index v) {
        while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
        return v;
    }
    void join(neuron_index a, neuron_index b) { parent_[root(a)] = root(b); }

private:
    std::vector<neuron_index> parent_;
};

}  // namespace

std::vector<std::uint32_t> network_units::spread(const std::vector<std::uint32_t>& node_of_unit) const {
    std::vector<std::uint32_t> node_of_neuron(unit_of_neuron.size());
    for (std::size_t v = 0; v < unit_of_neuron.size(); ++v) node_of_neuron[v] = node_of_unit.at(unit_of_neuron[v]);
    return node_of_neuron;
}

std::string network_units::name(const protocol::expanded_network& net, vertex_id unit) const {
    const std::string first = net.neuron_name(first_neuron[unit]);
    return size[unit] == 1 ? first : first + " +" + std::to_string(size[unit] - 1);
}

network_units units_of(const protocol::expanded_network& net, const physical_cluster& cluster,
                       const network_graph_options& options) {
    if (options.fan_in_share < 1) throw usage_error("network graph: the fan-in share must be at least 1");
    if (cluster.size() == 0) throw usage_error("network graph: the cluster has no node");
    const std::size_t n = net.neuron_count();
    const auto weight = neuron_weights(net, options.fan_in_share);
    const double total = static_cast<double>(std::accumulate(weight.begin(), weight.end(), weight_t{0}));
    const double capacity = std::accumulate(cluster.capacity.begin(), cluster.capacity.end(), 0.0);
    const double whole_limit = total * *std::max_element(cluster.capacity.begin(), cluster.capacity.end()) / capacity;
    const double block_limit =
        std::max(1.0, total * *std::min_element(cluster.capacity.begin(), cluster.capacity.end()) / capacity / 16);

    // A key per neuron names its unit: the group root (< n) for a whole dense unit, n + k
    // for row block k, and the neuron itself otherwise.
    constexpr std::uint64_t single = ~std::uint64_t{0};
    std::vector<std::uint64_t> key(n, single);
    target_groups groups(n);
    std::vector<bool> in_group(n, false);
    for (const auto& block : net.dense) {
        if (block.split_rows || block.targets.empty()) continue;
        for (neuron_index t : block.targets) {
            in_group[t] = true;
            groups.join(t, block.targets.front());
        }
    }
    std::vector<double> group_weight(n, 0);
    for (neuron_index v = 0; v < n; ++v)
        if (in_group[v]) group_weight[groups.root(v)] += static_cast<double>(weight[v]);
    for (neuron_index v = 0; v < n; ++v)
        if (in_group[v] && group_weight[groups.root(v)] <= whole_limit) key[v] = groups.root(v);
    std::uint64_t next_block = n;
    for (const auto& block : net.dense) {
        double filled = 0;
        bool open = false;
        for (neuron_index t : block.targets) {
            if (key[t] != single) continue;  // in a whole unit, or in an earlier block's rows
            if (open && filled + static_cast<double>(weight[t]) > block_limit) open = false;
            if (!open) {
                ++next_block;
                filled = 0;
                open = true;
            }
            key[t] = next_block;
            filled += static_cast<double>(weight[t]);
        }
    }

    // Units numbered in the order of their first neuron.
    network_units units;
    units.unit_of_neuron.resize(n);
    std::unordered_map<std::uint64_t, vertex_id> unit_of_key;
    for (neuron_index v = 0; v < n; ++v) {
        vertex_id unit;
        if (key[v] == single) {
            unit = static_cast<vertex_id>(units.first_neuron.size());
        } else {
            const auto [it, fresh] = unit_of_key.emplace(key[v], static_cast<vertex_id>(units.first_neuron.size()));
            unit = it->second;
        }
        if (unit == units.first_neuron.size()) {
            units.first_neuron.push_back(v);
            units.size.push_back(0);
        }
        units.unit_of_neuron[v] = unit;
        ++units.size[unit];
    }

    graph_builder builder(units.first_neuron.size());
    std::vector<weight_t> unit_weight(units.first_neuron.size(), 0);
    for (neuron_index v = 0; v < n; ++v) unit_weight[units.unit_of_neuron[v]] += weight[v];
    for (vertex_id u = 0; u < unit_weight.size(); ++u) builder.set_vertex_weight(u, unit_weight[u]);
    std::vector<neuron_index> sources;
    for (neuron_index target = 0; target < n; ++target) {
        const auto first = net.in_source.begin() + static_cast<std::ptrdiff_t>(net.in_begin[target]);
        const auto last = net.in_source.begin() + static_cast<std::ptrdiff_t>(net.in_begin[target + 1]);
        sources.assign(first, last);
        std::sort(sources.begin(), sources.end());
        sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
        const vertex_id to = units.unit_of_neuron[target];
        for (neuron_index source : sources)
            if (units.unit_of_neuron[source] != to) builder.add_edge(units.unit_of_neuron[source], to);
    }
    std::vector<vertex_id> row_units;
    for (const auto& block : net.dense) {
        row_units.clear();
        for (neuron_index t : block.targets) row_units.push_back(units.unit_of_neuron[t]);
        std::sort(row_units.begin(), row_units.end());
        row_units.erase(std::unique(row_units.begin(), row_units.end()), row_units.end());
        for (neuron_index source : block.sources)
            for (vertex_id rows : row_units)
                if (units.unit_of_neuron[source] != rows) builder.add_edge(units.unit_of_neuron[source], rows);
    }
    units.g = std::move(builder).build();
    return units;
}

}  // namespace dnnc::plan
