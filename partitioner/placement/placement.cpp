#include "dnnc/partitioner/placement.hpp"

#include "dnnc/partitioner/physical.hpp"
#include "dnnc/core/error.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>

namespace dnnc::partitioner {
namespace {

constexpr std::uint32_t unplaced = ~std::uint32_t{0};

// The graph of parts: an edge per pair of parts joined by at least one edge of g.
struct quotient {
    struct edge {
        part_id a, b;
        weight_t weight;
        std::uint64_t count;
    };
    std::vector<edge> edges;
    std::vector<std::vector<std::pair<part_id, std::size_t>>> incident;  // (other part, edge)
    std::vector<weight_t> part_weight;
};

quotient make_quotient(const graph& g, const partition& p) {
    if (p.part_of.size() != g.vertex_count()) {
        throw usage_error("placement: the partition covers " + std::to_string(p.part_of.size()) +
                          " of " + std::to_string(g.vertex_count()) + " vertices");
    }
    quotient q;
    q.part_weight.assign(p.parts, 0);
    std::vector<quotient::edge> half;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
        const part_id a = p.part_of[v];
        if (a >= p.parts) {
            throw usage_error("placement: vertex " + std::to_string(v) + " is in part " +
                              std::to_string(a) + " of " + std::to_string(p.parts));
        }
        q.part_weight[a] += g.vertex_weight(v);
        const weight_t* w = g.edge_weights_begin(v);
        for (const vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) {
            const part_id b = p.part_of[*u];
            if (*u > v && a != b) half.push_back({std::min(a, b), std::max(a, b), *w, 1});
        }
    }
    std::sort(half.begin(), half.end(), [](const auto& x, const auto& y) {
        return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    });
    for (const auto& e : half) {
        if (!q.edges.empty() && q.edges.back().a == e.a && q.edges.back().b == e.b) {
            q.edges.back().weight += e.weight;
            ++q.edges.back().count;
        } else {
            q.edges.push_back(e);
        }
    }
    q.incident.resize(p.parts);
    for (std::size_t i = 0; i < q.edges.size(); ++i) {
        q.incident[q.edges[i].a].emplace_back(q.edges[i].b, i);
        q.incident[q.edges[i].b].emplace_back(q.edges[i].a, i);
    }
    return q;
}

// (violating edges of g, largest link load, hop-weighted cut), compared lexicographically;
// the link load stays 0 unless some link has a capacity.
struct cost {
    std::uint64_t violations = 0;
    double link_load = 0;
    weight_t hop_weight = 0;
    bool operator<(const cost& o) const {
        return std::tie(violations, link_load, hop_weight) < std::tie(o.violations, o.link_load, o.hop_weight);
    }
};

class placer {
public:
    placer(const graph& g, const partition& p, const physical_cluster& cluster)
        : q_(make_quotient(g, p)), cluster_(cluster), n_(cluster.size()),
          hops_(hop_distances(cluster)), linked_(link_matrix(cluster)) {
        if (has_link_capacities(cluster)) routes_.emplace(cluster);
    }

    // The cost of the edges between `part` on `node` and the parts already placed.
    cost cost_on(part_id part, std::uint32_t node, const std::vector<std::uint32_t>& node_of) const {
        cost c;
        for (const auto& [other, e] : q_.incident[part]) {
            if (node_of[other] == unplaced) continue;
            const auto h = hops_[node * n_ + node_of[other]];
            if (h > 1) c.violations += q_.edges[e].count;
            c.hop_weight += q_.edges[e].weight * h;
        }
        return c;
    }

    bool keeps_condition_1(part_id part, std::uint32_t node,
                           const std::vector<std::uint32_t>& node_of) const {
        for (const auto& [other, e] : q_.incident[part]) {
            const auto there = node_of[other];
            if (there != unplaced && there != node && !linked_[node * n_ + there]) return false;
        }
        return true;
    }

    // Invariant: every placed class keeps condition 1 towards the classes placed before it,
    // unless no node could (then it took the cheapest one). `current` is the node of the
    // class placed last.
    std::vector<std::uint32_t> classes() const {
        const std::size_t k = q_.part_weight.size();
        std::vector<std::uint32_t> node_of(k, unplaced);
        std::vector<char> used(n_, 0);
        std::vector<weight_t> connection(k, 0);
        std::vector<std::size_t> free_links(n_, 0);
        for (const auto& [a, b] : cluster_.links) {
            ++free_links[a];
            ++free_links[b];
        }
        // Among equally capable nodes, the one with more unused neighbours leaves more room
        // for the classes still to come.
        const auto better_node = [&](std::uint32_t a, std::uint32_t b) {
            return std::make_tuple(cluster_.capacity[a], free_links[a], b) >
                   std::make_tuple(cluster_.capacity[b], free_links[b], a);
        };
        const auto better_class = [&](part_id a, part_id b) {
            return std::make_tuple(connection[a], q_.part_weight[a], q_.incident[a].size(), b) >
                   std::make_tuple(connection[b], q_.part_weight[b], q_.incident[b].size(), a);
        };
        std::uint32_t current = unplaced;
        for (std::size_t step = 0; step < k; ++step) {
            part_id next = unplaced;
            for (part_id c = 0; c < k; ++c) {
                if (node_of[c] == unplaced && (next == unplaced || better_class(c, next))) next = c;
            }
            std::uint32_t chosen = unplaced;
            for (std::uint32_t node = 0; node < n_; ++node) {
                if (!used[node] && keeps_condition_1(next, node, node_of) &&
                    (chosen == unplaced || better_node(node, chosen))) {
                    chosen = node;
                }
            }
            if (chosen == unplaced && keeps_condition_1(next, current, node_of)) chosen = current;
            if (chosen == unplaced) {
                chosen = current;
                cost best = cost_on(next, current, node_of);
                for (std::uint32_t node = 0; node < n_; ++node) {
                    const cost c = cost_on(next, node, node_of);
                    if (c < best) {
                        best = c;
                        chosen = node;
                    }
                }
            }
            node_of[next] = chosen;
            if (!used[chosen]) {
                used[chosen] = 1;
                for (const auto& [a, b] : cluster_.links) {
                    if (a == chosen) --free_links[b];
                    if (b == chosen) --free_links[a];
                }
            }
            current = chosen;
            for (const auto& [other, e] : q_.incident[next]) connection[other] += q_.edges[e].weight;
        }
        return node_of;
    }

    std::vector<std::uint32_t> parts() const {
        const std::size_t k = q_.part_weight.size();
        if (k != n_) {
            throw usage_error("placement: " + std::to_string(k) + " parts for " +
                              std::to_string(n_) + " nodes");
        }
        std::vector<std::uint32_t> node_of(k);
        std::iota(node_of.begin(), node_of.end(), 0);
        if (total(node_of).violations > 0 || routes_) {
            std::vector<std::uint32_t> found(k, unplaced), best;
            std::vector<char> used(n_, 0);
            std::size_t budget = 1'000'000;
            cost best_cost;
            search(search_order(), 0, found, used, budget, best, best_cost);
            if (!best.empty()) node_of = best;
        }
        if (total(node_of).violations > 0 || routes_) improve_by_swaps(node_of);
        return node_of;
    }

private:
    cost total(const std::vector<std::uint32_t>& node_of) const {
        cost c;
        for (const auto& e : q_.edges) {
            const auto h = hops_[node_of[e.a] * n_ + node_of[e.b]];
            if (h > 1) c.violations += e.count;
            c.hop_weight += e.weight * h;
        }
        if (routes_) c.link_load = max_link_load(cluster_, link_traffic(node_of));
        return c;
    }

    bool same_capacity(std::uint32_t a, std::uint32_t b) const {
        return cluster_.capacity[a] == cluster_.capacity[b];
    }

    // Parts in breadth-first order over the quotient, most connected first, so that each
    // part meets its constraints as early as possible.
    std::vector<part_id> search_order() const {
        const std::size_t k = q_.part_weight.size();
        std::vector<part_id> by_degree(k);
        std::iota(by_degree.begin(), by_degree.end(), 0);
        std::stable_sort(by_degree.begin(), by_degree.end(), [&](part_id a, part_id b) {
            return q_.incident[a].size() > q_.incident[b].size();
        });
        std::vector<part_id> order;
        std::vector<char> seen(k, 0);
        for (const part_id root : by_degree) {
            if (seen[root]) continue;
            seen[root] = 1;
            order.push_back(root);
            for (std::size_t head = order.size() - 1; head < order.size(); ++head) {
                for (const auto& [other, e] : q_.incident[order[head]]) {
                    if (!seen[other]) {
                        seen[other] = 1;
                        order.push_back(other);
                    }
                }
            }
        }
        return order;
    }

    // Depth-first search for violation-free permutations within capacity classes; each part
    // tries its own node first. Without link capacities the first one found goes to `best`
    // and ends the search (true); with them, the search goes on through the budget and `best`
    // keeps the one of least cost.
    bool search(const std::vector<part_id>& order, std::size_t depth,
                std::vector<std::uint32_t>& node_of, std::vector<char>& used,
                std::size_t& budget, std::vector<std::uint32_t>& best, cost& best_cost) const {
        if (depth == order.size()) {
            if (!routes_) {
                best = node_of;
                return true;
            }
            // Costing a placement routes every edge of the part graph: that much of the budget.
            budget -= std::min(budget, q_.edges.size());
            const cost c = total(node_of);
            if (best.empty() || c < best_cost) {
                best = node_of;
                best_cost = c;
            }
            return false;
        }
        const part_id part = order[depth];
        for (std::uint32_t i = 0; i < n_; ++i) {
            const std::uint32_t node = i == 0 ? part : (i <= part ? i - 1 : i);
            if (used[node] || !same_capacity(node, part)) continue;
            if (budget == 0) return false;
            --budget;
            if (!keeps_condition_1(part, node, node_of)) continue;
            node_of[part] = node;
            used[node] = 1;
            if (search(order, depth + 1, node_of, used, budget, best, best_cost)) return true;
            node_of[part] = unplaced;
            used[node] = 0;
        }
        return false;
    }

    // The link traffic of the part graph placed by node_of (routes_ only).
    std::vector<weight_t> link_traffic(const std::vector<std::uint32_t>& node_of) const {
        std::vector<weight_t> traffic(cluster_.links.size(), 0);
        for (const auto& e : q_.edges) {
            if (node_of[e.a] != node_of[e.b]) routes_->add(node_of[e.a], node_of[e.b], e.weight, traffic);
        }
        return traffic;
    }

    // Parts a and b trade nodes if that lowers the cost; returns whether they did. Only the
    // edges at a and b change their hops, violations and routes (the route between a and b
    // stays, as routes are by pair of nodes); `traffic` is node_of's link traffic throughout.
    bool swap_if_better(part_id a, part_id b, std::vector<std::uint32_t>& node_of,
                        std::vector<weight_t>& traffic) const {
        cost before;
        cost after = swapped(a, b, node_of, before);
        if (!routes_) {
            if (!(after < before)) return false;
            std::swap(node_of[a], node_of[b]);
            return true;
        }
        const auto trade = [&] {
            const auto reroute = [&](weight_t sign) {
                for (const part_id x : {a, b}) {
                    for (const auto& [other, e] : q_.incident[x]) {
                        if (other == a || other == b || node_of[x] == node_of[other]) continue;
                        routes_->add(node_of[x], node_of[other], sign * q_.edges[e].weight, traffic);
                    }
                }
            };
            reroute(-1);
            std::swap(node_of[a], node_of[b]);
            reroute(+1);
        };
        before.link_load = max_link_load(cluster_, traffic);
        trade();
        after.link_load = max_link_load(cluster_, traffic);
        if (after < before) return true;
        trade();  // back
        return false;
    }

    // The cost of the edges at parts a and b once they trade nodes; `before` receives their
    // cost as they are. node_of is restored before returning.
    cost swapped(part_id a, part_id b, std::vector<std::uint32_t>& node_of, cost& before) const {
        const auto local = [&](part_id x, part_id skip) {
            cost c;
            for (const auto& [other, e] : q_.incident[x]) {
                if (other == skip) continue;
                const auto h = hops_[node_of[x] * n_ + node_of[other]];
                if (h > 1) c.violations += q_.edges[e].count;
                c.hop_weight += q_.edges[e].weight * h;
            }
            return c;
        };
        const auto sum = [&] {
            const cost ca = local(a, b), cb = local(b, a);
            return cost{ca.violations + cb.violations, 0, ca.hop_weight + cb.hop_weight};
        };
        before = sum();
        std::swap(node_of[a], node_of[b]);
        const cost after = sum();
        std::swap(node_of[a], node_of[b]);
        return after;
    }

    void improve_by_swaps(std::vector<std::uint32_t>& node_of) const {
        const std::size_t k = node_of.size();
        std::size_t budget = 10'000'000;  // swaps tried, so that huge clusters stay bounded
        std::vector<weight_t> traffic = routes_ ? link_traffic(node_of) : std::vector<weight_t>{};
        for (bool improved = true; improved && budget > 0;) {
            improved = false;
            for (part_id a = 0; a < k && budget > 0; ++a) {
                for (part_id b = a + 1; b < k && budget > 0; ++b) {
                    if (!same_capacity(node_of[a], node_of[b])) continue;
                    --budget;
                    improved |= swap_if_better(a, b, node_of, traffic);
                }
            }
        }
    }

    quotient q_;
    const physical_cluster& cluster_;
    std::size_t n_;
    std::vector<std::uint32_t> hops_;
    std::vector<char> linked_;
    std::optional<link_routes> routes_;  // only when some link has a capacity
};

placement finish(const partition& p, std::vector<std::uint32_t> node_of_part) {
    placement result;
    result.node_of_vertex.reserve(p.part_of.size());
    for (const part_id part : p.part_of) result.node_of_vertex.push_back(node_of_part[part]);
    result.node_of_part = std::move(node_of_part);
    return result;
}

}  // namespace

placement place_classes(const graph& g, const partition& p, const physical_cluster& cluster) {
    check_physical_cluster(cluster);
    return finish(p, placer(g, p, cluster).classes());
}

placement place_parts(const graph& g, const partition& p, const physical_cluster& cluster) {
    check_physical_cluster(cluster);
    return finish(p, placer(g, p, cluster).parts());
}

placement place(const graph& g, const partition& p, const physical_cluster& cluster,
                strategy method) {
    return method == strategy::mincut ? place_classes(g, p, cluster) : place_parts(g, p, cluster);
}

}  // namespace dnnc::partitioner
