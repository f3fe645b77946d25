// Partition quality of the planning graph against the neuron graph it replaces (issue
// target: on random projections the cut stays within 2% of the neuron graph's; on networks
// with structure — one-to-one chains, explicit synapse graphs, dense row blocks — it does not
// get worse). Both partitions are measured on the same neuron graph (units_of of the
// expanded network): edge cut, max imbalance, and the time each pipeline takes.
// Usage: bench_planning_quality
#include "dnnc/partitioner/assign.hpp"
#include "dnnc/plan/neuron_graph.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/plan/planning_graph.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace dnnc;
namespace dp = dnnc::partitioner;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

model::network network_of(const std::string& body) {
    auto doc = protocol::parse_document("<dnnc xmlns=\"urn:dnnc:1\"><network name=\"b\">" + body + "</network></dnnc>", "b.xml");
    model::check_network(*doc.net);
    return *doc.net;
}

// An explicit synapse graph: a random geometric graph's vertices as neurons, its edges as synapses.
model::network explicit_graph(std::size_t n, double degree) {
    const double radius = std::sqrt(degree / (3.141592653589793 * static_cast<double>(n)));
    const dp::graph g = dp::random_geometric(n, radius, 7);
    model::network net;
    net.name = "rgg";
    for (dp::vertex_id v = 0; v < g.vertex_count(); ++v) net.neurons.push_back({"v" + std::to_string(v), {}, {}});
    for (dp::vertex_id v = 0; v < g.vertex_count(); ++v)
        for (auto u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u)
            if (*u > v) {
                net.connection_order.push_back({model::connection_ref::type::synapse, net.synapses.size()});
                net.synapses.push_back({"v" + std::to_string(v), "v" + std::to_string(*u), 1.0, 1, {}, {}, {}});
            }
    model::check_network(net);
    return net;
}

void compare(const char* name, const model::network& net, const dp::physical_cluster& cluster, double limit) {
    const auto expanded = model::expand(net, "b.xml");
    auto t0 = std::chrono::steady_clock::now();
    const auto neurons = plan::units_of(expanded, cluster);
    const auto by_neuron = dp::assign(neurons.g, cluster);
    const double neuron_seconds = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    const auto planned = plan::planning_graph_of(net, cluster);
    const auto placed = plan::place(planned, cluster);
    const double plan_seconds = seconds_since(t0);
    // The planned partition, read on the neuron graph.
    const auto node_of_neuron = planned.spread(placed.node_of_unit);
    std::vector<std::uint32_t> node_of_unit(neurons.g.vertex_count());
    for (std::size_t u = 0; u < node_of_unit.size(); ++u) node_of_unit[u] = node_of_neuron[neurons.first_neuron[u]];
    const auto q = dp::evaluate(neurons.g, node_of_unit, cluster);

    auto ratio = [](dp::weight_t a, dp::weight_t b) { return static_cast<double>(a) / static_cast<double>(std::max<dp::weight_t>(1, b)); };
    const double cut_ratio = ratio(q.edge_cut, by_neuron.metrics.edge_cut);
    std::printf("%-34s %2zu nodes | neuron graph %6zu v %8zu e: cut %9lld vol %7lld imb %.3f %6.2f s | planning graph %6zu v "
                "%6zu e (chunk %llu): cut %9lld vol %7lld imb %.3f %5.2f s | cut ratio %.4f (limit %.2f) %s, volume ratio %.4f\n",
                name, cluster.size(), neurons.g.vertex_count(), neurons.g.edge_count(),
                static_cast<long long>(by_neuron.metrics.edge_cut), static_cast<long long>(by_neuron.metrics.communication_volume),
                by_neuron.metrics.max_imbalance, neuron_seconds, planned.g.vertex_count(), planned.g.edge_count(),
                static_cast<unsigned long long>(planned.chunk), static_cast<long long>(q.edge_cut),
                static_cast<long long>(q.communication_volume), q.max_imbalance, plan_seconds, cut_ratio, limit,
                cut_ratio <= limit ? "MET" : "MISSED", ratio(q.communication_volume, by_neuron.metrics.communication_volume));
}

}  // namespace

int main() {
    // Four random projections between an excitatory and an inhibitory population.
    auto random_ei = [](int exc, int inh, double p) {
        const std::string e = std::to_string(exc), i = std::to_string(inh), q = std::to_string(p);
        return "<population id=\"E\" size=\"" + e + "\" model=\"lif\"/><population id=\"I\" size=\"" + i +
               "\" model=\"lif\"/><projection from=\"E\" to=\"E\" kind=\"random\" p=\"" + q +
               "\" seed=\"1\"/><projection from=\"E\" to=\"I\" kind=\"random\" p=\"" + q +
               "\" seed=\"2\"/><projection from=\"I\" to=\"E\" kind=\"random\" p=\"" + q +
               "\" seed=\"3\"/><projection from=\"I\" to=\"I\" kind=\"random\" p=\"" + q + "\" seed=\"4\"/>";
    };
    // Three populations joined in one-to-one chains, with sparse random background.
    const std::string chains = R"(<population id="A" size="20000" model="relu"/><population id="B" size="20000" model="relu"/>
        <population id="C" size="20000" model="relu"/>
        <projection from="A" to="B" kind="one-to-one"/><projection from="B" to="C" kind="one-to-one"/>
        <projection from="A[0:10000]" to="A[10000:20000]" kind="one-to-one"/>
        <projection from="C" to="A" kind="random" p="0.0002" seed="5"/><projection from="A" to="C" kind="random" p="0.0002" seed="6"/>)";
    const auto mlp = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/mlp/mlp.xml");
    const auto cuba = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    std::printf("planning graph vs neuron graph; cut ratio = planning cut / neuron-graph cut, both on the neuron graph\n");
    for (std::size_t k : {4, 8})
        compare("random E/I, 20k neurons, 4M syn", network_of(random_ei(16000, 4000, 0.01)), dp::complete_cluster(k), 1.02);
    // Degree 1,000, as in the 100k-neuron, 100M-synapse network: the sample's fluctuations,
    // which only the neuron graph can exploit, matter less.
    compare("random E/I, 40k neurons, 40M syn", network_of(random_ei(32000, 8000, 0.025)), dp::complete_cluster(4), 1.02);
    compare("CUBA example, its cluster", *cuba.net, plan::physical_of(*cuba.clu), 1.02);
    for (std::size_t k : {4, 8}) compare("one-to-one chains, 60k neurons", network_of(chains), dp::complete_cluster(k), 1.0);
    for (std::size_t k : {4, 8}) compare("explicit synapses, rgg 20k deg 8", explicit_graph(20000, 8), dp::complete_cluster(k), 1.0);
    for (std::size_t k : {2, 4}) compare("dense row blocks, MLP example", *mlp.net, dp::complete_cluster(k), 1.0);
    return 0;
}
