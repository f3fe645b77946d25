#include "dnnc/partitioner/multilevel.hpp"

#include "coarsening/coarsen.hpp"
#include "dnnc/core/error.hpp"
#include "initial/bisection.hpp"
#include "refinement/kway_fm.hpp"
#include "src/level_graph.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace dnnc::partitioner {
namespace {

void check_arguments(const graph& g, const std::vector<double>& fractions, const partition_options& options) {
    if (fractions.empty()) throw usage_error("multilevel partition: the number of parts must be at least 1");
    if (g.vertex_count() == 0) throw usage_error("multilevel partition: the graph is empty");
    if (fractions.size() > g.vertex_count()) {
        throw usage_error("multilevel partition: " + std::to_string(fractions.size()) +
                          " parts for a graph of " + std::to_string(g.vertex_count()) + " vertices");
    }
    for (double f : fractions) {
        if (!(f > 0) || !std::isfinite(f)) {
            throw usage_error("multilevel partition: target fractions must be positive and finite");
        }
    }
    if (!(options.imbalance >= 0) || !std::isfinite(options.imbalance)) {
        throw usage_error("multilevel partition: the imbalance must be a finite number >= 0");
    }
}

// Tuning of the V-cycle, in one place (measured on 4elt and the benchmark graphs, see
// BENCHMARKS.md): more initial tries pay off for few parts, where the first cuts decide
// most of the result; for many parts they mostly cost time.
struct multilevel_settings {
    // The coarsest level keeps max(coarsen_min, coarsen_per_part * k, n / (coarsen_divisor * k))
    // vertices: for few parts, initial tries on a larger graph pay off (random geometric
    // graphs, k = 2: 8% less cut than with 200 vertices).
    std::size_t coarsen_per_part = 20;
    std::size_t coarsen_min = 200;
    std::size_t coarsen_divisor = 20;
    std::size_t initial_tries_few_parts = 4;
    std::size_t initial_tries_many_parts = 2;
    std::size_t few_parts = 8;
    detail::bisection_options bisection;
    detail::fm_options fm;
};

// Targets of one partitioning call: fractions of the total weight (summing to 1), the
// corresponding weights, and the imbalance allowed.
struct targets {
    std::vector<double> fraction;
    std::vector<double> weight;
    double epsilon = 0;
};

// The limits on a level: exact on the input graph (level 0), widened by the heaviest vertex
// on coarse levels.
detail::part_limits limits_on(const detail::level_graph& g, std::size_t level, const targets& t) {
    return detail::part_bounds(t.weight, t.epsilon, level == 0 ? 0 : g.max_vertex_weight);
}

// Several recursive bisections of the coarsest level, each refined there; the best (least
// excess weight, then least cut) is kept.
std::vector<part_id> initial_partition(const detail::hierarchy& h, const targets& t,
                                       const multilevel_settings& settings, splitmix64& rng) {
    const std::size_t top = h.depth() - 1;
    const detail::level_graph& coarsest = h.coarsest();
    const detail::part_limits limits = limits_on(coarsest, top, t);
    const std::size_t k = t.fraction.size();
    const std::size_t tries =
        k <= settings.few_parts ? settings.initial_tries_few_parts : settings.initial_tries_many_parts;
    std::vector<part_id> best;
    weight_t best_excess = 0;
    weight_t best_cut = 0;
    for (std::size_t i = 0; i < tries; ++i) {
        std::vector<part_id> candidate = detail::recursive_bisection(coarsest, t.fraction, settings.bisection, rng);
        detail::kway_refiner refiner(coarsest, candidate, limits);
        refiner.rebalance(rng);
        refiner.refine(settings.fm, rng);
        const weight_t x = detail::excess(refiner.part_weight(), limits.upper);
        if (best.empty() || x < best_excess || (x == best_excess && refiner.cut() < best_cut)) {
            best_excess = x;
            best_cut = refiner.cut();
            best = std::move(candidate);
        }
    }
    return best;
}

// Projects the partition level by level onto the input graph, rebalancing and refining it on
// each level.
void uncoarsen(const detail::hierarchy& h, std::vector<part_id>& part, const targets& t,
               const multilevel_settings& settings, splitmix64& rng) {
    for (std::size_t level = h.depth() - 1; level-- > 0;) {
        part = detail::project(h.up[level], part);
        const detail::level_graph& g = h.level(level);
        const detail::part_limits limits = limits_on(g, level, t);
        detail::kway_refiner refiner(g, part, limits);
        refiner.rebalance(rng);
        refiner.refine(settings.fm, rng);
    }
}

}  // namespace

// The V-cycle. Invariant: after each level, part_of is a partition of that level whose part
// weights are those of its projection onto the input graph, so the FM moves made on a coarse
// level are moves of whole groups of input vertices.
partition multilevel_partition(const graph& g, const std::vector<double>& target_fractions,
                               const partition_options& options) {
    check_arguments(g, target_fractions, options);
    const std::size_t k = target_fractions.size();
    partition result;
    result.parts = k;
    if (k == 1) {
        result.part_of.assign(g.vertex_count(), 0);
        return result;
    }
    targets t;
    t.epsilon = options.imbalance;
    double fraction_sum = 0;
    for (double f : target_fractions) fraction_sum += f;
    const auto total = static_cast<double>(g.total_vertex_weight());
    for (double f : target_fractions) {
        t.fraction.push_back(f / fraction_sum);
        t.weight.push_back(f / fraction_sum * total);
    }
    multilevel_settings settings;
    settings.bisection.epsilon = std::pow(1 + options.imbalance, 1.0 / std::ceil(std::log2(static_cast<double>(k)))) - 1;
    detail::coarsening_options coarsening;
    coarsening.coarsen_to = std::max({settings.coarsen_min, settings.coarsen_per_part * k,
                                      g.vertex_count() / (settings.coarsen_divisor * k)});

    splitmix64 rng(options.seed);
    const detail::level_graph finest = detail::to_level_graph(g);
    const detail::hierarchy h = detail::coarsen(finest, coarsening, rng);
    std::vector<part_id> part = initial_partition(h, t, settings, rng);
    uncoarsen(h, part, t, settings, rng);
    result.part_of = std::move(part);
    return result;
}

partition multilevel_partition(const graph& g, std::size_t parts, const partition_options& options) {
    return multilevel_partition(g, std::vector<double>(parts, 1.0), options);
}

}  // namespace dnnc::partitioner
