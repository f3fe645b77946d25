#pragma once
// The synapse models a document may name: NEST's names, parameters, defaults and units. This
// catalogue is what documents are checked against; the dynamics of each rule live in
// sim/src/rules/, one file per rule, registered by the same name.
#include "dnnc/model/model.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace dnnc::model {

struct synapse_parameter {
    enum class range { any, positive, non_negative, unit_interval, nonzero };
    const char* name;
    double fallback;  // NEST's default
    range allowed;
    const char* unit;
    // Why an update of a running network may not change it (null: it may): a trace's time
    // constant (the nodes' logs hold the trace as it decayed), or a synapse's initial state
    // (its synapses took it at install, and snapshots carry their state since).
    const char* fixed_while_running = nullptr;
};

// The most plastic connection elements (a <projection> or <synapse> with a plastic synapse
// model) a network has: an engine keeps each as a synapse class of its own, numbered in a
// byte beside the static synapses' class (check_network refuses more, located).
inline constexpr std::size_t max_plastic_elements = 255;

struct synapse_model_info {
    const char* name;
    bool plastic;  // whether its weights change during a run (then one lane, lockstep only)
    std::vector<synapse_parameter> parameters;
    // The parameter that bounds the weight and gives its sign (Wmax), if any.
    const char* weight_bound;
    // Bytes of state per synapse beyond the source, weight and delay the store keeps for
    // every synapse with its own weight (docs/simulation.md): float32 values, which
    // snapshots carry after the weight.
    std::size_t state_bytes;
};

// Every model, static_synapse first.
const std::vector<synapse_model_info>& synapse_model_catalog();
// The model named `name`, or null.
const synapse_model_info* find_synapse_model(const std::string& name);

// What a connection element's synapse_model names, with every parameter's value (written or
// default) in the catalogue's order.
struct resolved_synapse_model {
    const synapse_model_info* info = nullptr;
    std::vector<double> values;
    std::string id;  // the <synapse-model>'s id, or the model's name when named directly
    double value(const char* parameter) const;
};
// Resolves `reference` (empty: static_synapse) against net.synapse_models, then the
// catalogue. Throws config_error at `where` for a reference to nothing.
resolved_synapse_model resolve_synapse_model(const network& net, const std::string& reference, const source_location& where);

}  // namespace dnnc::model
