#include "dnnc/partitioner/stoer_wagner.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace dnnc::partitioner {
namespace {

constexpr std::uint32_t absent = ~std::uint32_t{0};

// Max-heap of vertex ids by key, with the position of every vertex so that a key can be
// raised in place.
class indexed_max_heap {
public:
    explicit indexed_max_heap(std::size_t n) : pos_(n, absent), key_(n, 0) {}

    bool empty() const { return heap_.empty(); }
    bool contains(std::uint32_t v) const { return pos_[v] != absent; }
    weight_t key(std::uint32_t v) const { return key_[v]; }

    void push(std::uint32_t v) {
        key_[v] = 0;
        pos_[v] = static_cast<std::uint32_t>(heap_.size());
        heap_.push_back(v);
    }

    void raise(std::uint32_t v, weight_t delta) {
        key_[v] += delta;
        sift_up(pos_[v]);
    }

    std::uint32_t pop() {
        const std::uint32_t top = heap_.front();
        pos_[top] = absent;
        const std::uint32_t last = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) {
            heap_.front() = last;
            pos_[last] = 0;
            sift_down(0);
        }
        return top;
    }

private:
    void sift_up(std::uint32_t i) {
        const std::uint32_t v = heap_[i];
        while (i > 0) {
            const std::uint32_t parent = (i - 1) / 2;
            if (key_[heap_[parent]] >= key_[v]) break;
            place(i, heap_[parent]);
            i = parent;
        }
        place(i, v);
    }

    void sift_down(std::uint32_t i) {
        const std::uint32_t v = heap_[i];
        const auto n = static_cast<std::uint32_t>(heap_.size());
        for (;;) {
            std::uint32_t child = 2 * i + 1;
            if (child >= n) break;
            if (child + 1 < n && key_[heap_[child + 1]] > key_[heap_[child]]) ++child;
            if (key_[heap_[child]] <= key_[v]) break;
            place(i, heap_[child]);
            i = child;
        }
        place(i, v);
    }

    void place(std::uint32_t i, std::uint32_t v) {
        heap_[i] = v;
        pos_[v] = i;
    }

    std::vector<std::uint32_t> heap_;
    std::vector<std::uint32_t> pos_;
    std::vector<weight_t> key_;
};

struct local_graph {
    std::vector<std::uint64_t> begin{0};
    std::vector<std::uint32_t> adjacency;
    std::vector<weight_t> weight;
    std::size_t size() const { return begin.size() - 1; }
};

local_graph induce(const graph& g, const std::vector<vertex_id>& vertices) {
    std::vector<std::uint32_t> local_of(g.vertex_count(), absent);
    for (std::size_t i = 0; i < vertices.size(); ++i) {
        const vertex_id v = vertices[i];
        if (v >= g.vertex_count()) {
            throw usage_error("stoer_wagner: vertex " + std::to_string(v) + " out of range");
        }
        if (local_of[v] != absent) {
            throw usage_error("stoer_wagner: vertex " + std::to_string(v) + " given twice");
        }
        local_of[v] = static_cast<std::uint32_t>(i);
    }
    local_graph h;
    h.begin.reserve(vertices.size() + 1);
    for (const vertex_id v : vertices) {
        const weight_t* w = g.edge_weights_begin(v);
        for (const vertex_id* u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u, ++w) {
            if (local_of[*u] != absent) {
                h.adjacency.push_back(local_of[*u]);
                h.weight.push_back(*w);
            }
        }
        h.begin.push_back(h.adjacency.size());
    }
    return h;
}

// The vertices reachable from vertex 0, marked.
std::vector<char> component_of_first(const local_graph& h) {
    std::vector<char> seen(h.size(), 0);
    std::vector<std::uint32_t> stack{0};
    seen[0] = 1;
    while (!stack.empty()) {
        const auto v = stack.back();
        stack.pop_back();
        for (auto e = h.begin[v]; e < h.begin[v + 1]; ++e) {
            const auto u = h.adjacency[e];
            if (!seen[u]) {
                seen[u] = 1;
                stack.push_back(u);
            }
        }
    }
    return seen;
}

// Invariant: the working graph is the input with some vertex sets merged; every cut of it is
// a cut of the input, `best` is the smallest such cut recorded so far, and no cut smaller
// than `best` has been lost to a merge. Each phase orders the vertices by maximum adjacency
// (Stoer–Wagner). The last vertex t and the one before it, s, have λ(s, t) = key(t): that is
// a candidate cut, and s and t are merged. Following Nagamochi and Ibaraki, the key a vertex
// y reaches when its neighbour x is scanned is a lower bound on λ(x, y), so every such edge
// whose bound reaches `best` is merged in the same phase; this keeps the result exact and
// makes the number of phases small. Single merged vertices are candidates too.
// Merges go to a log of original vertex pairs so that the side of the best cut can be
// replayed at the end.
class stoer_wagner_solver {
public:
    explicit stoer_wagner_solver(local_graph h)
        : g_(std::move(h)), parent_(g_.size()), original_(g_.size()),
          original_count_(g_.size()) {
        std::iota(original_.begin(), original_.end(), 0);
    }

    // The best cut value and the original vertices on the side it was measured on.
    std::pair<weight_t, std::vector<char>> run() {
        while (g_.size() > 1) {
            const std::size_t phase_start = merges_.size();
            std::iota(parent_.begin(), parent_.end(), 0);
            for (std::uint32_t v = 0; v < g_.size(); ++v) {
                weight_t degree = 0;
                for (auto e = g_.begin[v]; e < g_.begin[v + 1]; ++e) degree += g_.weight[e];
                record(degree, phase_start, v);
            }
            indexed_max_heap heap(g_.size());
            for (std::uint32_t v = 0; v < g_.size(); ++v) heap.push(v);
            std::uint32_t s = absent, t = absent;
            while (!heap.empty()) {
                s = t;
                t = heap.pop();
                for (auto e = g_.begin[t]; e < g_.begin[t + 1]; ++e) {
                    const auto u = g_.adjacency[e];
                    if (!heap.contains(u)) continue;
                    heap.raise(u, g_.weight[e]);
                    if (heap.key(u) >= best_) unite(t, u);
                }
            }
            record(heap.key(t), phase_start, t);
            unite(s, t);
            contract();
        }
        std::vector<std::uint32_t> root(original_count_);
        std::iota(root.begin(), root.end(), 0);
        const auto find_root = [&](std::uint32_t x) {
            while (root[x] != x) x = root[x] = root[root[x]];
            return x;
        };
        for (std::size_t i = 0; i < best_merges_; ++i) {
            root[find_root(merges_[i].second)] = find_root(merges_[i].first);
        }
        std::vector<char> side(root.size(), 0);
        const auto r = find_root(best_vertex_);
        for (std::uint32_t v = 0; v < side.size(); ++v) side[v] = find_root(v) == r;
        return {best_, std::move(side)};
    }

private:
    // The cut around working vertex v as it stood after `merges` log entries.
    void record(weight_t value, std::size_t merges, std::uint32_t v) {
        if (value < best_) {
            best_ = value;
            best_merges_ = merges;
            best_vertex_ = original_[v];
        }
    }

    std::uint32_t find(std::uint32_t x) {
        while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
        return x;
    }

    void unite(std::uint32_t a, std::uint32_t b) {
        a = find(a);
        b = find(b);
        if (a == b) return;
        merges_.emplace_back(original_[a], original_[b]);
        parent_[b] = a;
    }

    // Rebuilds the working graph with one vertex per merged set, parallel edges summed and
    // edges inside a set dropped.
    void contract() {
        const auto n = static_cast<std::uint32_t>(g_.size());
        std::vector<std::uint32_t> id(n, absent);
        std::vector<std::uint32_t> next_original;
        for (std::uint32_t v = 0; v < n; ++v) {
            if (find(v) == v) {
                id[v] = static_cast<std::uint32_t>(next_original.size());
                next_original.push_back(original_[v]);
            }
        }
        const auto count = next_original.size();
        std::vector<std::uint32_t> members(n);
        {
            std::vector<std::uint32_t> at(count + 1, 0);
            for (std::uint32_t v = 0; v < n; ++v) ++at[id[find(v)] + 1];
            for (std::size_t i = 0; i < count; ++i) at[i + 1] += at[i];
            for (std::uint32_t v = 0; v < n; ++v) members[at[id[find(v)]]++] = v;
        }
        local_graph next;
        next.begin.reserve(count + 1);
        next.adjacency.reserve(g_.adjacency.size());
        next.weight.reserve(g_.adjacency.size());
        constexpr auto unused = std::numeric_limits<std::uint64_t>::max();
        std::vector<std::uint64_t> slot(count, unused);
        std::size_t m = 0;
        for (std::uint32_t i = 0; i < count; ++i) {
            const auto row_begin = next.adjacency.size();
            for (; m < n && id[find(members[m])] == i; ++m) {
                const auto v = members[m];
                for (auto e = g_.begin[v]; e < g_.begin[v + 1]; ++e) {
                    const auto u = id[find(g_.adjacency[e])];
                    if (u == i) continue;
                    if (slot[u] != unused && slot[u] >= row_begin) {
                        next.weight[slot[u]] += g_.weight[e];
                    } else {
                        slot[u] = next.adjacency.size();
                        next.adjacency.push_back(u);
                        next.weight.push_back(g_.weight[e]);
                    }
                }
            }
            next.begin.push_back(next.adjacency.size());
        }
        g_ = std::move(next);
        parent_.resize(count);
        original_ = std::move(next_original);
    }

    local_graph g_;
    std::vector<std::uint32_t> parent_;    // merges of the current phase
    std::vector<std::uint32_t> original_;  // an original vertex of each working vertex
    std::size_t original_count_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> merges_;
    weight_t best_ = std::numeric_limits<weight_t>::max();
    std::size_t best_merges_ = 0;
    std::uint32_t best_vertex_ = 0;
};

min_cut from_side(const std::vector<vertex_id>& vertices, const std::vector<char>& side,
                  weight_t value) {
    const auto count = static_cast<std::size_t>(std::count(side.begin(), side.end(), 1));
    const char pick = 2 * count <= side.size() ? 1 : 0;
    min_cut cut;
    cut.value = value;
    for (std::size_t i = 0; i < side.size(); ++i) {
        if (side[i] == pick) cut.side.push_back(vertices[i]);
    }
    std::sort(cut.side.begin(), cut.side.end());
    return cut;
}

}  // namespace

min_cut stoer_wagner(const graph& g, const std::vector<vertex_id>& vertices) {
    if (vertices.size() < 2) {
        throw usage_error("stoer_wagner: a cut needs at least 2 vertices, got " +
                          std::to_string(vertices.size()));
    }
    auto h = induce(g, vertices);
    const auto reached = component_of_first(h);
    if (std::find(reached.begin(), reached.end(), 0) != reached.end()) {
        return from_side(vertices, reached, 0);
    }
    auto [value, side] = stoer_wagner_solver(std::move(h)).run();
    return from_side(vertices, side, value);
}

min_cut stoer_wagner(const graph& g) {
    std::vector<vertex_id> all(g.vertex_count());
    std::iota(all.begin(), all.end(), vertex_id{0});
    return stoer_wagner(g, all);
}

}  // namespace dnnc::partitioner
