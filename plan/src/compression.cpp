#include "dnnc/plan/compression.hpp"

#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_codec.hpp"

#include <algorithm>
#include <array>
#include <functional>

namespace dnnc::plan {

namespace {
// Rough costs on one current x86 core, not measured on the cluster: what a tick costs beyond
// its neurons and synapses (the runner's bookkeeping, one lockstep exchange), and each of those.
constexpr double fixed_ms = 0.02, per_neuron_ms = 1e-5, per_synapse_ms = 1e-6;

// Each config under `c`, the root's first.
void each_config(model::node_config& c, const std::function<void(model::node_config&)>& visit) {
    visit(c);
    for (auto& child : c.children) each_config(child, visit);
}

// The links a peer route crosses, each with whether it crosses it from the link's first
// node to its second.
std::vector<std::pair<std::size_t, bool>> links_of(const topology& topo, const model::peer_route& route) {
    std::vector<std::pair<std::size_t, bool>> links;
    for (std::size_t k = 1; k < route.via.size(); ++k) {
        const auto from = topo.index_of(route.via[k - 1]), to = topo.index_of(route.via[k]);
        if (const auto l = topo.link_between(from, to)) links.emplace_back(*l, topo.link(*l).first == from);
    }
    return links;
}
}  // namespace

double tick_compute_ms(const node_load& load) {
    return fixed_ms + per_neuron_ms * static_cast<double>(load.neurons) + per_synapse_ms * load.synapses;
}

void decide_compression(model::node_config& root, const network_plan& plan, const topology& topo,
                        std::vector<link_time>& times) {
    const auto mode = root.run.compress;
    double tick_ms = root.run.tick_period_ms;
    if (mode == model::compress_mode::auto_)
        for (const auto& load : loads_of(plan)) tick_ms = std::max(tick_ms, tick_compute_ms(load));
    // bytes[link][direction]: a tick's largest packets across the link each way.
    std::vector<std::array<double, 2>> bytes(topo.link_count(), {0.0, 0.0});
    each_config(root, [&](model::node_config& c) {
        for (const auto& p : c.peers) {
            const double packet = static_cast<double>(protocol::frame_header_size + protocol::frame_tag_size +
                                                      protocol::signals_size(c.node.size(), true, p.sends.size()));
            for (const auto& [l, forward] : links_of(topo, p)) bytes[l][forward ? 0 : 1] += packet;
        }
    });
    std::vector<bool> compressed(topo.link_count(), mode == model::compress_mode::always);
    for (auto& t : times) {
        if (mode == model::compress_mode::auto_ && t.throughput_bps > 0) {
            const double send_ms = 8e3 * std::max(bytes[t.link][0], bytes[t.link][1]) / t.throughput_bps;
            compressed[t.link] = send_ms > tick_ms;
        }
        t.compressed = compressed[t.link];
    }
    each_config(root, [&](model::node_config& c) {
        for (auto& p : c.peers) {
            const auto crossed = links_of(topo, p);
            p.compress = std::any_of(crossed.begin(), crossed.end(), [&](const auto& l) { return compressed[l.first]; });
        }
    });
}

}  // namespace dnnc::plan
