#include "dnnc/protocol/update.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/model/synapse_models.hpp"

#include <string>
#include <vector>
#include <tuple>

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes
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

// A projection's weights: its weight, its weight's distribution, a list's weights.
bool same_weights(const projection& a, const projection& b) {
    return a.weight == b.weight && a.weight_distribution == b.weight_distribution && a.connections.weights == b.connections.weights;
}

// A projection's delays: its delay (ticks or ms), its delay's distribution, a list's delays.
bool same_delays(const projection& a, const projection& b) {
    return a.delay == b.delay && a.delay_ms == b.delay_ms && a.delay_distribution == b.delay_distribution &&
           a.connections.delays == b.connections.delays;
}

bool same_delay(const synapse& a, const synapse& b) { return a.delay == b.delay && a.delay_ms == b.delay_ms; }

// What projection `k` of `updated`, a connection list, is to projection `k` of `running`, a
// drawn one: the list of exactly the synapses its rule draws (the same sources for each
// target, in canonical order, the same synapse model), with their delays or new ones; or
// another projection. Weights and delays given per synapse make a drawn projection explicit,
// as pyNN.dnnc does: the nodes then keep its synapses, with the list's values. Draws that
// projection's rows here, on the lead, which holds the list already. In a node's share
// (`lists` cut to its targets) a target the list gives nothing is another node's: its
// engine checks its own rows (same_wiring).
enum class listing { other, same_delays, new_delays };
listing listing_of(const network& running, const network& updated, std::size_t k, update_lists lists) {
    const auto &a = running.projections[k], &b = updated.projections[k];
    if (b.kind != projection_kind::list || a.kind == projection_kind::list || a.kind == projection_kind::dense ||
        std::tie(a.id, a.from, a.to, a.synapse_model) != std::tie(b.id, b.from, b.to, b.synapse_model))
        return listing::other;
    std::size_t element = 0;
    while (element < running.connection_order.size() &&
           !(running.connection_order[element].kind == connection_ref::type::projection && running.connection_order[element].index == k))
        ++element;
    const synapse_rows drawn(running), listed(updated);
    std::vector<std::pair<neuron_index, std::uint16_t>> mine, theirs;
    const auto row = [&](const synapse_rows& rows, neuron_index t, std::vector<std::pair<neuron_index, std::uint16_t>>& out) {
        out.clear();
        rows.for_each_of(t, element, [&](neuron_index source, float, std::uint16_t delay, std::size_t) { out.emplace_back(source, delay); });
    };
    bool same_delays = true;
    for (neuron_index t = 0; t < drawn.neuron_count(); ++t) {
        row(listed, t, theirs);
        if (theirs.empty() && lists == update_lists::cut_to_targets) continue;
        row(drawn, t, mine);
        if (mine.size() != theirs.size()) return listing::other;
        for (std::size_t i = 0; i < mine.size(); ++i) {
            if (mine[i].first != theirs[i].first) return listing::other;
            same_delays = same_delays && mine[i].second == theirs[i].second;
        }
    }
    return same_delays ? listing::same_delays : listing::new_delays;
}

// Whether projection k's delays differ, as written or, where a list replaces a drawn
// projection (`listed`: listing_of), in its synapses.
bool delays_differ(const projection& a, const projection& b, listing listed) {
    return listed == listing::other ? !same_delays(a, b) : listed == listing::new_delays;
}

// Whether `b` is `a` but for its weights and delays (a connection list counts by its
// connections, not by the file they were read from).
bool same_but_weights_and_delays(const projection& a, projection b) {
    b.weight = a.weight;
    b.weight_distribution = a.weight_distribution;
    b.connections.weights = a.connections.weights;
    b.delay = a.delay;
    b.delay_ms = a.delay_ms;
    b.delay_distribution = a.delay_distribution;
    b.connections.delays = a.connections.delays;
    b.connections_file = a.connections_file;
    b.where = a.where;
    return b == a;
}


// A <synapse-model> may change its parameters but those that time its synapses' traces or
// gave their initial state (synapse_parameter::fixed_while_running), and a weight bound may
// not change its sign (the weights it bounds have it).
void check_synapse_models(const network& running, const network& updated) {
    same_count(running.synapse_models, updated.synapse_models, updated.where, "<synapse-model> elements");
    for (std::size_t k = 0; k < updated.synapse_models.size(); ++k) {
        const auto &a = running.synapse_models[k], &b = updated.synapse_models[k];
        if (a.id != b.id || a.model != b.model)
            refuse(b.where, "<synapse-model> '" + b.id + "' is not the running network's '" + a.id + "' of model '" + a.model + "'");
        const auto before = resolve_synapse_model(running, a.id, a.where), after = resolve_synapse_model(updated, b.id, b.where);
        for (std::size_t p = 0; p < after.values.size(); ++p) {
            if (after.values[p] == before.values[p]) continue;
            const auto& parameter = after.info->parameters[p];
            if (parameter.fixed_while_running)
                refuse(b.where, "<synapse-model> '" + b.id + "' changes " + parameter.name + ", which " + parameter.fixed_while_running);
            if (after.info->weight_bound && parameter.name == std::string(after.info->weight_bound) &&
                (after.values[p] > 0) != (before.values[p] > 0))
                refuse(b.where, "<synapse-model> '" + b.id + "' changes the sign of " + parameter.name + ", which its synapses' weights have");
        }
    }
}

std::string name_of(const projection& p, std::size_t k) {
    return p.id.empty() ? std::to_string(k + 1) + " (from '" + p.from + "' to '" + p.to + "')" : "'" + p.id + "'";
}


}  // namespace

void check_update(const network& running, const network& updated, std::uint16_t history, update_lists lists) {
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
        if (a.id != b.id || a.size != b.size || a.seed != b.seed || !same_kind(a.params, b.params) || a.v_inits != b.v_inits)
            refuse(b.where, "population '" + b.id + "' is not the running network's '" + a.id +
                                "' of the same size, seed, model, tau_minus and v-init");
        if (a.rates.empty() != b.rates.empty()) refuse(b.where, "spike source '" + b.id + "' changes between listed spikes and rates");
        if (a.synaptic_elements != b.synaptic_elements || a.tau_ca != b.tau_ca || a.beta_ca != b.beta_ca)
            refuse(b.where, "population '" + b.id + "' changes its synaptic elements, tau_Ca or beta_Ca (structural plasticity)");
    }
    if (updated.structural != running.structural)
        refuse(updated.structural ? updated.structural->where : updated.where,
               "its <structural-plasticity> differs from the running network's");
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
    if (std::tie(updated.connection_order, updated.inputs, updated.outputs, updated.records) !=
        std::tie(running.connection_order, running.inputs, running.outputs, running.records))
        refuse(updated.where, "its inputs, outputs, records or the order of its connections differ from the running network's");
    check_synapse_models(running, updated);
    same_count(running.projections, updated.projections, updated.where, "projections");
    for (std::size_t k = 0; k < updated.projections.size(); ++k) {
        const auto &a = running.projections[k], &b = updated.projections[k];
        const auto listed = a.kind != b.kind ? listing_of(running, updated, k, lists) : listing::other;
        if (!same_but_weights_and_delays(a, b) && listed == listing::other)
            refuse(b.where, "projection " + name_of(b, k) + " is not the running network's of the same kind, ends and rule" +
                                " (a static projection's weights and delays may change, also as a list of its synapses)");
        if (!same_weights(a, b) && a.kind == projection_kind::dense)
            refuse(b.where, "projection " + name_of(b, k) + " changes the weights of a dense projection");
        if (delays_differ(a, b, listed) && a.kind == projection_kind::dense)
            refuse(b.where, "projection " + name_of(b, k) + " changes the delay of a dense projection");
    }
    same_count(running.synapses, updated.synapses, updated.where, "synapses");
    for (std::size_t k = 0; k < updated.synapses.size(); ++k) {
        const auto &a = running.synapses[k], &b = updated.synapses[k];
        if (std::tie(a.from, a.to, a.synapse_model) != std::tie(b.from, b.to, b.synapse_model))
            refuse(b.where, "synapse " + std::to_string(k + 1) + " is not the running network's of the same ends and model");
    }
    // What a spike still on its way reads lies in the history the nodes keep.
    if (changes_delays(running, updated) && longest_delay(updated) > history)
        throw config_error(updated.where, "the longest delay would be " + std::to_string(longest_delay(updated)) +
                                              " ticks; the nodes keep " + std::to_string(history) +
                                              " ticks of output (the longest delay when the network was submitted): submit it anew (--replace) for longer delays");
}

bool changes_delays(const network& running, const network& updated) {
    for (std::size_t k = 0; k < running.projections.size() && k < updated.projections.size(); ++k)
        if (delays_differ(running.projections[k], updated.projections[k],
                          running.projections[k].kind != updated.projections[k].kind ? listing_of(running, updated, k, update_lists::whole)
                                                                                    : listing::other))
            return true;
    for (std::size_t k = 0; k < running.synapses.size() && k < updated.synapses.size(); ++k)
        if (!same_delay(running.synapses[k], updated.synapses[k])) return true;
    return false;
}

bool changes_synapse_models(const network& running, const network& updated) {
    if (running.synapse_models.size() != updated.synapse_models.size()) return false;
    for (std::size_t k = 0; k < running.synapse_models.size(); ++k) {
        const auto &a = running.synapse_models[k], &b = updated.synapse_models[k];
        if (resolve_synapse_model(running, a.id, a.where).values != resolve_synapse_model(updated, b.id, b.where).values) return true;
    }
    return false;
}

std::vector<std::size_t> reweighted_elements(const network& running, const network& updated) {
    std::vector<std::size_t> changed;
    for (std::size_t e = 0; e < running.connection_order.size() && e < updated.connection_order.size(); ++e) {
        const auto& ref = running.connection_order[e];
        const bool differs = ref.kind == connection_ref::type::synapse
                                 ? running.synapses.at(ref.index).weight != updated.synapses.at(ref.index).weight
                                 : !same_weights(running.projections.at(ref.index), updated.projections.at(ref.index));
        if (differs) changed.push_back(e);
    }
    return changed;
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

network with_parameters(network share, const network& parameters, std::uint16_t history) {
    network updated = share;
    updated.neurons = parameters.neurons;
    updated.populations = parameters.populations;
    updated.poisson = parameters.poisson;
    updated.currents = parameters.currents;
    if (!parameters.connection_order.empty()) {
        updated.projections = parameters.projections;
        updated.synapses = parameters.synapses;
        updated.synapse_models = parameters.synapse_models;
    }
    check_update(share, updated, history, update_lists::cut_to_targets);
    return updated;
}

}  // namespace dnnc::protocol
