#include "lead/memory_fit.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/sim/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace dnnc::node_server {

void check_memory_fit(const plan::network_plan& plan, const std::vector<std::optional<protocol::node_status>>& statuses, bool replace) {
    const auto loads = plan::loads_of(plan);
    const auto& nodes = plan.doc.clu->nodes;
    const auto batch = static_cast<std::uint32_t>(plan.doc.run ? plan.doc.run->batch : 1);
    const bool half_weights = plan.doc.run && plan.doc.run->half_weights;
    struct host {
        std::uint64_t available = 0, released = 0;
        double needed = 0, synapses = 0;
        std::vector<std::string> nodes;
    };
    std::map<std::string, host> hosts;
    for (std::size_t v = 0; v < nodes.size(); ++v) {
        if (!statuses[v]) continue;  // it did not answer: the probes that follow name it
        const auto& memory = statuses[v]->memory;
        sim::share_size share;
        share.synapses = static_cast<std::uint64_t>(loads[v].synapses);
        share.neurons = loads[v].neurons;
        share.dense_weights = loads[v].dense_weights;
        share.batch = batch;
        share.values_per_synapse = loads[v].values_per_synapse;
        share.plastic = loads[v].plastic;
        share.half_weights = half_weights;
        share.longest_row = static_cast<std::uint64_t>(loads[v].longest_row);
        share.network_neurons = plan.node_of_neuron.size();
        const auto needed = static_cast<double>(sim::bytes_needed(share)) + loads[v].rule_state_bytes;
        const auto limit = memory.limit;
        if (limit > 0 && needed > static_cast<double>(limit))
            throw usage_error("the network does not fit in memory: node " + nodes[v].id + " would hold about " +
                        std::to_string(static_cast<long long>(loads[v].synapses)) + " synapses, needing about " +
                        std::to_string(static_cast<long long>(needed / (1 << 20))) + " MiB; its limit is " +
                        std::to_string(limit >> 20) + " MiB (--memory-limit). Nothing was changed on the cluster.");
        auto& h = hosts[is_loopback_host(nodes[v].host) ? "this machine" : nodes[v].host];
        h.available = std::max(h.available, memory.available);
        if (replace) h.released += memory.network;
        h.needed += needed;
        h.synapses += loads[v].synapses;
        h.nodes.push_back(nodes[v].id);
    }
    for (const auto& [name, h] : hosts) {
        const double room = static_cast<double>(h.available + h.released);
        if (h.available == 0 || h.needed <= 0.9 * room) continue;  // 0: the machine did not say
        std::string list;
        for (const auto& id : h.nodes) list += (list.empty() ? "" : ", ") + id;
        auto gib = [](double bytes) {
            char text[32];
            std::snprintf(text, sizeof text, "%.1f", bytes / (1 << 30));
            return std::string(text);
        };
        throw usage_error("the network does not fit in memory: nodes " + list + " on " + name + " would hold about " +
                    std::to_string(static_cast<long long>(h.synapses)) + " synapses, needing about " + gib(h.needed) +
                    " GiB; " + gib(room) + " GiB are available there. Nothing was changed on the cluster.");
    }
}

}  // namespace dnnc::node_server
