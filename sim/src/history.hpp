#pragma once
// The output history (private to dnnc_sim): every value a node's synapses read, for the
// ticks they may still read it.
//
// Layout. Every neuron the engine reads (its own and the remote sources) has a slot (see
// slot_layout): local neuron k has slot k, the remote ones come after. The history is a ring
// of R = longest delay + 1 rows of B floats per slot (one per lane, slot * B + lane): row
// (t mod R) holds tick t. A last row, all zeros, stands for ticks < 0. A remote part of a
// row is cleared when the row is recycled, so values that never arrive (window mode,
// send="nonzero") read as 0.
#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnnc::sim {

class history_ring {
public:
    // Per ring row, what peers wrote into its remote part: the slots of the non-zero values
    // that a sparse delivery wrote (one lane), unless `all` (a dense delivery, a restore,
    // more lanes): then any remote slot may hold a value.
    struct remote_part {
        std::vector<std::uint32_t> written;
        bool all = false;
    };

    // All zeros: `ring` rows of `slots` slots, the first `local` of them this node's.
    void reset(std::size_t ring, std::size_t local, std::size_t slots, std::size_t batch) {
        ring_ = ring;
        local_ = local;
        batch_ = batch;
        width_ = slots * batch;
        values_.assign((ring + 1) * width_, 0.0f);
        remote_parts_.assign(ring, {});
    }

    std::size_t rows() const { return ring_; }
    std::size_t position(tick_t t) const { return static_cast<std::size_t>(t % static_cast<tick_t>(ring_)); }
    float* row(tick_t t) { return t < 0 ? zero_row() : values_.data() + position(t) * width_; }
    const float* row(tick_t t) const { return t < 0 ? values_.data() + ring_ * width_ : values_.data() + position(t) * width_; }

    remote_part& remote_of(tick_t t) { return remote_parts_[position(t)]; }
    const remote_part& remote_of(tick_t t) const { return remote_parts_[position(t)]; }

    // Before the row of tick t is reused: zero what peers wrote into its remote part.
    void clear_remote(tick_t t) {
        float* r = row(t);
        auto& part = remote_of(t);
        if (part.all)
            std::fill(r + local_ * batch_, r + width_, 0.0f);
        else
            for (const auto slot : part.written) r[slot] = 0.0f;
        part.written.clear();
        part.all = false;
    }

    // Every row zero, every remote part open to any value (what a restore then writes).
    void clear_for_restore() {
        std::fill(values_.begin(), values_.end(), 0.0f);
        for (auto& r : remote_parts_) {
            r.written.clear();
            r.all = true;
        }
    }

private:
    float* zero_row() { return values_.data() + ring_ * width_; }

    std::size_t ring_ = 2, local_ = 0, batch_ = 1, width_ = 0;
    std::vector<float> values_;  // (ring + 1) * width; the last row is the zero row
    std::vector<remote_part> remote_parts_;
};

}  // namespace dnnc::sim
