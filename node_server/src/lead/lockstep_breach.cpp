#include "lead/lockstep_breach.hpp"

namespace dnnc::node_server {

std::optional<std::string> lockstep_breach(const plan::topology& topo, const std::function<bool(std::size_t)>& alive,
                                           const std::function<nlohmann::json(std::size_t)>& waiting,
                                           const std::vector<protocol::node_progress>& nodes, double heartbeat_timeout_ms) {
    for (std::size_t v = 0; v < topo.node_count(); ++v)
        if (!alive(v)) return "node '" + topo.id(v) + "' stopped answering";
    for (std::size_t v = 0; v < topo.node_count(); ++v) {
        const nlohmann::json w = waiting ? waiting(v) : nlohmann::json();
        if (w.is_null() || w.at("ms").get<double>() <= heartbeat_timeout_ms) continue;
        const auto tick = w.at("tick").get<std::int64_t>();
        for (const auto& peer : w.at("peers")) {
            const auto p = topo.index_of(peer.get<std::string>());
            if (nodes[p].completed >= tick)
                return "node '" + topo.id(v) + "' has waited " + std::to_string(static_cast<long long>(w.at("ms").get<double>())) +
                       " ms for the signals node '" + topo.id(p) + "' sent at tick " + std::to_string(tick) + ": the link from '" +
                       topo.id(p) + "' to '" + topo.id(v) + "' is broken";
        }
    }
    return std::nullopt;
}

}  // namespace dnnc::node_server
