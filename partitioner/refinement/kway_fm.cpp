#include "refinement/kway_fm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace dnnc::partitioner::detail {

part_limits part_bounds(const std::vector<double>& target_weight, double epsilon, weight_t coarse_slack) {
    part_limits limits;
    for (const double t : target_weight) {
        const auto strict = static_cast<weight_t>(std::floor((1 + epsilon) * t + 1e-9));
        const auto at_least = static_cast<weight_t>(std::ceil(t - 1e-9));
        limits.upper.push_back(std::max(strict, at_least + coarse_slack));
        const auto at_most = static_cast<weight_t>(std::floor(std::max(0.0, 1 - epsilon) * t + 1e-9));
        limits.lower.push_back(std::max<weight_t>(0, at_most - coarse_slack));
    }
    return limits;
}

weight_t excess(const std::vector<weight_t>& part_weight, const std::vector<weight_t>& upper) {
    weight_t total = 0;
    for (std::size_t i = 0; i < part_weight.size(); ++i) total += std::max<weight_t>(0, part_weight[i] - upper[i]);
    return total;
}

kway_refiner::kway_refiner(const level_graph& g, std::vector<part_id>& part_of, const part_limits& limits)
    : g_(g),
      part_of_(part_of),
      lower_(limits.lower),
      bound_(limits.upper),
      parts_(limits.upper.size()),
      part_weight_(limits.upper.size(), 0),
      state_(g.size()),
      queue_(g.size()) {
    // v touches at most min(degree(v), parts - 1) other parts, so that many link slots suffice.
    std::uint64_t slots = 0;
    for (vertex_id v = 0; v < g.size(); ++v) {
        state_[v].link_begin = slots;
        slots += std::min<std::uint64_t>(g.degree(v), parts_ - 1);
    }
    links_.resize(slots);
    // Raw pointers: this loop reads every edge of the level. Its weights are summed per part
    // first, so that each link is written once, in the order of v's first edge to that part.
    const std::uint64_t* const begin = g.begin.data();
    const vertex_id* const adjacency = g.adjacency.data();
    const weight_t* const edge_weight = g.edge_weight.data();
    const part_id* const part = part_of.data();
    std::vector<weight_t> to_part(parts_, 0);
    std::vector<part_id> touched;
    for (vertex_id v = 0; v < g.size(); ++v) {
        for (std::uint64_t e = begin[v]; e < begin[v + 1]; ++e) {
            const part_id q = part[adjacency[e]];
            if (to_part[q] == 0) touched.push_back(q);
            to_part[q] += edge_weight[e];
        }
        const part_id p = part[v];
        part_weight_[p] += g.vertex_weight[v];
        for (const part_id q : touched) {
            if (q == p) {
                state_[v].internal = to_part[q];
            } else {
                links_[state_[v].link_begin + state_[v].link_count++] = {q, to_part[q]};
                cut_ += to_part[q];
            }
            to_part[q] = 0;
        }
        touched.clear();
    }
    cut_ /= 2;
    for (vertex_id v = 0; v < g.size() && g.repartitioning(); ++v) {
        if (part[v] != g.home[v]) migration_ += g.migration[v];
    }
}

void kway_refiner::add_link(vertex_id v, part_id q, weight_t w) {
    const std::uint64_t first = state_[v].link_begin;
    const std::uint64_t last = first + state_[v].link_count;
    for (std::uint64_t i = first; i < last; ++i) {
        if (links_[i].part == q) {
            links_[i].weight += w;
            return;
        }
    }
    links_[last] = {q, w};
    ++state_[v].link_count;
}

void kway_refiner::remove_link(vertex_id v, part_id q, weight_t w) {
    const std::uint64_t first = state_[v].link_begin;
    const std::uint64_t last = first + state_[v].link_count;
    for (std::uint64_t i = first; i < last; ++i) {
        if (links_[i].part != q) continue;
        links_[i].weight -= w;
        if (links_[i].weight == 0) {
            links_[i] = links_[last - 1];
            --state_[v].link_count;
        }
        return;
    }
}

weight_t kway_refiner::take_link(vertex_id v, part_id q) {
    const std::uint64_t first = state_[v].link_begin;
    const std::uint64_t last = first + state_[v].link_count;
    for (std::uint64_t i = first; i < last; ++i) {
        if (links_[i].part != q) continue;
        const weight_t w = links_[i].weight;
        links_[i] = links_[last - 1];
        --state_[v].link_count;
        return w;
    }
    return 0;
}

kway_refiner::move_choice kway_refiner::best_move(vertex_id v, move_kind kind) const {
    move_choice best{static_cast<part_id>(parts_), std::numeric_limits<weight_t>::min()};
    if (kind == move_kind::refine && state_[v].link_count == 0) return best;
    const part_id from = part_of_[v];
    const weight_t wv = g_.vertex_weight[v];
    if (kind != move_kind::shed && part_weight_[from] - wv < lower_[from]) return best;
    const weight_t internal = state_[v].internal;
    auto wanted = [&](part_id q) {
        return part_weight_[q] + wv <= bound_[q] && (kind != move_kind::fill || part_weight_[q] < lower_[q]);
    };
    // Among moves of equal gain, the one into the part that v fills least wins.
    auto fill = [&](part_id q) { return static_cast<double>(part_weight_[q] + wv) / static_cast<double>(bound_[q]); };
    auto consider = [&](part_id q, weight_t connection) {
        const weight_t gain = connection - internal - g_.migration_change(v, from, q);
        if (gain < best.gain || !wanted(q)) return;
        if (gain > best.gain || fill(q) < fill(best.to)) best = {q, gain};
    };
    const std::uint64_t first = state_[v].link_begin;
    const std::uint64_t last = first + state_[v].link_count;
    for (std::uint64_t i = first; i < last; ++i) consider(links_[i].part, links_[i].weight);
    if (kind != move_kind::refine) {
        // The part that most needs v among those v has no edge to: the one with the most room
        // when shedding, the one furthest below its lower limit when filling.
        part_id neediest = static_cast<part_id>(parts_);
        weight_t most_need = 0;
        for (part_id q = 0; q < parts_; ++q) {
            const weight_t need = kind == move_kind::shed ? bound_[q] - part_weight_[q] : lower_[q] - part_weight_[q];
            if (q != from && wanted(q) && (neediest == parts_ || need > most_need)) {
                neediest = q;
                most_need = need;
            }
        }
        if (neediest != parts_) {
            weight_t connection = 0;
            for (std::uint64_t i = first; i < last; ++i) {
                if (links_[i].part == neediest) connection = links_[i].weight;
            }
            consider(neediest, connection);
        }
    }
    return best;
}

void kway_refiner::move(vertex_id v, part_id to) {
    const part_id from = part_of_[v];
    const weight_t wv = g_.vertex_weight[v];
    part_weight_[from] -= wv;
    part_weight_[to] += wv;
    part_of_[v] = to;
    migration_ += g_.migration_change(v, from, to);
    for (std::uint64_t e = g_.begin[v]; e < g_.begin[v + 1]; ++e) {
        const vertex_id u = g_.adjacency[e];
        const weight_t w = g_.edge_weight[e];
        const part_id pu = part_of_[u];
        if (pu == from) {
            state_[u].internal -= w;
            add_link(u, to, w);
        } else if (pu == to) {
            remove_link(u, from, w);
            state_[u].internal += w;
        } else {
            remove_link(u, from, w);
            add_link(u, to, w);
        }
    }
    const weight_t old_internal = state_[v].internal;
    state_[v].internal = take_link(v, to);
    if (old_internal > 0) add_link(v, from, old_internal);
    cut_ += old_internal - state_[v].internal;
}

void kway_refiner::rebalance(splitmix64& rng) {
    balance(move_kind::shed, rng);
    balance(move_kind::fill, rng);
}

template <class Choose>
std::optional<std::pair<vertex_id, kway_refiner::move_choice>> kway_refiner::pop_fresh(Choose&& choose) {
    while (!queue_.empty()) {
        const vertex_id v = queue_.top();
        const move_choice m = choose(v);
        if (m.to == parts_) {
            queue_.remove(v);
        } else if (m.gain != queue_.top_gain()) {
            queue_.update(v, m.gain);
        } else {
            queue_.remove(v);
            return std::pair{v, m};
        }
    }
    return std::nullopt;
}

void kway_refiner::balance(move_kind kind, splitmix64& rng) {
    auto needed = [&] {
        for (part_id q = 0; q < parts_; ++q) {
            if (kind == move_kind::shed ? part_weight_[q] > bound_[q] : part_weight_[q] < lower_[q]) return true;
        }
        return false;
    };
    // Shedding moves vertices of overloaded parts; filling moves vertices of any part that
    // stays at or above its lower limit.
    auto source = [&](vertex_id v) {
        const part_id p = part_of_[v];
        return kind == move_kind::shed ? part_weight_[p] > bound_[p] : part_weight_[p] >= lower_[p];
    };
    if (!needed()) return;
    std::vector<vertex_id> candidates;
    for (vertex_id v = 0; v < g_.size(); ++v) {
        if (source(v)) candidates.push_back(v);
    }
    rng.shuffle(candidates);
    for (vertex_id v : candidates) {
        const move_choice m = best_move(v, kind);
        if (m.to != parts_) queue_.push(v, m.gain);
    }
    // Invariant: the queue holds candidate vertices keyed by their best balancing move's gain
    // as of the last change around them; a stale key is refreshed before the vertex moves.
    const auto choose = [&](vertex_id v) { return source(v) ? best_move(v, kind) : move_choice{static_cast<part_id>(parts_), 0}; };
    while (needed()) {
        const auto next = pop_fresh(choose);
        if (!next) break;
        const auto [v, m] = *next;
        move(v, m.to);
        for (std::uint64_t e = g_.begin[v]; e < g_.begin[v + 1]; ++e) {
            const vertex_id u = g_.adjacency[e];
            if (queue_.contains(u)) queue_.update(u, best_move(u, kind).gain);
        }
    }
    queue_.clear();
}

// One FM pass. Invariant: every unlocked boundary vertex with an allowed move is queued with
// the gain of its best move; each vertex moves at most once; the moves after the best
// (excess, objective) seen are undone at the end.
bool kway_refiner::pass(const fm_options& options, splitmix64& rng) {
    std::vector<vertex_id> boundary;
    for (vertex_id v = 0; v < g_.size(); ++v) {
        if (state_[v].link_count > 0) boundary.push_back(v);
    }
    rng.shuffle(boundary);
    for (vertex_id v : boundary) {
        const move_choice m = best_move(v, move_kind::refine);
        if (m.to != parts_) queue_.push(v, m.gain);
    }

    const auto scaled = static_cast<std::size_t>(options.stop_fraction * static_cast<double>(g_.size()));
    const std::size_t stop_after = std::clamp(scaled, options.stop_min, options.stop_max);
    std::vector<std::pair<vertex_id, part_id>> log;
    const weight_t start_cost = cut_ + migration_;
    weight_t current_excess = excess(part_weight_, bound_);
    const weight_t start_excess = current_excess;
    weight_t best_cost = start_cost;
    weight_t best_excess = current_excess;
    std::size_t best_length = 0;
    std::size_t since_best = 0;
    const auto choose = [&](vertex_id v) { return best_move(v, move_kind::refine); };
    while (const auto next = pop_fresh(choose)) {
        const auto [v, m] = *next;
        const part_id from = part_of_[v];
        const weight_t over_before = std::max<weight_t>(0, part_weight_[from] - bound_[from]);
        move(v, m.to);
        current_excess -= over_before - std::max<weight_t>(0, part_weight_[from] - bound_[from]);
        state_[v].locked = true;
        log.emplace_back(v, from);
        if (current_excess < best_excess || (current_excess == best_excess && cut_ + migration_ < best_cost)) {
            best_excess = current_excess;
            best_cost = cut_ + migration_;
            best_length = log.size();
            since_best = 0;
        } else if (++since_best >= stop_after) {
            break;
        }
        for (std::uint64_t e = g_.begin[v]; e < g_.begin[v + 1]; ++e) {
            const vertex_id u = g_.adjacency[e];
            if (state_[u].locked) continue;
            const move_choice mu = best_move(u, move_kind::refine);
            if (mu.to != parts_) queue_.push_or_update(u, mu.gain);
            else if (queue_.contains(u)) queue_.remove(u);
        }
    }
    queue_.clear();
    for (std::size_t i = log.size(); i-- > 0;) {
        const auto [v, from] = log[i];
        state_[v].locked = false;
        if (i >= best_length) move(v, from);
    }
    return best_excess < start_excess ||
           static_cast<double>(start_cost - best_cost) > options.min_pass_gain * static_cast<double>(start_cost);
}

weight_t kway_refiner::refine(const fm_options& options, splitmix64& rng) {
    for (std::size_t i = 0; i < options.max_passes; ++i) {
        if (!pass(options, rng)) break;
    }
    return cut_;
}

}  // namespace dnnc::partitioner::detail
