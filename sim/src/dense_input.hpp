#pragma once
// Dense projections on a node (private to dnnc_sim): one LibTorch product per projection and
// tick, for all lanes (X is sources x lanes, Y targets x lanes), summed per local neuron.
// A neuron's dense sum joins its sums after its synapses; for a spiking model by the sign of
// the sum.
#include "history.hpp"
#include "slots.hpp"

#include "dnnc/sim/torch_backend.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dnnc::sim {

class dense_input {
public:
    // The blocks of `specs`; their sources get slots (a new one for a neuron no synapse
    // reads); their targets must be local.
    dense_input(const std::vector<dense_spec>& specs, slot_layout& slots, std::size_t batch, const std::string& device)
        : batch_(batch) {
        for (const auto& d : specs) {
            if (d.weights.size() != d.sources.size() * d.targets.size())
                throw usage_error("engine spec: a dense block's weights do not match its shape");
            if (d.delay < 1) throw usage_error("engine spec: delay must be at least 1");
            max_delay_ = std::max(max_delay_, d.delay);
            std::vector<std::uint32_t> sources, targets;
            for (auto g : d.sources) sources.push_back(slots.slot_for(g));
            for (auto g : d.targets) targets.push_back(slots.local_slot(g));
            if (!d.rows.empty() && d.rows.size() != d.targets.size())
                throw usage_error("engine spec: a dense block needs one row index per target");
            blocks_.push_back({dense_matrix(d.weights.data(), d.targets.size(), d.sources.size(), device, d.rows, d.projection_rows),
                               std::move(sources), std::move(targets), d.delay, std::vector<float>(d.sources.size() * batch),
                               std::vector<float>(d.targets.size() * batch)});
        }
        sums_.assign(slots.local() * batch, 0.0f);
    }

    bool empty() const { return blocks_.empty(); }
    std::uint16_t max_delay() const { return max_delay_; }
    // The shortest delay of a block that reads a remote slot (`limit` if none does).
    tick_t remote_delay(std::size_t local, tick_t limit) const {
        for (const auto& b : blocks_)
            if (std::any_of(b.source_slots.begin(), b.source_slots.end(), [&](std::uint32_t slot) { return slot >= local; }))
                limit = std::min<tick_t>(limit, b.delay);
        return limit;
    }

    // Tick t's products. A block's targets are distinct, so its sums are added on several
    // threads without changing any: each takes the blocks in order, one term from each.
    void compute(tick_t t, const history_ring& history) {
        if (blocks_.empty()) return;
        std::fill(sums_.begin(), sums_.end(), 0.0f);
        for (auto& b : blocks_) {
            const float* r = history.row(t - b.delay);
            in_parts(b.source_slots.size(), [&](std::size_t begin, std::size_t end) {
                for (std::size_t c = begin; c < end; ++c)
                    std::copy_n(r + b.source_slots[c] * batch_, batch_, b.x.data() + c * batch_);
            });
            b.matrix.multiply(b.x.data(), b.y.data(), batch_);
            in_parts(b.target_neurons.size(), [&](std::size_t begin, std::size_t end) {
                for (std::size_t k = begin; k < end; ++k)
                    for (std::size_t lane = 0; lane < batch_; ++lane)
                        sums_[b.target_neurons[k] * batch_ + lane] += b.y[k * batch_ + lane];
            });
        }
    }
    // Adds value `position` (neuron * batch + lane) of this tick's sums to u, or by sign to e or h.
    void add(std::size_t position, bool split, float& u, float& e, float& h) const {
        if (blocks_.empty()) return;
        const float d = sums_[position];
        (!split ? u : d >= 0 ? e : h) += d;
    }

private:
    // f(begin, end) over [0, n) sources or targets of a block, batch_ values each: in parts of
    // about `grain` values on several threads when there are many (a batch's), else at once.
    template <class F>
    void in_parts(std::size_t n, F&& f) const {
        constexpr std::size_t grain = 16384;
        if (n * batch_ < 2 * grain)
            f(std::size_t{0}, n);
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, std::max<std::size_t>(1, grain / batch_)),
                              [&](const tbb::blocked_range<std::size_t>& r) { f(r.begin(), r.end()); });
    }

    struct block {
        dense_matrix matrix;
        std::vector<std::uint32_t> source_slots, target_neurons;
        std::uint16_t delay;
        std::vector<float> x, y;
    };
    std::size_t batch_;
    std::vector<block> blocks_;
    std::vector<float> sums_;  // this tick's dense sum per local neuron and lane
    std::uint16_t max_delay_ = 1;
};

}  // namespace dnnc::sim
