#pragma once
// The generators' input to a node's neurons (private to dnnc_sim): Poisson spike trains,
// DC currents and the spikes listed for spike sources. Every value is a function of (generator, neuron, tick) alone, so each
// node computes for its own neurons what a single process computes for them.
#include "dnnc/core/splitmix64.hpp"
#include "dnnc/protocol/expand.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace dnnc::sim {

// k ~ Poisson(mean) by inversion of a table of the distribution function, in double. A
// mean above max_part_mean is split into equal parts whose counts add up (a sum of
// independent Poisson counts is Poisson), so the table stays short and exact for any mean.
class poisson_sampler {
public:
    static constexpr double max_part_mean = 4;
    explicit poisson_sampler(double mean);
    std::uint32_t operator()(splitmix64& stream) const;

private:
    std::vector<double> cdf_;  // P(K <= k) for one part, until it reaches 1 in double
    std::uint32_t parts_ = 1;
};

class drive {
public:
    // `local_slot` maps a global neuron index to its local slot, or returns -1 for a neuron
    // of another node; `local` is the node's neuron count, `dt` the tick in ms.
    drive(const protocol::generators& generators, const std::function<std::int64_t(std::int64_t)>& local_slot,
          std::size_t local, double dt);

    bool has_poisson() const { return !poisson_.empty(); }
    // Tick t's Poisson input per local neuron: count * weight, by the weight's sign, summed over
    // the neuron's generators in document order. Zero for neurons no generator feeds.
    void draw(std::int64_t t);
    const std::vector<float>& excitatory() const { return excitatory_; }
    const std::vector<float>& inhibitory() const { return inhibitory_; }
    // The local neurons some Poisson generator feeds, ascending; is_driven per local neuron.
    const std::vector<std::uint32_t>& driven() const { return driven_; }
    bool is_driven(std::size_t neuron) const { return is_driven_[neuron] != 0; }
    // Sets excitatory() and inhibitory() back to zero after a tick.
    void clear_poisson();

    // Adds to ext (`lanes` values per local neuron) the DC amplitudes active at tick t, in
    // document order, then one per spike listed for tick t (a spike source's output is its
    // external input); returns whether it added anything. clear_external zeroes what
    // add_external touched.
    bool add_external(std::int64_t t, std::vector<float>& ext, std::size_t lanes) const;
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
        std::uint64_t seed;
    };
    struct dc_source {
        std::vector<run> runs;
        float amplitude;
        double start, stop;  // ms
    };
    bool active(const dc_source& d, std::int64_t t) const;
    struct local_spike {
        std::int64_t tick;
        std::uint32_t slot;
    };
    // The listed spikes of tick t: a range of spikes_.
    std::pair<std::vector<local_spike>::const_iterator, std::vector<local_spike>::const_iterator> spikes_at(std::int64_t t) const;

    double dt_;
    std::vector<poisson_source> poisson_;
    std::vector<dc_source> dc_;
    std::vector<local_spike> spikes_;  // of local spike sources, by tick
    std::vector<float> excitatory_, inhibitory_;
    std::vector<std::uint32_t> driven_;
    std::vector<std::uint8_t> is_driven_;
};

}  // namespace dnnc::sim
