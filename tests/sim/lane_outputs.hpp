#pragma once
// An engine run tick by tick with every neuron's output in every lane recorded, for tests
// that compare runs bit for bit (lanes against one lane, threads, paths).
#include "dnnc/sim/engine.hpp"

#include <cstdint>
#include <vector>

namespace dnnc::test {

// An input for one neuron at one tick, in one lane or all (engine::all_lanes).
struct lane_input {
    sim::global_index neuron;
    sim::tick_t tick;
    float value;
    std::int64_t lane;
};

// outputs[tick][neuron * lanes + lane]
using lane_trace = std::vector<std::vector<float>>;

// `spec` run `ticks` with `lanes` lanes and `inputs`.
inline lane_trace lane_outputs(sim::engine_spec spec, std::uint32_t lanes, int ticks, const std::vector<lane_input>& inputs = {}) {
    spec.batch = lanes;
    sim::engine e(spec);
    for (const auto& in : inputs) e.add_input(in.neuron, in.tick, in.value, in.lane);
    lane_trace out;
    for (int t = 0; t < ticks; ++t) {
        e.compute();
        std::vector<float> row;
        for (std::size_t i = 0; i < spec.neurons.size(); ++i)
            for (std::uint32_t lane = 0; lane < lanes; ++lane) row.push_back(e.output(static_cast<sim::global_index>(i), lane));
        out.push_back(row);
    }
    return out;
}

}  // namespace dnnc::test
