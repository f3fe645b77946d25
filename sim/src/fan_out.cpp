#include "fan_out.hpp"

#include "dnnc/core/bisect.hpp"
#include "dnnc/core/half_weight.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <optional>

namespace dnnc::sim {

namespace {

// The weight of a synapse as the store has it, or drawn again (and with half weights
// rounded as the store would keep it) where the store's own weights are released
// (synapse_store::weights_released): read in ascending synapse order then.
class own_weights {
public:
    own_weights(const synapse_store& store, const redrawn_weights* redrawn) : store_(store) {
        if (store.weights_released()) drawn_.emplace(*redrawn);
    }
    float operator()(const synapse_store::synapse_class& c, std::uint64_t s) {
        if (!drawn_ || !(c.varies & synapse_store::weight_varies)) return store_.weight(c, s);
        const float w = drawn_->weight(s);
        return store_.half_weights() ? half_weight::rounded(w) : w;
    }

private:
    const synapse_store& store_;
    std::optional<redrawn_weights::reader> drawn_;
};

}  // namespace

bool fan_out_index::build(const synapse_store& store, const neuron_block& neurons, const slot_layout& slots,
                          const redrawn_weights* redrawn) {
    clear();
    const std::size_t local = slots.local();
    if (local >= max_sparse_neurons) return false;
    // A sum is in order when its synapses, in canonical order, come from non-decreasing
    // (delay, source rank, class): the order the sparse path adds them in. Where every synapse
    // keeps its own weight and delay (by_source), from non-decreasing source rank: drawn
    // delays then leave a row's order as it was drawn, by source.
    const auto& classes = store.classes();
    by_source_ = classes.size() == 1 && classes[0].varies && !(classes[0].varies & synapse_store::weight_changes);
    const auto& rank = slots.rank();
    target_info_.assign(local, 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, local, 64), [&](const tbb::blocked_range<std::size_t>& r) {
        // (delay, source rank, class), compared without branches.
        struct key {
            std::uint64_t delay_rank = 0;
            std::uint32_t cls = 0;
            bool operator<(const key& o) const { return (delay_rank < o.delay_rank) | ((delay_rank == o.delay_rank) & (cls < o.cls)); }
        };
        own_weights weight(store, redrawn);
        for (auto k = r.begin(); k < r.end(); ++k) {
            const bool split = neurons.is_spiking(k);
            const unsigned fed = split ? 1u << feeds_excitatory | 1u << feeds_inhibitory : 1u << feeds_u;
            unsigned in_order = 7;  // bit `sum`: whether that sum is in order so far
            key latest[3] = {};
            auto s = store.row_begin(k);
            // A row is read until no sum it feeds can still be in order: with drawn delays,
            // a few synapses.
            for (auto run = store.run_begin(k); run < store.run_begin(k + 1) && (in_order & fed) != 0; ++run) {
                const auto cls = store.run(run).cls;
                const auto& c = store.classes()[cls];
                const auto end = store.row_begin(k) + store.run(run).end;
                for (; s < end && (in_order & fed) != 0; ++s) {
                    const int sum = !split ? feeds_u : synapse_store::excitatory(weight(c, s)) ? feeds_excitatory : feeds_inhibitory;
                    const key at{(by_source_ ? 0 : std::uint64_t{store.delay(c, s)} << 32) | rank[store.source(s)], cls};
                    in_order &= ~(unsigned{at < latest[sum]} << sum);
                    latest[sum] = at;
                }
            }
            target_info_[k] = static_cast<std::uint8_t>(in_order | (split ? spiking_bit : 0));
        }
    });
    // Compact entries when a row's positions fit beside the widest target.
    std::uint32_t target_bits = 1;
    while ((std::size_t{1} << target_bits) < local) ++target_bits;
    position_bits_ = 32 - target_bits;
    position_mask_ = (std::uint32_t{1} << position_bits_) - 1;
    std::uint64_t longest = 0;
    for (std::size_t k = 0; k < local; ++k) longest = std::max(longest, store.row_begin(k + 1) - store.row_begin(k));
    compact_ = longest <= std::uint64_t{1} << position_bits_;
    // Half weights beside one-word compact entries, where some class has them.
    half_ = compact_ && store.half_weights() &&
            std::any_of(store.classes().begin(), store.classes().end(), [](const synapse_store::synapse_class& c) {
                return (c.varies & synapse_store::weight_varies) && !(c.varies & synapse_store::weight_changes);
            });
    place(store, redrawn, neurons, slots.size());
    if (compact_ && built_) {
        compact_targets_.resize(local);
        for (std::size_t k = 0; k < local; ++k) compact_targets_[k] = store.row_begin(k) | std::uint64_t{target_info_[k]} << info_shift;
        compact_sums_in_order_ = std::all_of(target_info_.begin(), target_info_.end(),
                                             [](std::uint8_t info) { return (info & spiking_in_order) == spiking_in_order; });
    }
    target_info_ = {};
    return built_;
}

bool fan_out_index::holds_weights(const synapse_store& store) const {
    if (!built_ || !compact_ || half_ != store.half_weights()) return false;
    bool own = false;
    for (const auto& c : store.classes()) {
        if (!(c.varies & synapse_store::weight_varies)) continue;
        if (varying_words(c) == 3) return false;
        own = true;
    }
    return own;
}

namespace {

// f(block, g, o, e) for each segment of slots [begin, end) whose class has the `varies` bit
// (synapse_store::delay_varies or weight_varies): the slot's block, the segment's header at
// block[g], its entries at [o, e) of the block.
template <class Word, class Classes, class F>
void each_segment_that(const std::vector<std::uint64_t>& out_begin, Word* words, const Classes& classes, std::size_t begin,
                       std::size_t end, std::uint8_t varies, F&& f) {
    for (std::size_t slot = begin; slot < end; ++slot) {
        if (out_begin[slot] == out_begin[slot + 1]) continue;
        Word* const block = words + out_begin[slot];
        std::uint32_t o = 1 + 3 * block[0];
        for (std::uint32_t g = 1; g < 1 + 3 * block[0]; g += 3) {
            const std::uint32_t e = block[g + 2];
            if (classes[fan_out_index::class_of(block[g])].varies & varies) f(block, g, o, e);
            o = e;
        }
    }
}

}  // namespace

template <class Set>
void fan_out_index::each_own_weight(const std::vector<synapse_store::synapse_class>& classes, Set&& set) const {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out_begin_.size() - 1, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        each_segment_that(out_begin_, words_.data(), classes, r.begin(), r.end(), synapse_store::weight_varies,
                          [&](const std::uint32_t* block, std::uint32_t g, std::uint32_t o, std::uint32_t e) {
                              const std::uint32_t width = varying_words(classes[class_of(block[g])]);
                              if (width == 3) return;  // not compact: the store's weights were kept
                              const auto at = static_cast<std::uint64_t>(block - words_.data());
                              for (auto w = o; w < e; w += width)
                                  set(compact_synapse(compact_targets_[compact_target(block[w])], block[w]), at + w);
                          });
    });
}

void fan_out_index::write_weights(const std::vector<synapse_store::synapse_class>& classes, float* weights) const {
    each_own_weight(classes, [&](std::uint64_t synapse, std::uint64_t word) {
        std::memcpy(weights + synapse, words_.data() + word + 1, sizeof(float));
    });
}

void fan_out_index::write_weights(const std::vector<synapse_store::synapse_class>& classes, std::uint16_t* weights) const {
    each_own_weight(classes, [&](std::uint64_t synapse, std::uint64_t word) { weights[synapse] = halves_[word]; });
}

void fan_out_index::clear() {
    built_ = false;
    by_source_ = false;
    compact_ = false;
    half_ = false;
    target_info_ = {};
    compact_targets_ = {};
    compact_sums_in_order_ = false;
    out_begin_ = {};
    feeds_of_ = {};
    feeds_ = 0;
    words_ = {};
    halves_ = {};
    delay_dir_ = {};
}

std::size_t fan_out_index::bytes() const {
    return (out_begin_.size() + compact_targets_.size()) * sizeof(std::uint64_t) +
           (words_.size() + delay_dir_.size()) * sizeof(std::uint32_t) + halves_.size() * sizeof(std::uint16_t) + feeds_of_.size();
}

namespace {

// [0, slots) cut into `parts` consecutive ranges of about equal weight, given the slots'
// weights as a prefix sum (prefix[slot]: the weight of the slots before; prefix[slots]: all):
// where each range begins, and `slots` last.
std::vector<std::size_t> cut(const std::vector<std::uint64_t>& prefix, std::size_t slots, std::size_t parts) {
    std::vector<std::size_t> begin(parts + 1, slots);
    begin[0] = 0;
    for (std::size_t i = 1; i < parts; ++i) {
        const std::uint64_t goal = prefix[slots] / parts * i;
        begin[i] = std::max(begin[i - 1], static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.begin() + slots, goal) - prefix.begin()));
    }
    return begin;
}

std::size_t threads() { return static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency())); }

// The packed one-word entries of a segment as they are added (fan_out.hpp): their units,
// written from `units` on when it is given, else only counted.
struct packing {
    std::uint32_t previous = 0, units = 0, count = 0;
    void add(std::uint32_t target, unsigned char* out) {
        auto put = [&](std::uint32_t u) {
            const auto unit = static_cast<std::uint16_t>(u);
            if (out != nullptr) std::memcpy(out + sizeof unit * units, &unit, sizeof unit);
            ++units;
        };
        const std::uint32_t distance = target - previous;
        if (distance < fan_out_index::far_unit) {
            put(distance);
        } else {
            put(fan_out_index::far_unit | target >> 16);
            put(target & 0xffff);
        }
        previous = target;
        ++count;
    }
    // Their words: the count, then the units, two a word.
    std::uint64_t words() const { return count == 0 ? 0 : 1 + (std::uint64_t{units} + 1) / 2; }
};

// An entry's 1 to 3 words, copied word by word: std::copy_n of a run-time count compiles to
// a call of memmove per entry.
void copy_entry(const std::uint32_t* from, std::uint32_t words, std::uint32_t* to) {
    to[0] = from[0];
    if (words > 1) to[1] = from[1];
    if (words > 2) to[2] = from[2];
}

}  // namespace

// The delays of a range's entries while it is placed and sorted: each as its distance from
// the node's shortest delay, in one byte where the node's delays span less than 256 ticks (as
// a rule), else in two.
class fan_out_index::kept_delays {
public:
    kept_delays(std::size_t entries, const std::vector<std::uint16_t>& delays)
        : lowest_(delays.empty() ? 0 : delays.front()), wide_(!delays.empty() && delays.back() - delays.front() > 255),
          bytes_(entries * (wide_ ? 2 : 1)) {}
    void set(std::size_t i, std::uint16_t delay) {
        const auto above = static_cast<std::uint16_t>(delay - lowest_);
        if (wide_)
            std::memcpy(bytes_.data() + 2 * i, &above, sizeof above);
        else
            bytes_[i] = static_cast<std::uint8_t>(above);
    }
    std::uint16_t get(std::size_t i) const {
        std::uint16_t above = bytes_[i];
        if (wide_) std::memcpy(&above, bytes_.data() + 2 * i, sizeof above);
        return static_cast<std::uint16_t>(lowest_ + above);
    }

private:
    std::uint16_t lowest_;
    bool wide_;
    uninitialized_vector<std::uint8_t> bytes_;
};

// Each slot's outgoing synapses: class by class, the runs of that class in row order, first
// those into sums in order, then the others, so a slot's synapses of one class are
// consecutive and each part ascends. The synapses are visited in that order once per range
// of slots (one a thread, or sorted_ranges_a_thread where delays vary), and each range writes
// only its own slots' blocks: the same words whatever the number of threads. A store without
// its own weights has one class, so a range visits its synapses in ascending order, and
// draws their weights again as it goes (redrawn_weights::reader).
void fan_out_index::place(const synapse_store& store, const redrawn_weights* redrawn, const neuron_block& neurons, std::size_t slots) {
    const std::uint64_t total = store.size();
    const auto& classes = store.classes();
    constexpr std::uint32_t held_words = std::uint32_t{1} << 30;  // a held entry's words, above its class
    if (classes.size() >= held_words) return;  // not built: the full path only
    const std::size_t local = target_info_.size();
    struct placed {
        std::uint64_t first, last;
        std::uint32_t target, to;  // the target word of the run's synapses
    };
    std::vector<std::uint64_t> class_begin(classes.size() + 1, 0);
    for (const auto& r : store.runs()) ++class_begin[r.cls + 1];
    for (std::size_t c = 0; c < classes.size(); ++c) class_begin[c + 1] += class_begin[c];
    std::vector<placed> by_class(store.runs().size());
    {
        std::vector<std::uint64_t> cursor(class_begin.begin(), class_begin.end() - 1);
        for (std::size_t k = 0; k < local; ++k) {
            auto s = store.row_begin(k);
            const bool split = neurons.is_spiking(k);
            for (auto r = store.run_begin(k); r < store.run_begin(k + 1); ++r) {
                const auto end = store.row_begin(k) + store.run(r).end;
                const auto& c = classes[store.run(r).cls];
                // A class that varies sets each synapse's target word itself (below).
                const std::uint32_t sum = !split ? feeds_u : synapse_store::excitatory(c.weight) ? feeds_excitatory : feeds_inhibitory;
                const std::uint32_t in_order = c.varies ? 0 : (target_info_[k] >> sum) & 1;
                by_class[cursor[store.run(r).cls]++] = {s, end, static_cast<std::uint32_t>(k),
                                                        static_cast<std::uint32_t>(k) << 3 | in_order << 2 | sum};
                s = end;
            }
        }
    }
    // The class word of each class's segments: packed when all its one-word entries feed one
    // kind of sum (fan_out.hpp).
    std::vector<std::uint32_t> class_word(classes.size());
    {
        constexpr std::uint8_t none = 4, mixed = 3;
        std::vector<std::uint8_t> sum(classes.size(), none);
        for (std::uint32_t c = 0; c < classes.size(); ++c)
            for (auto p = class_begin[c]; p < class_begin[c + 1]; ++p)
                if ((by_class[p].to & 4) && by_class[p].first < by_class[p].last) {
                    const auto kind = static_cast<std::uint8_t>(by_class[p].to & 3);
                    sum[c] = sum[c] == none || sum[c] == kind ? kind : mixed;
                }
        const bool addressable = classes.size() <= (std::size_t{1} << sum_shift);
        for (std::uint32_t c = 0; c < classes.size(); ++c)
            class_word[c] = addressable && !classes[c].varies && sum[c] < mixed ? c | packed_bit | std::uint32_t{sum[c]} << sum_shift : c;
    }
    auto is_packed = [&](std::uint32_t c, std::uint32_t words) { return words == 1 && packed(class_word[c]); };
    // Runs whose sources ascend (a projection's, where slots follow the neurons' order, as on
    // one node): a range finds its part of one by binary search instead of reading it all.
    std::vector<std::uint8_t> ascending(by_class.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, by_class.size(), 4096), [&](const tbb::blocked_range<std::size_t>& r) {
        for (auto p = r.begin(); p < r.end(); ++p) {
            bool up = true;
            for (auto s = by_class[p].first; up && s + 1 < by_class[p].last; ++s) up = store.source(s) <= store.source(s + 1);
            ascending[p] = up;
        }
    });
    // f(class, placed run, synapse, slot, words) for the synapses from slots [lo, hi): class
    // by class, the one-word entries first.
    auto each = [&](std::size_t lo, std::size_t hi, auto&& f) {
        for (std::uint32_t c = 0; c < classes.size(); ++c)
            for (std::uint32_t words = 1; words <= 3; ++words)
                for (auto p = class_begin[c]; p < class_begin[c + 1]; ++p) {
                    const std::uint32_t w = classes[c].varies ? varying_words(classes[c]) : !(by_class[p].to & 4) ? 2 : 1;
                    if (w != words) continue;
                    const auto& run = by_class[p];
                    if (ascending[p]) {
                        const auto from = first_not_before(run.first, run.last, [&](std::uint64_t s) { return store.source(s) < lo; });
                        for (auto s = from; s < run.last; ++s) {
                            const std::size_t slot = store.source(s);
                            if (slot >= hi) break;
                            f(c, run, s, slot, words);
                        }
                        continue;
                    }
                    for (auto s = run.first; s < run.last; ++s)
                        if (const std::size_t slot = store.source(s); slot >= lo && slot < hi) f(c, run, s, slot, words);
                }
    };
    // Segments and words per slot first: a block holds a count, its segments, its synapses.
    out_begin_.assign(slots + 1, 0);
    std::vector<std::uint32_t> latest(slots, no_slot), segments(slots, 0);  // while counting
    std::vector<std::size_t> even(threads() + 1);
    for (std::size_t i = 0; i < even.size(); ++i) even[i] = slots * i / (even.size() - 1);
    std::vector<packing> packs(slots);
    std::atomic<bool> indexed{false};
    // Where every synapse is of one class that varies (drawn weights make such a store), every
    // entry has that class's width and a slot has one segment: its words follow from the
    // store's count of its synapses, without a visit to each.
    if (classes.size() == 1 && classes[0].varies && store.counted()) {
        const std::uint32_t width = varying_words(classes[0]);
        for (std::size_t slot = 0; slot < slots; ++slot) {
            const std::uint64_t n = store.synapses_from(slot);
            out_begin_[slot + 1] = n * width;
            segments[slot] = n > 0;
            if (n > 0) indexed = true;
        }
    } else {
        tbb::parallel_for(std::size_t{0}, even.size() - 1, [&](std::size_t range) {
            const std::size_t lo = even[range], hi = even[range + 1];
            bool two_words = false;
            auto close = [&](std::size_t slot) {
                out_begin_[slot + 1] += packs[slot].words();
                packs[slot] = {};
            };
            each(lo, hi, [&](std::uint32_t c, const placed& p, std::uint64_t, std::size_t slot, std::uint32_t words) {
                if (latest[slot] != c) {
                    close(slot);
                    latest[slot] = c;
                    ++segments[slot];
                }
                if (is_packed(c, words)) {
                    packs[slot].add(p.target, nullptr);
                    return;
                }
                close(slot);
                out_begin_[slot + 1] += words;
                two_words |= words >= 2 || classes[c].varies;  // the entry leads to its synapse
            });
            for (auto slot = lo; slot < hi; ++slot) close(slot);
            if (two_words) indexed = true;
        });
    }
    packs = {};
    // Block sizes, then offsets (out_begin[slot + 1] held the words of slot's synapses).
    std::uint64_t offset = 0;
    bool fits = !indexed || total <= std::numeric_limits<std::uint32_t>::max();
    for (std::size_t slot = 0; slot < slots; ++slot) {
        const auto words = out_begin_[slot + 1];
        out_begin_[slot] = offset;
        const auto block = words ? 1 + 3 * std::uint64_t{segments[slot]} + words : 0;
        fits &= block <= std::numeric_limits<std::uint32_t>::max();
        offset += block;
    }
    if (!fits) {
        out_begin_ = {};
        return;
    }
    out_begin_[slots] = offset;
    // A segment's header (class, where its one-word entries end, where it ends) is finished
    // when the slot's next segment starts, or after the last synapse. What a synapse needs of
    // its slot lies in one place: the index is far larger than the caches, and every synapse
    // writes where its slot's last one left off.
    struct slot_cursor {
        std::uint64_t next = 0;          // the word the slot's next entry goes to
        std::uint32_t latest = no_slot;  // the class of its segment being written
        std::uint32_t one_words = 0;     // the words of its one-word entries in that segment
        std::uint64_t region = 0;        // where its packed entries start, while `pack` has some
        packing pack;
    };
    std::vector<slot_cursor> cursor(slots);
    std::vector<std::uint64_t> segment_at(slots);
    std::vector<std::uint32_t> segment_start(slots);
    feeds_of_.assign(slots, 0);
    words_.resize(offset);  // uninitialised: each range's thread touches its part first
    if (half_) halves_.resize(offset);
    auto close_region = [&](std::size_t slot) {
        auto& at = cursor[slot];
        if (at.pack.count == 0) return;
        words_[at.region] = at.pack.count;
        if (at.pack.units % 2 != 0) std::memset(reinterpret_cast<unsigned char*>(words_.data() + at.region + 1) + 2 * at.pack.units, 0, 2);
        at.next = at.region + at.pack.words();
        at.one_words = static_cast<std::uint32_t>(at.pack.words());
        at.pack = {};
    };
    auto finish_segment = [&](std::size_t slot) {
        close_region(slot);
        const auto header = segment_at[slot] - 3;
        words_[header + 1] = segment_start[slot] + cursor[slot].one_words;
        words_[header + 2] = static_cast<std::uint32_t>(cursor[slot].next - out_begin_[slot]);
    };
    // Where delays vary, each range sorts its segments by delay once they are placed, reading
    // the delays that placing kept beside the entries (a store's delay read at each entry's
    // synapse is a miss at a random place in it). Ranges smaller than one a thread keep those
    // delays to a few hundredths of the index's size, for one more read of the runs whose
    // sources do not ascend each (`each`).
    bool delays_vary = false;
    for (const auto& c : classes) delays_vary |= (c.varies & synapse_store::delay_varies) != 0;
    const std::vector<std::size_t> range_begin = cut(out_begin_, slots, threads() * (delays_vary ? sorted_ranges_a_thread : 1));
    std::vector<std::vector<std::uint32_t>> directories(range_begin.size() - 1);
    tbb::parallel_for(std::size_t{0}, range_begin.size() - 1, [&](std::size_t range) {
        const std::size_t lo = range_begin[range], hi = range_begin[range + 1];
        for (auto slot = lo; slot < hi; ++slot) {
            if (out_begin_[slot] == out_begin_[slot + 1]) continue;
            words_[out_begin_[slot]] = segments[slot];
            segment_at[slot] = out_begin_[slot] + 1;
            cursor[slot].next = out_begin_[slot] + 1 + 3 * std::uint64_t{segments[slot]};
        }
        // An entry's words are known when its synapse is visited; where they go is not
        // near where its neighbours in the store go. So the entries are held back by group of
        // `group_slots` slots and written a group at a time, each slot's in the order they
        // came: a group's blocks take a few lines each, not a line per entry.
        struct held {
            std::uint32_t slot, class_words;  // words << 30 | class
            std::uint32_t word[3];            // packed: the target
            std::uint16_t delay;              // where delays vary
            std::uint16_t half;               // a one-word compact entry's weight
        };
        // An entry's delay at (its first word - base) >> delay_stride_shift(): entries whose delays
        // vary have at least that many words.
        own_weights weight(store, redrawn);
        const std::uint64_t base = out_begin_[lo];
        kept_delays delay_at(delays_vary ? ((out_begin_[hi] - base) >> delay_stride_shift()) + 1 : 0, store.delays());
        constexpr std::size_t group_slots = 256, group_held = 4096;
        const std::size_t groups = (hi - lo + group_slots - 1) / group_slots;
        std::vector<held> kept(groups * group_held);
        std::vector<std::uint32_t> kept_in(groups, 0);
        auto put = [&](const held& e) {
            const std::size_t slot = e.slot;
            const std::uint32_t c = e.class_words & (held_words - 1), words = e.class_words / held_words;
            auto& at = cursor[slot];
            if (at.latest != c) {
                if (at.latest != no_slot) finish_segment(slot);
                at.latest = c;
                at.one_words = 0;
                words_[segment_at[slot]] = class_word[c];
                segment_at[slot] += 3;
                segment_start[slot] = static_cast<std::uint32_t>(at.next - out_begin_[slot]);
            }
            if (is_packed(c, words)) {
                if (at.pack.count == 0) at.region = at.next;
                at.pack.add(e.word[0], reinterpret_cast<unsigned char*>(words_.data() + at.region + 1));
                return;
            }
            close_region(slot);
            if (classes[c].varies & synapse_store::delay_varies) delay_at.set((at.next - base) >> delay_stride_shift(), e.delay);
            copy_entry(e.word, words, words_.data() + at.next);
            if (words == 1 && classes[c].varies) halves_[at.next] = e.half;
            at.one_words += words == 1 && !classes[c].varies;
            at.next += words;
        };
        auto write_group = [&](std::size_t g) {
            std::for_each(kept.data() + g * group_held, kept.data() + g * group_held + kept_in[g], put);
            kept_in[g] = 0;
        };
        each(lo, hi, [&](std::uint32_t c, const placed& p, std::uint64_t s, std::size_t slot, std::uint32_t words) {
            const std::size_t g = (slot - lo) / group_slots;
            held& e = kept[g * group_held + kept_in[g]];
            e.slot = static_cast<std::uint32_t>(slot);
            e.class_words = words * held_words | c;
            std::uint32_t to = p.to;  // the entry's target word
            if (is_packed(c, words)) {
                e.word[0] = p.target;
            } else if (classes[c].varies) {
                // (synapse, target word, weight), or compact: (target and position, weight), or
                // with half weights (target and position) and the weight's 16 bits apart.
                const float w = weight(classes[c], s);
                to = target_word(p.target, target_info_[p.target], w);
                if (words < 3) {
                    e.word[0] = p.target << position_bits_ | static_cast<std::uint32_t>(s - store.row_begin(p.target));
                } else {
                    e.word[0] = static_cast<std::uint32_t>(s);
                    e.word[1] = to;
                }
                if (words == 1)
                    e.half = half_weight::encode(w);
                else
                    std::memcpy(&e.word[words - 1], &w, sizeof w);
                if (classes[c].varies & synapse_store::delay_varies) e.delay = store.own_delay(s);
            } else {
                if (words == 2) e.word[0] = static_cast<std::uint32_t>(s);
                e.word[words - 1] = p.to;
            }
            feeds_of_[slot] |= static_cast<std::uint8_t>(1u << (to & 3));
            if (++kept_in[g] == group_held) write_group(g);
        });
        for (std::size_t g = 0; g < groups; ++g) write_group(g);
        for (auto slot = lo; slot < hi; ++slot)
            if (cursor[slot].latest != no_slot) finish_segment(slot);
        if (delays_vary) sort_by_delay(classes, lo, hi, delay_at, base, directories[range]);
    });
    built_ = true;
    for (const auto f : feeds_of_) feeds_ |= f;
    if ((feeds_ & (feeds_ - 1)) == 0) feeds_of_ = {};
    if (delays_vary) join_directories(classes, slots, directories);
}

// In a segment of a class whose synapses keep their own delay, orders the entries by delay
// (stable: ascending synapse within one delay, the order the sparse path needs), and lists
// the segment's delays with where each one's entries end (delay_dir), so that a tick reads a
// source's synapses of one delay as one range, found by a binary search in a few words,
// instead of filtering all of them once for each delay. A counting sort over the segment's
// range of delays (a few dozen ticks as a rule). The segments' directories go to `dir` in
// order; a segment's `mid` word holds its directory's size for now.
void fan_out_index::sort_by_delay(const std::vector<synapse_store::synapse_class>& classes, std::size_t lo, std::size_t hi,
                                  const kept_delays& delay_at, std::uint64_t base, std::vector<std::uint32_t>& dir) {
    std::vector<std::uint16_t> delays, sorted_halves;
    std::vector<std::uint32_t> at, sorted;
    each_segment_that(out_begin_, words_.data(), classes, lo, hi, synapse_store::delay_varies, [&](std::uint32_t* block, std::uint32_t g, std::uint32_t o, std::uint32_t e) {
        const std::uint32_t width = varying_words(classes[class_of(block[g])]);
        const std::uint64_t first = static_cast<std::uint64_t>(block - words_.data()) + o - base;
        delays.clear();
        for (std::uint32_t w = 0; w < e - o; w += width) delays.push_back(delay_at.get((first + w) >> delay_stride_shift()));
        const auto [lowest, highest] = std::minmax_element(delays.begin(), delays.end());
        const std::uint16_t low = o == e ? 0 : *lowest;
        at.assign(o == e ? 1 : static_cast<std::size_t>(*highest - low) + 2, 0);
        for (const auto d : delays) ++at[d - low + 1];
        const auto size_at = dir.size();
        dir.push_back(0);
        for (std::size_t k = 1; k < at.size(); ++k) {
            if (at[k] != 0) dir.insert(dir.end(), {static_cast<std::uint32_t>(low + k - 1), o + width * (at[k - 1] + at[k])});
            at[k] += at[k - 1];
        }
        dir[size_at] = static_cast<std::uint32_t>((dir.size() - size_at - 1) / 2);
        block[g + 1] = static_cast<std::uint32_t>(dir.size() - size_at);
        sorted.resize(e - o);
        // A one-word entry's weight moves with it (half weights).
        std::uint16_t* const halves = width == 1 ? halves_.data() + (block - words_.data()) + o : nullptr;
        if (halves) sorted_halves.resize(e - o);
        for (std::size_t n = 0; n < delays.size(); ++n) {
            const std::uint32_t to = at[delays[n] - low]++;
            copy_entry(block + o + width * n, width, sorted.data() + width * to);
            if (halves) sorted_halves[to] = halves[n];
        }
        std::copy(sorted.begin(), sorted.end(), block + o);
        if (halves) std::copy(sorted_halves.begin(), sorted_halves.end(), halves);
    });
}

// The directories' offsets, slot by slot (each segment's `mid` word), and delay_dir: the
// ranges' directories one after the other.
void fan_out_index::join_directories(const std::vector<synapse_store::synapse_class>& classes, std::size_t slots,
                                     std::vector<std::vector<std::uint32_t>>& directories) {
    std::uint64_t words = 0;
    each_segment_that(out_begin_, words_.data(), classes, 0, slots, synapse_store::delay_varies, [&](std::uint32_t* block, std::uint32_t g, std::uint32_t, std::uint32_t) {
        const std::uint64_t n = block[g + 1];
        block[g + 1] = static_cast<std::uint32_t>(std::min<std::uint64_t>(words, std::numeric_limits<std::uint32_t>::max()));
        words += n;
    });
    if (words > std::numeric_limits<std::uint32_t>::max()) {
        clear();  // a directory beyond 32-bit offsets: the full path only
        return;
    }
    delay_dir_.clear();
    delay_dir_.reserve(words);
    for (auto& d : directories) {
        delay_dir_.insert(delay_dir_.end(), d.begin(), d.end());
        d = {};
    }
}

}  // namespace dnnc::sim
