#include "dnnc/sim/memory.hpp"

#include <cmath>

namespace dnnc::sim {

namespace {

// Whether the fan-out's entries of own weights are compact: a row's positions fit in one word
// beside the widest local target (fan_out_index::build).
bool compact_entries(const share_size& share) {
    std::uint32_t target_bits = 1;
    while ((std::uint64_t{1} << target_bits) < share.neurons) ++target_bits;
    return !share.plastic && share.longest_row <= std::uint64_t{1} << (32 - target_bits);
}

}  // namespace

std::uint64_t bytes_needed(const share_size& share) {
    const bool own = share.values_per_synapse, one_lane = share.batch == 1;
    const bool compact = own && one_lane && compact_entries(share);
    const double weight = share.half_weights ? 2 : 4;
    double per_synapse = 4 + 1;
    if (own) per_synapse += 0.5 + (share.network_neurons > (std::uint64_t{1} << 20) ? 2 : 0) + (compact ? 0 : weight);
    if (one_lane) per_synapse += !own ? 4 : compact ? 4 + weight : 12;
    return static_cast<std::uint64_t>(std::ceil(per_synapse * static_cast<double>(share.synapses))) +
           share.neurons * (96 + 32 * std::uint64_t{share.batch}) + share.dense_weights * 2 * sizeof(float);
}

}  // namespace dnnc::sim
