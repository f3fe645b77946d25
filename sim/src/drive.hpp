#pragma once
// The generators' input to a node's neurons (private to dnnc_sim): Poisson spike trains,
// currents (dc, ac, noise) and the spikes of spike sources, listed or drawn. Every value is
// a function of (generator, neuron, tick) alone, so each node computes for its own neurons
// what a single process computes for them.
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/model/expand.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace dnnc::sim {

// k ~ Poisson(mean) by inversion of a table of the distribution function, in double. A
// mean above max_part_mean is split into equal parts whose counts add up (a sum of
// independent Poisson counts is Poisson), so the table stays short and exact for any mean.
// A part's count is the number of table entries at or below a uniform u = m * 2^-53 (m the
// top 53 bits of a splitmix64 draw), the count of k with u >= P(K <= k); the table is kept
// as the integers ceil(P(K <= k) * 2^53), against which m compares exactly as u does.
class poisson_sampler {
public:
    static constexpr double max_part_mean = 4;
    explicit poisson_sampler(double mean);
    std::uint32_t parts() const { return parts_; }
    // ceil(P(K <= k) * 2^53) for one part, non-decreasing, until P reaches 1 in double.
    const std::vector<std::uint64_t>& at_least() const { return at_least_; }

private:
    std::vector<std::uint64_t> at_least_;
    std::uint32_t parts_ = 1;
};

class drive {
public:
    // `local_slot` maps a global neuron index to its local slot, or returns -1 for a neuron
    // of another node; `local` is the node's neuron count, `dt` the tick in ms.
    drive(const model::generators& generators, const std::function<std::int64_t(std::int64_t)>& local_slot,
          std::size_t local, double dt);

    bool has_poisson() const { return !poisson_.empty(); }
    // Tick t's Poisson input per local neuron: count * weight, by the weight's sign, summed over
    // the neuron's generators in document order. Zero for neurons no generator feeds.
    void draw(std::int64_t t);
    const std::vector<float>& excitatory() const { return excitatory_; }
    const std::vector<float>& inhibitory() const { return inhibitory_; }
    // For a caller that consumes the values and leaves them zero itself (instead of clear_poisson).
    std::vector<float>& excitatory() { return excitatory_; }
    std::vector<float>& inhibitory() { return inhibitory_; }
    // The local neurons some Poisson generator feeds, ascending; is_driven per local neuron.
    const std::vector<std::uint32_t>& driven() const { return driven_; }
    bool is_driven(std::size_t neuron) const { return is_driven_[neuron] != 0; }
    // Sets excitatory() and inhibitory() back to zero after a tick.
    void clear_poisson();

    // Adds to ext (`lanes` values per local neuron) tick t's currents (dc, ac, noise) in
    // document order, then one per spike of a spike source at tick t, listed or drawn (a
    // spike source's output is its external input); returns whether it added anything.
    // clear_external zeroes what add_external touched.
    bool add_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes);
    void clear_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes) const;

private:
    // Local neurons whose slots and global indices both run consecutively.
    struct run {
        std::uint32_t slot;
        std::int64_t index;
        std::uint32_t count;
    };
    struct poisson_source {
        std::vector<run> runs;
        poisson_sampler sample;
        float weight;
        // Per neuron of the runs, in run order: the state of its stream at tick 0 less one
        // step, splitmix64::at(seed, index).next(); tick t's part p draws the stream of
        // that key at tick t, step p + 1.
        std::vector<std::uint64_t> keys;
    };
    // A window of ms: start <= t * dt < stop.
    struct window {
        double start, stop;
        bool holds(std::int64_t t, double dt) const;
    };
    struct current_source {
        std::vector<run> runs;
        model::current_shape shape;
        window active;
        double amplitude = 0, offset = 0;  // dc, ac
        double radians_per_tick = 0;       // ac
        double phase = 0;                  // ac, radians
        double mean = 0, std = 0;          // noise
        std::int64_t interval = 1;         // noise: ticks per draw
        // noise, per neuron of the runs: its stream's key, splitmix64::at(seed, index).next(),
        // and its draw for interval `drawn` (-1: none yet).
        std::vector<std::uint64_t> keys;
        std::vector<float> values;
        std::int64_t drawn = -1;
    };
    void add_current(std::int64_t t, current_source& c, std::vector<float>& ext, std::size_t lanes);
    // Spikes drawn for the local members of a Poisson spike source that share a rate.
    struct train_source {
        std::vector<run> runs;
        poisson_sampler sample;
        window active;
        std::vector<std::uint64_t> keys;  // as poisson_source's, keyed by (seed, member)
    };
    struct local_spike {
        std::int64_t tick;
        std::uint32_t slot;
    };
    // The listed spikes of tick t: a range of spikes_.
    std::pair<std::vector<local_spike>::const_iterator, std::vector<local_spike>::const_iterator> spikes_at(std::int64_t t) const;

    double dt_;
    std::vector<poisson_source> poisson_;
    std::vector<current_source> currents_;
    std::vector<train_source> trains_;
    std::vector<float> counts_;  // scratch: the spikes drawn for one run of a train
    std::vector<local_spike> spikes_;  // of local spike sources, by tick
    std::vector<float> excitatory_, inhibitory_;
    std::vector<std::uint32_t> driven_;
    std::vector<std::uint8_t> is_driven_;
};

}  // namespace dnnc::sim
