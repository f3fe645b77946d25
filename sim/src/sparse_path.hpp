#pragma once
// The sparse path (private to dnnc_sim): a tick's synapse terms added source by source, for
// the sources whose output is non-zero only, through the fan-out index. Adding the terms of
// each target in ascending synapse index is its canonical order, and leaving out exact zeros
// does not change a float sum, so this path and the synapse store's row-by-row summation
// give the same bits. The two must differ: row by row reads every synapse, source by source
// only the active ones, which is what makes sparse activity cheap.
//
// A busy tick's terms are found and added on several threads: each reads a part of the
// fan-out ranges and leaves every term with the thread of its target's range, which then
// adds them, the parts' terms in the order of the parts. Each sum still takes its terms in
// canonical order, so the bits do not depend on the threads.
#include "fan_out.hpp"
#include "history.hpp"
#include "neurons.hpp"
#include "slots.hpp"
#include "synapse_store.hpp"

#include "dnnc/core/uninitialized.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace dnnc::sim {

// Appends the positions of the non-zero values among values[first, n) (-0 counts as zero),
// skipping blocks of sixteen +0 at once: most neurons are silent in most ticks. Stops once
// more than `limit` are found; returns false then.
bool find_nonzero(const float* values, std::size_t first, std::size_t n, std::size_t limit, std::vector<std::uint32_t>& positions);

class sparse_path {
public:
    // The non-zero slots of a history row, found once per row rather than once per delay
    // that reads it. `dense`: more than the path's limit (it then gives way).
    struct row_sources {
        tick_t tick = -1;
        bool dense = false;
        bool complete = false;  // slots holds every non-zero slot (dense or not)
        std::vector<std::uint32_t> slots;
    };

    sparse_path(const history_ring& history, const synapse_store& store, const fan_out_index& fan_out, const slot_layout& slots,
                tick_t remote_delay);

    // The path's limit on active sources (more: the full path runs).
    std::size_t limit() const;
    // The local part of the row of tick t, which is complete once t is computed (for delays
    // shorter than remote_delay, and for outgoing_nonzero). Filled by whoever scans the row
    // first: local_sources (up to the limit), or the engine's spike listing (all of them).
    row_sources& local_row(tick_t t) { return local_of_row_[history_.position(t)]; }
    const row_sources& local_row(tick_t t) const { return local_of_row_[history_.position(t)]; }
    const row_sources& local_sources(tick_t at);
    // After a restore: nothing known of any row.
    void forget_rows();

    // Adds tick t's synapse terms into `sums` (spiking neurons' sums zero before, rate
    // neurons' holding their bias and input); false (no terms added) when activity is too
    // dense to pay off. `beside`, when given, is the tick's work that touches nothing the
    // scan does (the Poisson draws, into buffers of their own): it runs once, also when
    // false is returned, on a thread of its own beside a busy tick's scan and before a light
    // tick's (waking a thread for a light tick costs more than it saves, and a woken thread
    // spins, taking a core from other processes: other nodes on the machine among them).
    // After a busy tick, whose successor is likely busy too, it starts at once, beside
    // finding the reads as well.
    bool add_terms(tick_t t, neuron_sums& sums, const std::function<void()>& beside = {});
    // What the path did so far (engine::sparse_counts).
    const sparse_counts& counts() const { return counts_; }
    // Whether the last add_terms ran on several threads (drew beside the scan, or split it):
    // they are awake then, and the tick's model step may take them too.
    bool last_tick_threaded() const { return last_tick_threaded_; }
    // A tick reading at least this many fan-out words is split, when the task arena has
    // several threads (below it, starting the threads costs more than they save): by kind of
    // sum where each source feeds one kind, else by targets unless sources are visited by
    // rank (fan_out_index::by_source).
    static constexpr std::size_t split_words = 8192;

private:
    // Rows complete when first read (delays of at least remote_delay; in lockstep nothing
    // arrives for them later): their local part as found before, then the peers' part.
    const row_sources* sources(tick_t at, std::uint16_t delay);

    const history_ring& history_;
    const synapse_store& store_;
    const fan_out_index& fan_out_;
    const slot_layout& slots_;
    tick_t remote_delay_;

    std::vector<row_sources> sources_of_row_;  // per ring row
    std::vector<row_sources> local_of_row_;    // per ring row
    // A range of fan-out words this tick reads: words 1: one-word entries [first, mid), then
    // two-word ones to last, each adding value; words 0: the same, the one-word entries
    // packed, all feeding sums of kind `sum`; words 3: three-word entries whose weight
    // times value they add (for a class a rule changes, the weight its synapse's source event
    // of this tick left there: fan_out.hpp); words 2: compact two-word entries, the same
    // with target and synapse taken apart (fan_out.hpp); half_compact: compact one-word
    // entries, their weights in the index's halves (half weights).
    struct fan_read {
        static constexpr std::uint8_t packed = 0, half_compact = 4;
        std::uint64_t first, last, mid;
        float value;
        std::uint8_t words, sum;
        // Whether it reads the same source as the read before (at another delay): a source
        // read at several delays in one tick (by_source, fan_out.hpp) gives its terms in
        // synapse order, each target's in its row's order.
        bool joined = false;
        std::uint8_t feeds = 0;  // of its source (fan_out_index::feeds_of)
        // The most terms it gives (entries; two-word ones counted as two).
        std::uint64_t most_terms() const { return words == packed ? fan_out_index::most_packed(mid - first) + (last - mid) : last - first; }
    };
    std::vector<fan_read> reads_;
    std::vector<std::pair<std::size_t, std::uint32_t>> active_, sorting_active_;  // (delay position, slot)
    std::vector<const float*> row_of_delay_;                     // per delay position: its history row this tick
    // Finds the tick's active sources and their ranges into reads_; false when there are too
    // many for this path. `reading`: the words they hold.
    bool find_reads(tick_t t, std::size_t& reading);
    // A term for a sum: target * 3 + feeds, with in_order_term set for a sum that takes its
    // terms as they come (then `synapse` is not read).
    struct sparse_term {
        std::uint32_t synapse;  // the canonical order
        std::uint32_t sum;
        float value;
    };
    static constexpr std::uint32_t in_order_term = std::uint32_t{1} << 31;
    // Calls emit(synapse, target word, value) for every entry of reads [begin, end), in order
    // but for joined reads, whose terms come together in synapse order. `synapse` is 0 for a
    // term of a sum in order (the target word says so), which is added as it comes.
    template <class Emit>
    void scan(const fan_read* begin, const fan_read* end, Emit&& emit) const;
    // The same for reads [begin, end), joined or not, one after the other. Synapses: whether
    // every term needs its synapse, also where its sum is in order (joined reads sort by it).
    template <bool Synapses, class Emit>
    void scan_reads(const fan_read* begin, const fan_read* end, Emit&& emit) const;
    // Half: std::true_type for half_compact reads, else std::false_type.
    template <bool Synapses, class Half, class Emit>
    void scan_compact(const fan_read& r, Half, Emit&& emit) const;
    // A busy tick in `parts` parts: part q of the reads (by words) leaves its terms into
    // targets of part p in terms_[q * parts + p], in order; then each part p adds its
    // targets' terms, taking part q's before part q + 1's. One part: terms_[0] holds the
    // terms of sums that are not in order, the others are added as they come. Split by kind
    // of sum: part p's terms of sums not in order in terms_[p * parts + p], the rest empty.
    std::vector<uninitialized_vector<sparse_term>> terms_;
    std::vector<std::vector<fan_read>> reads_of_kind_;  // split by kind: per part, its reads
    std::vector<std::uint32_t> target_bounds_;  // part p's targets: [target_bounds_[p], target_bounds_[p + 1])
    std::vector<std::size_t> read_bounds_;      // part q's reads: [read_bounds_[q], read_bounds_[q + 1])
    // Per part: terms of sums with one, and with several (sorted in sorting_).
    std::vector<uninitialized_vector<sparse_term>> single_, colliding_, sorting_;
    sparse_counts counts_;
    bool last_tick_threaded_ = false;
    bool last_tick_busy_ = false;  // the last add_terms read at least split_words on several threads
    void split(std::size_t parts, std::size_t reading);
    // Terms for `parts` parts (terms_, single_, colliding_, sorting_).
    void reserve_parts(std::size_t parts);
    // A busy tick whose sources each feed one kind of sum (excitatory sources and inhibitory
    // ones onto spiking neurons, as a rule), split by kind: each kind's reads in the tick's
    // order on a thread, so a sum takes the terms one thread would give it, in that order.
    // False (nothing done) where a source feeds several kinds, or every source the same one.
    bool add_by_kind(float* const into[3]);
    // Adds the terms of the reads found (find_reads), `reading` words, into the sums `into`
    // (u, excitatory, inhibitory): on one thread, or split for `threads` > 1 (by kind of
    // sum, else by targets); returns whether it split them.
    bool add_found(std::size_t threads, std::size_t reading, float* const into[3]);
    // Adds part p's terms (of `parts`) into the sums `into` (u, excitatory, inhibitory);
    // returns how many were terms of sums not in order. Their synapses: [first_synapse,
    // end_synapse).
    std::size_t add_part(std::size_t p, std::size_t parts, std::uint64_t first_synapse, std::uint64_t end_synapse, float* const into[3]);
    // Terms this tick per sum that is not in order, counted up to 2; all 0 between ticks.
    std::vector<std::uint8_t> terms_per_sum_;
};

}  // namespace dnnc::sim
