#include "dnnc/partitioner/graph.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <string>

namespace dnnc::partitioner {

graph_builder::graph_builder(std::size_t vertex_count, weight_t default_vertex_weight)
    : vertex_weight_(vertex_count, default_vertex_weight) {
    if (vertex_count >= std::size_t{~vertex_id{0}}) {
        throw usage_error("graph: too many vertices (" + std::to_string(vertex_count) + ")");
    }
    if (default_vertex_weight < 0) {
        throw usage_error("graph: negative vertex weight");
    }
}

void graph_builder::set_vertex_weight(vertex_id v, weight_t w) {
    if (v >= vertex_weight_.size()) {
        throw usage_error("graph: vertex " + std::to_string(v) + " out of range");
    }
    if (w < 0) {
        throw usage_error("graph: negative weight for vertex " + std::to_string(v));
    }
    vertex_weight_[v] = w;
}

void graph_builder::add_edge(vertex_id u, vertex_id v, weight_t w) {
    const auto n = vertex_weight_.size();
    if (u >= n || v >= n) {
        throw usage_error("graph: edge {" + std::to_string(u) + ", " + std::to_string(v) +
                          "} names a vertex out of range (" + std::to_string(n) + " vertices)");
    }
    if (w <= 0) {
        throw usage_error("graph: edge {" + std::to_string(u) + ", " + std::to_string(v) +
                          "} has non-positive weight " + std::to_string(w));
    }
    if (u != v) {
        edges_.push_back({u, v, w});
    }
}

// Counting sort of both directions of every edge by source, then each row is sorted by
// target and runs of equal targets are merged in place.
graph graph_builder::build() && {
    graph g;
    const std::size_t n = vertex_weight_.size();
    std::vector<std::uint64_t> begin(n + 1, 0);
    for (const auto& e : edges_) {
        ++begin[e.from + 1];
        ++begin[e.to + 1];
    }
    for (std::size_t v = 0; v < n; ++v) begin[v + 1] += begin[v];

    std::vector<std::pair<vertex_id, weight_t>> slots(begin[n]);
    std::vector<std::uint64_t> fill(begin.begin(), begin.end() - 1);
    for (const auto& e : edges_) {
        slots[fill[e.from]++] = {e.to, e.w};
        slots[fill[e.to]++] = {e.from, e.w};
    }
    edges_.clear();
    edges_.shrink_to_fit();
    fill.clear();
    fill.shrink_to_fit();

    g.begin_.assign(n + 1, 0);
    g.adjacency_.reserve(slots.size());
    g.edge_weight_.reserve(slots.size());
    for (std::size_t v = 0; v < n; ++v) {
        const auto first = slots.begin() + static_cast<std::ptrdiff_t>(begin[v]);
        const auto last = slots.begin() + static_cast<std::ptrdiff_t>(begin[v + 1]);
        std::sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto it = first; it != last; ++it) {
            if (g.adjacency_.size() > g.begin_[v] && g.adjacency_.back() == it->first) {
                if (__builtin_add_overflow(g.edge_weight_.back(), it->second, &g.edge_weight_.back()))
                    throw usage_error("graph: parallel edges {" + std::to_string(v) + ", " +
                                      std::to_string(it->first) + "} weigh more than 2^63 - 1 together");
            } else {
                g.adjacency_.push_back(it->first);
                g.edge_weight_.push_back(it->second);
            }
        }
        g.begin_[v + 1] = g.adjacency_.size();
    }
    g.adjacency_.shrink_to_fit();
    g.edge_weight_.shrink_to_fit();

    g.vertex_weight_ = std::move(vertex_weight_);
    for (const weight_t w : g.vertex_weight_)
        if (__builtin_add_overflow(g.total_vertex_weight_, w, &g.total_vertex_weight_))
            throw usage_error("graph: the vertex weights sum to more than 2^63 - 1");
    return g;
}

}  // namespace dnnc::partitioner
