#include "dnnc/plan/counts.hpp"

#include "dnnc/model/resolve.hpp"
#include "dnnc/model/rows.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <functional>

namespace dnnc::plan {

network_size size_of(const model::network& net) {
    network_size size;
    // Fixed-outdegree rows are drawn source by source: their count is known without them.
    const model::synapse_rows rows(net, {});
    size.neurons = rows.neuron_count();
    size.synapses = tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, rows.neuron_count(), 1024), std::uint64_t{0},
        [&](const tbb::blocked_range<std::size_t>& r, std::uint64_t n) {
            for (auto i = r.begin(); i < r.end(); ++i) n += rows.count(static_cast<model::neuron_index>(i));
            return n;
        },
        std::plus<>());
    for (std::size_t e = 0; e < rows.element_count(); ++e) size.synapses += rows.outdegree_synapses(e);
    const model::symbol_table symbols(net);
    for (const auto& p : net.projections)
        if (p.kind == model::projection_kind::dense)
            size.dense_weights += symbols.range(p.from, p.where).size * symbols.range(p.to, p.where).size;
    return size;
}

}  // namespace dnnc::plan
