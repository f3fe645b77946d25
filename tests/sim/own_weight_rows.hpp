#pragma once
// Rows of synapses that each keep their own weight: for tests of the sparse path and the
// fan-out that holds those weights.
#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <random>
#include <vector>

namespace dnnc::test {

// 30 synapses into each of spec's neurons (spec.in, in_begin), each from a random neuron of
// the spec with a weight drawn in [-0.9, 0.9] (so many distinct ones that each synapse keeps
// its own) and a delay of 1 to 3 ticks; a row's sources descend, so that no sum is in order.
inline void add_own_weight_rows(sim::engine_spec& spec, std::mt19937& gen) {
    const auto n = spec.neurons.size();
    spec.in_begin = {0};
    std::uniform_real_distribution<float> weight(-0.9f, 0.9f);
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<sim::global_index> sources;
        for (int k = 0; k < 30; ++k) sources.push_back(static_cast<sim::global_index>(gen() % n));
        std::sort(sources.rbegin(), sources.rend());
        for (auto s : sources) spec.in.push_back({s, weight(gen), static_cast<std::uint16_t>(1 + gen() % 3)});
        spec.in_begin.push_back(spec.in.size());
    }
}

}  // namespace dnnc::test
