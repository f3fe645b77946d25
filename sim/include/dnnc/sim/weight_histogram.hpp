#pragma once
// Histograms of plastic weights, binned where the synapses are: a node bins its own plastic
// synapses, a histogram per group of connection elements, and whoever gathers them adds the
// nodes' bins (merge), so nothing but the pass over a node's synapses grows with their count.
#include "dnnc/sim/engine.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace dnnc::sim {

// Fixed bins over [lo, hi]: bin k of B holds the weights w with floor((w - lo) / (hi - lo) * B)
// = k, hi itself in the last bin, and a weight outside the range in the bin at its end (all
// of them in bin 0 when lo = hi). With no bins it only counts, and keeps the least and the
// greatest weight.
struct weight_histogram {
    double lo = 0, hi = 0;
    std::vector<std::uint64_t> bins;
    std::uint64_t count = 0;
    float min = std::numeric_limits<float>::infinity(), max = -std::numeric_limits<float>::infinity();  // when count > 0

    void add(float w);
    // Adds another node's histogram of the same range and bins.
    void merge(const weight_histogram& other);
};

// Adds the weight of every plastic synapse of `e` whose connection element is one of
// elements[k] to histograms[k], for each k (the engine paused: engine::plastic_weights). An
// element belongs to one group at most.
void bin_plastic_weights(const engine& e, const std::vector<std::vector<std::size_t>>& elements, std::vector<weight_histogram>& histograms);

}  // namespace dnnc::sim
