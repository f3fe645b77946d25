#include "sparse_path.hpp"

#include "dnnc/core/radix_sort.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace dnnc::sim {

__attribute__((target_clones("avx512f", "avx2", "default")))
bool find_nonzero(const float* __restrict values, std::size_t first, std::size_t n, std::size_t limit,
                  std::vector<std::uint32_t>& positions) {
    std::size_t i = first;
    for (; i + 16 <= n; i += 16) {
        if (positions.size() > limit) return false;
        std::uint32_t bits[16];
        std::memcpy(bits, values + i, sizeof bits);
        std::uint32_t any = 0;
        for (auto b : bits) any |= b;
        if (any == 0) continue;
        for (std::size_t k = i; k < i + 16; ++k)
            if (values[k] != 0.0f) positions.push_back(static_cast<std::uint32_t>(k));
    }
    for (; i < n; ++i)
        if (values[i] != 0.0f) positions.push_back(static_cast<std::uint32_t>(i));
    return positions.size() <= limit;
}

sparse_path::sparse_path(const history_ring& history, const synapse_store& store, const fan_out_index& fan_out,
                         const slot_layout& slots, tick_t remote_delay)
    : history_(history), store_(store), fan_out_(fan_out), slots_(slots), remote_delay_(remote_delay),
      sources_of_row_(history.rows()), local_of_row_(history.rows()), terms_per_sum_(3 * slots.local(), 0) {}

std::size_t sparse_path::limit() const { return std::min<std::size_t>(store_.size() / 8, slots_.size() / 4); }

const sparse_path::row_sources& sparse_path::local_sources(tick_t at) {
    auto& cached = local_row(at);
    if (cached.tick != at) {
        cached.tick = at;
        cached.slots.clear();
        cached.dense = !find_nonzero(history_.row(at), 0, slots_.local(), limit(), cached.slots);
        cached.complete = !cached.dense;
    }
    return cached;
}

void sparse_path::forget_rows() {
    for (auto& r : sources_of_row_) r.tick = -1;
    for (auto& r : local_of_row_) r.tick = -1;
}

const sparse_path::row_sources* sparse_path::sources(tick_t at, std::uint16_t delay) {
    // No remote neuron is read with a shorter delay: the local part of the row is all.
    if (delay < remote_delay_) {
        const auto& own = local_sources(at);
        return own.dense ? nullptr : &own;
    }
    auto& cached = sources_of_row_[history_.position(at)];
    if (cached.tick != at) {
        // The peers' part: the slots they wrote non-zero values to, unless anything may have
        // been written.
        const auto& own = local_sources(at);
        const auto& part = history_.remote_of(at);
        const float* r = history_.row(at);
        cached.tick = at;
        cached.slots = own.slots;
        if (own.dense) {
            cached.dense = true;
        } else if (part.all) {
            cached.dense = !find_nonzero(r, slots_.local(), slots_.size(), limit(), cached.slots);
        } else {
            const auto first = cached.slots.size();
            for (const auto slot : part.written)
                if (r[slot] != 0.0f) cached.slots.push_back(slot);
            std::sort(cached.slots.begin() + static_cast<std::ptrdiff_t>(first), cached.slots.end());
            cached.slots.erase(std::unique(cached.slots.begin() + static_cast<std::ptrdiff_t>(first), cached.slots.end()),
                               cached.slots.end());
            cached.dense = cached.slots.size() > limit();
        }
    }
    return cached.dense ? nullptr : &cached;
}

// A radix sort (linear in the terms, where a comparison sort of the microcircuit's tens of
// thousands of colliding terms a tick took 40% of it). A tick reads each synapse once, so the
// keys differ and the order is the one a comparison sort by synapse gives.
void sparse_path::sort_colliding_by_synapse() {
    radix_sort<11>(colliding_, sorting_, std::numeric_limits<std::uint32_t>::max(), [](const sparse_term& t) { return t.synapse; });
}

bool sparse_path::add_terms(tick_t t, neuron_sums& sums) {
    // The fan-out words this tick reads (one per synapse into a sum in order, two per other,
    // three per synapse with its own weight) may be an eighth of all. The blocks of the
    // active sources bound them from above; what is read of a block whose synapses keep their
    // own delays is known once the ranges are found below, so their sum may reach all words
    // (no more: finding the ranges stays cheap next to the full path).
    const std::size_t budget_words = fan_out_.words() / 8;
    std::size_t expected = 0;
    active_.clear();
    // More non-zero sources in a row than an eighth of the synapses, or than a quarter of all
    // slots, would exceed it as a rule (unless many have no synapses, which then only costs
    // the faster path).
    const auto& delays = store_.delays();
    for (std::size_t k = 0; k < delays.size(); ++k) {
        const tick_t at = t - delays[k];
        if (at < 0) continue;  // the zero row
        const auto* found = sources(at, delays[k]);
        if (!found) return false;
        const auto first = active_.size();
        for (const auto slot : found->slots) {
            expected += fan_out_.end(slot) - fan_out_.begin(slot);
            if (expected > fan_out_.words()) return false;
            active_.emplace_back(k, static_cast<std::uint32_t>(slot));
        }
        if (!slots_.ranked_by_slot()) {
            const auto& rank = slots_.rank();
            std::sort(active_.begin() + static_cast<std::ptrdiff_t>(first), active_.end(),
                      [&](const auto& a, const auto& b) { return rank[a.second] < rank[b.second]; });
        }
    }
    // The ranges of the fan-outs this tick reads: per active source and delay, in each of its
    // segments of a class with that delay, all entries; in a segment whose synapses keep their
    // own delays, the range of that delay (found in its delay directory).
    const std::uint32_t* const fan = fan_out_.data();
    const auto* const kinds = store_.classes().data();
    reads_.clear();
    for (const auto& [k, slot] : active_) {
        const auto base = fan_out_.begin(slot);
        if (base == fan_out_.end(slot)) continue;
        const auto d = delays[k];
        const float y = history_.row(t - d)[slot];
        const std::uint32_t* const block = fan + base;
        const std::uint32_t segments_end = 1 + 3 * block[0];
        std::uint32_t o = segments_end;
        for (std::uint32_t g = 1; g < segments_end; g += 3) {
            const auto& c = kinds[block[g]];
            const std::uint32_t mid = block[g + 1], e = block[g + 2];
            if (c.varies & synapse_store::delay_varies) {
                const auto [first, last] = fan_out_.delay_range(o, mid, d);
                if (first < last) reads_.push_back({base + first, base + last, 0, y, 3});
            } else if (c.delay == d) {
                if (c.varies)
                    reads_.push_back({base + o, base + e, 0, y, 3});
                else
                    reads_.push_back({base + o, base + e, base + mid, c.weight * y, 1});
            }
            o = e;
        }
    }
    std::size_t reading = 0;
    for (const auto& r : reads_) reading += r.last - r.first;
    if (reading > budget_words) return false;
    // Fan-outs lie far apart in memory: ask for all of them before reading the first.
    for (const auto& r : reads_)
        for (const char* p = reinterpret_cast<const char*>(fan + r.first); p < reinterpret_cast<const char*>(fan + r.last); p += 64)
            __builtin_prefetch(p);
    // Terms of sums that are in order (as a rule: one projection feeds the sum, its sources in
    // index order) are added as they come; the others wait below.
    float* const into[] = {sums.u.data(), sums.excitatory.data(), sums.inhibitory.data()};
    contributions_.clear();
    auto add_in_order = [&](std::uint32_t to, float value) { into[to & 3][to >> 3] += value; };
    auto add_term = [&](std::uint32_t synapse, std::uint32_t to, float value) {
        if (to & 4) return add_in_order(to, value);
        const auto sum = (to >> 3) * 3 + (to & 3);
        contributions_.push_back({synapse, sum, value});
        terms_per_sum_[sum] += terms_per_sum_[sum] < 2;
    };
    for (const auto& r : reads_) {
        if (r.words == 3) {
            // (synapse, target word, weight): the synapse's own weight.
            for (auto p = r.first; p < r.last; p += 3) {
                float w;
                std::memcpy(&w, fan + p + 2, sizeof w);
                add_term(fan[p], fan[p + 1], w * r.value);
            }
            continue;
        }
        auto p = r.first;
        for (; p < r.mid; ++p) add_in_order(fan[p], r.value);
        for (; p < r.last; p += 2) add_term(fan[p], fan[p + 1], r.value);
    }
    // Of the others, a sum with one term takes it at once; the terms of a sum with several
    // are sorted by synapse first: their canonical order.
    auto add = [&](const sparse_term& c) { into[c.sum % 3][c.sum / 3] += c.value; };
    colliding_.clear();
    for (const auto& c : contributions_)
        if (terms_per_sum_[c.sum] == 1)
            add(c);
        else
            colliding_.push_back(c);
    sort_colliding_by_synapse();
    for (const auto& c : colliding_) add(c);
    for (const auto& c : contributions_) terms_per_sum_[c.sum] = 0;
    return true;
}

}  // namespace dnnc::sim
