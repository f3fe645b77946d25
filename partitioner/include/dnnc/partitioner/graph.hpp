#pragma once
// A compact, read-only CSR graph with vertex weights and symmetric edge weights.
// Built once through graph_builder; partitions live outside it (see partition.hpp).
// Invariant: every undirected edge {u,v}, u != v, is stored twice (u->v and v->u) with the
// same weight; no self-loops; parallel edges are merged by summing their weights.
#include <cstdint>
#include <vector>

namespace dnnc::partitioner {

using vertex_id = std::uint32_t;
using weight_t = std::int64_t;

class graph {
public:
    graph() = default;

    std::size_t vertex_count() const { return vertex_weight_.size(); }
    // Each undirected edge counted once.
    std::size_t edge_count() const { return adjacency_.size() / 2; }
    weight_t total_vertex_weight() const { return total_vertex_weight_; }

    weight_t vertex_weight(vertex_id v) const { return vertex_weight_[v]; }
    std::size_t degree(vertex_id v) const { return begin_[v + 1] - begin_[v]; }

    // Neighbours of v and the weights of the edges to them, as parallel ranges.
    const vertex_id* neighbors_begin(vertex_id v) const { return adjacency_.data() + begin_[v]; }
    const vertex_id* neighbors_end(vertex_id v) const { return adjacency_.data() + begin_[v + 1]; }
    const weight_t* edge_weights_begin(vertex_id v) const { return edge_weight_.data() + begin_[v]; }

    const std::vector<std::uint64_t>& offsets() const { return begin_; }
    const std::vector<vertex_id>& adjacency() const { return adjacency_; }
    const std::vector<weight_t>& edge_weights() const { return edge_weight_; }
    const std::vector<weight_t>& vertex_weights() const { return vertex_weight_; }

private:
    friend class graph_builder;
    std::vector<std::uint64_t> begin_{0};
    std::vector<vertex_id> adjacency_;
    std::vector<weight_t> edge_weight_;
    std::vector<weight_t> vertex_weight_;
    weight_t total_vertex_weight_ = 0;
};

// Collects vertices and undirected edges in any order, then builds the CSR graph.
class graph_builder {
public:
    explicit graph_builder(std::size_t vertex_count, weight_t default_vertex_weight = 1);
    void set_vertex_weight(vertex_id v, weight_t w);
    // Adds weight w to the undirected edge {u, v}; self-loops are ignored (they never cross
    // a cut). Throws usage_error for an out-of-range vertex or a non-positive weight.
    void add_edge(vertex_id u, vertex_id v, weight_t w = 1);
    // Throws usage_error when the vertex weights, or the weights of parallel edges merged,
    // sum to more than a weight_t holds.
    graph build() &&;

private:
    std::vector<weight_t> vertex_weight_;
    struct half_edge { vertex_id from, to; weight_t w; };
    std::vector<half_edge> edges_;
};

}  // namespace dnnc::partitioner
