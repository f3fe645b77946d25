#include "sparse_path.hpp"

#include "dnnc/core/bisect.hpp"
#include "dnnc/core/radix_sort.hpp"

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

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

bool sparse_path::find_reads(tick_t t, std::size_t& reading) {
    // The fan-out words this tick reads (about half a word per synapse into a sum in order,
    // two per other, three per synapse with its own weight) may be an eighth of all. The blocks of the
    // active sources bound them from above; what is read of a block whose synapses keep their
    // own delays is known once the ranges are found below, so their sum may reach all words
    // (no more: finding the ranges stays cheap next to the full path).
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
        const auto& slots = found->slots;
        for (std::size_t j = 0; j < slots.size(); ++j) {
            if (j + 16 < slots.size()) fan_out_.prefetch_bounds(slots[j + 16]);
            const auto slot = slots[j];
            expected += fan_out_.end(slot) - fan_out_.begin(slot);
            if (expected > fan_out_.words()) return false;
            active_.emplace_back(k, static_cast<std::uint32_t>(slot));
        }
        if (!slots_.ranked_by_slot() && !fan_out_.by_source()) {
            const auto& rank = slots_.rank();
            std::sort(active_.begin() + static_cast<std::ptrdiff_t>(first), active_.end(),
                      [&](const auto& a, const auto& b) { return rank[a.second] < rank[b.second]; });
        }
    }
    // By source: each source's delays together, sources by rank (fan_out.hpp). The keys
    // (rank, delay position) are distinct; a radix sort, as a comparison sort of the
    // microcircuit's thousand-odd active sources was a twentieth of its tick.
    if (fan_out_.by_source()) {
        unsigned delay_bits = 0;
        while ((std::size_t{1} << delay_bits) < delays.size()) ++delay_bits;
        const std::uint64_t largest = std::uint64_t{slots_.size()} << delay_bits;
        if (slots_.ranked_by_slot()) {
            radix_sort<12>(active_, sorting_active_, largest, [&](const auto& a) { return std::uint64_t{a.second} << delay_bits | a.first; });
        } else {
            const auto& rank = slots_.rank();
            radix_sort<12>(active_, sorting_active_, largest, [&](const auto& a) { return std::uint64_t{rank[a.second]} << delay_bits | a.first; });
        }
    }
    // The ranges of the fan-outs this tick reads: per active source and delay, in each of its
    // segments of a class with that delay, all entries; in a segment whose synapses keep their
    // own delays, the range of that delay (found in its delay directory).
    const std::uint32_t* const fan = fan_out_.data();
    const auto* const kinds = store_.classes().data();
    // A class whose values vary: its entries' words, or half_compact.
    auto varying_kind = [this](const synapse_store::synapse_class& c) {
        const auto words = fan_out_.varying_words(c);
        return static_cast<std::uint8_t>(words == 1 ? fan_read::half_compact : words);
    };
    reads_.clear();
    // Each active source reads where its block lies, its value, its block's header, and for
    // each segment of a class whose delays vary its directory: dependent reads at random
    // places, nearly all of this function's time when they waited. So each is fetched ahead,
    // the later ones less far, once what they depend on is in.
    auto& row_of = row_of_delay_;
    row_of.assign(delays.size(), nullptr);
    for (std::size_t k = 0; k < delays.size(); ++k)
        if (t >= delays[k]) row_of[k] = history_.row(t - delays[k]);
    constexpr std::size_t bounds_ahead = 32, headers_ahead = 16, directories_ahead = 8;
    std::uint32_t last_source = std::numeric_limits<std::uint32_t>::max();  // of the last read
    for (std::size_t i = 0; i < active_.size(); ++i) {
        if (i + bounds_ahead < active_.size()) fan_out_.prefetch_bounds(active_[i + bounds_ahead].second);
        if (i + headers_ahead < active_.size()) {
            const auto [k, slot] = active_[i + headers_ahead];
            const std::uint32_t* const block = fan + fan_out_.begin(slot);
            __builtin_prefetch(block);
            __builtin_prefetch(block + 16);
            __builtin_prefetch(row_of[k] + slot);
        }
        if (i + directories_ahead < active_.size()) {
            const auto slot = active_[i + directories_ahead].second;
            const auto base = fan_out_.begin(slot);
            const std::uint32_t* const block = fan + base;
            if (base != fan_out_.end(slot))
                for (std::uint32_t g = 1; g < 1 + 3 * block[0]; g += 3)
                    if (kinds[fan_out_index::class_of(block[g])].varies & synapse_store::delay_varies) fan_out_.prefetch_directory(block[g + 1]);
        }
        const auto [k, slot] = active_[i];
        const auto base = fan_out_.begin(slot);
        if (base == fan_out_.end(slot)) continue;
        const auto d = delays[k];
        const float y = row_of[k][slot];
        const std::uint32_t* const block = fan + base;
        const std::uint32_t segments_end = 1 + 3 * block[0];
        std::uint32_t o = segments_end;
        const auto reads_before = reads_.size();
        for (std::uint32_t g = 1; g < segments_end; g += 3) {
            const std::uint32_t class_word = block[g];
            const auto& c = kinds[fan_out_index::class_of(class_word)];
            const std::uint32_t mid = block[g + 1], e = block[g + 2];
            if (c.varies & synapse_store::delay_varies) {
                const auto [first, last] = fan_out_.delay_range(o, mid, d);
                if (first < last) reads_.push_back({base + first, base + last, 0, y, varying_kind(c), 0});
            } else if (c.delay == d) {
                if (c.varies)
                    reads_.push_back({base + o, base + e, 0, y, varying_kind(c), 0});
                else if (fan_out_index::packed(class_word))
                    reads_.push_back({base + o, base + e, base + mid, c.weight * y, fan_read::packed, static_cast<std::uint8_t>(fan_out_index::packed_sum(class_word))});
                else
                    reads_.push_back({base + o, base + e, base + mid, c.weight * y, 1, 0});
            }
            o = e;
        }
        // A source read at several delays this tick (by_source only: one class, one read a
        // delay) hands its terms on in synapse order: its reads join the one before.
        if (reads_.size() > reads_before) {
            reads_[reads_before].joined = fan_out_.by_source() && slot == last_source;
            counts_.joined_reads += reads_[reads_before].joined;
            last_source = slot;
            for (auto r = reads_before; r < reads_.size(); ++r) reads_[r].feeds = fan_out_.feeds_of(slot);
        }
    }
    reading = 0;
    for (const auto& r : reads_) reading += r.last - r.first;
    return reading <= fan_out_.words() / 8;
}

// Compact entries (target and position, weight), or with half weights (target and
// position) and the weight's 16 bits beside: the synapse's own weight.
template <bool Synapses, class Half, class Emit>
void sparse_path::scan_compact(const fan_read& r, Half, Emit&& emit) const {
    const std::uint32_t* const fan = fan_out_.data();
    const std::uint16_t* const halves = fan_out_.halves();
    constexpr std::uint64_t step = Half::value ? 1 : 2, ahead = 8 * step;
    auto weight = [&](std::uint64_t q) {
        float w;
        if constexpr (Half::value)
            w = half_weight::decode(halves[q]);
        else
            std::memcpy(&w, fan + q + 1, sizeof w);
        return w;
    };
    // Where every sum is in order and no synapse is asked for, the target word comes from
    // the entry and its weight alone, sparing a read of the target's word at a random place
    // per synapse (the microcircuit's ticks).
    if (!Synapses && fan_out_.compact_sums_in_order()) {
        for (auto q = r.first; q < r.last; q += step) {
            const float w = weight(q);
            emit(0, fan_out_index::in_order_target_word(fan_out_.compact_target(fan[q]), w), w * r.value);
        }
        return;
    }
    const std::uint64_t* const targets = fan_out_.compact_targets();
    for (auto q = r.first; q < r.last; q += step) {
        if (q + ahead < r.last) __builtin_prefetch(targets + fan_out_.compact_target(fan[q + ahead]));
        const std::uint32_t target = fan_out_.compact_target(fan[q]);
        const std::uint64_t of_target = targets[target];
        const float w = weight(q);
        emit(fan_out_.compact_synapse(of_target, fan[q]),
             fan_out_index::target_word(target, static_cast<std::uint8_t>(of_target >> fan_out_index::info_shift), w),
             w * r.value);
    }
}

template <class Emit>
void sparse_path::scan(const fan_read* begin, const fan_read* end, Emit&& emit) const {
    const std::uint32_t* const fan = fan_out_.data();
    const std::uint16_t* const halves = fan_out_.halves();
    // Fan-outs lie far apart in memory: ask for all of them before reading the first.
    for (auto r = begin; r != end; ++r) {
        for (const char* q = reinterpret_cast<const char*>(fan + r->first); q < reinterpret_cast<const char*>(fan + r->last); q += 64)
            __builtin_prefetch(q);
        if (r->words == fan_read::half_compact)
            for (const char* q = reinterpret_cast<const char*>(halves + r->first); q < reinterpret_cast<const char*>(halves + r->last); q += 64)
                __builtin_prefetch(q);
    }
    struct entry_term {
        std::uint32_t synapse, to;
        float value;
    };
    std::vector<entry_term> joined;  // the terms of reads joined together, put in synapse order
    for (auto r = begin; r != end; ++r) {
        if (r + 1 == end || !r[1].joined) {
            scan_reads<false>(r, r + 1, emit);
            continue;
        }
        auto last = r + 1;
        while (last != end && last->joined) ++last;
        joined.clear();
        scan_reads<true>(r, last, [&](std::uint32_t synapse, std::uint32_t to, float value) { joined.push_back({synapse, to, value}); });
        std::sort(joined.begin(), joined.end(), [](const entry_term& a, const entry_term& b) { return a.synapse < b.synapse; });
        for (const auto& term : joined) emit(term.synapse, term.to, term.value);
        r = last - 1;
    }
}

template <bool Synapses, class Emit>
void sparse_path::scan_reads(const fan_read* begin, const fan_read* end, Emit&& emit) const {
    const std::uint32_t* const fan = fan_out_.data();
    for (auto r = begin; r != end; ++r) {
        if (r->words == 3) {
            // (synapse, target word, weight): the synapse's own weight.
            for (auto q = r->first; q < r->last; q += 3) {
                float w;
                std::memcpy(&w, fan + q + 2, sizeof w);
                emit(fan[q], fan[q + 1], w * r->value);
            }
            continue;
        }
        if (r->words == 2) {
            scan_compact<Synapses>(*r, std::false_type{}, emit);
            continue;
        }
        if (r->words == fan_read::half_compact) {
            scan_compact<Synapses>(*r, std::true_type{}, emit);
            continue;
        }
        auto q = r->first;
        if (r->words == fan_read::packed) {
            // Packed: into sums in order, of one kind.
            const std::uint32_t in_order_sum = 4 | r->sum;
            if (q < r->mid) fan_out_index::for_each_packed(fan + q, [&](std::uint32_t target) { emit(0, target << 3 | in_order_sum, r->value); });
            q = r->mid;
        }
        for (; q < r->mid; ++q) emit(0, fan[q], r->value);  // in order (the target word says so)
        for (; q < r->last; q += 2) emit(fan[q], fan[q + 1], r->value);
    }
}

namespace {

// The sum a target word feeds: target * 3 + feeds.
std::uint32_t sum_of(std::uint32_t to) { return (to >> 3) * 3 + (to & 3); }

}  // namespace

void sparse_path::split(std::size_t parts, std::size_t reading) {
    // Targets cut where each part has about as many synapses into them; reads where each
    // part has about as many words.
    const std::size_t local = slots_.local();
    target_bounds_.assign(parts + 1, 0);
    target_bounds_[parts] = static_cast<std::uint32_t>(local);
    const auto synapses = store_.row_begin(local);
    for (std::size_t p = 1; p < parts; ++p) {
        const auto goal = synapses / parts * p;
        target_bounds_[p] = first_not_before(target_bounds_[p - 1], static_cast<std::uint32_t>(local),
                                             [&](std::uint32_t k) { return store_.row_begin(k) < goal; });
    }
    read_bounds_.assign(parts + 1, reads_.size());
    read_bounds_[0] = 0;
    std::size_t words = 0, q = 1;
    for (std::size_t i = 0; i < reads_.size() && q < parts; ++i) {
        words += reads_[i].last - reads_[i].first;
        while (q < parts && words * parts >= reading * q) read_bounds_[q++] = i + 1;
    }
}

std::size_t sparse_path::add_part(std::size_t p, std::size_t parts, std::uint64_t first_synapse, std::uint64_t end_synapse,
                                  float* const into[3]) {
    auto each = [&](auto&& f) {
        for (std::size_t q = 0; q < parts; ++q)
            for (const auto& c : terms_[q * parts + p]) f(c);
    };
    auto add = [&](std::uint32_t sum, float value) { into[sum % 3][sum / 3] += value; };
    // Terms of sums in order as they come; the others counted per sum.
    std::size_t unordered = 0;
    each([&](const sparse_term& c) {
        if (c.sum & in_order_term) {
            add(c.sum & ~in_order_term, c.value);
        } else {
            terms_per_sum_[c.sum] += terms_per_sum_[c.sum] < 2;
            ++unordered;
        }
    });
    if (unordered == 0) return 0;
    // Of the others, a sum with one term takes it at once (split from the rest without a
    // branch on the count, which is as often 1 as not); the terms of a sum with several are
    // sorted by synapse first, their canonical order, by a radix sort (linear in the terms,
    // where a comparison sort of the microcircuit's tens of thousands of colliding terms a
    // tick took 40% of it). A tick reads each synapse once, so the keys differ and the order
    // is the one a comparison sort by synapse gives.
    auto& single = single_[p];
    auto& colliding = colliding_[p];
    std::size_t terms = 0;
    for (std::size_t q = 0; q < parts; ++q) terms += terms_[q * parts + p].size();
    single.resize(terms);
    colliding.resize(terms);
    std::size_t singles = 0, collisions = 0;
    // Each count is cleared once read: a sum's later terms then read 0, not 1, and go with
    // its first among the colliding ones, and the counts are all 0 again for the next tick.
    each([&](const sparse_term& c) {
        if (c.sum & in_order_term) return;
        const bool alone = std::exchange(terms_per_sum_[c.sum], 0) == 1;
        single[singles] = c;
        colliding[collisions] = c;
        singles += alone;
        collisions += !alone;
    });
    for (std::size_t i = 0; i < singles; ++i) add(single[i].sum, single[i].value);
    colliding.resize(collisions);
    radix_sort<14>(colliding, sorting_[p], end_synapse - first_synapse,
                   [first_synapse](const sparse_term& c) { return c.synapse - first_synapse; });
    for (const auto& c : colliding) add(c.sum, c.value);
    return singles + collisions;
}

void sparse_path::reserve_parts(std::size_t parts) {
    if (terms_.size() < parts * parts) terms_.resize(parts * parts);
    if (colliding_.size() < parts) {
        single_.resize(parts);
        colliding_.resize(parts);
        sorting_.resize(parts);
    }
}

bool sparse_path::add_by_kind(float* const into[3]) {
    unsigned kinds = 0;
    for (const auto& r : reads_) {
        if (r.feeds & (r.feeds - 1)) return false;  // a source of several kinds
        kinds |= r.feeds;
    }
    if ((kinds & (kinds - 1)) == 0) return false;
    std::array<std::uint8_t, 3> kind_of_part{};  // per tick: kept off the heap
    std::size_t parts = 0;
    for (std::uint8_t k = 0; k < 3; ++k)
        if (kinds >> k & 1) kind_of_part[parts++] = k;
    reserve_parts(parts);
    if (reads_of_kind_.size() < parts) reads_of_kind_.resize(parts);
    const auto all_synapses = store_.row_begin(slots_.local());
    std::array<std::size_t, 3> unordered{};
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        const std::uint8_t kind = kind_of_part[p];
        auto& reads = reads_of_kind_[p];
        reads.clear();
        std::size_t words = 0;
        for (const auto& r : reads_)
            if (r.feeds == 1u << kind) {
                reads.push_back(r);
                words += r.most_terms();
            }
        for (std::size_t q = 0; q < parts; ++q) terms_[q * parts + p].clear();
        auto& terms = terms_[p * parts + p];
        terms.resize(words);
        auto* out = terms.data();
        float* const sums = into[kind];
        scan(reads.data(), reads.data() + reads.size(), [&](std::uint32_t synapse, std::uint32_t to, float value) {
            if (to & 4)
                sums[to >> 3] += value;
            else
                *out++ = {synapse, sum_of(to), value};
        });
        terms.resize(static_cast<std::size_t>(out - terms.data()));
        unordered[p] = add_part(p, parts, 0, all_synapses, into);
    });
    for (std::size_t p = 0; p < parts; ++p) counts_.unordered_terms += unordered[p];
    ++counts_.split_ticks;
    ++counts_.kind_split_ticks;
    return true;
}

bool sparse_path::add_terms(tick_t t, neuron_sums& sums, const std::function<void()>& beside) {
    const auto threads = std::min(static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()),
                                  tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
    // After a busy tick this one is likely busy too: its draws start at once on another
    // thread, beside finding the reads as well as the scan (whose second share that thread
    // then takes once the draws are done).
    const bool early = beside && threads > 1 && last_tick_busy_;
    tbb::task_group draws;
    if (early) draws.run(beside);
    std::size_t reading = 0;
    const bool found = find_reads(t, reading);
    const bool busy = found && reading >= split_words && threads > 1 && slots_.local() > 1;
    last_tick_busy_ = busy;
    counts_.target_free_ticks += found && fan_out_.compact_sums_in_order();
    // Otherwise a busy tick's draws start beside its scan, and a light tick's run first.
    const bool drawn_beside = early || (busy && beside);
    if (beside && !early) {
        if (busy)
            draws.run(beside);
        else
            beside();
    }
    float* const into[] = {sums.u.data(), sums.excitatory.data(), sums.inhibitory.data()};
    const bool split = found && add_found(busy ? threads : 1, reading, into);
    draws.wait();
    counts_.draws_beside_ticks += drawn_beside;
    counts_.early_draws_ticks += early;
    last_tick_threaded_ = drawn_beside || split;
    return found;
}

bool sparse_path::add_found(std::size_t threads, std::size_t reading, float* const into[3]) {
    const bool busy = threads > 1;
    if (busy && add_by_kind(into)) return true;
    // Where every sum takes its terms in order (by_source), a split by targets would share
    // only the scan, and handing its terms over costs more than that saves (BENCHMARKS.md,
    // Roofline).
    const std::size_t parts = busy && !fan_out_.by_source() ? std::min<std::size_t>(threads, slots_.local()) : 1;
    reserve_parts(parts);
    if (parts <= 1) {
        auto& terms = terms_[0];
        terms.resize(reading);
        auto* out = terms.data();
        scan(reads_.data(), reads_.data() + reads_.size(), [&](std::uint32_t synapse, std::uint32_t to, float value) {
            if (to & 4)
                into[to & 3][to >> 3] += value;
            else
                *out++ = {synapse, sum_of(to), value};
        });
        terms.resize(static_cast<std::size_t>(out - terms.data()));
        counts_.unordered_terms += add_part(0, 1, 0, store_.row_begin(slots_.local()), into);
        return false;
    }
    split(parts, reading);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t q) {
        // Each part's terms written in place, as many as its reads may give at most.
        const auto first = reads_.data() + read_bounds_[q], last = reads_.data() + read_bounds_[q + 1];
        std::size_t words = 0;
        for (auto r = first; r != last; ++r) words += r->most_terms();
        std::vector<sparse_term*> out(parts);
        for (std::size_t p = 0; p < parts; ++p) {
            auto& terms = terms_[q * parts + p];
            terms.resize(words);
            out[p] = terms.data();
        }
        const auto* const bounds = target_bounds_.data();
        scan(first, last, [&](std::uint32_t synapse, std::uint32_t to, float value) {
            const auto target = to >> 3;
            std::size_t p = 0;
            for (std::size_t k = 1; k < parts; ++k) p += target >= bounds[k];
            *out[p]++ = {synapse, sum_of(to) | (to & 4 ? in_order_term : 0), value};
        });
        for (std::size_t p = 0; p < parts; ++p) {
            auto& terms = terms_[q * parts + p];
            terms.resize(static_cast<std::size_t>(out[p] - terms.data()));
        }
    });
    std::vector<std::size_t> unordered(parts);
    tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        // Part p's synapses are those of its targets' rows.
        unordered[p] = add_part(p, parts, store_.row_begin(target_bounds_[p]), store_.row_begin(target_bounds_[p + 1]), into);
    });
    for (const auto n : unordered) counts_.unordered_terms += n;
    ++counts_.split_ticks;
    return true;
}

}  // namespace dnnc::sim
