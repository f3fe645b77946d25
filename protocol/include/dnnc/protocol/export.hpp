#pragma once
// Exports an expanded network for people to look at: GraphML, Graphviz DOT or JSON, with
// the current values of a snapshot and the node assignment of a cluster when given.
//
// Every format holds every neuron (id, index, model, group) and every synapse (from, to,
// weight, delay; the cells of dense blocks too, marked dense). With a snapshot state,
// neurons carry their output and named model variables (lif: v, ge, gi, refractory); with
// an assignment, the physical node each neuron runs on. Output is written as it is built,
// in time and memory linear in the size of the network.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace dnnc::protocol {

enum class export_format { graphml, dot, json };

const char* to_string(export_format f);
// "graphml", "dot" or "json"; throws usage_error for anything else.
export_format parse_export_format(std::string_view name);

// Which physical node runs each neuron: node_of[i] indexes node_ids.
struct node_assignment {
    std::vector<std::string> node_ids;
    std::vector<std::uint32_t> node_of;
};

struct export_options {
    export_format format = export_format::json;
    // DOT only: write at most this many synapses (0: all), saying so in the output.
    std::uint64_t max_dot_synapses = 0;
    // <run weight-precision="half">: each synapse's weight as the engine keeps it, the
    // nearest binary16 (dense cells keep their 32 bits).
    bool half_weights = false;
};

// Writes the network `compact` to `out`: its neurons and dense blocks from `net` (its expansion
// without synapses is enough: plan::neurons_and_dense_blocks), its synapses drawn row by row
// from the rules while they are written, so that nothing grows with the synapse count but
// the output. `state` and `nodes` may be null. Throws config_error (located)
// for a state entry naming no neuron of `net`, given twice, or with the wrong number of
// variables for its model; usage_error for an assignment that does not cover every neuron
// with a valid node; io_error when `out` fails.
void export_network(std::ostream& out, const model::network& compact, const model::expanded_network& net, const model::snapshot_state* state,
                    const node_assignment* nodes, const export_options& options);

}  // namespace dnnc::protocol
