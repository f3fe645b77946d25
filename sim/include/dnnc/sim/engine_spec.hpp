#pragma once
// What an engine is built from (engine.hpp): a node's neurons with their parameters, their
// incoming synapses when listed, its dense rows, its peers and the network's generators;
// and the ways to make one: the whole network in one engine, one node's part from the
// config its lead sent, every node's part of a partitioned network.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/model/structure.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::sim {

using tick_t = std::int64_t;
using global_index = std::int64_t;

struct neuron_spec {
    global_index index = 0;  // position in the whole network
    model::neuron_params params;
    std::uint64_t seed = 0;  // of its population: initial values are drawn from (seed, index)
    double window_ms = 0;
};

struct synapse_spec {
    global_index source = 0;
    float weight = 1;
    std::uint16_t delay = 1;
};

// What this node exchanges with one peer: the outputs of its neurons `sends` (ascending
// global index) go to the peer each tick; the peer's neurons `receives` come back.
struct peer_spec {
    std::string id;
    std::vector<global_index> sends, receives;
};

// The rows of a dense projection that live on this node: targets[r] receives
// sum_c weights[r * sources.size() + c] * y_{sources[c]}(t - delay), computed as one
// LibTorch product per tick on the projection's row grid (torch_backend.hpp), which is why
// each row's place in the whole projection is needed.
struct dense_spec {
    std::vector<global_index> sources;
    std::vector<global_index> targets;  // local neurons, one per row
    std::vector<float> weights;         // row-major
    std::uint16_t delay = 1;
    std::vector<std::uint32_t> rows;    // each target's row in the whole projection; empty: 0, 1, ...
    std::uint32_t projection_rows = 0;  // rows of the whole projection; 0: targets.size()
};

struct engine_spec {
    std::string node;  // this node's id, for messages (empty for a single process)
    double dt = 0.1;   // ms per tick: the integration step of NEST's models, the generators' clock
    // The network's longest delay: how many ticks of output every engine keeps, so that a
    // snapshot can carry each neuron's past outputs whoever reads them.
    std::uint16_t history = 1;
    std::vector<neuron_spec> neurons;
    // Incoming synapses listed here (tests, whole_network, partition_specs); a node's engine
    // builds its own from its share instead (engine(spec, share)). in_begin is empty (no
    // synapses) or holds neurons.size() + 1 offsets into `in`.
    std::vector<std::uint64_t> in_begin;
    std::vector<synapse_spec> in;  // per neuron, canonical order
    // Dense projections, in document order; their sums come after a neuron's synapses.
    std::vector<dense_spec> dense;
    std::vector<peer_spec> peers;
    // Poisson and DC generators of the whole network (global indices); the engine keeps
    // those of its own neurons.
    model::generators generators;
    std::string device = "cpu";  // where dense products run: "cpu", "cuda" or "auto" (torch_backend.hpp)
    std::uint32_t batch = 1;     // lanes
    // Synapse weights kept in 16 bits (<run weight-precision="half">): each synapse's weight
    // is the nearest binary16 value of the one given; 2 bytes a weight rather than 4.
    bool half_weights = false;
    // Whether compute() lists the neurons that spiked (spiked()); a node that records none
    // leaves it off and saves the scan.
    bool list_spikes = true;
    // Structural plasticity (one lane only): every member of its groups must be local or
    // received from a peer.
    std::optional<model::resolved_structure> structure;
};

// `spec` without its synapses and dense projections: what an engine keeps of it.
engine_spec without_synapses(const engine_spec& spec);
// The whole network in one engine: the single-process reference.
engine_spec whole_network(const model::expanded_network& net);
// One node's neurons, peers and dense rows, from the config the lead sent it; no synapses
// (in empty, every row empty): the engine builds them from config.share (make_node_engine).
engine_spec from_node_config(const model::node_config& config);
// Every node's share of a partitioned network: node n runs the neurons with
// node_of_neuron == n (in index order); peers are the nodes it exchanges signals with, in
// node order, named by node_ids (default: "0", "1", ...). Without `synapses`, the specs
// leave out the incoming synapses (every neuron's row empty): what a lead needs to plan
// the nodes, which expand their synapses themselves.
enum class with_synapses { yes, no };
std::vector<engine_spec> partition_specs(const model::expanded_network& net,
                                         const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes,
                                         const std::vector<std::string>& node_ids = {},
                                         with_synapses synapses = with_synapses::yes);

}  // namespace dnnc::sim
