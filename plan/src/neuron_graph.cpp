#include "dnnc/plan/neuron_graph.hpp"

#include "dense_units.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <vector>

namespace dnnc::plan {

using partitioner::graph_builder;
using partitioner::physical_cluster;
using partitioner::vertex_id;
using partitioner::weight_t;

namespace {

using model::neuron_index;

std::vector<weight_t> neuron_weights(const model::expanded_network& net, weight_t fan_in_share) {
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

}  // namespace

std::vector<std::uint32_t> network_units::spread(const std::vector<std::uint32_t>& node_of_unit) const {
    std::vector<std::uint32_t> node_of_neuron(unit_of_neuron.size());
    for (std::size_t v = 0; v < unit_of_neuron.size(); ++v) node_of_neuron[v] = node_of_unit.at(unit_of_neuron[v]);
    return node_of_neuron;
}

std::string network_units::name(const model::expanded_network& net, vertex_id unit) const {
    const std::string first = net.neuron_name(first_neuron[unit]);
    return size[unit] == 1 ? first : first + " +" + std::to_string(size[unit] - 1);
}

network_units units_of(const model::expanded_network& net, const physical_cluster& cluster,
                       const network_graph_options& options) {
    if (options.fan_in_share < 1) throw usage_error("network graph: the fan-in share must be at least 1");
    if (cluster.size() == 0) throw usage_error("network graph: the cluster has no node");
    const std::size_t n = net.neuron_count();
    const auto weight = neuron_weights(net, options.fan_in_share);
    std::vector<detail::dense_targets> dense;
    for (const auto& block : net.dense) dense.push_back({{block.targets.begin(), block.targets.end()}, block.split_rows});
    const auto grouped = detail::group_units(weight, dense, cluster);
    network_units units;
    units.unit_of_neuron = grouped.unit_of_item;
    for (auto first : grouped.first_item) units.first_neuron.push_back(static_cast<neuron_index>(first));
    units.size.assign(units.first_neuron.size(), 0);
    for (neuron_index v = 0; v < n; ++v) ++units.size[units.unit_of_neuron[v]];

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
