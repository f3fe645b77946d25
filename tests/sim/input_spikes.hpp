#pragma once
// Input spike trains for the single-neuron model tests: source 0 excitatory, source 1
// inhibitory, at random ticks (about one in 20 and one in 40).
#include <random>
#include <utility>
#include <vector>

namespace dnnc::test {

inline std::vector<std::pair<int, int>> spike_trains(int ticks, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<std::pair<int, int>> out;  // (source, tick)
    for (int t = 0; t < ticks; ++t) {
        if (gen() % 20 == 0) out.emplace_back(0, t);
        if (gen() % 40 == 0) out.emplace_back(1, t);
    }
    return out;
}

}  // namespace dnnc::test
