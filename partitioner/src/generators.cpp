#include "dnnc/partitioner/generators.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

namespace dnnc::partitioner {
namespace {


double uniform(splitmix64& rng) {
    return static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
}

void check_probability(const char* what, double p) {
    if (!(p >= 0 && p <= 1)) {
        throw usage_error(std::string(what) + " must be a probability in [0, 1], got " +
                          std::to_string(p));
    }
}

void check_vertices(std::size_t n) {
    if (n == 0) throw usage_error("a generated graph needs at least 1 vertex");
    if (n >= std::size_t{~vertex_id{0}}) {
        throw usage_error("too many vertices: " + std::to_string(n));
    }
}

// Calls take(i) for each i in [0, count) independently with probability p, jumping over the
// indices not taken with geometric skips (Batagelj and Brandes), O(1 + count · p).
template <typename F>
void sample_indices(std::uint64_t count, double p, splitmix64& rng, F take) {
    if (p <= 0 || count == 0) return;
    if (p >= 1) {
        for (std::uint64_t i = 0; i < count; ++i) take(i);
        return;
    }
    const double log_q = std::log1p(-p);
    std::uint64_t i = 0;
    for (;;) {
        const double skip = std::floor(std::log1p(-uniform(rng)) / log_q);
        if (skip >= static_cast<double>(count - i)) return;
        i += static_cast<std::uint64_t>(skip);
        take(i);
        if (++i >= count) return;
    }
}

// Pairs {first + a, first + b}, b < a < size, each with probability p.
void sample_within(graph_builder& b, vertex_id first, std::size_t size, double p,
                   splitmix64& rng) {
    const std::uint64_t pairs = std::uint64_t{size} * (size - 1) / 2;
    sample_indices(pairs, p, rng, [&](std::uint64_t t) {
        auto a = static_cast<std::uint64_t>((1 + std::sqrt(1.0 + 8.0 * static_cast<double>(t))) / 2);
        while (a * (a - 1) / 2 > t) --a;
        while ((a + 1) * a / 2 <= t) ++a;
        const std::uint64_t c = t - a * (a - 1) / 2;
        b.add_edge(first + static_cast<vertex_id>(a), first + static_cast<vertex_id>(c));
    });
}

// Pairs {first_a + i, first_b + j}, i < size_a, j < size_b, each with probability p.
void sample_between(graph_builder& b, vertex_id first_a, std::size_t size_a, vertex_id first_b,
                    std::size_t size_b, double p, splitmix64& rng) {
    sample_indices(std::uint64_t{size_a} * size_b, p, rng, [&](std::uint64_t t) {
        b.add_edge(first_a + static_cast<vertex_id>(t / size_b),
                   first_b + static_cast<vertex_id>(t % size_b));
    });
}

std::vector<vertex_id> block_starts(const std::vector<std::size_t>& sizes) {
    std::vector<vertex_id> first{0};
    std::size_t total = 0;
    for (const auto s : sizes) {
        if (s == 0) throw usage_error("block and layer sizes must be at least 1");
        total += s;
        check_vertices(total);
        first.push_back(static_cast<vertex_id>(total));
    }
    if (sizes.empty()) throw usage_error("at least one block or layer is needed");
    return first;
}

}  // namespace

graph erdos_renyi(std::size_t n, double p, std::uint64_t seed) {
    check_probability("p", p);
    return stochastic_block_model({n}, p, 0, seed);
}

graph stochastic_block_model(const std::vector<std::size_t>& block_sizes, double p_in,
                             double p_out, std::uint64_t seed) {
    check_probability("p_in", p_in);
    check_probability("p_out", p_out);
    const auto first = block_starts(block_sizes);
    splitmix64 rng(seed);
    graph_builder b(first.back());
    for (std::size_t x = 0; x < block_sizes.size(); ++x) {
        sample_within(b, first[x], block_sizes[x], p_in, rng);
        for (std::size_t y = x + 1; y < block_sizes.size(); ++y) {
            sample_between(b, first[x], block_sizes[x], first[y], block_sizes[y], p_out, rng);
        }
    }
    return std::move(b).build();
}

partition planted_blocks(const std::vector<std::size_t>& block_sizes) {
    partition p;
    p.parts = block_sizes.size();
    for (std::size_t x = 0; x < block_sizes.size(); ++x) {
        p.part_of.insert(p.part_of.end(), block_sizes[x], static_cast<part_id>(x));
    }
    return p;
}

graph watts_strogatz(std::size_t n, std::size_t k, double beta, std::uint64_t seed) {
    check_vertices(n);
    check_probability("beta", beta);
    if (k % 2 != 0 || k >= n) {
        throw usage_error("watts-strogatz: k must be even and below n, got k = " +
                          std::to_string(k) + ", n = " + std::to_string(n));
    }
    const auto key = [](std::uint64_t u, std::uint64_t v) {
        return std::min(u, v) << 32 | std::max(u, v);
    };
    std::vector<std::pair<vertex_id, vertex_id>> edges;
    std::unordered_set<std::uint64_t> present;
    for (std::size_t j = 1; j <= k / 2; ++j) {
        for (std::size_t u = 0; u < n; ++u) {
            const auto v = static_cast<vertex_id>((u + j) % n);
            edges.emplace_back(static_cast<vertex_id>(u), v);
            present.insert(key(u, v));
        }
    }
    splitmix64 rng(seed);
    for (auto& [u, v] : edges) {
        if (uniform(rng) >= beta) continue;
        // A vertex joined to (almost) every other one keeps its edge.
        for (std::size_t attempt = 0; attempt < 64 * n; ++attempt) {
            const auto w = static_cast<vertex_id>(rng.below(n));
            if (w != u && present.count(key(u, w)) == 0) {
                present.erase(key(u, v));
                present.insert(key(u, w));
                v = w;
                break;
            }
        }
    }
    graph_builder b(n);
    for (const auto& [u, v] : edges) b.add_edge(u, v);
    return std::move(b).build();
}

graph barabasi_albert(std::size_t n, std::size_t m, std::uint64_t seed) {
    check_vertices(n);
    if (m < 1 || m >= n) {
        throw usage_error("barabasi-albert: m must be in [1, n), got m = " + std::to_string(m) +
                          ", n = " + std::to_string(n));
    }
    graph_builder b(n);
    std::vector<vertex_id> endpoints;
    for (vertex_id u = 0; u <= m; ++u) {
        for (vertex_id v = 0; v < u; ++v) {
            b.add_edge(u, v);
            endpoints.push_back(u);
            endpoints.push_back(v);
        }
    }
    splitmix64 rng(seed);
    std::vector<vertex_id> targets;
    for (auto v = static_cast<vertex_id>(m + 1); v < n; ++v) {
        targets.clear();
        while (targets.size() < m) {
            const vertex_id t = endpoints[rng.below(endpoints.size())];
            if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
        }
        for (const vertex_id t : targets) {
            b.add_edge(v, t);
            endpoints.push_back(v);
            endpoints.push_back(t);
        }
    }
    return std::move(b).build();
}

graph grid_2d(std::size_t rows, std::size_t cols) {
    return grid_3d(cols, rows, 1);
}

graph grid_3d(std::size_t nx, std::size_t ny, std::size_t nz) {
    if (nx == 0 || ny == 0 || nz == 0) throw usage_error("grid dimensions must be at least 1");
    if (nx > (1u << 31) / ny / nz) throw usage_error("grid too large");
    const std::size_t n = nx * ny * nz;
    check_vertices(n);
    graph_builder b(n);
    const auto id = [&](std::size_t x, std::size_t y, std::size_t z) {
        return static_cast<vertex_id>((z * ny + y) * nx + x);
    };
    for (std::size_t z = 0; z < nz; ++z) {
        for (std::size_t y = 0; y < ny; ++y) {
            for (std::size_t x = 0; x < nx; ++x) {
                if (x + 1 < nx) b.add_edge(id(x, y, z), id(x + 1, y, z));
                if (y + 1 < ny) b.add_edge(id(x, y, z), id(x, y + 1, z));
                if (z + 1 < nz) b.add_edge(id(x, y, z), id(x, y, z + 1));
            }
        }
    }
    return std::move(b).build();
}

// Points are bucketed into square cells at least `radius` wide, so only the 3 x 3 block of
// cells around a point can hold its neighbours.
graph random_geometric(std::size_t n, double radius, std::uint64_t seed) {
    check_vertices(n);
    if (!(radius > 0) || !std::isfinite(radius)) {
        throw usage_error("random geometric: radius must be positive, got " + std::to_string(radius));
    }
    splitmix64 rng(seed);
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        x[i] = uniform(rng);
        y[i] = uniform(rng);
    }
    const auto limit = static_cast<std::size_t>(std::sqrt(static_cast<double>(n))) + 1;
    const std::size_t cells = std::max<std::size_t>(
        1, std::min(limit, static_cast<std::size_t>(std::floor(1.0 / std::min(radius, 1.0)))));
    const auto cell_of = [&](double c) {
        return std::min(cells - 1, static_cast<std::size_t>(c * static_cast<double>(cells)));
    };
    std::vector<std::size_t> start(cells * cells + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++start[cell_of(y[i]) * cells + cell_of(x[i]) + 1];
    for (std::size_t c = 0; c < cells * cells; ++c) start[c + 1] += start[c];
    std::vector<vertex_id> in_cell(n);
    {
        auto fill = start;
        for (std::size_t i = 0; i < n; ++i) {
            in_cell[fill[cell_of(y[i]) * cells + cell_of(x[i])]++] = static_cast<vertex_id>(i);
        }
    }
    const double r2 = radius * radius;
    graph_builder b(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto cx = cell_of(x[i]), cy = cell_of(y[i]);
        for (std::size_t ny = cy == 0 ? 0 : cy - 1; ny <= std::min(cells - 1, cy + 1); ++ny) {
            for (std::size_t nx = cx == 0 ? 0 : cx - 1; nx <= std::min(cells - 1, cx + 1); ++nx) {
                const auto c = ny * cells + nx;
                for (auto s = start[c]; s < start[c + 1]; ++s) {
                    const vertex_id j = in_cell[s];
                    if (j <= i) continue;
                    const double dx = x[i] - x[j], dy = y[i] - y[j];
                    if (dx * dx + dy * dy <= r2) b.add_edge(static_cast<vertex_id>(i), j);
                }
            }
        }
    }
    return std::move(b).build();
}

graph layered_feed_forward(const std::vector<std::size_t>& layer_sizes, double p,
                           std::uint64_t seed) {
    check_probability("p", p);
    const auto first = block_starts(layer_sizes);
    splitmix64 rng(seed);
    graph_builder b(first.back());
    for (std::size_t l = 0; l + 1 < layer_sizes.size(); ++l) {
        sample_between(b, first[l], layer_sizes[l], first[l + 1], layer_sizes[l + 1], p, rng);
    }
    return std::move(b).build();
}

}  // namespace dnnc::partitioner
