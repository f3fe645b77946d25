#include "dnnc/protocol/rows.hpp"

#include "dnnc/protocol/resolve.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace dnnc::protocol {

synapse_rows::synapse_rows(const network& net) { compile(net, nullptr); }

synapse_rows::synapse_rows(const network& net, std::vector<neuron_index> targets) {
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    compile(net, &targets);
}

void synapse_rows::compile(const network& net, const std::vector<neuron_index>* targets) {
    const symbol_table symbols(net);
    neurons_ = static_cast<std::size_t>(symbols.neuron_count());
    elements_.reserve(net.connection_order.size());
    models_ = {resolve_synapse_model(net, "", net.where)};
    auto model_index = [&](const std::string& reference, const source_location& where) {
        auto model = resolve_synapse_model(net, reference, where);
        for (std::size_t m = 0; m < models_.size(); ++m)
            if (models_[m].id == model.id || (!models_[m].info->plastic && !model.info->plastic)) return static_cast<std::uint32_t>(m);
        models_.push_back(std::move(model));
        return static_cast<std::uint32_t>(models_.size() - 1);
    };
    for (std::size_t e = 0; e < net.connection_order.size(); ++e) {
        const connection_ref& ref = net.connection_order[e];
        compiled r;
        if (ref.kind == connection_ref::type::synapse) {
            const synapse& s = net.synapses[ref.index];
            r.to_first = symbols.range(s.to, s.where).first;
            r.from_first = symbols.range(s.from, s.where).first;
            r.from_size = r.to_size = 1;
            r.weight = static_cast<float>(s.weight);
            r.delay = static_cast<std::uint16_t>(delay_ticks(s, net.dt));
            r.where = &s.where;
            r.model = model_index(s.synapse_model, s.where);
            explicit_.push_back({static_cast<neuron_index>(r.to_first), static_cast<std::uint32_t>(e)});
        } else {
            const projection& p = net.projections[ref.index];
            const neuron_range from = symbols.range(p.from, p.where);
            const neuron_range to = symbols.range(p.to, p.where);
            r.from_first = from.first;
            r.from_size = from.size;
            r.to_first = to.first;
            r.to_size = to.size;
            r.weight = static_cast<float>(p.weight);
            r.delay = static_cast<std::uint16_t>(delay_ticks(p, net.dt));
            r.autapses = p.autapses;
            r.multapses = p.multapses;
            r.seed = p.seed;
            r.where = &p.where;
            r.model = model_index(p.synapse_model, p.where);
            r.dt = net.dt;
            if (p.weight_distribution) r.weight_draw.emplace(*p.weight_distribution);
            if (p.delay_distribution) {
                r.delay_draw.emplace(*p.delay_distribution);
                r.delay_cap = delay_cap(*p.delay_distribution, net.dt);
            }
            const auto count = [](const std::optional<std::int64_t>& v) {
                return static_cast<std::uint64_t>(std::max<std::int64_t>(0, v.value_or(0)));
            };
            switch (p.kind) {
            case projection_kind::all: r.kind = rule::all; break;
            case projection_kind::one_to_one: r.kind = rule::one_to_one; break;
            case projection_kind::random:
                r.kind = rule::random;
                r.p = p.p.value_or(0);
                r.log_q = std::log1p(-r.p);
                break;
            case projection_kind::fixed_indegree:
                r.kind = rule::fixed_indegree;
                r.degree = count(p.indegree);
                break;
            case projection_kind::fixed_outdegree:
                r.kind = rule::fixed_outdegree;
                r.degree = count(p.outdegree);
                draw_outdegree_rows(r, targets);
                break;
            case projection_kind::fixed_total_number:
                r.kind = rule::fixed_total_number;
                r.degree = count(p.total);
                break;
            case projection_kind::dense: r.kind = rule::dense; break;
            case projection_kind::list:
                r.kind = rule::list;
                r.list = &p.connections;
                check_list(p, from.size, to.size);
                break;
            }
        }
        elements_.push_back(r);
    }
    // Explicit synapses were added in element order: a stable sort by target keeps it.
    std::stable_sort(explicit_.begin(), explicit_.end(),
                     [](const explicit_entry& a, const explicit_entry& b) { return a.first < b.first; });

    // Cut the neurons at every projection's target range ends; each interval lists the
    // projections that cover it.
    for (const auto& r : elements_)
        if (r.kind != rule::synapse && r.kind != rule::dense && r.to_size > 0) {
            bounds_.push_back(r.to_first);
            bounds_.push_back(r.to_first + r.to_size);
        }
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    const std::size_t intervals = bounds_.empty() ? 0 : bounds_.size() - 1;
    std::vector<std::size_t> per(intervals + 1, 0);
    auto interval_span = [&](const compiled& r) {
        const auto first = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), r.to_first) - bounds_.begin());
        const auto last =
            static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), r.to_first + r.to_size) - bounds_.begin());
        return std::pair{first, last};
    };
    auto projections = [&](auto&& each) {
        for (std::size_t e = 0; e < elements_.size(); ++e) {
            const auto& r = elements_[e];
            if (r.kind == rule::synapse || r.kind == rule::dense || r.to_size == 0) continue;
            const auto [first, last] = interval_span(r);
            for (auto i = first; i < last; ++i) each(i, e);
        }
    };
    projections([&](std::size_t i, std::size_t) { ++per[i + 1]; });
    for (std::size_t i = 0; i < intervals; ++i) per[i + 1] += per[i];
    cover_begin_ = per;
    cover_.resize(per.back());
    projections([&](std::size_t i, std::size_t e) { cover_[per[i]++] = static_cast<std::uint32_t>(e); });
}

// A node builds rows from the list its share holds, on which check_network has not run (the
// lead ran it on the whole list): its positions must lie inside the groups. The rest (one
// length for every column, targets ascending, delays of at least a tick) the file reader
// and the <connections> decoder guarantee.
void synapse_rows::check_list(const projection& p, std::uint64_t sources, std::uint64_t targets) {
    const connection_list& l = p.connections;
    if (l.size() == 0) return;
    const auto source = *std::max_element(l.sources.begin(), l.sources.end());
    if (source >= sources || l.targets.back() >= targets)
        throw config_error(p.where, "list projection: a connection from source " + std::to_string(source) + " or to target " +
                                        std::to_string(l.targets.back()) + " lies outside its groups (" + std::to_string(sources) +
                                        " and " + std::to_string(targets) + " neurons)");
}

std::pair<const std::uint32_t*, const std::uint32_t*> synapse_rows::covering(neuron_index target) const {
    const auto at = std::upper_bound(bounds_.begin(), bounds_.end(), std::uint64_t{target});
    if (at == bounds_.begin() || at == bounds_.end()) return {nullptr, nullptr};
    const auto i = static_cast<std::size_t>(at - bounds_.begin()) - 1;
    return {cover_.data() + cover_begin_[i], cover_.data() + cover_begin_[i + 1]};
}

std::pair<const synapse_rows::explicit_entry*, const synapse_rows::explicit_entry*> synapse_rows::explicit_of(
    neuron_index target) const {
    const auto [first, last] = std::equal_range(explicit_.begin(), explicit_.end(), explicit_entry{target, 0},
                                                [](const explicit_entry& a, const explicit_entry& b) { return a.first < b.first; });
    return {explicit_.data() + (first - explicit_.begin()), explicit_.data() + (last - explicit_.begin())};
}

std::uint64_t synapse_rows::count_of(const compiled& r, neuron_index target) const {
    switch (r.kind) {
    case rule::synapse: return 1;
    case rule::all:
        return r.from_size - (!r.autapses && target >= r.from_first && target < r.from_first + r.from_size ? 1 : 0);
    case rule::one_to_one: return r.autapses || r.from_first != r.to_first ? 1 : 0;
    case rule::random: {
        if (r.p <= 0 || r.from_size == 0) return 0;
        std::uint64_t n = 0;
        random_row row(r, target);
        for (std::uint64_t k = 0; row.next(k);) n += r.autapses || r.from_first + k != target;
        return n;
    }
    case rule::fixed_indegree: {
        const bool inside = target >= r.from_first && target < r.from_first + r.from_size;
        const std::uint64_t pool = r.from_size - (!r.autapses && inside ? 1 : 0);
        return pool == 0 ? 0 : r.multapses ? r.degree : std::min(r.degree, pool);
    }
    case rule::fixed_outdegree: {
        const auto [first, last] = drawn_[r.drawn].row(target);
        return static_cast<std::uint64_t>(last - first);
    }
    case rule::fixed_total_number: return total_number_count(r, target);
    case rule::dense: return 0;
    case rule::list: {
        const auto [first, last] = listed_row(r, target);
        return last - first;
    }
    }
    return 0;
}

void synapse_rows::draw_positions(std::uint64_t seed, std::uint64_t size, std::uint64_t skipped, std::uint64_t k,
                                  bool multapses, std::vector<std::uint64_t>& positions) {
    positions.clear();
    const std::uint64_t pool = size - (skipped < size ? 1 : 0);
    if (pool == 0 || k == 0) return;
    splitmix64 rng(seed);
    if (multapses) {
        for (std::uint64_t i = 0; i < k; ++i) positions.push_back(rng.below(pool));
        std::sort(positions.begin(), positions.end());
    } else {
        // Floyd: for j = pool - K .. pool - 1 take a uniform t in [0, j]; if taken, take j.
        // `taken` is a bitmap over the pool, all clear between calls.
        thread_local std::vector<std::uint64_t> taken;
        if (taken.size() < pool / 64 + 1) taken.assign(pool / 64 + 1, 0);
        const auto take = [&](std::uint64_t x) {
            const bool was = (taken[x >> 6] >> (x & 63)) & 1;
            taken[x >> 6] |= std::uint64_t{1} << (x & 63);
            return was;
        };
        for (std::uint64_t j = pool - std::min(k, pool); j < pool; ++j) {
            const std::uint64_t t = rng.below(j + 1);
            positions.push_back(take(t) ? (take(j), j) : t);
        }
        for (const auto x : positions) taken[x >> 6] &= ~(std::uint64_t{1} << (x & 63));
        std::sort(positions.begin(), positions.end());
    }
    // Positions in the pool skip the skipped position.
    for (auto& x : positions)
        if (x >= skipped) ++x;
}

// The row's stream is the projection's seed mixed with the row, as for random rows. Sources
// are drawn from the group less the target itself when autapses are off. Sorted, they are
// in canonical order.
void synapse_rows::drawn_row(const compiled& r, neuron_index target, std::uint64_t k, std::vector<std::uint64_t>& positions) {
    const bool inside = target >= r.from_first && target < r.from_first + r.from_size;
    const std::uint64_t skipped = !r.autapses && inside ? target - r.from_first : r.from_size;
    draw_positions(stream_seed(r.seed, target - r.to_first), r.from_size, skipped, k, r.multapses, positions);
}

// n is split over the target range [0, size) down a binary tree: a node [lo, hi) with m
// synapses gives its left half [lo, mid) a binomial share of them (with multapses) or a
// hypergeometric one (without: a uniform choice of m distinct pairs), in proportion to the
// (source, target) pairs each half allows. Each split is drawn from the stream of its tree
// node, so any row's count is the same whoever draws it.
std::uint64_t synapse_rows::total_number_count(const compiled& r, neuron_index target) {
    static constexpr std::uint64_t tree_salt = 0x545245454E4F4445ULL;
    // The pairs that targets [a, b) of the group allow: every source, less themselves
    // without autapses.
    const auto pairs = [&](std::uint64_t a, std::uint64_t b) {
        std::uint64_t n = (b - a) * r.from_size;
        if (!r.autapses) {
            const auto first = std::max(r.to_first + a, r.from_first), last = std::min(r.to_first + b, r.from_first + r.from_size);
            if (first < last) n -= last - first;
        }
        return n;
    };
    const std::uint64_t position = target - r.to_first;
    std::uint64_t lo = 0, hi = r.to_size, n = r.degree, node = 1;
    while (hi - lo > 1 && n > 0) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        const std::uint64_t left_pairs = pairs(lo, mid), right_pairs = pairs(mid, hi);
        splitmix64 rng(stream_seed(r.seed ^ tree_salt, node));
        const std::uint64_t left =
            r.multapses ? binomial(rng, n, left_pairs + right_pairs == 0
                                               ? 0.0
                                               : static_cast<double>(left_pairs) / static_cast<double>(left_pairs + right_pairs))
                        : hypergeometric(rng, n, left_pairs, right_pairs);
        if (position < mid) {
            n = left;
            hi = mid;
            node = 2 * node;
        } else {
            n -= left;
            lo = mid;
            node = 2 * node + 1;
        }
    }
    return n;
}

// Every source draws its targets from its own stream (as a fixed in-degree row draws its
// sources); the draws that land on a target asked for are kept, source by source, so each
// row lists its sources ascending. Sources are visited in parallel in fixed blocks, whose
// hits are then joined in block order.
void synapse_rows::draw_outdegree_rows(compiled& r, const std::vector<neuron_index>* targets) {
    r.drawn = static_cast<std::uint32_t>(drawn_.size());
    drawn_rows& rows = drawn_.emplace_back();
    if (targets) {
        const auto first = std::lower_bound(targets->begin(), targets->end(), r.to_first);
        const auto last = std::lower_bound(first, targets->end(), r.to_first + r.to_size);
        rows.targets.assign(first, last);
    } else {
        rows.targets.resize(r.to_size);
        for (std::uint64_t t = 0; t < r.to_size; ++t) rows.targets[t] = static_cast<neuron_index>(r.to_first + t);
    }
    rows.begin.assign(rows.targets.size() + 1, 0);
    if (rows.targets.empty() || r.degree == 0) return;
    std::vector<bool> wanted(r.to_size, false);
    for (const auto t : rows.targets) wanted[t - r.to_first] = true;

    constexpr std::uint64_t block = 4096;
    const std::uint64_t blocks = (r.from_size + block - 1) / block;
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> hits(blocks);  // (row, source position)
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, blocks, 1), [&](const tbb::blocked_range<std::uint64_t>& range) {
        std::vector<std::uint64_t> positions;
        for (auto b = range.begin(); b < range.end(); ++b)
            for (std::uint64_t s = b * block; s < std::min(r.from_size, (b + 1) * block); ++s) {
                const std::uint64_t source = r.from_first + s;
                const bool inside = source >= r.to_first && source < r.to_first + r.to_size;
                const std::uint64_t skipped = !r.autapses && inside ? source - r.to_first : r.to_size;
                draw_positions(stream_seed(r.seed, s), r.to_size, skipped, r.degree, r.multapses, positions);
                for (const auto k : positions)
                    if (wanted[k]) {
                        const auto row = std::lower_bound(rows.targets.begin(), rows.targets.end(), r.to_first + k) - rows.targets.begin();
                        hits[b].push_back({static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(s)});
                    }
            }
    });
    for (const auto& h : hits)
        for (const auto& [row, source] : h) ++rows.begin[row + 1];
    for (std::size_t i = 0; i < rows.targets.size(); ++i) rows.begin[i + 1] += rows.begin[i];
    rows.sources.resize(rows.begin.back());
    std::vector<std::uint64_t> next(rows.begin.begin(), rows.begin.end() - 1);
    for (auto& h : hits) {
        for (const auto& [row, source] : h) rows.sources[next[row]++] = source;
        h = {};
    }
}

std::pair<const std::uint32_t*, const std::uint32_t*> synapse_rows::drawn_rows::row(neuron_index target) const {
    const auto at = std::lower_bound(targets.begin(), targets.end(), target);
    if (at == targets.end() || *at != target) return {nullptr, nullptr};
    const auto i = static_cast<std::size_t>(at - targets.begin());
    return {sources.data() + begin[i], sources.data() + begin[i + 1]};
}

std::uint64_t synapse_rows::count(neuron_index target, std::size_t element) const {
    const auto& r = elements_.at(element);
    if (r.kind == rule::synapse) {
        const auto [first, last] = explicit_of(target);
        return std::any_of(first, last, [&](const explicit_entry& x) { return x.second == element; }) ? 1 : 0;
    }
    if (target < r.to_first || target >= r.to_first + r.to_size) return 0;
    return count_of(r, target);
}

std::uint64_t synapse_rows::outdegree_synapses(std::size_t element) const {
    const auto& r = elements_.at(element);
    if (r.kind != rule::fixed_outdegree) return 0;
    // Without autapses a source inside the target group draws from the others: from none
    // when the group is that source alone.
    if (r.autapses || r.to_size > 1) return r.degree * r.from_size;
    const bool inside = r.to_first >= r.from_first && r.to_first < r.from_first + r.from_size;
    return r.degree * (r.from_size - (inside ? 1 : 0));
}

std::optional<uniform_synapse> synapse_rows::uniform(std::size_t element) const {
    const auto& r = elements_.at(element);
    if (r.kind == rule::dense || r.kind == rule::list || r.weight_draw || r.delay_draw) return std::nullopt;
    return uniform_synapse{r.weight, r.delay};
}

}  // namespace dnnc::protocol
