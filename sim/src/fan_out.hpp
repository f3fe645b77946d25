#pragma once
// The fan-out index (private to dnnc_sim): each slot's outgoing synapses, derived from the
// synapse store for the sparse path (sparse_path.hpp), which reads only the synapses of the
// sources that are active in a tick. Rebuilt from the store whenever the store changes.
//
// fan_out[out_begin[slot] ... out_begin[slot + 1]) in 4-byte words, in segments of one class,
// by ascending class. A slot's block starts with its segments (one word: their count n; then
// n triples of words: the class, where its one-word entries end and where the segment ends,
// counted in words from the block's start), so one read of out_begin finds everything. A
// segment holds first, in row order, its synapses into sums that are in order, one word each
// (the target word below), then, in row order, the others, two words each (synapse index,
// target word): the index is what sorts a sum's terms into canonical order. A class whose
// weights vary has three-word entries, or compact two-word ones (below), and no others
// (synapse index, target word, the synapse's weight:
// a copy of the store's, made when the index is built, so that the sparse path reads no
// per-synapse array of the store; in a class a rule changes, the weight its source's last
// spike was delivered with, written by that spike's event: plasticity.hpp, set_weight);
// when its delays vary they are sorted by delay, and the
// segment's `mid` word is where its directory starts in delay_dir. Built only for one lane
// (batched ticks never take the sparse path).
//
// A target word is target neuron << 3 | in_order << 2 | feeds. in_order: whether the sum it
// feeds gets its terms in canonical order as the sparse path makes them (sources by delay,
// then rank, then class, then row order; by_source(): sources by rank, a source read at
// several delays in one tick giving its terms in row order): then they are added as they come.
//
// Packed segments: where every one-word entry of a class feeds the same kind of sum (the
// class's targets are all spiking, or all rate neurons), the one-word entries of its
// segments are packed, and the segment's class word says so (packed_bit, and the kind of sum
// above sum_shift). Their words [o, mid) then hold the entries' count, then 16-bit units,
// two a word, the last word padded: the targets, ascending in row order, each as its
// distance from the one before (from 0 for the first) when below 2^15, else as two units,
// 2^15 | its high bits and its low 16 bits. A synapse into a sum in order thus costs 2 bytes
// rather than 4 in nearly every network (the microcircuit's sources reach a few thousand of
// tens of thousands of targets). The two-word entries that follow are as above.
//
// Compact entries: where every local neuron's row is short enough (compact() below), the
// entries of a class whose weights vary but no rule changes are two words rather than three:
// the target and the synapse's position in its row in one word (target << position_bits |
// position; the synapse is the row's first plus the position), then the weight. The target
// word is rebuilt from the target's kind of neuron and the weight's sign (target_word()), as
// it was built. So a synapse with its own weight and delay costs 8 bytes of fan-out, not 12.
// With half weights (synapse_store::half_weights) a compact entry is its one word, and its
// weight's 16 bits lie in halves() at the same position as that word: 6 bytes a synapse.
#include "neurons.hpp"
#include "row_sources.hpp"
#include "slots.hpp"
#include "synapse_store.hpp"

#include "dnnc/core/uninitialized.hpp"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace dnnc::sim {

class fan_out_index {
public:
    enum feeds : std::uint8_t { feeds_u, feeds_excitatory, feeds_inhibitory };
    static constexpr std::size_t max_sparse_neurons = std::size_t{1} << 29;

    // Builds the index of `store`'s synapses into `neurons`; false (and empty) when the index
    // cannot be addressed in 32-bit words, or the node has too many neurons for target words.
    // A store whose own weights are released (synapse_store::weights_released) is read with
    // them drawn again by `redrawn`.
    bool build(const synapse_store& store, const neuron_block& neurons, const slot_layout& slots,
               const redrawn_weights* redrawn = nullptr);
    bool built() const { return built_; }
    // Whether the sparse path visits a tick's sources by rank, each with all the delays it is
    // read at, rather than delay by delay: where the store's one class keeps every synapse's
    // own weight and delay and no rule changes them (every entry then names its synapse).
    // Drawn delays break a row's order by delay, not its order by source.
    bool by_source() const { return by_source_; }
    // The kinds of sum a slot's synapses feed (bit f: feeds f; for every slot, where all
    // feed one kind): the terms of sources that each feed one kind may be added on a thread a
    // kind (sparse_path.hpp).
    std::uint8_t feeds_of(std::size_t slot) const { return feeds_of_.empty() ? feeds_ : feeds_of_[slot]; }

    // A segment's class word: its class, whether its one-word entries are packed and into
    // which kind of sum.
    static constexpr std::uint32_t packed_bit = std::uint32_t{1} << 31;
    static constexpr int sum_shift = 29;
    static constexpr std::uint32_t far_unit = std::uint32_t{1} << 15;  // a packed unit at or above it: a target's high bits
    static std::uint32_t class_of(std::uint32_t class_word) { return class_word & ((std::uint32_t{1} << sum_shift) - 1); }
    static bool packed(std::uint32_t class_word) { return (class_word & packed_bit) != 0; }
    static std::uint32_t packed_sum(std::uint32_t class_word) { return (class_word >> sum_shift) & 3; }
    // f(target) for each entry of the packed words from `region` (its count first), in order.
    template <class F>
    static void for_each_packed(const std::uint32_t* region, F&& f) {
        const auto* units = reinterpret_cast<const unsigned char*>(region + 1);
        auto unit = [&units] {
            std::uint16_t u;
            std::memcpy(&u, units, sizeof u);
            units += sizeof u;
            return std::uint32_t{u};
        };
        std::uint32_t target = 0;
        for (std::uint32_t n = region[0]; n > 0; --n) {
            const std::uint32_t u = unit();
            target = u < far_unit ? target + u : (u & (far_unit - 1)) << 16 | unit();
            f(target);
        }
    }
    // The most entries `words` packed words hold.
    static std::uint64_t most_packed(std::uint64_t words) { return words == 0 ? 0 : 2 * (words - 1); }

    // Compact entries (above): whether they are used, the words of an entry of class c, and the
    // target in an entry's first word.
    bool compact() const { return compact_; }
    std::uint32_t varying_words(const synapse_store::synapse_class& c) const {
        return compact_ && !(c.varies & synapse_store::weight_changes) ? (half_ ? 1 : 2) : 3;
    }
    // Whether the compact entries hold the own weight of every synapse of `store` (every class
    // whose weights vary has them, in 32 bits, or in 16 beside the entries with half
    // weights): then the store may let its copy go (synapse_store::release_weights), and
    // write_weights gives it back, into `weights` by synapse index (half weights: their 16
    // bits).
    bool holds_weights(const synapse_store& store) const;
    void write_weights(const std::vector<synapse_store::synapse_class>& classes, float* weights) const;
    void write_weights(const std::vector<synapse_store::synapse_class>& classes, std::uint16_t* weights) const;
    // With half weights, a one-word compact entry's weight, by the position of its word.
    const std::uint16_t* halves() const { return halves_.data(); }
    std::uint32_t compact_target(std::uint32_t word) const { return word >> position_bits_; }
    // What a compact entry needs of its target, in one word: where its row begins (the low
    // bits) and target_info (info_shift up).
    static constexpr int info_shift = 56;
    const std::uint64_t* compact_targets() const { return compact_targets_.data(); }
    // A compact entry's synapse and target word, given its target's compact_targets word.
    std::uint32_t compact_synapse(std::uint64_t target, std::uint32_t word) const {
        return static_cast<std::uint32_t>((target & ((std::uint64_t{1} << info_shift) - 1)) + (word & position_mask_));
    }
    static std::uint32_t target_word(std::uint32_t target, std::uint8_t info, float weight) {
        const std::uint32_t sum = !(info & spiking_bit) ? feeds_u : synapse_store::excitatory(weight) ? feeds_excitatory : feeds_inhibitory;
        return target << 3 | ((info >> sum) & 1) << 2 | sum;
    }
    // Whether every local neuron is spiking with both its sums in order: then a compact
    // entry's target word is in_order_target_word, without its target's compact_targets word.
    bool compact_sums_in_order() const { return compact_sums_in_order_; }
    static std::uint32_t in_order_target_word(std::uint32_t target, float weight) {
        return target_word(target, spiking_in_order, weight);
    }

    std::size_t words() const { return words_.size(); }
    const std::uint32_t* data() const { return words_.data(); }
    std::uint64_t begin(std::size_t slot) const { return out_begin_[slot]; }
    std::uint64_t end(std::size_t slot) const { return out_begin_[slot + 1]; }
    void prefetch_bounds(std::size_t slot) const { __builtin_prefetch(out_begin_.data() + slot); }
    // The weight word of the three-word entry at `entry` (its first word).
    void set_weight(std::uint64_t entry, float weight) { std::memcpy(&words_[entry + 2], &weight, sizeof weight); }
    // Per segment of a class whose delays vary, from the offset in its `mid` word: [n, (delay,
    // end) x n], the distinct delays of its entries, ascending, and where each one's entries
    // end (counted in words from the block's start).
    const std::uint32_t* delay_directory(std::uint32_t offset) const { return delay_dir_.data() + offset; }
    // Asks for the first lines of the directory at `mid` (about 30 delays' worth).
    void prefetch_directory(std::uint32_t mid) const {
        const std::uint32_t* const dir = delay_dir_.data() + mid;
        for (int line = 0; line < 4; ++line) __builtin_prefetch(dir + 16 * line);
    }
    // In a segment of a class whose delays vary (entries from word `o` of its slot's block,
    // directory at `mid`), the words [first, last) of its entries of delay d (first == last:
    // none), counted from the block's start.
    std::pair<std::uint32_t, std::uint32_t> delay_range(std::uint32_t o, std::uint32_t mid, std::uint16_t d) const {
        // [n, (delay, end) x n], delays ascending; a delay's entries end at its end.
        const std::uint32_t* const dir = delay_dir_.data() + mid;
        std::uint32_t lo = 0, n = dir[0];
        while (n > 0) {
            const std::uint32_t half = n / 2;
            if (dir[1 + 2 * (lo + half)] < d) {
                lo += half + 1;
                n -= half + 1;
            } else {
                n = half;
            }
        }
        if (lo < dir[0] && dir[1 + 2 * lo] == d) return {lo == 0 ? o : dir[2 * lo], dir[2 + 2 * lo]};
        return {0, 0};
    }
    std::size_t bytes() const;

private:
    // Ranges of slots a thread when delays vary (each range one more read of the store's
    // runs whose sources do not ascend).
    static constexpr std::size_t sorted_ranges_a_thread = 4;
    class kept_delays;
    // The fewest words of an entry whose delays vary, 1 or 2, as a shift: placing keeps a delay
    // per that many (a shift, as a division per entry showed in the build's profile).
    int delay_stride_shift() const { return half_ ? 0 : 1; }
    void place(const synapse_store& store, const redrawn_weights* redrawn, const neuron_block& neurons, std::size_t slots);
    // set(synapse, word) for each compact entry of a class whose weights vary, `word` where
    // it starts in words_; slots on several threads.
    template <class Set>
    void each_own_weight(const std::vector<synapse_store::synapse_class>& classes, Set&& set) const;
    void sort_by_delay(const std::vector<synapse_store::synapse_class>& classes, std::size_t lo, std::size_t hi,
                       const kept_delays& delay_at, std::uint64_t base, std::vector<std::uint32_t>& dir);
    void join_directories(const std::vector<synapse_store::synapse_class>& classes, std::size_t slots,
                          std::vector<std::vector<std::uint32_t>>& directories);
    void clear();

    bool built_ = false;
    bool by_source_ = false;
    // While building: per local neuron, bit f: sum f is in order; spiking_bit: a spiking
    // neuron.
    static constexpr std::uint8_t spiking_bit = 8;
    // A spiking neuron with both its sums in order.
    static constexpr std::uint8_t spiking_in_order = spiking_bit | 1u << feeds_excitatory | 1u << feeds_inhibitory;
    std::vector<std::uint8_t> target_info_;
    std::vector<std::uint64_t> compact_targets_;  // per local neuron, for compact entries only
    bool compact_sums_in_order_ = false;
    bool compact_ = false;
    bool half_ = false;  // compact entries of one word, their weights in halves_
    std::uint32_t position_bits_ = 0, position_mask_ = 0;
    std::vector<std::uint64_t> out_begin_;
    std::vector<std::uint8_t> feeds_of_;  // per slot; empty where the index feeds one kind
    std::uint8_t feeds_ = 0;              // the kinds the index feeds
    uninitialized_vector<std::uint32_t> words_;  // every word written by place()
    uninitialized_vector<std::uint16_t> halves_;  // beside words_, written at compact entries only
    std::vector<std::uint32_t> delay_dir_;
};

}  // namespace dnnc::sim
