#pragma once
// A drawn projection written as the connection list of its synapses, for tests of updates
// that make a drawn projection explicit (as pyNN.dnnc does for values given per connection).
#include "dnnc/model/model.hpp"
#include "dnnc/model/resolve.hpp"
#include "dnnc/model/rows.hpp"

#include <cstddef>

namespace dnnc::test {

// `net` with projection `k` (connection element `element`) written as the list of the
// synapses its rule draws, in canonical order, each with `weight` and its drawn delay (a
// list names its ends by their positions in its groups, which have not grown).
inline model::network listed_rule(const model::network& net, std::size_t k, std::size_t element, float weight) {
    model::network out = net;
    auto& p = out.projections[k];
    const model::synapse_rows rows(net);
    const model::symbol_table symbols(net);
    const auto from = symbols.range(p.from, p.where).first, to = symbols.range(p.to, p.where).first;
    for (model::neuron_index t = 0; t < rows.neuron_count(); ++t)
        rows.for_each_of(t, element, [&](model::neuron_index source, float, std::uint16_t delay, std::size_t) {
            p.connections.sources.push_back(static_cast<std::uint32_t>(source - from));
            p.connections.targets.push_back(static_cast<std::uint32_t>(t - to));
            p.connections.weights.push_back(weight);
            p.connections.delays.push_back(delay);
        });
    p.kind = model::projection_kind::list;
    p.p.reset();
    p.indegree.reset();
    p.weight_distribution.reset();
    p.delay_distribution.reset();
    return out;
}

}  // namespace dnnc::test
