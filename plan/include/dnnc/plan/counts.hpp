#pragma once
// The size of a network from its compact form, without storing a synapse.
#include "dnnc/model/model.hpp"

#include <cstdint>

namespace dnnc::plan {

struct network_size {
    std::uint64_t neurons = 0;
    std::uint64_t synapses = 0;  // exact: every target row counted (random rows draw their skips)
    std::uint64_t dense_weights = 0;
};

// The network must be checked (model::check_network). Rows are counted in parallel.
network_size size_of(const model::network& net);

}  // namespace dnnc::plan
