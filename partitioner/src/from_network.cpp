#include "dnnc/partitioner/from_network.hpp"

#include "dnnc/protocol/error.hpp"

#include <algorithm>
#include <vector>

namespace dnnc::partitioner {

graph from_network(const protocol::expanded_network& net, const network_graph_options& options) {
    if (options.fan_in_share < 1) throw usage_error("network graph: the fan-in share must be at least 1");
    const std::size_t n = net.neuron_count();
    std::vector<std::uint64_t> in_degree(n, 0);
    graph_builder builder(n);
    std::vector<protocol::neuron_index> sources;
    for (protocol::neuron_index target = 0; target < n; ++target) {
        const auto first = net.in_source.begin() + static_cast<std::ptrdiff_t>(net.in_begin[target]);
        const auto last = net.in_source.begin() + static_cast<std::ptrdiff_t>(net.in_begin[target + 1]);
        in_degree[target] += static_cast<std::uint64_t>(last - first);
        sources.assign(first, last);
        std::sort(sources.begin(), sources.end());
        sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
        for (protocol::neuron_index source : sources) {
            if (source != target) builder.add_edge(source, target);
        }
    }
    for (const protocol::dense_block& block : net.dense) {
        for (protocol::neuron_index target : block.targets) in_degree[target] += block.sources.size();
        const std::uint64_t pairs = static_cast<std::uint64_t>(block.sources.size()) * block.targets.size();
        if (pairs > options.dense_edge_limit) continue;
        for (protocol::neuron_index target : block.targets) {
            for (protocol::neuron_index source : block.sources) {
                if (source != target) builder.add_edge(source, target);
            }
        }
    }
    const auto share = static_cast<std::uint64_t>(options.fan_in_share);
    for (protocol::neuron_index v = 0; v < n; ++v) {
        builder.set_vertex_weight(v, static_cast<weight_t>(1 + (in_degree[v] + share / 2) / share));
    }
    return std::move(builder).build();
}

}  // namespace dnnc::partitioner
