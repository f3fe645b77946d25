#include "dnnc/sim/fresh_plastic_state.hpp"

#include "rules/synapse_rule.hpp"

#include <algorithm>

namespace dnnc::sim {

namespace {
void add_trace(double tau, bool post, std::vector<model::spike_trace>& traces) {
    const auto same = [&](const model::spike_trace& t) { return t.tau == tau && t.post == post; };
    if (std::none_of(traces.begin(), traces.end(), same)) traces.push_back({tau, post, {}, {}});
}
}  // namespace

fresh_plastic_state::fresh_plastic_state(const std::vector<model::resolved_synapse_model>& models)
    : rules_(models.size()), appended_(models.size(), 0) {
    for (std::size_t m = 0; m < models.size(); ++m)
        if (models[m].info->plastic) rules_[m] = make_synapse_rule(models[m]);
}

fresh_plastic_state::~fresh_plastic_state() = default;

void fresh_plastic_state::append_synapse(std::uint32_t model, float weight, std::vector<float>& values) {
    auto& rule = *rules_.at(model);
    // An engine's rule takes its synapses' weights as built (plasticity.cpp) and the store
    // keeps the weight itself; a snapshot holds that weight, then the rule's state.
    rule.add_synapses({weight});
    values.push_back(weight);
    const auto first = values.size();
    values.resize(first + rule.state_size());
    if (rule.has_synapse_state()) rule.save_state(appended_[model], values.data() + first);
    ++appended_[model];
}

void fresh_plastic_state::add_source_trace(std::uint32_t model, std::vector<model::spike_trace>& traces) const {
    add_trace(rules_.at(model)->source_trace_tau(), false, traces);
}

void fresh_plastic_state::add_target_trace(std::uint32_t model, double tau_minus, std::vector<model::spike_trace>& traces) const {
    if (logs_targets(*rules_.at(model))) add_trace(tau_minus, true, traces);
}

}  // namespace dnnc::sim
