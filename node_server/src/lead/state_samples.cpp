#include "lead/state_samples.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <limits>

namespace dnnc::node_server {

using json = nlohmann::json;

state_samples::state_samples(const model::expanded_network& net, const std::vector<std::uint32_t>& node_of_neuron,
                             std::size_t nodes)
    : of_node_(nodes), layout_(json::array()) {
    for (const auto& s : net.samplings) {
        json neurons = json::array();
        for (auto i : s.neurons) {
            order_.push_back({static_cast<std::uint32_t>(i), node_of_neuron[i], s.every, s.variables.size()});
            const auto& g = net.groups[net.group_of[i]];
            neurons.push_back(json::array({i, g.id, g.member + (i - g.first)}));
        }
        layout_.push_back({{"variables", s.variables}, {"every", s.every}, {"neurons", std::move(neurons)}});
    }
    std::sort(order_.begin(), order_.end(), [](const sampled& a, const sampled& b) { return a.neuron < b.neuron; });
    for (std::size_t k = 0; k < order_.size(); ++k) of_node_[order_[k].node].push_back(k);
}

void state_samples::add(std::size_t v, std::int64_t m, const json& values) {
    std::size_t expected = 0;
    for (auto k : of_node_[v])
        if (m % order_[k].every == 0) expected += order_[k].variables;
    if (values.size() != expected) throw protocol_error("tick report with the wrong number of samples");
    auto& parts = partial_[m];
    parts.resize(of_node_.size());
    parts[v] = values.get<std::vector<float>>();
}

void state_samples::complete(std::int64_t tick) {
    if (tick == 0) complete_sample(tick, 0);
    complete_sample(tick, tick + 1);
}

void state_samples::complete_sample(std::int64_t tick, std::int64_t m) {
    const auto it = partial_.find(m);
    if (it == partial_.end()) return;  // nothing was due
    std::vector<std::size_t> cursor(of_node_.size(), 0);
    std::vector<float> values;
    for (const auto& s : order_) {
        if (m % s.every != 0) continue;
        const auto& part = it->second[s.node];
        auto& at = cursor[s.node];
        if (part.empty()) {  // a node the lead stopped waiting for (window mode)
            values.insert(values.end(), s.variables, std::numeric_limits<float>::quiet_NaN());
            continue;
        }
        values.insert(values.end(), part.begin() + static_cast<std::ptrdiff_t>(at),
                      part.begin() + static_cast<std::ptrdiff_t>(at + s.variables));
        at += s.variables;
    }
    partial_.erase(it);
    values_held_ += values.size();
    held_.push_back({tick, m, std::move(values)});
    while (values_held_ > max_values_held) {
        values_held_ -= held_.front().values.size();
        lost_ += static_cast<std::int64_t>(held_.front().values.size());
        held_.pop_front();
    }
}

void state_samples::forget_before(std::int64_t from) {
    while (!held_.empty() && held_.front().tick < from) {
        values_held_ -= held_.front().values.size();
        held_.pop_front();
    }
}

json state_samples::answer(std::int64_t from, std::int64_t& through, std::size_t budget) const {
    json samples = json::array();
    std::size_t count = 0;
    std::int64_t last_tick = from - 1;
    for (const auto& s : held_) {
        if (s.tick < from) continue;
        if (s.tick > through) break;
        if (count > 0 && s.tick != last_tick && count + s.values.size() > budget) {
            through = s.tick - 1;
            break;
        }
        samples.push_back(json::array({s.m, s.values}));
        count += s.values.size();
        last_tick = s.tick;
    }
    return samples;
}

json state_samples::layout() const { return layout_; }

}  // namespace dnnc::node_server
