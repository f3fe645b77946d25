#include "dnnc/node_server/lead_plan.hpp"

#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/from_network.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/xml.hpp"
#include "dnnc/sim/engine.hpp"

#include <algorithm>
#include <random>
#include <set>

namespace dnnc::node_server {

namespace {
std::string memo_key(const protocol::document& doc) {
    protocol::document what;
    what.net = doc.net;
    what.clu = doc.clu;
    what.run = doc.run;
    return protocol::sha256_hex(protocol::serialize(what));
}
}  // namespace

lead_plan plan_network(protocol::document doc, partition_memo* memo) {
    if (!doc.net) throw config_error({doc.file, 0, 0}, "the submitted document has no <network>");
    if (!doc.clu) throw config_error({doc.file, 0, 0}, "the submitted document has no <cluster>");
    lead_plan plan;
    plan.net = protocol::expand(*doc.net, doc.file);
    const std::string key = memo ? memo_key(doc) : std::string();
    if (memo && memo->key == key && memo->node_of_neuron.size() == plan.net.neuron_count()) {
        plan.node_of_neuron = memo->node_of_neuron;
        plan.quality = memo->quality;
    } else {
        const auto physical = partitioner::from_model(*doc.clu);
        const auto units = partitioner::units_of(plan.net, physical);
        std::vector<std::uint32_t> node_of_unit;
        if (units.g.vertex_count() < physical.size()) {
            // More nodes than units: the partitioner cannot make one part per node, so
            // units go round-robin and the remaining nodes idle.
            for (std::size_t u = 0; u < units.g.vertex_count(); ++u)
                node_of_unit.push_back(static_cast<std::uint32_t>(u % physical.size()));
            plan.quality = partitioner::evaluate(units.g, node_of_unit, physical);
        } else {
            partitioner::assignment a = partitioner::assign(units.g, physical);
            node_of_unit = std::move(a.place.node_of_vertex);
            plan.quality = std::move(a.metrics);
        }
        plan.node_of_neuron = units.spread(node_of_unit);
        if (memo) *memo = {key, plan.node_of_neuron, plan.quality};
    }
    plan.neurons_per_node.assign(doc.clu->nodes.size(), 0);
    for (auto n : plan.node_of_neuron) ++plan.neurons_per_node[n];
    plan.doc = std::move(doc);
    return plan;
}

namespace {
// Latency along the route between every pair of nodes, row-major.
std::vector<double> path_latencies(const topology& topo, const std::vector<double>& link_latency_ms) {
    const std::size_t n = topo.node_count();
    std::vector<double> latency(n * n, 0.0);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
            if (a == b) continue;
            const auto r = topo.route(a, b);
            for (std::size_t k = 1; k < r.size(); ++k) latency[a * n + b] += link_latency_ms.at(*topo.link_between(r[k - 1], r[k]));
        }
    return latency;
}
}  // namespace

double emulate_delay(const std::vector<protocol::cluster_link>& links, const std::string& a, const std::string& b) {
    double delay = 0;
    for (const auto& l : links)
        if ((l.from == a && l.to == b) || (l.from == b && l.to == a)) delay = std::max(delay, l.emulate_delay_ms);
    return delay;
}

std::vector<double> wait_windows(const lead_plan& plan, const topology& topo, const std::vector<double>& link_latency_ms) {
    const std::size_t n = topo.node_count();
    const auto latency = path_latencies(topo, link_latency_ms);
    const auto& run = plan.doc.run ? *plan.doc.run : protocol::run_settings{};
    const auto& net = plan.net;
    std::vector<double> windows(net.neuron_count(), 0.0);
    for (protocol::neuron_index i = 0; i < net.neuron_count(); ++i) {
        const auto here = plan.node_of_neuron[i];
        double slowest = -1;
        for (auto s = net.in_begin[i]; s < net.in_begin[i + 1]; ++s) {
            const auto there = plan.node_of_neuron[net.in_source[s]];
            if (there != here) slowest = std::max(slowest, latency[there * n + here]);
        }
        if (slowest >= 0) windows[i] = run.window_factor * slowest + run.window_margin_ms;
    }
    return windows;
}

namespace {
// The network as one node needs it: every projection but the dense ones (their rows travel
// as dense rows) and, of the explicit synapses, those into the node's neurons, in order.
// `synapse_node` is the node of each explicit synapse's target.
protocol::network share_of(const protocol::network& net, const std::vector<std::uint32_t>& synapse_node, std::uint32_t v) {
    protocol::network share;
    share.name = net.name;
    share.where = net.where;
    share.neurons = net.neurons;
    share.populations = net.populations;
    share.inputs = net.inputs;
    share.outputs = net.outputs;
    for (const auto& ref : net.connection_order) {
        if (ref.kind == protocol::connection_ref::type::synapse) {
            if (synapse_node[ref.index] != v) continue;
            share.connection_order.push_back({ref.kind, share.synapses.size()});
            share.synapses.push_back(net.synapses[ref.index]);
        } else if (net.projections[ref.index].kind != protocol::projection_kind::dense) {
            share.connection_order.push_back({ref.kind, share.projections.size()});
            share.projections.push_back(net.projections[ref.index]);
        }
    }
    return share;
}
}  // namespace

std::vector<std::size_t> broadcast_parents(const topology& topo, std::size_t fan_out) {
    std::vector<std::size_t> order{topo.lead()};
    for (std::size_t v = 0; v < topo.node_count(); ++v)
        if (v != topo.lead()) order.push_back(v);
    std::vector<std::size_t> parent(topo.node_count(), topo.lead());
    for (std::size_t p = 1; p < order.size(); ++p) parent[order[p]] = order[(p - 1) / std::max<std::size_t>(1, fan_out)];
    return parent;
}

protocol::node_config build_configs(const lead_plan& plan, const topology& topo, const std::vector<double>& link_latency_ms,
                                    const std::vector<double>& windows_ms, std::uint64_t epoch) {
    const auto& doc = plan.doc;
    const auto& net = plan.net;
    const std::size_t n = topo.node_count();
    const auto latency = path_latencies(topo, link_latency_ms);
    const auto run = doc.run ? *doc.run : protocol::run_settings{};

    std::vector<std::string> ids;
    for (std::size_t v = 0; v < n; ++v) ids.push_back(topo.id(v));
    const auto specs = sim::partition_specs(net, plan.node_of_neuron, n, ids, sim::with_synapses::no);

    std::vector<std::uint32_t> synapse_node;
    synapse_node.reserve(doc.net->synapses.size());
    for (const auto& s : doc.net->synapses) synapse_node.push_back(plan.node_of_neuron[*net.find(s.to)]);

    std::set<protocol::neuron_index> reported;
    for (const auto& o : net.outputs) reported.insert(o.neurons.begin(), o.neurons.end());

    std::vector<protocol::node_config> configs(n);
    for (std::size_t v = 0; v < n; ++v) {
        const auto& node = doc.clu->nodes[v];
        auto& c = configs[v];
        c.node = node.id;
        c.network = net.name;
        c.lead = topo.id(topo.lead());
        c.lead_host = doc.clu->nodes[topo.lead()].host;
        c.lead_port = doc.clu->nodes[topo.lead()].port;
        c.host = node.host;
        c.port = node.port;
        c.history = specs[v].history;
        c.epoch = epoch;
        c.run = run;
        const auto& spec = specs[v];
        for (std::size_t k = 0; k < spec.neurons.size(); ++k) {
            const auto& neuron = spec.neurons[k];
            const auto i = static_cast<protocol::neuron_index>(neuron.index);
            const std::string name = net.neuron_name(i);
            c.neurons.push_back({name, neuron.index, windows_ms[i], neuron.seed, reported.count(i) > 0, neuron.params});
        }
        c.share = share_of(*doc.net, synapse_node, static_cast<std::uint32_t>(v));
        for (const auto& d : spec.dense) c.dense.push_back({d.sources, d.targets, d.delay, d.weights});
        for (const auto& p : spec.peers) {
            const auto other = topo.index_of(p.id);
            const auto& peer_node = doc.clu->nodes[other];
            std::vector<std::string> via;
            for (auto hop : topo.route(v, other)) via.push_back(topo.id(hop));
            double emulated = 0;
            for (std::size_t k = 1; k < via.size(); ++k) emulated += emulate_delay(doc.clu->links, via[k - 1], via[k]);
            c.peers.push_back({p.id, peer_node.host, peer_node.port, via, latency[v * n + other], emulated, p.sends,
                               p.receives});
        }
    }

    // Nest children into parents, deepest first: a node's subtree is complete before it
    // is moved into its parent.
    const auto parent = broadcast_parents(topo, static_cast<std::size_t>(run.fan_out));
    std::vector<std::size_t> depth(n, 0);
    for (std::size_t v = 0; v < n; ++v)
        for (auto u = v; u != topo.lead(); u = parent[u]) ++depth[v];
    std::vector<std::size_t> order(n);
    for (std::size_t v = 0; v < n; ++v) order[v] = v;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
    auto by_document_order = [&](const protocol::node_config& a, const protocol::node_config& b) {
        return topo.index_of(a.node) < topo.index_of(b.node);
    };
    for (auto v : order) {
        auto& children = configs[v].children;
        std::stable_sort(children.begin(), children.end(), by_document_order);
        if (v != topo.lead()) configs[parent[v]].children.push_back(std::move(configs[v]));
    }
    return std::move(configs[topo.lead()]);
}

std::uint64_t draw_epoch() {
    std::random_device device;
    std::uint64_t epoch = 0;
    while (epoch == 0) epoch = (std::uint64_t{device()} << 32) | device();
    return epoch;
}

std::string config_hash(const protocol::node_config& config) {
    protocol::node_config own = config;
    own.children.clear();
    return protocol::sha256_hex(protocol::serialize(own));
}

}  // namespace dnnc::node_server
