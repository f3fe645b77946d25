#include "initial/bisection.hpp"

#include "coarsening/coarsen.hpp"

#include <numeric>

namespace dnnc::partitioner::detail {
namespace {

// Greedy graph growing: part 0 starts at a random vertex and repeatedly takes the vertex of
// part 1 whose move lowers the cut most, until it reaches its target weight. Invariant: the
// queue holds the part-1 vertices adjacent to part 0, keyed by (edges to part 0) - (edges
// to part 1); a disconnected part 0 continues from a fresh random vertex.
std::vector<part_id> grow(const level_graph& g, double target0, splitmix64& rng) {
    const std::size_t n = g.size();
    std::vector<part_id> part(n, 1);
    std::vector<weight_t> gain(n, 0);
    std::vector<char> seen(n, 0);
    std::vector<vertex_id> order(n);
    std::iota(order.begin(), order.end(), vertex_id{0});
    rng.shuffle(order);
    std::size_t next_seed = 0;
    gain_queue queue(n);
    auto enqueue = [&](vertex_id u) {
        weight_t d = 0;
        for (std::uint64_t e = g.begin[u]; e < g.begin[u + 1]; ++e) {
            d += part[g.adjacency[e]] == 0 ? g.edge_weight[e] : -g.edge_weight[e];
        }
        seen[u] = 1;
        gain[u] = d;
        queue.push(u, d);
    };
    double w0 = 0;
    while (w0 < target0) {
        if (queue.empty()) {
            while (next_seed < n && seen[order[next_seed]]) ++next_seed;
            if (next_seed == n) break;
            enqueue(order[next_seed]);
        }
        const vertex_id v = queue.pop();
        const auto wv = static_cast<double>(g.vertex_weight[v]);
        if (w0 + wv - target0 > target0 - w0) break;
        part[v] = 0;
        w0 += wv;
        for (std::uint64_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
            const vertex_id u = g.adjacency[e];
            if (part[u] == 0) continue;
            if (!seen[u]) {
                enqueue(u);
            } else {
                gain[u] += 2 * g.edge_weight[e];
                queue.update(u, gain[u]);
            }
        }
    }
    return part;
}

void split(const level_graph& g, const std::vector<vertex_id>& origin, std::size_t lo, std::size_t hi,
           const std::vector<double>& fractions, const bisection_options& options, splitmix64& rng,
           std::vector<part_id>& out) {
    if (g.size() == 0) return;
    if (hi - lo == 1 || g.size() == 1) {
        for (vertex_id v : origin) out[v] = static_cast<part_id>(lo);
        return;
    }
    const std::size_t mid = lo + (hi - lo) / 2;
    const double low = std::accumulate(fractions.begin() + static_cast<std::ptrdiff_t>(lo),
                                       fractions.begin() + static_cast<std::ptrdiff_t>(mid), 0.0);
    const double all = std::accumulate(fractions.begin() + static_cast<std::ptrdiff_t>(lo),
                                       fractions.begin() + static_cast<std::ptrdiff_t>(hi), 0.0);
    const std::vector<part_id> side = multilevel_bisection(g, low / all, options, rng);
    std::vector<vertex_id> local_of;
    for (part_id s = 0; s < 2; ++s) {
        const std::size_t first = s == 0 ? lo : mid;
        const std::size_t last = s == 0 ? mid : hi;
        std::vector<vertex_id> members;
        for (vertex_id v = 0; v < g.size(); ++v) {
            if (side[v] == s) members.push_back(v);
        }
        if (last - first == 1) {  // a single part: no subgraph to split
            for (vertex_id v : members) out[origin[v]] = static_cast<part_id>(first);
            continue;
        }
        local_of.resize(g.size(), none);
        const level_graph sub = induced_subgraph(g, members, local_of);
        std::vector<vertex_id> sub_origin(members.size());
        for (std::size_t i = 0; i < members.size(); ++i) sub_origin[i] = origin[members[i]];
        split(sub, sub_origin, first, last, fractions, options, rng, out);
    }
}

}  // namespace

std::vector<part_id> multilevel_bisection(const level_graph& g, double fraction0,
                                          const bisection_options& options, splitmix64& rng) {
    const hierarchy h = coarsen(g, coarsening_options{options.coarsen_to, 1.5, 0.95}, rng);
    const double total = static_cast<double>(g.total_weight);
    const std::vector<double> target{fraction0 * total, (1 - fraction0) * total};

    const level_graph& coarsest = h.coarsest();
    const part_limits coarsest_bound = part_bounds(target, options.epsilon, coarsest.max_vertex_weight);
    std::vector<part_id> best;
    weight_t best_excess = 0;
    weight_t best_cut = 0;
    for (std::size_t t = 0; t < std::max<std::size_t>(options.tries, 1); ++t) {
        std::vector<part_id> part = grow(coarsest, target[0], rng);
        kway_refiner refiner(coarsest, part, coarsest_bound);
        refiner.rebalance(rng);
        refiner.refine(options.fm, rng);
        const weight_t x = excess(refiner.part_weight(), coarsest_bound.upper);
        if (best.empty() || x < best_excess || (x == best_excess && refiner.cut() < best_cut)) {
            best_excess = x;
            best_cut = refiner.cut();
            best = std::move(part);
        }
    }
    for (std::size_t level = h.depth() - 1; level-- > 0;) {
        best = project(h.up[level], best);
        const level_graph& lg = h.level(level);
        const part_limits bound = part_bounds(target, options.epsilon, lg.max_vertex_weight);
        kway_refiner refiner(lg, best, bound);
        refiner.rebalance(rng);
        refiner.refine(options.fm, rng);
    }
    return best;
}

std::vector<part_id> recursive_bisection(const level_graph& g, const std::vector<double>& fractions,
                                         const bisection_options& options, splitmix64& rng) {
    std::vector<part_id> out(g.size(), 0);
    std::vector<vertex_id> origin(g.size());
    std::iota(origin.begin(), origin.end(), vertex_id{0});
    split(g, origin, 0, fractions.size(), fractions, options, rng, out);
    return out;
}

}  // namespace dnnc::partitioner::detail
