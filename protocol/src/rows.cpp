#include "dnnc/protocol/rows.hpp"

#include "dnnc/protocol/resolve.hpp"

#include <algorithm>

namespace dnnc::protocol {

synapse_rows::synapse_rows(const network& net) {
    const symbol_table symbols(net);
    neurons_ = static_cast<std::size_t>(symbols.neuron_count());
    elements_.reserve(net.connection_order.size());
    for (std::size_t e = 0; e < net.connection_order.size(); ++e) {
        const connection_ref& ref = net.connection_order[e];
        compiled r;
        if (ref.kind == connection_ref::type::synapse) {
            const synapse& s = net.synapses[ref.index];
            r.to_first = symbols.range(s.to, s.where).first;
            r.from_first = symbols.range(s.from, s.where).first;
            r.from_size = r.to_size = 1;
            r.weight = static_cast<float>(s.weight);
            r.delay = static_cast<std::uint16_t>(s.delay);
            r.where = &s.where;
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
            r.delay = static_cast<std::uint16_t>(p.delay);
            r.autapses = p.autapses;
            r.seed = p.seed;
            r.where = &p.where;
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
                r.indegree = static_cast<std::uint64_t>(std::max<std::int64_t>(0, p.indegree.value_or(0)));
                r.multapses = p.multapses;
                break;
            case projection_kind::dense: r.kind = rule::dense; break;
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

std::uint64_t synapse_rows::count_of(const compiled& r, neuron_index target) {
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
        return pool == 0 ? 0 : r.multapses ? r.indegree : std::min(r.indegree, pool);
    }
    case rule::dense: return 0;
    }
    return 0;
}

// The row's stream is the projection's seed mixed with the row, as for random rows. Sources
// are drawn from the group less the target itself when autapses are off: with multapses,
// `indegree` independent uniform draws; without them, `indegree` distinct positions by
// Floyd's algorithm (each draw uniform over what is left). Sorted, they are in canonical order.
void synapse_rows::fixed_indegree_row(const compiled& r, neuron_index target, std::vector<std::uint64_t>& positions) {
    positions.clear();
    const bool inside = target >= r.from_first && target < r.from_first + r.from_size;
    const std::uint64_t skipped = !r.autapses && inside ? target - r.from_first : r.from_size;
    const std::uint64_t pool = r.from_size - (skipped < r.from_size ? 1 : 0);
    if (pool == 0 || r.indegree == 0) return;
    splitmix64 rng(splitmix64(r.seed ^ (0xD1B54A32D192ED03ULL * (target - r.to_first + 1))).next());
    if (r.multapses) {
        for (std::uint64_t k = 0; k < r.indegree; ++k) positions.push_back(rng.below(pool));
        std::sort(positions.begin(), positions.end());
    } else {
        // Floyd: for j = pool - K .. pool - 1 take a uniform t in [0, j]; if taken, take j.
        // `taken` is a bitmap over the pool, all clear between rows.
        thread_local std::vector<std::uint64_t> taken;
        if (taken.size() < pool / 64 + 1) taken.assign(pool / 64 + 1, 0);
        const auto take = [&](std::uint64_t x) {
            const bool was = (taken[x >> 6] >> (x & 63)) & 1;
            taken[x >> 6] |= std::uint64_t{1} << (x & 63);
            return was;
        };
        for (std::uint64_t j = pool - std::min(r.indegree, pool); j < pool; ++j) {
            const std::uint64_t t = rng.below(j + 1);
            positions.push_back(take(t) ? (take(j), j) : t);
        }
        for (const auto k : positions) taken[k >> 6] &= ~(std::uint64_t{1} << (k & 63));
        std::sort(positions.begin(), positions.end());
    }
    // Positions in the pool skip the target's own position.
    for (auto& k : positions)
        if (k >= skipped) ++k;
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

std::optional<uniform_synapse> synapse_rows::uniform(std::size_t element) const {
    const auto& r = elements_.at(element);
    if (r.kind == rule::dense) return std::nullopt;
    return uniform_synapse{r.weight, r.delay};
}

}  // namespace dnnc::protocol
