#pragma once
// Snapshot files and the state that travels between nodes.
//
// A snapshot is a DNNC document with a <state>: the network, cluster and run settings it
// was taken from, plus every neuron's state keyed by id (no node assignment). It is
// written as XML (network.xsd) or, for large networks, in a compact binary form
// (`.dnncs`):
//   "DNNCSNAP" | u32 version (4) | u64 length + the document without its state, as XML |
//   i64 tick | u64 count | per neuron: u32 index, f32 output, u8 n + n x f32 state,
//   u16 m + m x f32 history, u8 t + t traces (f64 tau, u8 post, u32 k + k x (i64 tick,
//   f64 value)), u64 s + s x f32 synapse values, u32 g + g x f64 growth | 32-byte SHA-256
//   of everything before it.
// Little-endian. Indices refer to the expanded network of the embedded document. Version 3
// is the same without growth (written before synapses could grow), version 2 also without
// traces and synapse values (written before synapses could learn); both still load, their
// growth empty.
#include "dnnc/core/files.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/model/model.hpp"
#include "dnnc/model/structure.hpp"
#include "dnnc/protocol/xml.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnc::protocol {

// One neuron's state by global index, as nodes exchange it.
struct indexed_state {
    std::int64_t index = 0;
    float output = 0;
    std::vector<float> variables;
    std::vector<float> history;  // newest first
    std::vector<model::spike_trace> traces;  // as neuron_state's
    std::vector<float> synapses;
    std::vector<double> growth;  // as neuron_state's
};

std::string encode_states(const std::vector<indexed_state>& states);
// Throws protocol_error for truncated or malformed bytes.
std::vector<indexed_state> decode_states(std::string_view bytes);

// `s` as a document's entry: named by the network, located at `file`. Throws protocol_error
// for an index the network lacks.
model::neuron_state named_state(indexed_state s, const model::expanded_network& net, const std::string& file);

std::string encode_binary_snapshot(const model::document& doc, const model::expanded_network& net);
// Verifies the checksum, parses the embedded document (reading only the files `access`
// allows, as parse_document does), fills its <state>. Throws config_error naming `file`
// for any damage.
model::document decode_binary_snapshot(std::string_view bytes, const std::string& file, const file_access& access = {});

// Reads a snapshot, binary (.dnncs) or XML, and checks it like any document; it must
// have a network and a state.
model::document load_snapshot(const std::string& path);
// Writes atomically (write_atomically, core/files.hpp). Binary when `path` ends in .dnncs.
void save_snapshot(const model::document& doc, const std::string& path);
bool is_binary_snapshot_path(const std::string& path);
// Whether `bytes` start like a binary snapshot (its magic); decoding still checks the rest.
bool is_binary_snapshot(std::string_view bytes);

// The state of a snapshot by global index, checked against the network: every neuron
// present once, as many variables as its model has, history at least as long as the longest
// delay minus one (longer after an update shortened it: the nodes keep what they kept), outputs that its model produces (0 or 1 for spiking models and step, 0..1 for
// sigmoid, ...), a refractory count that is a whole number of ticks within the neuron's
// refractory period, as many synapse values as its plastic synapses keep (counted from
// the rules, a block of targets at a time), and growth for exactly the neurons with
// synaptic elements, laid out for their element kinds with sane values (finite; calcium and
// z >= 0; whole numbers where whole; ticks not after the state's; sources with synaptic
// elements; pairings in range). `net` needs only the neurons (expand_neurons).
// Throws config_error located at the offending entry.
std::vector<indexed_state> states_of(const model::document& snapshot, const model::expanded_network& net);

// states_of's checks one entry at a time, for states read from a file piece by piece: it
// keeps per neuron whether it was given and how many synapse values it had, never the
// states. `snapshot` (its network) and `net` must outlive it.
class state_check {
public:
    state_check(const model::document& snapshot, const model::expanded_network& net);
    // Checks one entry; its global index, or none when the network lacks the neuron.
    std::optional<model::neuron_index> add(const model::neuron_state& n);
    // The checks across entries (every neuron given, its synapse values against its plastic
    // synapses) and the tick; throws config_error with every problem found. `state` holds the
    // tick, where it was read, and the entries when they were kept (in the order added).
    void finish(const model::snapshot_state& state);

private:
    void check_synapse_values(const model::snapshot_state& state);
    void check_growth(const model::neuron_state& n, model::neuron_index i);
    // The group of a neuron with synaptic elements; null for any other.
    const model::structure_group* group_of(double neuron) const;
    static constexpr std::uint64_t absent = ~std::uint64_t{0};
    const model::document& snapshot_;
    const model::expanded_network& net_;
    std::size_t history_;
    std::optional<model::resolved_structure> structure_;
    std::vector<std::uint64_t> values_;  // synapse values per neuron as given; `absent` if not
    std::vector<std::size_t> entry_;     // which entry gave it
    std::size_t entries_ = 0;
    std::vector<diagnostic> problems_;
};

}  // namespace dnnc::protocol
