#pragma once
// What an engine needs in memory, known before it is built: the lead checks a network's
// shares against what the nodes' machines can give (docs/simulation.md, memory layout).
#include <cstdint>

namespace dnnc::sim {

// A node's share of a network as far as its memory goes.
struct share_size {
    std::uint64_t synapses = 0;       // incoming synapses
    std::uint64_t neurons = 0;        // local neurons
    std::uint64_t dense_weights = 0;  // dense projections' weights
    std::uint32_t batch = 1;          // lanes
    // Whether every synapse keeps its own weight and delay (a projection draws them from a
    // distribution or lists them, or a rule changes them), and whether a rule does.
    bool values_per_synapse = false, plastic = false;
    bool half_weights = false;
    std::uint64_t longest_row = 0;       // an upper bound on one neuron's incoming synapses
    std::uint64_t network_neurons = 0;   // every neuron of the network: a bound on the slots it reads
};

// The peak bytes of an engine built from a share. Per synapse: its source slot (4, its own
// delay packed beside it up to 2^20 slots, 2 more beyond); with one lane the sparse fan-out
// (4 for shared values; with its own weight 8 where rows are short enough for compact entries
// and no rule changes the weights, 6 with half weights, else 12 and the weight kept in the
// rows too, 4 or 2); about 1 for counting rows and their offsets while building, and half a
// byte more with own weights (the redraw's table, placing's delays). Per neuron about 96 bytes
// and 32 a lane (states, sums, history, slots); dense weights twice (the config's copy and
// the matrix).
std::uint64_t bytes_needed(const share_size& share);

}  // namespace dnnc::sim
