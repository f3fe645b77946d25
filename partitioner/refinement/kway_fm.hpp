#pragma once
// Boundary k-way Fiduccia–Mattheyses refinement and rebalancing of a partition of one level.
// Part i may weigh at most upper[i]; refinement moves never push a part above its upper
// limit nor take it below its lower one, so a balanced partition stays balanced, and an
// unbalanced one only gets closer to balance.
// When the level is repartitioned (level_graph::repartitioning), the objective is cut plus
// migration penalty, and every gain below is the change of that sum; otherwise it is the cut.
#include "refinement/gain_queue.hpp"
#include "src/level_graph.hpp"
#include "dnnc/core/splitmix64.hpp"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace dnnc::partitioner::detail {

struct fm_options {
    // Passes continue while one lowers the cut by more than min_pass_gain x the cut (or
    // brings the parts closer to their bounds), at most max_passes times.
    std::size_t max_passes = 8;
    double min_pass_gain = 0.001;
    // A pass stops after stop_fraction x vertices moves without a new best cut, clamped to
    // [stop_min, stop_max] (METIS's rule for its 2-way FM).
    double stop_fraction = 0.01;
    std::size_t stop_min = 15;
    std::size_t stop_max = 100;
};

struct part_limits {
    std::vector<weight_t> lower;
    std::vector<weight_t> upper;
};

// Upper limit (1 + epsilon) x target, never below the target rounded up; lower limit
// (1 - epsilon) x target. On coarse levels (coarse_slack = the level's heaviest vertex) both
// widen by coarse_slack, since vertices that heavy cannot be balanced more finely.
part_limits part_bounds(const std::vector<double>& target_weight, double epsilon, weight_t coarse_slack);

// Sum over parts of the weight above the upper limit.
weight_t excess(const std::vector<weight_t>& part_weight, const std::vector<weight_t>& upper);

class kway_refiner {
public:
    // Keeps references to all three: the limits must outlive the refiner, not be a temporary.
    kway_refiner(const level_graph& g, std::vector<part_id>& part_of, const part_limits& limits);
    kway_refiner(const level_graph& g, std::vector<part_id>& part_of, part_limits&& limits) = delete;

    // Moves vertices out of parts above their upper limit, then into parts below their lower
    // limit, each time the move that costs the least cut, until every part is within its
    // limits or nothing more can move.
    void rebalance(splitmix64& rng);
    // FM passes while they pay (fm_options). Returns the cut.
    weight_t refine(const fm_options& options, splitmix64& rng);

    weight_t cut() const { return cut_; }
    // The migration penalty of the vertices outside their home (0 unless repartitioning).
    weight_t migration() const { return migration_; }
    const std::vector<weight_t>& part_weight() const { return part_weight_; }

private:
    struct move_choice {
        part_id to;
        weight_t gain;
    };
    // refine: moves to parts v has edges to; shed: out of an overloaded part to any part;
    // fill: into a part below its lower limit.
    enum class move_kind { refine, shed, fill };
    // The best move of v of that kind into a part with room for it; to == parts when there is
    // none, or when v's part would drop below its lower limit (except when shedding).
    move_choice best_move(vertex_id v, move_kind kind) const;
    void balance(move_kind kind, splitmix64& rng);
    // Takes the queue's top vertex out once its key is its move's gain now (`choose(v)`),
    // refreshing stale keys and dropping vertices without a move on the way; none once the
    // queue is empty.
    template <class Choose>
    std::optional<std::pair<vertex_id, move_choice>> pop_fresh(Choose&& choose);
    void move(vertex_id v, part_id to);
    // Whether the pass lowered the excess, or the objective by more than options.min_pass_gain.
    bool pass(const fm_options& options, splitmix64& rng);

    // Connectivity of v to the other parts: links_[state_[v].link_begin + i] for
    // i < state_[v].link_count, each part once, each weight > 0.
    void add_link(vertex_id v, part_id q, weight_t w);
    void remove_link(vertex_id v, part_id q, weight_t w);
    weight_t take_link(vertex_id v, part_id q);

    const level_graph& g_;
    std::vector<part_id>& part_of_;
    const std::vector<weight_t>& lower_;
    const std::vector<weight_t>& bound_;
    std::size_t parts_;
    std::vector<weight_t> part_weight_;
    struct link {
        part_id part;
        weight_t weight;
    };
    // Per vertex, side by side: a move reads and updates them for every neighbour.
    struct vertex_state {
        weight_t internal = 0;  // weight of its edges inside its part
        std::uint64_t link_begin = 0;
        std::uint32_t link_count = 0;
        bool locked = false;  // moved in the current pass
    };
    std::vector<vertex_state> state_;
    std::vector<link> links_;
    weight_t cut_ = 0;
    weight_t migration_ = 0;
    gain_queue queue_;
};

}  // namespace dnnc::partitioner::detail
