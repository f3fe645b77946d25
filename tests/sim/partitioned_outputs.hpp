#pragma once
// Every neuron's output at every tick of a network run on `nodes` engines in one process,
// the neurons dealt round the nodes unevenly: what the generator tests compare across
// partitions.
#include "dnnc/sim/runner.hpp"

#include <mutex>
#include <vector>

namespace dnnc::sim::testing {

inline std::vector<std::vector<float>> partitioned_outputs(const model::expanded_network& net, int ticks, std::size_t nodes) {
    std::vector<std::uint32_t> node_of(net.neuron_count());
    for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = static_cast<std::uint32_t>((i * 7 + i / 13) % nodes);
    local_exchange exchange(partition_specs(net, node_of, nodes));
    std::vector<std::vector<float>> got(static_cast<std::size_t>(ticks), std::vector<float>(net.neuron_count()));
    std::mutex m;
    for (std::size_t n = 0; n < nodes; ++n)
        exchange.observe(n, [&](tick_t t, const engine& e) {
            std::lock_guard<std::mutex> lock(m);
            for (const auto& s : e.spec().neurons) got[static_cast<std::size_t>(t)][static_cast<std::size_t>(s.index)] = e.output(s.index);
        });
    exchange.run_until(ticks - 1);
    return got;
}

}  // namespace dnnc::sim::testing
