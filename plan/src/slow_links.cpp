#include "dnnc/plan/slow_links.hpp"

#include "reads.hpp"

#include "dnnc/plan/compression.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_codec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

namespace dnnc::plan {

tick_estimate estimate_tick(const model::network& net, const model::expanded_network& neurons, const model::cluster& clu,
                            const model::run_settings& run, const std::vector<std::uint32_t>& node_of_neuron) {
    const std::size_t n = clu.nodes.size();
    tick_estimate out;
    const auto loads = loads_of(net, node_of_neuron, n);
    double capacity = 0;
    for (const auto& node : clu.nodes) capacity += node.capacity;
    const double mean_capacity = capacity / static_cast<double>(n);
    for (std::size_t v = 0; v < n; ++v)
        if (loads[v].neurons > 0)
            out.compute_ms = std::max(out.compute_ms, tick_compute_ms(loads[v]) * mean_capacity / clu.nodes[v].capacity);

    const bool dense = run.send == model::send_mode::always;
    const double spike_share = std::min(1.0, assumed_rate_hz * neurons.dt / 1000);
    const auto reads = remote_reads(pieces_of(net), node_of_neuron, n);
    std::vector<double> values(n * n, 0.0);  // [a * n + b]: a tick's values from node a to node b
    for (model::neuron_index i = 0; i < node_of_neuron.size(); ++i) {
        const double share = dense || !model::emits_spikes(neurons.params_of(i).model) ? 1.0 : spike_share;
        for (std::size_t b = 0; b < n; ++b)
            if (reads[b][i]) values[node_of_neuron[i] * n + b] += share;
    }
    const topology topo(clu);
    std::vector<std::array<double, 2>> bytes(topo.link_count(), {0.0, 0.0});  // per link, first node to second and back
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
            if (values[a * n + b] <= 0) continue;
            const auto count = static_cast<std::size_t>(std::ceil(values[a * n + b]));
            const auto packet = static_cast<double>(protocol::frame_header_size + protocol::frame_tag_size +
                                                    protocol::signals_size(clu.nodes[a].id.size(), dense, count));
            const auto route = topo.route(a, b);
            for (std::size_t k = 1; k < route.size(); ++k) {
                const auto l = *topo.link_between(route[k - 1], route[k]);
                bytes[l][topo.link(l).first == route[k - 1] ? 0 : 1] += packet;
            }
        }
    for (std::size_t l = 0; l < topo.link_count(); ++l) {
        const auto [a, b] = topo.link(l);
        const auto bandwidth = declared_bandwidth(clu.links, topo.id(a), topo.id(b));
        if (!bandwidth) continue;
        const double ms = 8e3 * std::max(bytes[l][0], bytes[l][1]) / *bandwidth;
        if (ms > out.transfer_ms) {
            out.transfer_ms = ms;
            out.busiest_link = l;
        }
    }
    return out;
}

namespace {
// clu without the nodes in `idle` and their links.
model::cluster without(const model::cluster& clu, const std::vector<std::string>& idle) {
    auto gone = [&](const std::string& id) { return std::find(idle.begin(), idle.end(), id) != idle.end(); };
    model::cluster sub = clu;
    sub.nodes.erase(std::remove_if(sub.nodes.begin(), sub.nodes.end(), [&](const auto& n) { return gone(n.id); }), sub.nodes.end());
    sub.links.erase(std::remove_if(sub.links.begin(), sub.links.end(), [&](const auto& l) { return gone(l.from) || gone(l.to); }),
                    sub.links.end());
    return sub;
}
}  // namespace

slow_link_choice place_around_slow_links(const model::network& net, const model::expanded_network& neurons,
                                         const model::cluster& clu, const model::run_settings& run,
                                         std::vector<std::uint32_t> everywhere, const sub_cluster_placer& place_on) {
    slow_link_choice best;
    best.before = best.after = estimate_tick(net, neurons, clu, run, everywhere);
    best.node_of_neuron = std::move(everywhere);
    const topology topo(clu);
    while (best.after.busiest_link) {
        const auto [a, b] = topo.link(*best.after.busiest_link);
        std::optional<slow_link_choice> kept;
        for (const auto end : {a, b}) {
            const auto& id = topo.id(end);
            if (end == topo.lead() || std::find(best.idle.begin(), best.idle.end(), id) != best.idle.end()) continue;
            auto idle = best.idle;
            idle.push_back(id);
            const auto sub = without(clu, idle);
            if (!topology(sub).joined()) continue;
            auto placed = place_on(sub);
            for (auto& v : placed) v = static_cast<std::uint32_t>(topo.index_of(sub.nodes.at(v).id));
            const auto estimate = estimate_tick(net, neurons, clu, run, placed);
            if (estimate.total_ms() > keep_share * best.after.total_ms()) continue;
            if (kept && estimate.total_ms() >= kept->after.total_ms()) continue;
            kept = slow_link_choice{std::move(placed), std::move(idle), best.before, estimate};
        }
        if (!kept) break;
        best = std::move(*kept);
    }
    return best;
}

std::string describe(const slow_link_choice& choice, const model::cluster& clu) {
    if (choice.idle.empty()) return {};
    std::ostringstream out;
    out.precision(3);
    out << "left idle for slow links:";
    for (const auto& id : choice.idle) out << ' ' << id;
    const topology topo(clu);
    out << " (estimated tick " << choice.before.total_ms() << " ms on every node, " << choice.before.transfer_ms
        << " of it on link ";
    if (choice.before.busiest_link) {
        const auto [a, b] = topo.link(*choice.before.busiest_link);
        out << topo.id(a) << " - " << topo.id(b);
    }
    out << "; " << choice.after.total_ms() << " ms without them)";
    return out.str();
}

}  // namespace dnnc::plan
