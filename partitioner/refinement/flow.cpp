#include "refinement/flow.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace dnnc::partitioner::detail {
namespace {

// A flow network on n nodes (Dinic's algorithm): arcs in pairs, each the other's reverse.
class flow_network {
public:
    explicit flow_network(std::size_t n) : first_(n, none) {}
    // An undirected edge of capacity c both ways (c_back: the reverse's; 0 for a directed arc).
    void add(std::size_t u, std::size_t v, weight_t c, weight_t c_back) {
        arcs_.push_back({v, c, first_[u]});
        first_[u] = arcs_.size() - 1;
        arcs_.push_back({u, c_back, first_[v]});
        first_[v] = arcs_.size() - 1;
    }
    weight_t max_flow(std::size_t s, std::size_t t) {
        weight_t flow = 0;
        while (levels(s, t)) {
            next_ = first_;
            flow += push(s, t, std::numeric_limits<weight_t>::max());
        }
        return flow;
    }
    // After max_flow: the nodes the source reaches in the residual network (forward), or
    // those that reach the sink (backward).
    std::vector<bool> reached_from(std::size_t s) const { return search(s, true); }
    std::vector<bool> reaching(std::size_t t) const { return search(t, false); }

private:
    static constexpr std::size_t none = ~std::size_t{0};
    struct arc {
        std::size_t to;
        weight_t capacity;  // residual
        std::size_t next;   // the node's next arc
    };
    bool levels(std::size_t s, std::size_t t) {
        level_.assign(first_.size(), -1);
        std::vector<std::size_t> queue{s};
        level_[s] = 0;
        for (std::size_t i = 0; i < queue.size() && level_[t] < 0; ++i)
            for (auto a = first_[queue[i]]; a != none; a = arcs_[a].next)
                if (arcs_[a].capacity > 0 && level_[arcs_[a].to] < 0) {
                    level_[arcs_[a].to] = level_[queue[i]] + 1;
                    queue.push_back(arcs_[a].to);
                }
        return level_[t] >= 0;
    }
    // A blocking flow's share through u, at most `limit`: as much as the level graph takes.
    // An arc is passed over once what lies behind it is blocked.
    weight_t push(std::size_t u, std::size_t t, weight_t limit) {
        if (u == t) return limit;
        weight_t total = 0;
        for (auto& a = next_[u]; a != none; a = arcs_[a].next) {
            auto& e = arcs_[a];
            if (e.capacity <= 0 || level_[e.to] != level_[u] + 1) continue;
            if (const weight_t pushed = push(e.to, t, std::min(limit - total, e.capacity))) {
                e.capacity -= pushed;
                arcs_[a ^ 1].capacity += pushed;
                total += pushed;
                if (total == limit) return total;
            }
        }
        return total;
    }
    // Forward: along arcs with residual capacity; backward: against them (u reaches t when an
    // arc u -> v with capacity left leads to a node that does).
    std::vector<bool> search(std::size_t from, bool forward) const {
        std::vector<bool> seen(first_.size(), false);
        std::vector<std::size_t> stack{from};
        seen[from] = true;
        while (!stack.empty()) {
            const auto u = stack.back();
            stack.pop_back();
            for (auto a = first_[u]; a != none; a = arcs_[a].next) {
                const auto v = arcs_[a].to;
                const weight_t residual = forward ? arcs_[a].capacity : arcs_[a ^ 1].capacity;
                if (residual > 0 && !seen[v]) {
                    seen[v] = true;
                    stack.push_back(v);
                }
            }
        }
        return seen;
    }
    std::vector<arc> arcs_;
    std::vector<std::size_t> first_, next_;
    std::vector<int> level_;
};

struct pair_refinement {
    const level_graph& g;
    std::vector<part_id>& part_of;
    const part_limits& limits;
    std::vector<weight_t>& part_weight;
    std::vector<std::size_t>& local;  // per vertex: its corridor index, or none
    static constexpr std::size_t none = ~std::size_t{0};

    std::vector<char>& seen;          // per vertex, scratch: all 0 between calls

    // Grows a's side of the corridor: from a's vertices next to b (among `seeds`), breadth
    // first inside a, up to `cap` of weight.
    std::vector<vertex_id> side(part_id a, part_id b, weight_t cap, const std::vector<vertex_id>& seeds) const {
        std::vector<vertex_id> queue, region;
        for (const vertex_id v : seeds) {
            if (part_of[v] != a || seen[v]) continue;
            for (auto e = g.begin[v]; e < g.begin[v + 1]; ++e)
                if (part_of[g.adjacency[e]] == b) {
                    queue.push_back(v);
                    seen[v] = 1;
                    break;
                }
        }
        weight_t weight = 0;
        for (std::size_t i = 0; i < queue.size(); ++i) {
            const vertex_id v = queue[i];
            if (weight + g.vertex_weight[v] > cap) continue;
            weight += g.vertex_weight[v];
            region.push_back(v);
            for (auto e = g.begin[v]; e < g.begin[v + 1]; ++e) {
                const vertex_id u = g.adjacency[e];
                if (part_of[u] == a && !seen[u]) {
                    seen[u] = 1;
                    queue.push_back(u);
                }
            }
        }
        for (const vertex_id v : queue) seen[v] = 0;
        return region;
    }

    // Tries a corridor of alpha allowances a side; true when it lowered the cut (by `gain`).
    // `seeds`: vertices of a, then of b, that were next to the other part.
    bool try_pair(part_id a, part_id b, double alpha, const std::vector<vertex_id>& seeds, weight_t& gain) {
        auto allowance = [&](part_id p) { return std::max<weight_t>(1, (limits.upper[p] - limits.lower[p]) / 2); };
        const auto in_a = side(a, b, static_cast<weight_t>(alpha * static_cast<double>(allowance(b))), seeds);
        const auto in_b = side(b, a, static_cast<weight_t>(alpha * static_cast<double>(allowance(a))), seeds);
        if (in_a.empty() || in_b.empty()) return false;
        std::vector<vertex_id> corridor = in_a;
        corridor.insert(corridor.end(), in_b.begin(), in_b.end());
        for (std::size_t i = 0; i < corridor.size(); ++i) local[corridor[i]] = i;
        const std::size_t s = corridor.size(), t = s + 1;
        flow_network net(corridor.size() + 2);
        weight_t current = 0;  // what the corridor's edges cut now
        for (std::size_t i = 0; i < corridor.size(); ++i) {
            const vertex_id v = corridor[i];
            weight_t to_source = 0, to_sink = 0;
            for (auto e = g.begin[v]; e < g.begin[v + 1]; ++e) {
                const vertex_id u = g.adjacency[e];
                const weight_t w = g.edge_weight[e];
                if (local[u] != none) {
                    if (local[u] > i) {
                        net.add(i, local[u], w, w);
                        current += part_of[u] != part_of[v] ? w : 0;
                    }
                } else if (part_of[u] == a) {
                    to_source += w;
                } else if (part_of[u] == b) {
                    to_sink += w;
                }
            }
            // Repartitioning: leaving its home (a or b) costs v its migration penalty, as an
            // edge to that side would.
            if (g.repartitioning() && g.home[v] == a) to_source += g.migration[v];
            if (g.repartitioning() && g.home[v] == b) to_sink += g.migration[v];
            if (to_source > 0) net.add(s, i, to_source, 0);
            if (to_sink > 0) net.add(i, t, to_sink, 0);
            current += part_of[v] == a ? to_sink : to_source;
        }
        const weight_t best = net.max_flow(s, t);
        bool applied = false;
        if (best < current) {
            // The smallest source side, then the largest.
            const auto from_source = net.reached_from(s);
            const auto to_sink = net.reaching(t);
            for (const bool largest : {false, true}) {
                weight_t gained_a = 0;  // weight that a gains
                for (std::size_t i = 0; i < corridor.size(); ++i) {
                    const bool to_a = largest ? !to_sink[i] : from_source[i];
                    const vertex_id v = corridor[i];
                    if (to_a && part_of[v] == b) gained_a += g.vertex_weight[v];
                    if (!to_a && part_of[v] == a) gained_a -= g.vertex_weight[v];
                }
                const weight_t wa = part_weight[a] + gained_a, wb = part_weight[b] - gained_a;
                if (wa > limits.upper[a] || wa < limits.lower[a] || wb > limits.upper[b] || wb < limits.lower[b]) continue;
                for (std::size_t i = 0; i < corridor.size(); ++i) part_of[corridor[i]] = (largest ? !to_sink[i] : from_source[i]) ? a : b;
                part_weight[a] = wa;
                part_weight[b] = wb;
                gain += current - best;
                applied = true;
                break;
            }
        }
        for (const vertex_id v : corridor) local[v] = none;
        return applied;
    }
};

}  // namespace

weight_t flow_refine(const level_graph& g, std::vector<part_id>& part_of, const part_limits& limits, const flow_options& options) {
    const std::size_t k = limits.upper.size();
    std::vector<weight_t> part_weight(k, 0);
    for (vertex_id v = 0; v < g.size(); ++v) part_weight[part_of[v]] += g.vertex_weight[v];
    std::vector<std::size_t> local(g.size(), pair_refinement::none);
    std::vector<char> seen(g.size(), 0);
    pair_refinement refinement{g, part_of, limits, part_weight, local, seen};
    weight_t gain = 0;
    // Without locality (more than half the edge weight cut, as in a random graph) nearly
    // every vertex is on some boundary: corridors are dense and minimum cuts no better than
    // what FM found. Flows then cost several times the rest and buy nothing.
    weight_t cut = 0, total = 0;
    for (vertex_id v = 0; v < g.size(); ++v)
        for (auto e = g.begin[v]; e < g.begin[v + 1]; ++e) {
            total += g.edge_weight[e];
            if (part_of[g.adjacency[e]] != part_of[v]) cut += g.edge_weight[e];
        }
    if (2 * cut > total) return 0;
    for (std::size_t pass = 0; pass < options.max_passes; ++pass) {
        // The pairs of parts with cut edges between them, heaviest first, and the vertices of
        // either next to the other.
        std::map<std::pair<part_id, part_id>, std::pair<weight_t, std::vector<vertex_id>>> between;
        for (vertex_id v = 0; v < g.size(); ++v)
            for (auto e = g.begin[v]; e < g.begin[v + 1]; ++e) {
                const part_id p = part_of[v], q = part_of[g.adjacency[e]];
                if (p == q) continue;
                auto& [w, seeds] = between[{std::min(p, q), std::max(p, q)}];
                if (p < q) w += g.edge_weight[e];
                if (seeds.empty() || seeds.back() != v) seeds.push_back(v);
            }
        std::vector<std::pair<weight_t, std::pair<part_id, part_id>>> pairs;
        for (const auto& [ends, found] : between) pairs.push_back({found.first, ends});
        std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
        bool improved = false;
        for (const auto& [w, ends] : pairs)
            for (double alpha = options.alpha_max; alpha >= 1; alpha /= 2)
                if (refinement.try_pair(ends.first, ends.second, alpha, between[ends].second, gain)) {
                    improved = true;
                    break;
                }
        if (!improved) break;
    }
    return gain;
}

}  // namespace dnnc::partitioner::detail
