#pragma once
// Coarsening: repeated sorted heavy-edge matching and contraction, from the input graph down
// to a few hundred vertices. Each coarse vertex stands for one or two vertices of the level
// below; its weight is their sum, and the weight of a coarse edge is the sum of the edges it
// replaces, so a partition of a coarse level has the same cut and part weights when projected
// onto any finer level.
#include "src/level_graph.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <cstddef>
#include <vector>

namespace dnnc::partitioner::detail {

struct coarsening_options {
    // Stop once a level has at most this many vertices.
    std::size_t coarsen_to = 200;
    // No coarse vertex grows heavier than factor * W / coarsen_to, so that the coarsest
    // level can still be balanced.
    double max_vertex_weight_factor = 1.5;
    // Stop when a step keeps more than this fraction of the vertices.
    double min_shrink = 0.95;
};

struct hierarchy {
    const level_graph* finest = nullptr;
    std::vector<level_graph> coarse;            // coarse[i] is level i + 1
    std::vector<std::vector<vertex_id>> up;     // up[i][v]: v of level i -> its vertex on level i + 1

    std::size_t depth() const { return coarse.size() + 1; }
    const level_graph& level(std::size_t i) const { return i == 0 ? *finest : coarse[i - 1]; }
    const level_graph& coarsest() const { return level(depth() - 1); }
};

// `finest` must outlive the result.
hierarchy coarsen(const level_graph& finest, const coarsening_options& options, splitmix64& rng);

// part_of on level i + 1 -> part_of on level i.
std::vector<part_id> project(const std::vector<vertex_id>& up, const std::vector<part_id>& coarse_part);

}  // namespace dnnc::partitioner::detail
