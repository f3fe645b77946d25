#include "dnnc/sim/engine_spec.hpp"

#include "dnnc/model/check.hpp"
#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <limits>

namespace dnnc::sim {

engine_spec without_synapses(const engine_spec& s) {
    engine_spec copy;
    copy.node = s.node;
    copy.dt = s.dt;
    copy.history = s.history;
    copy.neurons = s.neurons;
    copy.peers = s.peers;
    copy.generators = s.generators;
    copy.device = s.device;
    copy.batch = s.batch;
    copy.half_weights = s.half_weights;
    copy.list_spikes = s.list_spikes;
    copy.structure = s.structure;
    return copy;
}

engine_spec whole_network(const model::expanded_network& net) {
    engine_spec spec;
    spec.dt = net.dt;
    spec.history = model::longest_delay(net);
    for (const auto& d : net.dense)
        spec.dense.push_back({{d.sources.begin(), d.sources.end()}, {d.targets.begin(), d.targets.end()}, d.weights, d.delay, {}, 0});
    spec.neurons.reserve(net.neuron_count());
    for (model::neuron_index i = 0; i < net.neuron_count(); ++i)
        spec.neurons.push_back({static_cast<global_index>(i), net.member_params(i), net.groups[net.group_of[i]].seed, 0.0});
    spec.generators = net.drive;
    spec.structure = net.structure;
    spec.in_begin = net.in_begin;
    spec.in.reserve(net.synapse_count());
    for (std::size_t s = 0; s < net.synapse_count(); ++s)
        spec.in.push_back({static_cast<global_index>(net.in_source[s]), net.in_weight[s], net.in_delay[s]});
    return spec;
}

engine_spec from_node_config(const model::node_config& config) {
    engine_spec spec;
    spec.node = config.node;
    if (config.share) {
        spec.dt = config.share->dt;
        spec.generators = model::resolve_generators(*config.share);
        spec.structure = model::resolve_structure(*config.share);
    }
    spec.history = static_cast<std::uint16_t>(std::clamp<std::int64_t>(config.history, 1, 65535));
    spec.batch = static_cast<std::uint32_t>(std::clamp<std::int32_t>(config.run.batch, 1, model::max_batch));
    spec.half_weights = config.run.half_weights;
    for (const auto& n : config.neurons) spec.neurons.push_back({n.index, n.params, n.seed, n.window_ms});
    spec.in_begin.assign(spec.neurons.size() + 1, 0);  // every row empty: the engine builds them from the share
    for (const auto& d : config.dense) {
        if (d.delay < 1 || d.delay > 65535) throw protocol_error("node config: dense delay out of range");
        std::vector<std::uint32_t> rows;
        for (auto r : d.rows) {
            if (r < 0 || r >= d.projection_rows) throw protocol_error("node config: dense row out of range");
            rows.push_back(static_cast<std::uint32_t>(r));
        }
        if (!rows.empty() && rows.size() != d.targets.size())
            throw protocol_error("node config: dense rows and targets differ in number");
        if (d.projection_rows < 0 || d.projection_rows > std::numeric_limits<std::uint32_t>::max())
            throw protocol_error("node config: dense projection rows out of range");
        spec.dense.push_back({d.sources, d.targets, d.weights, static_cast<std::uint16_t>(d.delay), std::move(rows),
                              static_cast<std::uint32_t>(d.projection_rows)});
    }
    for (const auto& p : config.peers) spec.peers.push_back({p.id, p.sends, p.receives});
    spec.list_spikes = std::any_of(config.neurons.begin(), config.neurons.end(), [](const auto& n) { return n.record; });
    return spec;
}

engine make_node_engine(const model::node_config& config, const std::string& device) {
    auto spec = from_node_config(config);
    spec.device = device;
    if (!config.share) return engine(spec);
    model::check_network(*config.share);
    return engine(spec, *config.share);
}

namespace {
std::string allocation_message(const std::string& node, std::uint64_t synapses) {
    const std::string who = node.empty() ? "this node" : "node '" + node + "'";
    if (synapses == 0) return who + " cannot allocate memory to build the rows of its share";
    return who + " cannot allocate memory for the " + std::to_string(synapses) + " incoming synapses of its neurons";
}
}  // namespace

allocation_error::allocation_error(std::string node_id, std::uint64_t synapse_count)
    : error(allocation_message(node_id, synapse_count)), node(std::move(node_id)), synapses(synapse_count) {}

}  // namespace dnnc::sim
