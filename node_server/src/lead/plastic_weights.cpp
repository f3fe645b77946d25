#include "lead/plastic_weights.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/model/synapse_models.hpp"
#include "node_messages.hpp"

#include <algorithm>
#include <map>

namespace dnnc::node_server {

using json = nlohmann::json;

std::string element_label(const model::network& net, std::size_t element) {
    const auto& ref = net.connection_order.at(element);
    if (ref.kind == model::connection_ref::type::synapse) return "synapse[" + std::to_string(ref.index) + "]";
    const auto& id = net.projections[ref.index].id;
    return id.empty() ? "projection[" + std::to_string(ref.index) + "]" : id;
}

std::vector<plastic_element> plastic_elements(const model::network& net) {
    std::vector<plastic_element> plastic;
    for (std::size_t e = 0; e < net.connection_order.size(); ++e) {
        const auto& ref = net.connection_order[e];
        const bool synapse = ref.kind == model::connection_ref::type::synapse;
        const auto& model = synapse ? net.synapses[ref.index].synapse_model : net.projections[ref.index].synapse_model;
        const auto& where = synapse ? net.synapses[ref.index].where : net.projections[ref.index].where;
        const auto resolved = model::resolve_synapse_model(net, model, where);
        if (!resolved.info->plastic) continue;
        const auto* bound = resolved.info->weight_bound;
        plastic.push_back({e, element_label(net, e), synapse, resolved.id, resolved.info->name,
                           bound ? std::optional<double>(resolved.value(bound)) : std::nullopt});
    }
    return plastic;
}

json named_weights_page(const plan::network_plan& plan, const std::vector<plastic_element>& plastic, const json& request,
                        const std::function<json(std::size_t node, const json& page)>& ask) {
    const auto& net = *plan.doc.net;
    const auto nodes = plan.doc.clu->nodes.size();
    const bool grown = request.value("grown", false);
    const auto& structure = plan.net.structure;
    if (grown && !structure) throw usage_error("the network has no structural plasticity");
    const auto node = grown ? std::size_t{plan.node_of_neuron.at(structure->groups.front().first_member())} : request.at("node").get<std::size_t>();
    if (node >= nodes) throw usage_error("no node " + std::to_string(node) + " (the cluster has " + std::to_string(nodes) + ")");
    const json page{{"from", request.at("from").get<std::uint64_t>()},
                    {"limit", std::min(request.at("limit").get<std::uint64_t>(), max_weights_page)}, {"grown", grown}};
    const json reply = ask(node, page);
    json rows = json::array();
    if (grown) {
        for (const auto& row : reply.at("rows"))
            rows.push_back({structure->pairings.at(row[2].get<std::size_t>()).id, plan.net.neuron_name(row[0].get<model::neuron_index>()),
                            plan.net.neuron_name(row[1].get<model::neuron_index>())});
        return {{"total", reply.at("total")}, {"rows", rows}};
    }
    json labels = json::array();
    for (const auto& p : plastic) labels.push_back(p.label);
    for (const auto& row : reply.at("rows"))
        rows.push_back({element_label(net, row[0].get<std::size_t>()), plan.net.neuron_name(row[1].get<model::neuron_index>()),
                        plan.net.neuron_name(row[2].get<model::neuron_index>()), row[3]});
    return {{"nodes", nodes}, {"plastic", labels}, {"total", reply.at("total")}, {"rows", rows}};
}

json weight_histograms_of(const std::vector<plastic_element>& plastic, std::int64_t tick,
                          const std::function<void(weight_groups&)>& bin_everywhere) {
    // Each histogram's elements, and its first element, which gives its name, model and bound.
    weight_groups all, unbounded;
    std::vector<const plastic_element*> first_of;
    std::map<std::string, std::size_t> synapses_of;  // the histogram of each synapse model's explicit synapses
    for (const auto& p : plastic) {
        auto k = first_of.size();
        if (p.synapse) k = synapses_of.emplace(p.reference, k).first->second;
        if (k == first_of.size()) {
            first_of.push_back(&p);
            all.elements.emplace_back();
        }
        all.elements[k].push_back(p.element);
    }
    for (std::size_t k = 0; k < first_of.size(); ++k)
        if (!first_of[k]->bound) {
            unbounded.histograms.emplace_back();
            unbounded.elements.push_back(all.elements[k]);
        }
    if (!unbounded.histograms.empty()) bin_everywhere(unbounded);
    for (std::size_t k = 0, u = 0; k < first_of.size(); ++k) {
        sim::weight_histogram h;
        if (const auto& bound = first_of[k]->bound) {
            h.lo = std::min(0.0, *bound);
            h.hi = std::max(0.0, *bound);
        } else if (const auto& seen = unbounded.histograms[u++]; seen.count > 0) {
            h.lo = std::min(0.0, static_cast<double>(seen.min));
            h.hi = std::max(0.0, static_cast<double>(seen.max));
        }
        h.bins.assign(weight_histogram_bins, 0);
        all.histograms.push_back(std::move(h));
    }
    if (!first_of.empty()) bin_everywhere(all);
    json projections = json::array();
    for (std::size_t k = 0; k < first_of.size(); ++k) {
        const auto& p = *first_of[k];
        const auto& h = all.histograms[k];
        json entry{{"projection", p.synapse ? "synapses (" + p.reference + ")" : p.label},
                   {"model", p.model},
                   {"lo", h.lo},
                   {"hi", h.hi},
                   {"synapses", h.count},
                   {"bins", h.bins}};
        if (h.count > 0) {
            entry["min"] = h.min;
            entry["max"] = h.max;
        }
        projections.push_back(std::move(entry));
    }
    return json{{"tick", tick}, {"bins", weight_histogram_bins}, {"projections", projections}};
}

}  // namespace dnnc::node_server
