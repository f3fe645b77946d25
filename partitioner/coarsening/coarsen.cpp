#include "coarsening/coarsen.hpp"

#include <algorithm>
#include <cmath>

namespace dnnc::partitioner::detail {
namespace {

// Vertices by increasing degree, in random order among equal degrees.
std::vector<vertex_id> degree_order(const level_graph& g, splitmix64& rng) {
    const std::size_t n = g.size();
    std::vector<vertex_id> shuffled(n);
    for (vertex_id v = 0; v < n; ++v) shuffled[v] = v;
    rng.shuffle(shuffled);
    std::size_t max_degree = 0;
    for (vertex_id v = 0; v < n; ++v) max_degree = std::max(max_degree, g.degree(v));
    std::vector<std::size_t> count(max_degree + 2, 0);
    for (vertex_id v = 0; v < n; ++v) ++count[g.degree(v) + 1];
    for (std::size_t d = 1; d < count.size(); ++d) count[d] += count[d - 1];
    std::vector<vertex_id> order(n);
    for (vertex_id v : shuffled) order[count[g.degree(v)]++] = v;
    return order;
}

// Sorted heavy-edge matching. Invariant: match[v] == match-partner of v, v itself once v is
// known to stay single, `none` while undecided; partners never weigh more than max_weight
// together. Vertices left single that hang on the same heaviest neighbour (stars, leaves of
// hubs) or have no neighbour at all are then paired with each other, so that graphs with
// hubs still shrink.
std::vector<vertex_id> match_vertices(const level_graph& g, weight_t max_weight, splitmix64& rng) {
    const std::size_t n = g.size();
    std::vector<vertex_id> match(n, none);
    const std::vector<vertex_id> order = degree_order(g, rng);
    std::size_t single = 0;
    for (vertex_id v : order) {
        if (match[v] != none) continue;
        vertex_id best = none;
        weight_t best_weight = 0;
        const weight_t wv = g.vertex_weight[v];
        for (std::uint64_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
            const vertex_id u = g.adjacency[e];
            if (match[u] != none || wv + g.vertex_weight[u] > max_weight || !g.may_merge(u, v)) continue;
            if (g.edge_weight[e] > best_weight) {
                best_weight = g.edge_weight[e];
                best = u;
            }
        }
        if (best == none) {
            ++single;
            continue;
        }
        match[v] = best;
        match[best] = v;
    }
    if (single > n / 10) {
        std::vector<vertex_id> waiting(n, none);
        vertex_id isolated = none;
        for (vertex_id v : order) {
            if (match[v] != none) continue;
            vertex_id hub = none;
            weight_t hub_weight = 0;
            for (std::uint64_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
                if (g.edge_weight[e] > hub_weight) {
                    hub_weight = g.edge_weight[e];
                    hub = g.adjacency[e];
                }
            }
            vertex_id& slot = hub == none ? isolated : waiting[hub];
            if (slot != none && g.vertex_weight[slot] + g.vertex_weight[v] <= max_weight && g.may_merge(slot, v)) {
                match[v] = slot;
                match[slot] = v;
                slot = none;
            } else {
                slot = v;
            }
        }
    }
    for (vertex_id v = 0; v < n; ++v) {
        if (match[v] == none) match[v] = v;
    }
    return match;
}

// Builds the coarse graph of a matching; up[v] receives v's coarse vertex. Coarse vertices
// are numbered in the order of their smaller member; when repartitioning, a coarse vertex's
// home is that of a member with one and its migration penalty the sum of its members'; its
// group is its members'.
level_graph contract(const level_graph& g, const std::vector<vertex_id>& match, std::vector<vertex_id>& up) {
    const std::size_t n = g.size();
    up.assign(n, none);
    vertex_id coarse_n = 0;
    for (vertex_id v = 0; v < n; ++v) {
        if (match[v] >= v) {
            up[v] = coarse_n;
            up[match[v]] = coarse_n;
            ++coarse_n;
        }
    }
    level_graph c;
    c.begin.resize(coarse_n + 1);
    c.vertex_weight.resize(coarse_n);
    if (g.repartitioning()) {
        c.home.assign(coarse_n, no_home);
        c.migration.assign(coarse_n, 0);
    }
    if (!g.group.empty()) c.group.resize(coarse_n);
    // The coarse graph has at most as many edges as the fine one. Capacity that stays unused
    // is address space only: its pages are never touched, so nothing is zeroed, copied or
    // shrunk.
    c.adjacency.reserve(g.adjacency.size());
    c.edge_weight.reserve(g.adjacency.size());
    constexpr std::uint64_t unused = ~std::uint64_t{0};
    std::vector<std::uint64_t> slot(coarse_n, unused);
    // Raw pointers: the loop below is the hot path of coarsening, and vector accesses through
    // references keep the compiler from holding the data pointers in registers.
    const std::uint64_t* const fine_begin = g.begin.data();
    const vertex_id* const fine_adjacency = g.adjacency.data();
    const weight_t* const fine_edge_weight = g.edge_weight.data();
    const vertex_id* const coarse_of = up.data();
    std::uint64_t* const slot_of = slot.data();
    vertex_id cv = 0;
    for (vertex_id v = 0; v < n; ++v) {
        const vertex_id partner = match[v];
        if (partner < v) continue;
        const std::uint64_t first = c.adjacency.size();
        weight_t w = 0;
        for (vertex_id u = v;; u = partner) {
            w += g.vertex_weight[u];
            if (g.repartitioning()) {
                if (g.home[u] != no_home) c.home[cv] = g.home[u];
                c.migration[cv] += g.migration[u];
            }
            if (!g.group.empty()) c.group[cv] = g.group[u];
            for (std::uint64_t e = fine_begin[u]; e < fine_begin[u + 1]; ++e) {
                const vertex_id cx = coarse_of[fine_adjacency[e]];
                if (cx == cv) continue;
                if (slot_of[cx] == unused) {
                    slot_of[cx] = c.adjacency.size();
                    c.adjacency.push_back(cx);
                    c.edge_weight.push_back(fine_edge_weight[e]);
                } else {
                    c.edge_weight[slot_of[cx]] += fine_edge_weight[e];
                }
            }
            if (u == partner) break;
        }
        for (std::uint64_t e = first; e < c.adjacency.size(); ++e) slot_of[c.adjacency[e]] = unused;
        c.begin[cv + 1] = c.adjacency.size();
        c.vertex_weight[cv] = w;
        c.max_vertex_weight = std::max(c.max_vertex_weight, w);
        ++cv;
    }
    c.total_weight = g.total_weight;
    return c;
}

}  // namespace

hierarchy coarsen(const level_graph& finest, const coarsening_options& options, splitmix64& rng) {
    hierarchy h;
    h.finest = &finest;
    const double target = static_cast<double>(std::max<std::size_t>(options.coarsen_to, 1));
    const weight_t max_weight = std::max<weight_t>(
        finest.max_vertex_weight,
        static_cast<weight_t>(std::ceil(options.max_vertex_weight_factor * static_cast<double>(finest.total_weight) / target)));
    while (h.coarsest().size() > options.coarsen_to) {
        const level_graph& fine = h.coarsest();
        std::vector<vertex_id> up;
        level_graph next = contract(fine, match_vertices(fine, max_weight, rng), up);
        if (static_cast<double>(next.size()) > options.min_shrink * static_cast<double>(fine.size())) break;
        h.coarse.push_back(std::move(next));
        h.up.push_back(std::move(up));
    }
    return h;
}

std::vector<part_id> project(const std::vector<vertex_id>& up, const std::vector<part_id>& coarse_part) {
    std::vector<part_id> fine(up.size());
    for (std::size_t v = 0; v < up.size(); ++v) fine[v] = coarse_part[up[v]];
    return fine;
}

}  // namespace dnnc::partitioner::detail
