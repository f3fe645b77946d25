#include "dnnc/partitioner/placement.hpp"

#include "dnnc/partitioner/physical.hpp"
#include "dnnc/core/error.hpp"
#include "refinement/kway_fm.hpp"

#include <algorithm>
#include <tuple>

namespace dnnc::partitioner {
namespace {

// (condition-1 violations, largest link load, edge cut), compared lexicographically.
struct link_cost {
    std::uint64_t violations = 0;
    double link_load = 0;
    weight_t cut = 0;
    bool operator<(const link_cost& o) const {
        return std::tie(violations, link_load, cut) < std::tie(o.violations, o.link_load, o.cut);
    }
};

// Invariant: load_, traffic_ and now_ are those of node_of_ after every accepted move.
class link_refiner {
public:
    link_refiner(const graph& g, const physical_cluster& cluster, double imbalance,
                 std::vector<std::uint32_t>& node_of)
        : g_(g), cluster_(cluster), routes_(cluster), node_of_(node_of), load_(cluster.size(), 0),
          traffic_(cluster.links.size(), 0) {
        double capacity_sum = 0;
        for (const double c : cluster.capacity) capacity_sum += c;
        std::vector<double> target;
        for (const double c : cluster.capacity) target.push_back(c / capacity_sum * static_cast<double>(g.total_vertex_weight()));
        limits_ = detail::part_bounds(target, imbalance, 0);
        for (vertex_id v = 0; v < g.vertex_count(); ++v) {
            load_[node_of[v]] += g.vertex_weight(v);
            for_edges(v, [&](std::uint32_t c, weight_t w) {
                if (c <= node_of[v]) return;  // each cut edge once, from its end on the lower node
                if (routes_.hops(node_of[v], c) > 1) ++now_.violations;
                now_.cut += w;
                routes_.add(node_of[v], c, w, traffic_);
            });
        }
        now_.link_load = max_link_load(cluster, traffic_);
    }

    // Greedy passes in vertex order: each vertex goes to the node of one of its neighbours
    // where the cost is least, when that is below the cost now and both nodes stay within
    // their limits. Until a pass moves nothing, at most max_passes.
    void run() {
        constexpr int max_passes = 10;
        for (int pass = 0; pass < max_passes; ++pass) {
            bool moved = false;
            for (vertex_id v = 0; v < g_.vertex_count(); ++v) moved |= improve(v);
            if (!moved) return;
        }
    }

private:
    template <typename F>
    void for_edges(vertex_id v, F f) const {
        const weight_t* w = g_.edge_weights_begin(v);
        for (const vertex_id* u = g_.neighbors_begin(v); u != g_.neighbors_end(v); ++u, ++w) f(node_of_[*u], *w);
    }

    // Moves v's edges from node `from` to node `to` (sign +1), or back (sign -1), in traffic_
    // and in `c`.
    void shift(vertex_id v, std::uint32_t from, std::uint32_t to, link_cost& c) {
        for_edges(v, [&](std::uint32_t there, weight_t w) {
            if (there != from) {
                if (routes_.hops(from, there) > 1) --c.violations;
                c.cut -= w;
                routes_.add(from, there, -w, traffic_);
            }
            if (there != to) {
                if (routes_.hops(to, there) > 1) ++c.violations;
                c.cut += w;
                routes_.add(to, there, w, traffic_);
            }
        });
        c.link_load = max_link_load(cluster_, traffic_);
    }

    bool improve(vertex_id v) {
        const std::uint32_t from = node_of_[v];
        const weight_t w = g_.vertex_weight(v);
        if (load_[from] - w < limits_.lower[from]) return false;
        candidates_.clear();
        for_edges(v, [&](std::uint32_t there, weight_t) {
            if (there != from) candidates_.push_back(there);
        });
        std::sort(candidates_.begin(), candidates_.end());
        candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
        link_cost best = now_;
        std::uint32_t best_node = from;
        for (const std::uint32_t to : candidates_) {
            if (load_[to] + w > limits_.upper[to]) continue;
            link_cost c = now_;
            shift(v, from, to, c);
            link_cost undone = c;
            shift(v, to, from, undone);
            if (c < best) {
                best = c;
                best_node = to;
            }
        }
        if (best_node == from) return false;
        shift(v, from, best_node, now_);
        node_of_[v] = best_node;
        load_[from] -= w;
        load_[best_node] += w;
        return true;
    }

    const graph& g_;
    const physical_cluster& cluster_;
    link_routes routes_;
    std::vector<std::uint32_t>& node_of_;
    std::vector<weight_t> load_;
    std::vector<weight_t> traffic_;
    detail::part_limits limits_;
    link_cost now_;
    std::vector<std::uint32_t> candidates_;
};

}  // namespace

void unload_links(const graph& g, const physical_cluster& cluster, double imbalance,
                  std::vector<std::uint32_t>& node_of_vertex) {
    check_physical_cluster(cluster);
    const bool fits = node_of_vertex.size() == g.vertex_count() &&
                      std::all_of(node_of_vertex.begin(), node_of_vertex.end(),
                                  [&](std::uint32_t node) { return node < cluster.size(); });
    if (!fits) throw usage_error("unload_links: the assignment does not give every vertex a node of the cluster");
    if (!has_link_capacities(cluster)) return;
    link_refiner(g, cluster, imbalance, node_of_vertex).run();
}

}  // namespace dnnc::partitioner
