#include "lead/row_assembly.hpp"

#include "dnnc/core/error.hpp"
#include "lead/population_growth.hpp"

#include <utility>

namespace dnnc::node_server {

namespace {

// The output columns (row_assembly's): without scheduled grows, the plan's own network,
// expanded already.
std::vector<std::pair<model::neuron_index, std::string>> output_columns(const plan::network_plan& plan) {
    std::optional<model::expanded_network> grown;
    if (next_grow_tick(*plan.doc.net) >= 0) grown = model::expand_neurons(fully_grown(*plan.doc.net));
    const auto& net = grown ? *grown : plan.net;
    std::vector<std::pair<model::neuron_index, std::string>> columns;
    for (const auto& o : net.outputs)
        for (auto i : o.neurons) columns.emplace_back(i, net.neuron_name(i));
    return columns;
}

std::size_t lanes_of(const plan::network_plan& plan) { return static_cast<std::size_t>(plan.doc.run ? plan.doc.run->batch : 1); }

}  // namespace

row_assembly::row_assembly(const plan::network_plan& plan, std::size_t nodes) : nodes_(nodes), lanes_(lanes_of(plan)) {
    std::map<model::neuron_index, std::vector<std::size_t>> columns_of_neuron;
    for (auto& [i, name] : output_columns(plan)) {
        columns_of_neuron[i].push_back(columns_.size());
        columns_.push_back(std::move(name));
    }
    columns_of_.resize(nodes);
    for (const auto& [i, cols] : columns_of_neuron)
        if (i < plan.node_of_neuron.size()) columns_of_[plan.node_of_neuron[i]].push_back(cols);  // not grown yet: none
}

std::size_t row_assembly::values_per_row(const plan::network_plan& plan) { return output_columns(plan).size() * lanes_of(plan); }

bool row_assembly::place(std::size_t v, const protocol::reported_tick& entry, bool keep_spikes) {
    const auto& values = entry.values;
    if (values.size() != columns_of_[v].size() * lanes_) throw protocol_error("tick report with the wrong number of values");
    const std::size_t width = columns_.size();
    auto& row = partial_[entry.tick];
    if (row.reported.empty()) {
        row.values.assign(width * lanes_, 0.0f);
        row.reported.assign(nodes_, false);
    }
    // A report lists lanes within each neuron; a row lists columns within each lane.
    for (std::size_t k = 0; k < columns_of_[v].size(); ++k)
        for (std::size_t lane = 0; lane < lanes_; ++lane)
            for (auto c : columns_of_[v][k]) row.values[lane * width + c] = values[k * lanes_ + lane];
    const bool first = !row.reported[v];
    if (keep_spikes && first) row.spikes.insert(row.spikes.end(), entry.spikes.begin(), entry.spikes.end());
    row.reported[v] = true;
    return first;
}

}  // namespace dnnc::node_server
