#pragma once
// Synthetic graphs for tests and benchmarks. Every random generator takes a seed and draws
// from the partitioner's own splitmix64 stream (no standard-library distributions), so a
// seed gives the same graph everywhere. Vertex and edge weights are 1. Edges are undirected;
// written as a network, each goes from the lower vertex id to the higher one, which for
// layered_feed_forward is from one layer to the next. Parameters out of range throw
// usage_error.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::partitioner {

// G(n, p): each of the n(n-1)/2 pairs independently with probability p.
graph erdos_renyi(std::size_t n, double p, std::uint64_t seed);

// Stochastic block model: block b holds the next block_sizes[b] vertex ids (block 0 starts
// at 0); a pair inside one block is an edge with probability p_in, across blocks p_out.
graph stochastic_block_model(const std::vector<std::size_t>& block_sizes, double p_in,
                             double p_out, std::uint64_t seed);

// The planted partition of stochastic_block_model: part b = block b.
partition planted_blocks(const std::vector<std::size_t>& block_sizes);

// Watts–Strogatz: a ring of n vertices each joined to its k nearest (k even, k < n), then
// each lattice edge (u, u + j) rewired with probability beta to (u, w) for a random w that
// keeps the graph simple.
graph watts_strogatz(std::size_t n, std::size_t k, double beta, std::uint64_t seed);

// Barabási–Albert: a clique of m + 1 vertices, then each new vertex joins m distinct
// existing vertices chosen with probability proportional to their degree (1 <= m < n).
graph barabasi_albert(std::size_t n, std::size_t m, std::uint64_t seed);

// 4-neighbour grid, vertex (r, c) = r * cols + c.
graph grid_2d(std::size_t rows, std::size_t cols);

// 6-neighbour grid, vertex (x, y, z) = (z * ny + y) * nx + x.
graph grid_3d(std::size_t nx, std::size_t ny, std::size_t nz);

// n points uniform in the unit square, joined when at most `radius` apart.
graph random_geometric(std::size_t n, double radius, std::uint64_t seed);

// Layers of the given sizes, numbered in order; each pair (u in layer l, v in layer l + 1)
// is an edge with probability p.
graph layered_feed_forward(const std::vector<std::size_t>& layer_sizes, double p,
                           std::uint64_t seed);

}  // namespace dnnc::partitioner
