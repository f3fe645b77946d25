#pragma once
// A snapshot's promise for one engine, for tests: a network run straight for 600 ticks, and
// again from its capture at tick 300 restored into a fresh engine, ends alike, bit for bit.
#include "dnnc/sim/engine.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <vector>

namespace dnnc::test {

// Returns the spikes of the first 300 ticks; `check_captured` sees the captured states.
inline int check_restore_continues(const sim::engine_spec& spec,
                                   const std::function<void(const std::vector<sim::neuron_state>&)>& check_captured = {}) {
    sim::engine straight(spec);
    int spikes = 0;
    for (int t = 0; t < 300; ++t) {
        straight.compute();
        for (const auto& n : straight.spec().neurons) spikes += straight.output(n.index) == 1.0f;
    }
    const auto middle = straight.capture();
    if (check_captured) check_captured(middle);
    for (int t = 300; t < 600; ++t) straight.compute();
    sim::engine resumed(spec);
    resumed.restore(middle, 300);
    for (int t = 300; t < 600; ++t) resumed.compute();
    const auto a = straight.capture(), b = resumed.capture();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CHECK(a[i].output == b[i].output);
        CHECK(a[i].variables == b[i].variables);
    }
    return spikes;
}

inline int check_restore_continues(const model::expanded_network& net,
                                   const std::function<void(const std::vector<sim::neuron_state>&)>& check_captured = {}) {
    return check_restore_continues(sim::whole_network(net), check_captured);
}

}  // namespace dnnc::test
