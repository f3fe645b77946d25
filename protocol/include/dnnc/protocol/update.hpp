#pragma once
// Updates of a running network's parameters (docs/simulation.md, "Updating parameters"): a
// new version of the network that differs from the running one only in what a neuron, a
// generator, a spike source, a synapse's weight, a static synapse's delay or a synapse
// model's parameters may change between two ticks. Everything that places, wires or numbers neurons, what their initial
// state was drawn from, every synapse's ends and model, and structural plasticity (synaptic
// elements, calcium, <structural-plasticity>) stay.
#include "dnnc/model/model.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnnc::protocol {

// config_error located at the first element of `updated` that differs from `running` in
// more than its parameters, saying what differs. May change: a population's or neuron's
// model parameters (not its model, tau_minus, v-init* or u-init), a spike source's spikes, rates,
// start and stop, a <poisson>'s rate and weight, a current generator's amplitude, offset,
// frequency, phase, mean, std, start and stop; weights (a projection's weight or its weight
// distribution's parameters, a list's weights, a <synapse>'s weight; not a dense projection's);
// static synapses' delays (a projection's delay or its delay distribution's parameters, a
// list's delays, a <synapse>'s delay; not a dense projection's), when the longest delay then
// stays within `history`: the ticks of output the nodes keep (longest_delay of the network
// as it was submitted or restored); a <synapse-model>'s parameters but those that time
// traces or give a synapse its initial state, and a weight bound's sign.
// A drawn projection may become a connection list of its own synapses (the same sources
// for each target, in canonical order), with new weights and delays: the list is checked
// against the rule's rows, whole on the lead; in a node's share (`cut_to_targets`) only for
// the targets it lists.
enum class update_lists { whole, cut_to_targets };
void check_update(const model::network& running, const model::network& updated, std::uint16_t history, update_lists lists = update_lists::whole);
// Whether `updated` (which passed check_update against `running`) changes a delay (of a
// drawn projection listed anew: whether its synapses' delays differ).
bool changes_delays(const model::network& running, const model::network& updated);
// Whether `updated` (which passed check_update against `running`) changes a synapse model's
// parameters.
bool changes_synapse_models(const model::network& running, const model::network& updated);
// The connection elements (positions in connection_order) whose weights `updated` (which
// passed check_update against `running`) changes.
std::vector<std::size_t> reweighted_elements(const model::network& running, const model::network& updated);

// What an update that changes no weight, delay or synapse model sends the nodes: `net`'s name, dt, neurons,
// populations and generators, none of its wiring. (One that changes weights, delays or
// synapse models sends each node its share of the updated network, wiring included.)
model::network parameters_of(const model::network& net);
// `share` (a node's share of the running network) with the parameters of `parameters`
// (parameters_of an update, or the node's updated share: then with its wiring too);
// config_error when they do not fit it (check_update, `history` the ticks the node keeps).
model::network with_parameters(model::network share, const model::network& parameters, std::uint16_t history);

}  // namespace dnnc::protocol
