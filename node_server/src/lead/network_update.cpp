#include "lead/network_update.hpp"

#include "dnnc/model/check.hpp"
#include "dnnc/protocol/update.hpp"
#include "dnnc/protocol/xml.hpp"

namespace dnnc::node_server {

std::map<std::string, std::string> updated_shares(const plan::network_plan& plan, const plan::topology& topo,
                                                  const std::vector<plan::link_time>& times, const std::vector<double>& windows,
                                                  std::uint64_t epoch, const model::network& net) {
    const plan::network_plan updated{{plan.doc.file, net, plan.doc.clu, plan.doc.run, {}}, plan.net, plan.node_of_neuron,
                                     plan.quality, plan.neurons_per_node, plan.placement_note};
    std::vector<double> latency(topo.link_count(), 0.0);
    for (const auto& t : times) latency[t.link] = t.latency_ms;
    const auto root = plan::build_configs(updated, topo, latency, windows, epoch);
    std::map<std::string, std::string> shares;
    std::vector<const model::node_config*> stack{&root};
    while (!stack.empty()) {
        const auto* c = stack.back();
        stack.pop_back();
        model::document share;
        share.net = *c->share;
        shares[c->node] = protocol::serialize(share);
        for (const auto& child : c->children) stack.push_back(&child);
    }
    return shares;
}

update_bodies update_bodies_of(const plan::network_plan& plan, const plan::topology& topo, const std::vector<plan::link_time>& times,
                               const std::vector<double>& windows, std::uint64_t epoch, std::uint16_t history,
                               const model::network& update) {
    const auto& net = *plan.doc.net;
    model::check_network(update);
    protocol::check_update(net, update, history);
    update_bodies bodies;
    model::document parameters;
    parameters.net = protocol::parameters_of(update);
    bodies.parameters = protocol::serialize(parameters);
    bodies.redelayed = protocol::changes_delays(net, update);
    bodies.resynapsed = bodies.redelayed || !protocol::reweighted_elements(net, update).empty() ||
                        protocol::changes_synapse_models(net, update);
    if (bodies.resynapsed) bodies.shares = updated_shares(plan, topo, times, windows, epoch, update);
    return bodies;
}

void take_update(plan::network_plan& plan, model::network update, bool resynapsed) {
    auto& net = *plan.doc.net;
    net.neurons = std::move(update.neurons);
    net.populations = std::move(update.populations);
    net.poisson = std::move(update.poisson);
    net.currents = std::move(update.currents);
    if (resynapsed) {
        net.projections = std::move(update.projections);
        net.synapses = std::move(update.synapses);
        net.synapse_models = std::move(update.synapse_models);
    }
    for (const auto& n : net.neurons) plan.net.groups[plan.net.group_index.at(n.id)].params = n.params;
    for (const auto& p : net.populations) plan.net.groups[plan.net.group_index.at(p.id)].params = p.params;
    plan.net.drive = model::resolve_generators(net);
}

}  // namespace dnnc::node_server
