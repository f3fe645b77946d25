#include "dnnc/model/rows.hpp"

#include "dnnc/core/radix_sort.hpp"
#include "dnnc/model/resolve.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace dnnc::model {
namespace {

// A row's drawn positions (below `pool`) in ascending order, linear in the row's hundreds to
// thousands of draws, where a comparison sort took a tenth of a node's set-up.
void sort_positions(std::vector<std::uint64_t>& positions, std::uint64_t pool) {
    thread_local std::vector<std::uint64_t> scratch;
    radix_sort<8>(positions, scratch, pool - 1, [](std::uint64_t x) { return x; });
}

}  // namespace

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
            r.from_x = {{r.from_first, 1, 0, 0}};
            r.to_x = {{r.to_first, 1, 0, 0}};
            r.weight = static_cast<float>(s.weight);
            r.delay = static_cast<std::uint16_t>(delay_ticks(s, net.dt));
            r.where = &s.where;
            r.model = model_index(s.synapse_model, s.where);
            explicit_.push_back({static_cast<neuron_index>(r.to_first), static_cast<std::uint32_t>(e)});
        } else {
            const projection& p = net.projections[ref.index];
            r.from_x = symbols.extents(p.from, p.where);
            r.to_x = symbols.extents(p.to, p.where);
            r.from_first = r.from_x.front().first;
            r.from_size = members_by(r.from_x, ~std::uint32_t{0});
            r.to_first = r.to_x.front().first;
            r.to_size = members_by(r.to_x, ~std::uint32_t{0});
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
                check_list(p, r.from_size, r.to_size);
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
        if (r.kind != rule::synapse && r.kind != rule::dense)
            for (const auto& x : r.to_x)
                if (x.size > 0) {
                    bounds_.push_back(x.first);
                    bounds_.push_back(x.first + x.size);
                }
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    const std::size_t intervals = bounds_.empty() ? 0 : bounds_.size() - 1;
    std::vector<std::size_t> per(intervals + 1, 0);
    auto interval_span = [&](const member_extent& x) {
        const auto first = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), x.first) - bounds_.begin());
        const auto last = static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), x.first + x.size) - bounds_.begin());
        return std::pair{first, last};
    };
    // Extents are ascending, so an element's intervals come in ascending order.
    auto projections = [&](auto&& each) {
        for (std::size_t e = 0; e < elements_.size(); ++e) {
            const auto& r = elements_[e];
            if (r.kind == rule::synapse || r.kind == rule::dense) continue;
            for (const auto& x : r.to_x) {
                if (x.size == 0) continue;
                const auto [first, last] = interval_span(x);
                for (auto i = first; i < last; ++i) each(i, e);
            }
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
    case rule::all: {
        std::uint64_t position = 0;
        std::uint32_t born = 0;
        return r.from_size - (!r.autapses && place_in(r.from_x, target, position, born) ? 1 : 0);
    }
    case rule::one_to_one: {
        const auto position = position_in(r.to_x, target);
        return position < r.from_size && (r.autapses || neuron_at(r.from_x, position) != target) ? 1 : 0;
    }
    case rule::random: {
        if (r.p <= 0 || r.from_size == 0) return 0;
        std::uint64_t n = 0;
        random_row row(r, target);
        for (std::uint64_t k = 0; row.next(k);) n += r.autapses || neuron_at(r.from_x, k) != target;
        return n;
    }
    case rule::fixed_indegree: {
        const auto [pool_size, skipped] = indegree_pool(r, target);
        const std::uint64_t pool = pool_size - (skipped < pool_size ? 1 : 0);
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
        sort_positions(positions, pool);
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
        sort_positions(positions, pool);
    }
    // Positions in the pool skip the skipped position.
    for (auto& x : positions)
        if (x >= skipped) ++x;
}

// A drawn row's pool: the source positions there were when `target` was added (a prefix, as
// extents are in member order), and the one skipped (the target itself, without autapses;
// the pool's size when none is).
std::pair<std::uint64_t, std::uint64_t> synapse_rows::indegree_pool(const compiled& r, neuron_index target) {
    std::uint64_t position = 0, inside = 0;
    std::uint32_t born = 0, ignored = 0;
    place_in(r.to_x, target, position, born);
    const std::uint64_t pool = members_by(r.from_x, born);
    const bool skips = !r.autapses && place_in(r.from_x, target, inside, ignored) && inside < pool;
    return {pool, skips ? inside : pool};
}

// The row's stream is the projection's seed mixed with the row, as for random rows. Sources
// are drawn from the pool less the target itself when autapses are off. Sorted, they are
// in canonical order.
void synapse_rows::drawn_row(const compiled& r, neuron_index target, std::uint64_t k, std::vector<std::uint64_t>& positions) {
    const auto [pool, skipped] = indegree_pool(r, target);
    draw_positions(stream_seed(r.seed, position_in(r.to_x, target)), pool, skipped, k, r.multapses, positions);
}

// n is split over the target range [0, size) down a binary tree: a node [lo, hi) with m
// synapses gives its left half [lo, mid) a binomial share of them (with multapses) or a
// hypergeometric one (without: a uniform choice of m distinct pairs), in proportion to the
// (source, target) pairs each half allows. Each split is drawn from the stream of its tree
// node, so any row's count is the same whoever draws it.
std::uint64_t synapse_rows::total_number_count(const compiled& r, const total_block& k, std::uint64_t position) {
    static constexpr std::uint64_t tree_salt = 0x545245454E4F4445ULL;
    // The pairs that targets [a, b) of the block allow: every source, less themselves
    // without autapses.
    const auto pairs = [&](std::uint64_t a, std::uint64_t b) {
        std::uint64_t n = (b - a) * k.from_size;
        if (!r.autapses) {
            const auto first = std::max(k.to_first + a, k.from_first), last = std::min(k.to_first + b, k.from_first + k.from_size);
            if (first < last) n -= last - first;
        }
        return n;
    };
    std::uint64_t lo = 0, hi = k.to_size, n = k.n, node = 1;
    while (hi - lo > 1 && n > 0) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        const std::uint64_t left_pairs = pairs(lo, mid), right_pairs = pairs(mid, hi);
        splitmix64 rng(stream_seed(k.seed ^ tree_salt, node));
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

// The written extents' block is the projection as written. Another pair of extents (members
// a grow added on either side) holds n in proportion to its pairs (at most all of them) and
// draws from streams keyed by the births of its extents.
synapse_rows::total_block synapse_rows::block_of(const compiled& r, const member_extent& from, const member_extent& to) {
    const auto& a = r.from_x.front();
    const auto& b = r.to_x.front();
    if (from.born == a.born && to.born == b.born) return {from.first, from.size, to.first, to.size, r.degree, r.seed};
    static constexpr std::uint64_t block_salt = 0x424C4F434B53554DULL;
    const double written = static_cast<double>(a.size) * static_cast<double>(b.size);
    auto n = written > 0 ? static_cast<std::uint64_t>(std::llround(static_cast<double>(r.degree) * static_cast<double>(from.size) *
                                                                      static_cast<double>(to.size) / written))
                         : 0;
    if (!r.multapses) {  // distinct pairs: at most the block's
        const bool same = from.first == to.first;
        n = std::min(n, from.size * to.size - (!r.autapses && same ? from.size : 0));
    }
    return {from.first, from.size, to.first, to.size, n, stream_seed(r.seed ^ block_salt, (std::uint64_t{from.born} << 32) | to.born)};
}

// Block by block in source order, each row drawn as a fixed in-degree row from the block's
// sources and the block's stream for the row.
void synapse_rows::total_number_row(const compiled& r, neuron_index target, std::vector<std::uint64_t>& positions) {
    positions.clear();
    thread_local std::vector<std::uint64_t> drawn;
    total_number_blocks(r, target, [&](std::uint64_t offset, const total_block& b, std::uint64_t position) {
        const bool inside = target >= b.from_first && target < b.from_first + b.from_size;
        const std::uint64_t skipped = !r.autapses && inside ? target - b.from_first : b.from_size;
        draw_positions(stream_seed(b.seed, position), b.from_size, skipped, total_number_count(r, b, position), r.multapses, drawn);
        for (const auto k : drawn) positions.push_back(offset + k);
    });
}

// Every source draws its targets from its own stream (as a fixed in-degree row draws its
// sources); the draws that land on a target asked for are kept, source by source, so each
// row lists its sources ascending. Sources are visited in parallel in fixed blocks, whose
// hits are then joined in block order.
void synapse_rows::draw_outdegree_rows(compiled& r, const std::vector<neuron_index>* targets) {
    r.drawn = static_cast<std::uint32_t>(drawn_.size());
    drawn_rows& rows = drawn_.emplace_back();
    for (const auto& x : r.to_x) {
        if (targets) {
            const auto first = std::lower_bound(targets->begin(), targets->end(), x.first);
            rows.targets.insert(rows.targets.end(), first, std::lower_bound(first, targets->end(), x.first + x.size));
        } else {
            for (std::uint64_t t = 0; t < x.size; ++t) rows.targets.push_back(static_cast<neuron_index>(x.first + t));
        }
    }
    rows.begin.assign(rows.targets.size() + 1, 0);
    if (rows.targets.empty() || r.degree == 0) return;
    std::vector<bool> wanted(r.to_size, false);
    for (const auto t : rows.targets) wanted[position_in(r.to_x, t)] = true;

    // A source draws from the targets there were when it was added (a prefix of positions).
    constexpr std::uint64_t block = 4096;
    const std::uint64_t blocks = (r.from_size + block - 1) / block;
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> hits(blocks);  // (row, source position)
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, blocks, 1), [&](const tbb::blocked_range<std::uint64_t>& range) {
        std::vector<std::uint64_t> positions;
        for (auto b = range.begin(); b < range.end(); ++b)
            for (std::uint64_t s = b * block; s < std::min(r.from_size, (b + 1) * block); ++s) {
                const neuron_index source = neuron_at(r.from_x, s);
                std::uint64_t ignored = 0, inside = 0;
                std::uint32_t born = 0, also_ignored = 0;
                place_in(r.from_x, source, ignored, born);
                const std::uint64_t pool = members_by(r.to_x, born);
                const bool skips = !r.autapses && place_in(r.to_x, source, inside, also_ignored) && inside < pool;
                draw_positions(stream_seed(r.seed, s), pool, skips ? inside : pool, r.degree, r.multapses, positions);
                for (const auto k : positions)
                    if (wanted[k]) {
                        const auto row =
                            std::lower_bound(rows.targets.begin(), rows.targets.end(), neuron_at(r.to_x, k)) - rows.targets.begin();
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
    std::uint64_t position = 0;
    std::uint32_t born = 0;
    if (!place_in(r.to_x, target, position, born)) return 0;
    return count_of(r, target);
}

std::uint64_t synapse_rows::outdegree_synapses(std::size_t element) const {
    const auto& r = elements_.at(element);
    if (r.kind != rule::fixed_outdegree) return 0;
    // Without autapses a source inside the target group draws from the others: from none
    // when the targets there were when it was added are that source alone.
    std::uint64_t n = 0;
    for (const auto& x : r.from_x) {
        const auto pool = members_by(r.to_x, x.born);
        const auto alone = neuron_at(r.to_x, 0);
        const bool inside = alone >= x.first && alone < x.first + x.size;
        n += r.degree * (r.autapses || pool > 1 ? x.size : x.size - (inside ? 1 : 0));
    }
    return n;
}

std::optional<uniform_synapse> synapse_rows::uniform(std::size_t element) const {
    const auto& r = elements_.at(element);
    if (r.kind == rule::dense || r.kind == rule::list || r.weight_draw || r.delay_draw) return std::nullopt;
    return uniform_synapse{r.weight, r.delay};
}

}  // namespace dnnc::model
