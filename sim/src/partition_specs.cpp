#include "dnnc/sim/engine.hpp"

#include "dnnc/model/expand.hpp"

#include <algorithm>
#include <map>

namespace dnnc::sim {

std::vector<engine_spec> partition_specs(const model::expanded_network& net,
                                         const std::vector<std::uint32_t>& node_of_neuron, std::size_t nodes,
                                         const std::vector<std::string>& node_ids, with_synapses synapses) {
    if (node_of_neuron.size() != net.neuron_count()) throw usage_error("partition_specs: one node per neuron is needed");
    if (!node_ids.empty() && node_ids.size() != nodes) throw usage_error("partition_specs: one id per node is needed");
    auto id = [&](std::size_t n) { return node_ids.empty() ? std::to_string(n) : node_ids[n]; };
    std::vector<engine_spec> specs(nodes);
    for (auto& s : specs) {
        s.in_begin.push_back(0);
        s.history = model::longest_delay(net);
        s.dt = net.dt;
        s.generators = net.drive;
        s.structure = net.structure;
    }
    // (from node, to node) -> the sources whose outputs travel that way, each once: a source
    // is added the first time node `to` is seen to read it.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<global_index>> flows;
    std::vector<std::vector<bool>> reads(nodes, std::vector<bool>(net.neuron_count(), false));
    auto flow = [&](model::neuron_index source, std::uint32_t to) {
        if (reads[to][source]) return;
        reads[to][source] = true;
        flows[{node_of_neuron[source], to}].push_back(source);
    };
    for (model::neuron_index i = 0; i < net.neuron_count(); ++i) {
        const auto here = node_of_neuron[i];
        if (here >= nodes) throw usage_error("partition_specs: neuron " + std::to_string(i) + " is on no node");
        auto& s = specs[here];
        s.neurons.push_back({static_cast<global_index>(i), net.member_params(i), net.groups[net.group_of[i]].seed, 0.0});
        for (auto k = net.in_begin[i]; k < net.in_begin[i + 1]; ++k) {
            const auto source = net.in_source[k];
            if (synapses == with_synapses::yes)
                s.in.push_back({static_cast<global_index>(source), net.in_weight[k], net.in_delay[k]});
            if (node_of_neuron[source] != here) flow(source, here);
        }
        s.in_begin.push_back(s.in.size());
    }
    // Dense projections split by rows: each node computes the rows of its own targets and
    // reads every source, so remote sources flow to it.
    for (const auto& d : net.dense) {
        std::vector<dense_spec> parts(nodes);
        const std::size_t cols = d.sources.size();
        for (std::size_t r = 0; r < d.targets.size(); ++r) {
            const auto here = node_of_neuron[d.targets[r]];
            auto& part = parts[here];
            part.targets.push_back(static_cast<global_index>(d.targets[r]));
            part.rows.push_back(static_cast<std::uint32_t>(r));
            part.weights.insert(part.weights.end(), d.weights.begin() + static_cast<std::ptrdiff_t>(r * cols),
                                d.weights.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols));
        }
        for (std::uint32_t n = 0; n < nodes; ++n) {
            auto& part = parts[n];
            if (part.targets.empty()) continue;
            part.sources.assign(d.sources.begin(), d.sources.end());
            part.delay = d.delay;
            part.projection_rows = static_cast<std::uint32_t>(d.targets.size());
            for (auto source : d.sources)
                if (node_of_neuron[source] != n) flow(source, n);
            specs[n].dense.push_back(std::move(part));
        }
    }
    // Structural plasticity: every node with neurons that have synaptic elements reads all
    // such neurons (structural_plasticity.hpp).
    if (net.structure) {
        std::vector<bool> hosts(nodes, false);
        for (const auto& g : net.structure->groups) g.for_each_member([&](std::uint32_t i) { hosts[node_of_neuron[i]] = true; });
        for (const auto& g : net.structure->groups)
            g.for_each_member([&](std::uint32_t i) {
                for (std::uint32_t n = 0; n < nodes; ++n)
                    if (hosts[n] && n != node_of_neuron[i]) flow(i, n);
            });
    }
    for (auto& [direction, sources] : flows) std::sort(sources.begin(), sources.end());
    for (std::uint32_t a = 0; a < nodes; ++a)
        for (std::uint32_t b = 0; b < nodes; ++b) {
            if (a == b) continue;
            const auto out = flows.find({a, b});
            const auto in = flows.find({b, a});
            if (out == flows.end() && in == flows.end()) continue;
            peer_spec p{id(b), {}, {}};
            if (out != flows.end()) p.sends.assign(out->second.begin(), out->second.end());
            if (in != flows.end()) p.receives.assign(in->second.begin(), in->second.end());
            specs[a].peers.push_back(std::move(p));
        }
    return specs;
}

}  // namespace dnnc::sim
