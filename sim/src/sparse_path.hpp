#pragma once
// The sparse path (private to dnnc_sim): a tick's synapse terms added source by source, for
// the sources whose output is non-zero only, through the fan-out index. Adding the terms of
// each target in ascending synapse index is its canonical order, and leaving out exact zeros
// does not change a float sum, so this path and the synapse store's row-by-row summation
// give the same bits. The two must differ: row by row reads every synapse, source by source
// only the active ones, which is what makes sparse activity cheap.
#include "fan_out.hpp"
#include "history.hpp"
#include "neurons.hpp"
#include "slots.hpp"
#include "synapse_store.hpp"

#include <cstdint>
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
    // neurons' holding their bias and input); false (nothing done) when activity is too
    // dense to pay off.
    bool add_terms(tick_t t, neuron_sums& sums);

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
    // two-word ones to last, each adding value; words 3: three-word entries whose weight
    // times value they add (for a class a rule changes, the weight its synapse's source event
    // of this tick left there: fan_out.hpp).
    struct fan_read {
        std::uint64_t first, last, mid;
        float value;
        std::uint8_t words;
    };
    std::vector<fan_read> reads_;
    std::vector<std::pair<std::size_t, std::uint32_t>> active_;  // (delay position, slot)
    struct sparse_term {
        std::uint32_t synapse;  // the canonical order
        std::uint32_t sum;      // the sum it adds to: target * 3 + feeds
        float value;
    };
    std::vector<sparse_term> contributions_, colliding_, sorting_;
    // Sorts colliding_ by synapse (sorting_ its scratch): the canonical order of a sum's terms.
    void sort_colliding_by_synapse();
    // Terms this tick per sum that is not in order, counted up to 2; all 0 between ticks.
    std::vector<std::uint8_t> terms_per_sum_;
};

}  // namespace dnnc::sim
