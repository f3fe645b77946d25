#include "dnnc/protocol/update.hpp"

#include "dnnc/core/error.hpp"

#include <string>
#include <tuple>

namespace dnnc::protocol {
namespace {

[[noreturn]] void refuse(const source_location& where, const std::string& what) {
    throw config_error(where, what + ": an update changes parameters only; submit the network anew (--replace) to change more");
}

// What a neuron keeps: its model, and what its initial state and its plastic synapses'
// traces came from.
bool same_kind(const neuron_params& a, const neuron_params& b) {
    return a.model == b.model && a.tau_minus == b.tau_minus && a.v_init == b.v_init && a.v_init_max == b.v_init_max &&
           a.v_init_std == b.v_init_std && a.u_init == b.u_init;
}

template <typename T>
void same_count(const std::vector<T>& running, const std::vector<T>& updated, const source_location& where, const char* elements) {
    if (running.size() != updated.size())
        refuse(where, std::string("the network has ") + std::to_string(updated.size()) + " " + elements + ", the running one " +
                          std::to_string(running.size()));
}

}  // namespace

void check_update(const network& running, const network& updated) {
    if (updated.name != running.name) refuse(updated.where, "the network is '" + updated.name + "', the running one '" + running.name + "'");
    if (updated.dt != running.dt) refuse(updated.where, "dt differs from the running network's");
    same_count(running.neurons, updated.neurons, updated.where, "neurons");
    for (std::size_t k = 0; k < updated.neurons.size(); ++k) {
        const auto &a = running.neurons[k], &b = updated.neurons[k];
        if (a.id != b.id || !same_kind(a.params, b.params))
            refuse(b.where, "neuron '" + b.id + "' is not the running network's neuron '" + a.id + "' of the same model, tau_minus and v-init");
    }
    same_count(running.populations, updated.populations, updated.where, "populations and spike sources");
    for (std::size_t k = 0; k < updated.populations.size(); ++k) {
        const auto &a = running.populations[k], &b = updated.populations[k];
        if (a.id != b.id || a.size != b.size || a.seed != b.seed || !same_kind(a.params, b.params))
            refuse(b.where, "population '" + b.id + "' is not the running network's '" + a.id +
                                "' of the same size, seed, model, tau_minus and v-init");
        if (a.rates.empty() != b.rates.empty()) refuse(b.where, "spike source '" + b.id + "' changes between listed spikes and rates");
    }
    same_count(running.poisson, updated.poisson, updated.where, "<poisson> generators");
    for (std::size_t k = 0; k < updated.poisson.size(); ++k)
        if (updated.poisson[k].to != running.poisson[k].to || updated.poisson[k].seed != running.poisson[k].seed)
            refuse(updated.poisson[k].where, "<poisson> " + std::to_string(k + 1) + " changes its targets or seed");
    same_count(running.currents, updated.currents, updated.where, "current generators");
    for (std::size_t k = 0; k < updated.currents.size(); ++k) {
        const auto &a = running.currents[k], &b = updated.currents[k];
        if (a.shape != b.shape || a.to != b.to || a.seed != b.seed || a.interval_ms != b.interval_ms)
            refuse(b.where, std::string("<") + element_name(b.shape) + "> " + std::to_string(k + 1) +
                                " is not the running network's of the same kind, targets, seed and interval");
    }
    // A connection list counts by its connections, not by the file they were read from.
    auto projections = [](std::vector<projection> list) {
        for (auto& p : list) p.connections_file.clear();
        return list;
    };
    auto wiring = [](const network& n) {
        return std::tie(n.synapse_models, n.synapses, n.connection_order, n.inputs, n.outputs, n.records);
    };
    if (wiring(updated) != wiring(running) || projections(updated.projections) != projections(running.projections))
        refuse(updated.where, "its synapses, projections, synapse models, inputs, outputs or records differ from the running network's");
}

network parameters_of(const network& net) {
    network p;
    p.name = net.name;
    p.dt = net.dt;
    p.neurons = net.neurons;
    p.populations = net.populations;
    p.poisson = net.poisson;
    p.currents = net.currents;
    p.where = net.where;
    return p;
}

network with_parameters(network share, const network& parameters) {
    network updated = share;
    updated.neurons = parameters.neurons;
    updated.populations = parameters.populations;
    updated.poisson = parameters.poisson;
    updated.currents = parameters.currents;
    check_update(share, updated);
    return updated;
}

}  // namespace dnnc::protocol
