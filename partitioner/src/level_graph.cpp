#include "src/level_graph.hpp"

#include <algorithm>

namespace dnnc::partitioner::detail {

level_graph to_level_graph(const graph& g) {
    level_graph lg;
    lg.begin = g.offsets();
    lg.adjacency = g.adjacency();
    lg.edge_weight = g.edge_weights();
    lg.vertex_weight = g.vertex_weights();
    lg.total_weight = g.total_vertex_weight();
    for (weight_t w : lg.vertex_weight) lg.max_vertex_weight = std::max(lg.max_vertex_weight, w);
    return lg;
}

level_graph induced_subgraph(const level_graph& g, const std::vector<vertex_id>& vertices,
                             std::vector<vertex_id>& local_of) {
    level_graph sub;
    for (std::size_t i = 0; i < vertices.size(); ++i) local_of[vertices[i]] = static_cast<vertex_id>(i);
    sub.begin.reserve(vertices.size() + 1);
    sub.vertex_weight.reserve(vertices.size());
    for (vertex_id v : vertices) {
        for (std::uint64_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
            const vertex_id local = local_of[g.adjacency[e]];
            if (local == none) continue;
            sub.adjacency.push_back(local);
            sub.edge_weight.push_back(g.edge_weight[e]);
        }
        sub.begin.push_back(sub.adjacency.size());
        sub.vertex_weight.push_back(g.vertex_weight[v]);
        sub.total_weight += g.vertex_weight[v];
        sub.max_vertex_weight = std::max(sub.max_vertex_weight, g.vertex_weight[v]);
    }
    for (vertex_id v : vertices) local_of[v] = none;
    return sub;
}

}  // namespace dnnc::partitioner::detail
