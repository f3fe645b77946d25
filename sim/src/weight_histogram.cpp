#include "dnnc/sim/weight_histogram.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace dnnc::sim {

void weight_histogram::add(float w) {
    ++count;
    min = std::min(min, w);
    max = std::max(max, w);
    if (bins.empty()) return;
    const double at = hi > lo ? std::floor((static_cast<double>(w) - lo) / (hi - lo) * static_cast<double>(bins.size())) : 0.0;
    ++bins[static_cast<std::size_t>(std::clamp(at, 0.0, static_cast<double>(bins.size() - 1)))];
}

void weight_histogram::merge(const weight_histogram& other) {
    if (other.bins.size() != bins.size() || other.lo != lo || other.hi != hi)
        throw protocol_error("weight histograms of different bins cannot be added");
    count += other.count;
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    for (std::size_t k = 0; k < bins.size(); ++k) bins[k] += other.bins[k];
}

void bin_plastic_weights(const engine& e, const std::vector<std::vector<std::size_t>>& elements, std::vector<weight_histogram>& histograms) {
    std::map<std::size_t, weight_histogram*> into_of;
    for (std::size_t k = 0; k < elements.size(); ++k)
        for (auto element : elements[k]) into_of[element] = &histograms.at(k);
    // A page at a time, so that binning holds a bounded part of the weights; consecutive
    // synapses mostly share their element, so the histogram is looked up when it changes.
    constexpr std::uint64_t page = std::uint64_t{1} << 18;
    const auto total = e.plastic_synapse_count();
    std::size_t element = std::numeric_limits<std::size_t>::max();  // none looked up yet
    weight_histogram* into = nullptr;
    for (std::uint64_t from = 0; from < total; from += page)
        for (const auto& w : e.plastic_weights(from, page)) {
            if (w.element != element) {
                const auto it = into_of.find(w.element);
                into = it == into_of.end() ? nullptr : it->second;
                element = w.element;
            }
            if (into) into->add(w.weight);
        }
}

}  // namespace dnnc::sim
