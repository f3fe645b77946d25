#pragma once
// Initial partitioning of the coarsest level: multilevel bisection, applied recursively to
// reach k parts whose weights follow the target fractions.
#include "refinement/kway_fm.hpp"
#include "src/level_graph.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <cstddef>
#include <vector>

namespace dnnc::partitioner::detail {

struct bisection_options {
    // The bisection's own coarsening stops at this many vertices.
    std::size_t coarsen_to = 100;
    // Greedy growing tries on its coarsest graph; the best is kept.
    std::size_t tries = 8;
    // Imbalance allowed for each bisection.
    double epsilon = 0.01;
    fm_options fm;
};

// Part 0 grows to about fraction0 of the weight, part 1 holds the rest; the cut between them
// is as small as coarsening, greedy growing and FM refinement find it.
std::vector<part_id> multilevel_bisection(const level_graph& g, double fraction0,
                                          const bisection_options& options, splitmix64& rng);

// fractions.size() parts (fractions sum to 1) by recursive bisection: each step splits the
// range of parts in two halves and the vertices in proportion to the halves' fractions.
std::vector<part_id> recursive_bisection(const level_graph& g, const std::vector<double>& fractions,
                                         const bisection_options& options, splitmix64& rng);

}  // namespace dnnc::partitioner::detail
