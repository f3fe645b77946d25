#include "dnnc/sim/memory.hpp"

namespace dnnc::sim {

std::uint64_t bytes_needed(std::uint64_t synapses, std::uint64_t neurons, std::uint64_t dense_weights, std::uint32_t batch,
                           bool values_per_synapse, bool half_weights) {
    // The fan-out entry of a synapse with its own weight and delay carries that weight: 8 bytes
    // compact, 12 where a rule changes it or rows are too long for compact entries (12 counted:
    // the bound); one of a shared weight takes 2 bytes into a sum in order (packed), 8 into one
    // out of order: 4 is between (docs/simulation.md, "Memory layout").
    const std::uint64_t fan_out = batch == 1 ? (values_per_synapse ? 12 : 4) : 0;
    const std::uint64_t per_synapse = 4 + fan_out + (values_per_synapse ? (half_weights ? 4 : 6) : 0) + 1;
    return synapses * per_synapse + neurons * (96 + 32 * std::uint64_t{batch}) + dense_weights * 2 * sizeof(float);
}

}  // namespace dnnc::sim
