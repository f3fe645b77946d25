#pragma once
// What an engine needs in memory, known before it is built: the lead checks a network's
// shares against what the nodes' machines can give (docs/simulation.md, memory layout).
#include <cstdint>

namespace dnnc::sim {

// The peak bytes of an engine built from a share of `synapses` incoming synapses,
// `neurons` local neurons and `dense_weights` dense weights, run with `batch` lanes: per
// synapse its source slot (4), with one lane the sparse fan-out (4; 12 with values per
// synapse, which is 8 where the engine's rows allow compact entries, not known here; 6 with
// `half_weights`), its own weight and delay (6; 4 with `half_weights`) when
// `values_per_synapse` (a projection draws them from a distribution), and about 1 for
// counting rows and their offsets while
// building; per neuron about 96 bytes and 32 a lane (states, sums, history, slots); dense
// weights twice (the config's copy and the matrix).
std::uint64_t bytes_needed(std::uint64_t synapses, std::uint64_t neurons, std::uint64_t dense_weights, std::uint32_t batch,
                           bool values_per_synapse = false, bool half_weights = false);

}  // namespace dnnc::sim
