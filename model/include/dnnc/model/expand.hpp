#pragma once
// The network with every compact form expanded: neurons numbered 0..N-1, explicit neurons
// first in document order, then each population's members in document order, then the
// members of applied grows (resolve.hpp); incoming synapses of each neuron stored together
// in canonical order (document order of the synapse/projection elements, then source
// index within a projection). Dense projections stay matrices. Expansion is a pure
// function of the document: the same seeds give the same network.
#include "dnnc/model/model.hpp"
#include "dnnc/model/structure.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dnnc::model {

using neuron_index = std::uint32_t;

// An explicit neuron (size 1) or a population, in document order; then each extent of members
// an applied <grow> added (resolve.hpp, member_extent), under its population's id.
struct neuron_group {
    std::string id;
    neuron_index first = 0;
    neuron_index size = 0;
    bool is_population = false;
    std::uint64_t seed = 0;
    neuron_params params;
    neuron_index member = 0;  // the member index of neuron `first` (0 but for grown extents)
    std::vector<double> v_inits;  // the population's initial potentials per member (population::v_inits)
};

// A weight matrix run as one product per tick: rows = targets, cols = sources.
struct dense_block {
    std::vector<neuron_index> sources;  // the source vector, in order
    std::vector<neuron_index> targets;  // one per row
    std::vector<float> weights;         // row-major, targets.size() x sources.size()
    std::uint16_t delay = 1;
    bool split_rows = false;
    std::size_t element;  // position of the projection in connection_order
};

// A generator's targets as ranges of neuron indices, in the order its `to` names them.
struct neuron_span {
    neuron_index first = 0;
    neuron_index size = 0;
};

// The <poisson>, <dc>, <ac> and <noise> elements with their targets resolved, in document order.
struct resolved_poisson {
    std::vector<neuron_span> targets;
    double rate = 0;  // Hz
    double weight = 1;
    std::uint64_t seed = 0;
};
struct resolved_current {
    std::vector<neuron_span> targets;
    current_generator spec;  // its shape and parameters
};
// A Poisson spike source's members: member k (neuron members.first + k) draws at rate
// rates[k] (rates[0] for all when it holds one), keyed by (seed, k, tick).
struct poisson_train {
    neuron_span members;
    std::vector<double> rates;  // Hz
    std::uint64_t seed = 0;
    double start = 0;            // ms
    std::optional<double> stop;  // ms; none: forever
};
// A spike of a spike source: neuron `neuron` puts out one more spike at `tick`.
struct listed_spike {
    neuron_index neuron = 0;
    std::int64_t tick = 0;
};
struct generators {
    std::vector<resolved_poisson> poisson;
    std::vector<resolved_current> currents;
    std::vector<listed_spike> spikes;  // of every spike source, by tick
    std::vector<poisson_train> trains;
};
// Throws config_error (located) for a target that does not resolve.
generators resolve_generators(const network& net);

struct named_neurons {
    std::string id;
    std::vector<neuron_index> neurons;
};

// A <record variables="..."> resolved: its neurons (ascending, each once), the variables
// sampled (recordable_variables of their models) and the sampling interval in ticks. The
// state after tick t is sampled when t is a multiple of `every`.
struct sampling {
    std::vector<neuron_index> neurons;
    std::vector<std::string> variables;
    std::int64_t every = 1;
};
// The samplings of a checked network; config_error at the second <record> that samples a
// neuron another one samples already.
std::vector<sampling> samplings_of(const network& net);

struct expanded_network {
    std::string name;
    double dt = 0.1;  // ms per tick
    std::vector<neuron_group> groups;
    std::vector<std::uint32_t> group_of;  // per neuron
    std::unordered_map<std::string, std::uint32_t> group_index;  // id -> position in groups (a grown population's first extent)

    // Incoming synapses, CSR by target: those of neuron i are [in_begin[i], in_begin[i+1]).
    std::vector<std::uint64_t> in_begin;
    std::vector<neuron_index> in_source;
    std::vector<float> in_weight;
    std::vector<std::uint16_t> in_delay;

    std::vector<dense_block> dense;
    std::vector<named_neurons> inputs, outputs;
    generators drive;  // Poisson and DC generators
    // The neurons whose spikes are recorded (<record>), ascending, each once; empty when the
    // network records none.
    std::vector<neuron_index> recorded;
    // The <record variables> elements, in document order (samplings_of).
    std::vector<sampling> samplings;
    // Structural plasticity (structure.hpp), when the network has it.
    std::optional<resolved_structure> structure;

    std::size_t neuron_count() const { return group_of.size(); }
    std::size_t synapse_count() const { return in_source.size(); }
    const neuron_params& params_of(neuron_index i) const { return groups[group_of[i]].params; }
    // params_of(i) with the neuron's own initial potential (v_init) where its population gives
    // one per member: what the neuron is built from.
    neuron_params member_params(neuron_index i) const;
    // `a` or `pop[7]`.
    std::string neuron_name(neuron_index i) const;
    // Resolves a single-neuron reference; nullopt when there is no such neuron.
    std::optional<neuron_index> find(std::string_view ref) const;
};

// Limits that keep a document from exhausting the machine.
struct expand_limits {
    std::uint64_t max_neurons = 100'000'000;
    std::uint64_t max_synapses = 2'000'000'000;
    std::uint64_t max_dense_weights = 1'000'000'000;
};

// The file a document read from `document_file` means by `named` (a spike source's file=,
// a dense projection's weights=): relative names are relative to the document's folder.
std::filesystem::path file_named_by(const std::string& document_file, const std::string& named);

// Expands a checked network (see check.hpp). Dense weight files are read relative to
// `document_file`'s folder (file_named_by). Throws config_error (located) on anything that still fails.
expanded_network expand(const network& net, const std::string& document_file,
                        const expand_limits& limits = {});

// A node's share (node_config::share) expanded on the node: the same neurons, and the
// incoming synapses of `local_neurons` (global indices) only; other neurons get empty rows.
// Their rows equal those of expand() on the whole network, because a share keeps every
// projection and, of the explicit synapses, those into local neurons in their order.
expanded_network expand_share(const network& share, const std::vector<std::int64_t>& local_neurons,
                              const expand_limits& limits = {});

// The longest delay a synapse or projection of the network declares (1 when it has none;
// for a delay distribution the most its draws may take, delay_cap):
// how many ticks of output every node keeps, so that a snapshot holds what any reader needs.
std::uint16_t longest_delay(const network& net);
// The longest delay among an expanded network's synapses and dense blocks (1 when none).
std::uint16_t longest_delay(const expanded_network& net);

// The neurons alone (numbering, groups, inputs and outputs; no synapses, no dense blocks):
// enough to name neurons, at the cost of the neurons.
expanded_network expand_neurons(const network& net, const expand_limits& limits = {});

}  // namespace dnnc::model
