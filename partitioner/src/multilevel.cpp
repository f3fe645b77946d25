#include "dnnc/partitioner/multilevel.hpp"

#include "coarsening/coarsen.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "initial/bisection.hpp"
#include "refinement/flow.hpp"
#include "refinement/kway_fm.hpp"
#include "src/level_graph.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
    // Max-flow min-cut refinement on the input level after the V-cycle: one pass with
    // corridors of one allowance a side (larger ones take the default past twice METIS's
    // time on the benchmark suite).
    detail::flow_options fast_flow{1, 1};
    // Quality strong: tries (the first starts from the fast partition), V-cycles per try at
    // most, and V-cycles without improvement after which a try stops; then flows on the
    // input level again, corridors of up to 4 allowances a side. (Two tries of up to 8
    // V-cycles without flows: 0.944 x METIS's cut in 9.5 x its time; one of up to 3 with
    // flows: BENCHMARKS.md, "Partition quality: strong".)
    std::size_t strong_tries = 1;
    std::size_t strong_v_cycles = 3;
    std::size_t strong_patience = 2;
    detail::flow_options strong_flow{4, 2};
    // Repartitioning: V-cycles at most that improve the candidate rebalanced on the input
    // level (fine_diffusion; more gave no better partitions on the benchmark graphs).
    std::size_t repartition_v_cycles = 3;
    detail::bisection_options bisection;
    // The k-way passes go on for up to 200 moves without a new best (METIS's 2-way rule,
    // which the bisections keep, stops at 100): on the block model at k = 4 this finds the
    // planted partition for every seed tried (1.50 x METIS's cut before, for half of them),
    // in the same time (BENCHMARKS.md, "Partition quality").
    detail::fm_options fm{8, 0.001, 0.01, 15, 200};
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

// Rebalances a partition of level g (the cheapest moves out of overloaded parts), then
// refines it by FM; `limits` are those of g's level.
void rebalance_and_refine(const detail::level_graph& g, std::vector<part_id>& part, const detail::part_limits& limits,
                          const multilevel_settings& settings, splitmix64& rng) {
    detail::kway_refiner refiner(g, part, limits);
    refiner.rebalance(rng);
    refiner.refine(settings.fm, rng);
}

// Several recursive bisections of the coarsest level, each refined there under `limits`;
// the best (least excess weight, then least cut) is kept.
std::vector<part_id> initial_partition(const detail::level_graph& coarsest, const detail::part_limits& limits,
                                       const targets& t, const multilevel_settings& settings, splitmix64& rng) {
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
        rebalance_and_refine(g, part, limits_on(g, level, t), settings, rng);
    }
}

// Everything a V-cycle needs to know about one call.
struct problem {
    targets t;
    multilevel_settings settings;
    detail::coarsening_options coarsening;
};

problem make_problem(const graph& g, const std::vector<double>& target_fractions, const partition_options& options) {
    const std::size_t k = target_fractions.size();
    problem pr;
    targets& t = pr.t;
    t.epsilon = options.imbalance;
    double fraction_sum = 0;
    for (double f : target_fractions) fraction_sum += f;
    const auto total = static_cast<double>(g.total_vertex_weight());
    for (double f : target_fractions) {
        t.fraction.push_back(f / fraction_sum);
        t.weight.push_back(f / fraction_sum * total);
    }
    multilevel_settings& settings = pr.settings;
    settings.bisection.epsilon = std::pow(1 + options.imbalance, 1.0 / std::ceil(std::log2(static_cast<double>(k)))) - 1;
    pr.coarsening.coarsen_to = std::max({settings.coarsen_min, settings.coarsen_per_part * k,
                                         g.vertex_count() / (settings.coarsen_divisor * k)});
    return pr;
}

void check_migration(const graph& g, const partition& current, const migration_options& migration) {
    const std::size_t n = g.vertex_count();
    if (current.part_of.size() != n) {
        throw usage_error("multilevel repartition: the current partition has " + std::to_string(current.part_of.size()) +
                          " entries for " + std::to_string(n) + " vertices");
    }
    if (!migration.cost.empty() && migration.cost.size() != n) {
        throw usage_error("multilevel repartition: " + std::to_string(migration.cost.size()) + " migration costs for " +
                          std::to_string(n) + " vertices");
    }
    for (double c : migration.cost) {
        if (!(c >= 0) || !std::isfinite(c)) throw usage_error("multilevel repartition: migration costs must be finite and >= 0");
    }
    if (!(migration.weight >= 0) || !std::isfinite(migration.weight)) {
        throw usage_error("multilevel repartition: the migration weight must be finite and >= 0");
    }
}

// Migration penalties are counted in 1 / cut_scale of a unit of cut: the input level of a
// repartitioning has its edge weights scaled by cut_scale, so that a migration weight below 1
// still charges a vertex of cost 1.
constexpr weight_t cut_scale = 1024;

// The input level with scaled edge weights, homes (current parts below k, no_home otherwise)
// and migration penalties (cut_scale x weight x cost, rounded).
detail::level_graph with_homes(const graph& g, std::size_t k, const partition& current,
                               const migration_options& migration) {
    // Cut and penalties are summed in weight_t: their totals must fit with room to spare.
    constexpr weight_t room = std::numeric_limits<weight_t>::max() / 4;
    const auto too_large = [] {
        return usage_error("multilevel repartition: edge weights or migration costs too large to add up");
    };
    detail::level_graph lg = detail::to_level_graph(g);
    weight_t total = 0;
    for (weight_t& w : lg.edge_weight) {
        if (w > (room - total) / cut_scale) throw too_large();
        w *= cut_scale;
        total += w;
    }
    lg.home.assign(g.vertex_count(), detail::no_home);
    lg.migration.assign(g.vertex_count(), 0);
    const double scale = static_cast<double>(cut_scale) * migration.weight;
    for (vertex_id v = 0; v < g.vertex_count(); ++v) {
        if (current.part_of[v] >= k) continue;
        const double penalty = std::round(scale * migration_cost_of(g, migration.cost, v));
        if (penalty > static_cast<double>(room - total)) throw too_large();
        lg.home[v] = current.part_of[v];
        lg.migration[v] = static_cast<weight_t>(penalty);
        total += lg.migration[v];
    }
    return lg;
}

// Rebalances and refines a partition of the coarsest level, migration counted.
void refine_coarsest(const detail::hierarchy& h, std::vector<part_id>& part, const targets& t,
                     const multilevel_settings& settings, splitmix64& rng) {
    rebalance_and_refine(h.coarsest(), part, limits_on(h.coarsest(), h.depth() - 1, t), settings, rng);
}

// New labels for the k parts of a fresh partition, given common[s * k + c], what fresh part s
// and current part c have in common: greedily, the pair of most in common first, and only
// between parts of equal fraction. Within each class of equal fractions every fresh part
// finds a free label, since the class offers as many labels as parts.
std::vector<part_id> overlap_labels(const std::vector<double>& common, const std::vector<double>& fractions) {
    const std::size_t k = fractions.size();
    std::vector<std::size_t> pairs;
    for (std::size_t i = 0; i < k * k; ++i) {
        if (fractions[i / k] == fractions[i % k]) pairs.push_back(i);
    }
    std::stable_sort(pairs.begin(), pairs.end(), [&](std::size_t a, std::size_t b) { return common[a] > common[b]; });
    std::vector<part_id> label(k, detail::no_home);
    std::vector<bool> taken(k, false);
    for (std::size_t i : pairs) {
        const std::size_t s = i / k;
        const std::size_t c = i % k;
        if (label[s] != detail::no_home || taken[c]) continue;
        label[s] = static_cast<part_id>(c);
        taken[c] = true;
    }
    return label;
}

// A level's homes as its partition; a vertex without one goes to the part least filled
// relative to its target.
std::vector<part_id> homes_as_partition(const detail::level_graph& g, const targets& t) {
    const std::size_t k = t.fraction.size();
    std::vector<part_id> part(g.size());
    std::vector<double> load(k, 0);
    for (vertex_id v = 0; v < g.size(); ++v) {
        if (g.home[v] != detail::no_home) load[g.home[v]] += static_cast<double>(g.vertex_weight[v]);
    }
    for (vertex_id v = 0; v < g.size(); ++v) {
        part_id p = g.home[v];
        if (p == detail::no_home) {
            p = 0;
            for (part_id q = 1; q < k; ++q) {
                if (load[q] / t.weight[q] < load[p] / t.weight[p]) p = q;
            }
            load[p] += static_cast<double>(g.vertex_weight[v]);
        }
        part[v] = p;
    }
    return part;
}

// The coarsest level's groups as its partition where it has them (a V-cycle from a
// partition), else its homes. Then the cheapest moves (cut + migration) rebalance it and FM
// refines it.
std::vector<part_id> diffusion_start(const detail::hierarchy& h, const targets& t,
                                     const multilevel_settings& settings, splitmix64& rng) {
    const detail::level_graph& coarsest = h.coarsest();
    std::vector<part_id> part = coarsest.group.empty() ? homes_as_partition(coarsest, t) : coarsest.group;
    refine_coarsest(h, part, t, settings, rng);
    return part;
}

// A partition of the coarsest level from scratch (its homes ignored), its parts relabelled to
// keep the most migration penalty home, then rebalanced and refined with migration counted:
// the scratch-remap start of ParMETIS's unified repartitioning.
std::vector<part_id> remapped_start(const detail::hierarchy& h, const targets& t,
                                    const multilevel_settings& settings, splitmix64& rng) {
    detail::level_graph plain = h.coarsest();
    plain.home.clear();
    plain.migration.clear();
    std::vector<part_id> part = initial_partition(plain, limits_on(plain, h.depth() - 1, t), t, settings, rng);
    const std::size_t k = t.fraction.size();
    std::vector<double> common(k * k, 0);
    const detail::level_graph& coarsest = h.coarsest();
    for (vertex_id v = 0; v < coarsest.size(); ++v) {
        if (coarsest.home[v] != detail::no_home) {
            common[part[v] * k + coarsest.home[v]] += static_cast<double>(coarsest.migration[v]);
        }
    }
    const std::vector<part_id> label = overlap_labels(common, t.fraction);
    for (part_id& p : part) p = label[p];
    refine_coarsest(h, part, t, settings, rng);
    return part;
}

// How finished candidates compare: by weight above the upper limits, then by cut plus
// migration penalty (in the units of `finest`, see with_homes).
struct score {
    weight_t excess = 0;
    weight_t cost = 0;
    bool operator<(const score& other) const {
        return excess < other.excess || (excess == other.excess && cost < other.cost);
    }
};

score score_of(const detail::level_graph& finest, const targets& t, std::vector<part_id> part) {
    const detail::part_limits limits = limits_on(finest, 0, t);
    const detail::kway_refiner measured(finest, part, limits);
    return {detail::excess(measured.part_weight(), limits.upper), measured.cut() + measured.migration()};
}

// One multilevel partition from scratch: the fast quality.
std::vector<part_id> fresh_partition(const detail::level_graph& finest, const problem& pr, splitmix64& rng) {
    const detail::hierarchy h = detail::coarsen(finest, pr.coarsening, rng);
    const detail::part_limits limits = limits_on(h.coarsest(), h.depth() - 1, pr.t);
    std::vector<part_id> part = initial_partition(h.coarsest(), limits, pr.t, pr.settings, rng);
    uncoarsen(h, part, pr.t, pr.settings, rng);
    return part;
}

// One iterated V-cycle: the diffusion V-cycle of multilevel_repartition with `part` as the
// groups (and `finest`'s homes and penalties, if any). Coarsening merges only vertices of
// one part, so `part` is a partition of the coarsest level with the same cut, and refinement
// starts from it there.
std::vector<part_id> v_cycle(const detail::level_graph& finest, const std::vector<part_id>& part, const problem& pr,
                             splitmix64& rng) {
    detail::level_graph grouped = finest;  // outlives the hierarchy
    grouped.group = part;
    const detail::hierarchy h = detail::coarsen(grouped, pr.coarsening, rng);
    std::vector<part_id> result = diffusion_start(h, pr.t, pr.settings, rng);
    uncoarsen(h, result, pr.t, pr.settings, rng);
    return result;
}

// The fourth repartitioning candidate: the current partition on the input level itself,
// rebalanced by the cheapest moves of single vertices, refined by FM and flows, then improved
// by V-cycles from it (migration counted) while they lower cut + migration. Where a part's
// target grew, the diffusion candidate rebalances on its coarsest level, whose moves of large
// coarse vertices leave bulges that refinement cannot undo; single-vertex moves shift the
// boundaries evenly (BENCHMARKS.md, "Adaptive repartitioning").
// Its score goes to `part_score`.
std::vector<part_id> fine_diffusion(const detail::level_graph& finest, const problem& pr, splitmix64& rng,
                                    score& part_score) {
    std::vector<part_id> part = homes_as_partition(finest, pr.t);
    const detail::part_limits limits = limits_on(finest, 0, pr.t);
    rebalance_and_refine(finest, part, limits, pr.settings, rng);
    detail::flow_refine(finest, part, limits, pr.settings.fast_flow);
    part_score = score_of(finest, pr.t, part);
    for (std::size_t cycle = 0; cycle < pr.settings.repartition_v_cycles; ++cycle) {
        std::vector<part_id> next = v_cycle(finest, part, pr, rng);
        detail::flow_refine(finest, next, limits, pr.settings.fast_flow);
        const score next_score = score_of(finest, pr.t, next);
        if (!(next_score < part_score)) break;
        part = std::move(next);
        part_score = next_score;
    }
    return part;
}

// Quality strong: tries, each a partition improved by V-cycles until strong_patience of them
// in a row bring no better score; the first try starts from `fast`, the others from fresh
// partitions of their own seeds. The best score is kept, `fast` on ties, and refined by
// flows.
std::vector<part_id> strong_partition(const detail::level_graph& finest, std::vector<part_id> fast, const problem& pr,
                                      std::uint64_t seed) {
    const multilevel_settings& settings = pr.settings;
    std::vector<part_id> best = std::move(fast);
    score best_score = score_of(finest, pr.t, best);
    for (std::size_t attempt = 0; attempt < settings.strong_tries; ++attempt) {
        // A mixed seed: a stream of its own, not the fast partition's shifted.
        splitmix64 rng(splitmix64::at(seed, attempt + 1).next());
        std::vector<part_id> current = attempt == 0 ? best : fresh_partition(finest, pr, rng);
        score current_score = score_of(finest, pr.t, current);
        std::size_t without_gain = 0;
        for (std::size_t cycle = 0; cycle < settings.strong_v_cycles && without_gain < settings.strong_patience;
             ++cycle) {
            std::vector<part_id> next = v_cycle(finest, current, pr, rng);
            const score next_score = score_of(finest, pr.t, next);
            if (next_score < current_score) {
                current = std::move(next);
                current_score = next_score;
                without_gain = 0;
            } else {
                ++without_gain;
            }
        }
        if (current_score < best_score) {
            best = std::move(current);
            best_score = current_score;
        }
    }
    // Flows, then FM where they moved vertices; neither raises the cut nor unbalances a part.
    const detail::part_limits limits = limits_on(finest, 0, pr.t);
    if (detail::flow_refine(finest, best, limits, settings.strong_flow) > 0) {
        splitmix64 rng(splitmix64::at(seed, settings.strong_tries + 1).next());
        detail::kway_refiner refiner(finest, best, limits);
        refiner.refine(settings.fm, rng);
    }
    return best;
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
    const problem pr = make_problem(g, target_fractions, options);
    splitmix64 rng(options.seed);
    const detail::level_graph finest = detail::to_level_graph(g);
    result.part_of = fresh_partition(finest, pr, rng);
    detail::flow_refine(finest, result.part_of, limits_on(finest, 0, pr.t), pr.settings.fast_flow);
    if (options.quality == partition_quality::strong) {
        result.part_of = strong_partition(finest, std::move(result.part_of), pr, options.seed);
    }
    return result;
}

partition multilevel_partition(const graph& g, std::size_t parts, const partition_options& options) {
    return multilevel_partition(g, std::vector<double>(parts, 1.0), options);
}

// Diffusion, coarse remap, scratch-remap and fine diffusion, the cheapest kept (the earlier
// on ties). The V-cycle of the first two keeps the invariant of multilevel_partition, and in
// addition every coarse vertex's members share one home (or have none), so its migration
// penalty is charged exactly when it leaves that home.
partition multilevel_repartition(const graph& g, const std::vector<double>& target_fractions,
                                 const partition& current, const migration_options& migration,
                                 const partition_options& options) {
    if (current.part_of.empty()) return multilevel_partition(g, target_fractions, options);
    check_arguments(g, target_fractions, options);
    check_migration(g, current, migration);
    const std::size_t k = target_fractions.size();
    const partition scratch =
        remap_parts(g, multilevel_partition(g, target_fractions, options), target_fractions, current, migration.cost);
    if (k == 1) return scratch;
    const problem pr = make_problem(g, target_fractions, options);
    splitmix64 rng(options.seed);
    const detail::level_graph finest = with_homes(g, k, current, migration);
    const detail::hierarchy h = detail::coarsen(finest, pr.coarsening, rng);
    partition best = scratch;
    score best_score = score_of(finest, pr.t, scratch.part_of);
    for (auto start : {diffusion_start, remapped_start}) {
        partition candidate;
        candidate.parts = k;
        candidate.part_of = start(h, pr.t, pr.settings, rng);
        uncoarsen(h, candidate.part_of, pr.t, pr.settings, rng);
        // The from-scratch candidate had its flows: these take theirs, migration counted.
        detail::flow_refine(finest, candidate.part_of, limits_on(finest, 0, pr.t), pr.settings.fast_flow);
        const score candidate_score = score_of(finest, pr.t, candidate.part_of);
        if (candidate_score < best_score) {
            best = std::move(candidate);
            best_score = candidate_score;
        }
    }
    score fine_score;
    std::vector<part_id> fine = fine_diffusion(finest, pr, rng, fine_score);
    if (fine_score < best_score) best.part_of = std::move(fine);
    return best;
}

partition remap_parts(const graph& g, const partition& fresh, const std::vector<double>& target_fractions,
                      const partition& current, const std::vector<double>& migration_cost) {
    const std::size_t n = g.vertex_count();
    const std::size_t k = target_fractions.size();
    if (fresh.part_of.size() != n || current.part_of.size() != n || fresh.parts != k ||
        (!migration_cost.empty() && migration_cost.size() != n)) {
        throw usage_error("remap parts: partitions and costs must have one entry per vertex (" + std::to_string(n) +
                          "), the fresh partition one part per fraction");
    }
    // common[s * k + c]: migration cost of the vertices in fresh part s and current part c.
    std::vector<double> common(k * k, 0);
    for (vertex_id v = 0; v < n; ++v) {
        if (current.part_of[v] < k) common[fresh.part_of[v] * k + current.part_of[v]] += migration_cost_of(g, migration_cost, v);
    }
    const std::vector<part_id> label = overlap_labels(common, target_fractions);
    partition result;
    result.parts = k;
    result.part_of.resize(n);
    for (vertex_id v = 0; v < n; ++v) result.part_of[v] = label[fresh.part_of[v]];
    return result;
}

}  // namespace dnnc::partitioner
