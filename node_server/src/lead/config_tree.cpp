#include "lead/config_tree.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/plan/compression.hpp"

#include <algorithm>

namespace dnnc::node_server {

std::vector<double> link_latencies(const lead_state& state) {
    std::vector<double> latency(state.topo.link_count(), 0.0);
    for (const auto& t : state.times) latency[t.link] = t.latency_ms;
    return latency;
}

model::node_config node_configs_of(lead_state& state, const std::map<std::string, std::string>& subleads) {
    state.epoch = plan::draw_epoch();
    model::node_config root = plan::build_configs(state.plan, state.topo, link_latencies(state), state.windows, state.epoch);
    plan::decide_compression(root, state.plan, state.topo, state.times);
    state.history = static_cast<std::uint16_t>(root.history);
    // A node reached through a sub-lead reaches the lead back through it.
    std::vector<model::node_config*> stack{&root};
    while (!stack.empty()) {
        auto* c = stack.back();
        stack.pop_back();
        if (const auto s = subleads.find(c->node); s != subleads.end())
            for (const auto& n : state.plan.doc.clu->nodes)
                if (n.id == s->second) c->lead_via = n.host + ":" + std::to_string(n.port);
        for (auto& child : c->children) stack.push_back(&child);
    }
    if (!root.children.empty()) {
        const auto& first = root.children.front();
        state.standby = endpoint{first.host, static_cast<std::uint16_t>(first.port)};
        state.standby_id = first.node;
    }
    return root;
}

void check_acks(const model::node_config& root, const nlohmann::json& acks) {
    std::map<std::string, std::string> expected;
    std::vector<const model::node_config*> stack{&root};
    while (!stack.empty()) {
        const auto* c = stack.back();
        stack.pop_back();
        expected[c->node] = plan::config_hash(*c);
        for (const auto& child : c->children) stack.push_back(&child);
    }
    for (const auto& a : acks) {
        const auto node = a.at("node").get<std::string>();
        if (expected[node] != a.at("hash").get<std::string>())
            throw error("node '" + node + "' acknowledged a config that differs from the one sent");
        expected.erase(node);
    }
    if (!expected.empty()) throw error("node '" + expected.begin()->first + "' did not acknowledge its config");
}

nlohmann::json installed_nodes(const lead_state& state, const nlohmann::json& acks) {
    auto nodes = nlohmann::json::array();
    for (std::size_t v = 0; v < state.topo.node_count(); ++v) {
        const auto& id = state.topo.id(v);
        const auto ack = std::find_if(acks.begin(), acks.end(), [&](const auto& a) { return a.at("node") == id; });
        const bool acked = ack != acks.end();
        nodes.push_back({{"id", id}, {"neurons", state.plan.neurons_per_node[v]},
                         {"hash", acked ? ack->at("hash").get<std::string>() : std::string()},
                         {"kept", acked && ack->value("kept", false)}, {"prepared", acked && ack->value("prepared", false)}});
    }
    return nodes;
}

}  // namespace dnnc::node_server
