#include "dnnc/plan/plan.hpp"

#include "reads.hpp"

#include "dnnc/plan/slow_links.hpp"

#include "dnnc/model/resolve.hpp"
#include "dnnc/model/synapse_models.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace dnnc::plan {

namespace {
// What a partition depends on: the network, the cluster and the run settings, and the
// placement it starts from, if any (with its migration weight).
std::string memo_key(const model::document& doc, const current_placement* current) {
    model::document what;
    what.net = doc.net;
    what.clu = doc.clu;
    what.run = doc.run;
    std::string key = protocol::sha256_hex(protocol::serialize(what));
    if (!current) return key;
    std::string placed(reinterpret_cast<const char*>(current->node_of_neuron.data()),
                       current->node_of_neuron.size() * sizeof(std::uint32_t));
    for (const auto& id : current->nodes) placed += "\n" + id;
    placed += "\n" + std::to_string(current->migration_weight);
    return key + " from " + protocol::sha256_hex(placed);
}

// Each unit's current node in `cluster`: the one that holds most of its neurons (the lowest
// index on a tie), or cluster.nodes.size() when none of them is on one of its nodes.
partitioner::current_assignment current_units(const planning_graph& graph, const current_placement& current,
                                              const model::cluster& cluster, partitioner::weight_t fan_in_share) {
    if (current.node_of_neuron.size() > graph.neuron_count())
        throw usage_error("a current placement of " + std::to_string(current.node_of_neuron.size()) +
                          " neurons for a network of " + std::to_string(graph.neuron_count()));
    const std::size_t nodes = cluster.nodes.size();
    std::vector<std::uint32_t> index_of(current.nodes.size(), static_cast<std::uint32_t>(nodes));
    for (std::size_t k = 0; k < current.nodes.size(); ++k)
        for (std::size_t v = 0; v < nodes; ++v)
            if (cluster.nodes[v].id == current.nodes[k]) index_of[k] = static_cast<std::uint32_t>(v);
    auto node_of = [&](std::size_t neuron) -> std::size_t {
        if (neuron >= current.node_of_neuron.size() || current.node_of_neuron[neuron] >= index_of.size()) return nodes;
        return index_of[current.node_of_neuron[neuron]];
    };
    const std::size_t units = graph.g.vertex_count();
    std::vector<std::uint64_t> held(units * (nodes + 1), 0);  // [unit][node], node `nodes`: none
    for (std::size_t k = 0; k < graph.segment_count(); ++k)
        for (auto n = graph.segment_first[k]; n < graph.segment_first[k + 1]; ++n)
            ++held[graph.unit_of_segment[k] * (nodes + 1) + node_of(n)];
    partitioner::current_assignment out;
    // A unit weighs its neurons + its incoming synapses / fan_in_share, and its synapses move
    // with it: fan_in_share x that weight is what current_placement's weight is counted in.
    out.migration.weight = current.migration_weight * static_cast<double>(fan_in_share);
    for (std::size_t u = 0; u < units; ++u) {
        const auto* row = &held[u * (nodes + 1)];
        const auto most = std::max_element(row, row + nodes);
        out.node_of_vertex.push_back(*most > 0 ? static_cast<std::uint32_t>(most - row) : static_cast<std::uint32_t>(nodes));
    }
    return out;
}
}  // namespace

current_placement placement_of(const network_plan& plan) {
    current_placement out;
    out.node_of_neuron = plan.node_of_neuron;
    for (const auto& n : plan.doc.clu->nodes) out.nodes.push_back(n.id);
    return out;
}

model::expanded_network neurons_and_dense_blocks(const model::network& net, const std::string& document_file) {
    model::network dense_only = net;
    dense_only.synapses.clear();
    dense_only.projections.clear();
    dense_only.connection_order.clear();
    for (const auto& ref : net.connection_order)
        if (ref.kind == model::connection_ref::type::projection &&
            net.projections[ref.index].kind == model::projection_kind::dense) {
            dense_only.connection_order.push_back({ref.kind, dense_only.projections.size()});
            dense_only.projections.push_back(net.projections[ref.index]);
        }
    return model::expand(dense_only, document_file);
}

network_plan plan_network(model::document doc, partition_memo* memo, const current_placement* current) {
    if (!doc.net) throw config_error({doc.file, 0, 0}, "the submitted document has no <network>");
    if (!doc.clu) throw config_error({doc.file, 0, 0}, "the submitted document has no <cluster>");
    network_plan plan;
    plan.net = neurons_and_dense_blocks(*doc.net, doc.file);
    const std::string key = memo ? memo_key(doc, current) : std::string();
    if (memo && memo->key == key && memo->node_of_neuron.size() == plan.net.neuron_count()) {
        plan.node_of_neuron = memo->node_of_neuron;
        plan.quality = memo->quality;
        plan.placement_note = memo->placement_note;
    } else {
        const auto physical = plan::physical_of(*doc.clu);
        const planning_options options;
        const auto graph = planning_graph_of(*doc.net, physical, options);
        auto place_on = [&](const model::cluster& clu) {
            std::optional<partitioner::current_assignment> now;
            if (current) now = current_units(graph, *current, clu, options.fan_in_share);
            return place(graph, clu.nodes.size() == doc.clu->nodes.size() ? physical : physical_of(clu), {}, {},
                         now ? &*now : nullptr);
        };
        auto placed = place_on(*doc.clu);
        plan.node_of_neuron = graph.spread(placed.node_of_unit);
        plan.quality = std::move(placed.quality);
        if (partitioner::has_link_capacities(physical)) {
            auto choice = place_around_slow_links(*doc.net, plan.net, *doc.clu, doc.run ? *doc.run : model::run_settings{},
                                                  plan.node_of_neuron,
                                                  [&](const model::cluster& sub) { return graph.spread(place_on(sub).node_of_unit); });
            if (!choice.idle.empty()) {
                plan.node_of_neuron = std::move(choice.node_of_neuron);
                std::vector<std::uint32_t> node_of_unit;
                for (const auto first : graph.unit_first) node_of_unit.push_back(plan.node_of_neuron[first]);
                plan.quality = partitioner::evaluate(graph.g, node_of_unit, physical, {});
                plan.placement_note = describe(choice, *doc.clu);
            }
        }
        if (memo) *memo = {key, plan.node_of_neuron, plan.quality, plan.placement_note};
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

std::vector<node_load> loads_of(const network_plan& plan) {
    return loads_of(*plan.doc.net, plan.node_of_neuron, plan.doc.clu->nodes.size());
}

std::vector<node_load> loads_of(const model::network& net, const std::vector<std::uint32_t>& node_of, std::size_t nodes) {
    std::vector<node_load> loads(nodes);
    for (auto v : node_of) ++loads[v].neurons;
    const model::symbol_table symbols(net);
    // Each neuron's row: its expected synapses and their variance, for a bound on the longest.
    std::vector<float> row_mean(node_of.size()), row_variance(node_of.size());
    // A plastic synapse model anywhere gives every synapse its own weight and delay, and a
    // rule's per-synapse state on top (model::synapse_model_info::state_bytes).
    auto plastic = [&](const std::string& model, const source_location& where) {
        const auto info = model::resolve_synapse_model(net, model, where).info;
        if (info->plastic)
            for (auto& load : loads) load.values_per_synapse = load.plastic = true;
        return static_cast<double>(info->state_bytes);
    };
    for (const auto& s : net.synapses) {
        const auto t = symbols.range(s.to, s.where).first;
        auto& load = loads[node_of[t]];
        load.synapses += 1;
        row_mean[t] += 1;
        load.rule_state_bytes += plastic(s.synapse_model, s.where);
    }
    for (const auto& p : net.projections) {
        if (p.weight_distribution || p.delay_distribution || p.kind == model::projection_kind::list)
            for (auto& load : loads) load.values_per_synapse = true;
        const double state_bytes = plastic(p.synapse_model, p.where);
        // Grown groups count all their members as sources (an upper bound for fixed
        // in-degree rows, which draw from the sources there were when their target came).
        const auto from = symbols.extents(p.from, p.where), to = symbols.extents(p.to, p.where);
        const auto sources = static_cast<double>(model::members_in(from)), targets = static_cast<double>(model::members_in(to));
        if (p.kind == model::projection_kind::list) {
            // Exact: the lead holds the list.
            for (const auto t : p.connections.targets) {
                const auto neuron = model::neuron_at(to, t);
                auto& load = loads[node_of[neuron]];
                load.synapses += 1;
                row_mean[neuron] += 1;
                load.rule_state_bytes += state_bytes;
            }
            continue;
        }
        for (const auto& x : to)
            for (auto t = x.first; t < x.first + x.size; ++t) {
                auto& load = loads[node_of[t]];
                const double others = sources - (!p.autapses && model::holds(from, t) ? 1 : 0);
                // Expected per target, and the variance of a drawn count (a binomial's, at most its mean).
                double expected = 0, variance = 0;
                switch (p.kind) {
                case model::projection_kind::all: expected = others; break;
                case model::projection_kind::random:
                    expected = p.p.value_or(0) * others;
                    variance = expected * (1 - p.p.value_or(0));
                    break;
                case model::projection_kind::one_to_one: expected = p.autapses || from.front().first != to.front().first ? 1 : 0; break;
                case model::projection_kind::fixed_indegree: expected = static_cast<double>(p.indegree.value_or(0)); break;
                // Every source's K spread over the targets; n over the targets.
                case model::projection_kind::fixed_outdegree:
                    expected = variance = static_cast<double>(p.outdegree.value_or(0)) * sources / targets;
                    break;
                case model::projection_kind::fixed_total_number:
                    expected = variance = static_cast<double>(p.total.value_or(0)) / targets;
                    break;
                case model::projection_kind::dense: load.dense_weights += sources; break;
                case model::projection_kind::list: break;  // counted above
                }
                load.synapses += expected;
                load.rule_state_bytes += expected * state_bytes;
                row_mean[t] += static_cast<float>(expected);
                row_variance[t] += static_cast<float>(variance);
            }
    }
    // Six standard deviations past the mean: no row of a network of 10^9 neurons goes past it.
    for (std::size_t t = 0; t < node_of.size(); ++t) {
        auto& longest = loads[node_of[t]].longest_row;
        longest = std::max(longest, std::ceil(double{row_mean[t]} + 6 * std::sqrt(double{row_variance[t]})));
    }
    return loads;
}

double emulate_delay(const std::vector<model::cluster_link>& links, const std::string& a, const std::string& b) {
    double delay = 0;
    for (const auto& l : links)
        if ((l.from == a && l.to == b) || (l.from == b && l.to == a)) delay = std::max(delay, l.emulate_delay_ms);
    return delay;
}

std::optional<double> declared_bandwidth(const std::vector<model::cluster_link>& links, const std::string& a, const std::string& b) {
    for (const auto& l : links)
        if (l.bandwidth_bps && ((l.from == a && l.to == b) || (l.from == b && l.to == a))) return l.bandwidth_bps;
    return std::nullopt;
}

std::vector<double> wait_windows(const network_plan& plan, const topology& topo, const std::vector<double>& link_latency_ms) {
    const std::size_t n = topo.node_count();
    const auto latency = path_latencies(topo, link_latency_ms);
    const auto& run = plan.doc.run ? *plan.doc.run : model::run_settings{};
    const auto& node_of = plan.node_of_neuron;
    std::vector<double> slowest(node_of.size(), -1.0);
    for (const auto& piece : pieces_of(*plan.doc.net)) {
        if (piece.paired) {
            for (std::uint64_t k = 0; k < piece.to.size; ++k) {
                const auto there = node_of[piece.from.first + k], here = node_of[piece.to.first + k];
                if (there != here) slowest[piece.to.first + k] = std::max(slowest[piece.to.first + k], latency[there * n + here]);
            }
            continue;
        }
        // The slowest node a target on node b hears from, for every b.
        const auto senders = nodes_holding(piece.from, node_of, n);
        std::vector<double> slowest_into(n, -1.0);
        for (std::size_t b = 0; b < n; ++b)
            for (std::size_t a = 0; a < n; ++a)
                if (senders[a] && a != b) slowest_into[b] = std::max(slowest_into[b], latency[a * n + b]);
        for (auto i = piece.to.first; i < piece.to.first + piece.to.size; ++i)
            slowest[i] = std::max(slowest[i], slowest_into[node_of[i]]);
    }
    std::vector<double> windows(node_of.size(), 0.0);
    for (std::size_t i = 0; i < windows.size(); ++i)
        if (slowest[i] >= 0) windows[i] = run.window_factor * slowest[i] + run.window_margin_ms;
    return windows;
}

namespace {
// Each list projection's connections split by the node of their target: lists[k][v] holds
// node v's part of net.projections[k] (empty for other kinds), in the list's order.
std::vector<std::vector<model::connection_list>> split_lists(const network_plan& plan, std::size_t nodes) {
    const auto& net = *plan.doc.net;
    const model::symbol_table symbols(net);
    std::vector<std::vector<model::connection_list>> lists(net.projections.size());
    for (std::size_t k = 0; k < net.projections.size(); ++k) {
        const auto& p = net.projections[k];
        if (p.kind != model::projection_kind::list) continue;
        const auto to = symbols.extents(p.to, p.where);
        auto& parts = lists[k];
        parts.resize(nodes);
        const auto& l = p.connections;
        for (std::size_t c = 0; c < l.size(); ++c) {
            auto& part = parts[plan.node_of_neuron[model::neuron_at(to, l.targets[c])]];
            part.sources.push_back(l.sources[c]);
            part.targets.push_back(l.targets[c]);
            part.weights.push_back(l.weights[c]);
            part.delays.push_back(l.delays[c]);
        }
    }
    return lists;
}

// The network as one node needs it: the synapse models, every projection but the dense
// ones (their rows travel as dense rows), each list projection with the connections into
// the node's neurons only (`lists`, taken from) and, of the explicit synapses, those into the
// node's neurons, in order. `synapse_node` is the node of each explicit synapse's target.
model::network share_of(const model::network& net, const std::vector<std::uint32_t>& synapse_node, std::uint32_t v,
                           std::vector<std::vector<model::connection_list>>& lists) {
    model::network share;
    share.name = net.name;
    share.dt = net.dt;
    share.where = net.where;
    share.neurons = net.neurons;
    // Spike sources without their spikes: build_configs gives each node its own.
    for (const auto& p : net.populations)
        share.populations.push_back({p.id, p.size, p.seed, p.params, p.where, {}, {}, p.rates, p.start, p.stop, p.v_inits,
                                     p.synaptic_elements, p.tau_ca, p.beta_ca});
    share.inputs = net.inputs;
    share.outputs = net.outputs;
    share.poisson = net.poisson;  // each node draws for its own neurons
    share.currents = net.currents;
    share.records = net.records;  // a node samples its own neurons' variables (samplings_of)
    share.synapse_models = net.synapse_models;
    share.structural = net.structural;  // with the populations' synaptic elements: every node rewires alike
    share.grows = net.grows;  // the numbering of grown members
    for (const auto& ref : net.connection_order) {
        if (ref.kind == model::connection_ref::type::synapse) {
            if (synapse_node[ref.index] != v) continue;
            share.connection_order.push_back({ref.kind, share.synapses.size()});
            share.synapses.push_back(net.synapses[ref.index]);
        } else if (net.projections[ref.index].kind != model::projection_kind::dense) {
            share.connection_order.push_back({ref.kind, share.projections.size()});
            share.projections.push_back(net.projections[ref.index]);
            if (share.projections.back().kind == model::projection_kind::list) {
                // The node gets its part inline, not the file.
                share.projections.back().connections_file.clear();
                share.projections.back().connections = std::move(lists[ref.index][v]);
            }
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

model::node_config build_configs(const network_plan& plan, const topology& topo, const std::vector<double>& link_latency_ms,
                                    const std::vector<double>& windows_ms, std::uint64_t epoch) {
    const auto& doc = plan.doc;
    const auto& net = plan.net;
    const auto& node_of = plan.node_of_neuron;
    const std::size_t n = topo.node_count();
    const auto latency = path_latencies(topo, link_latency_ms);
    const auto run = doc.run ? *doc.run : model::run_settings{};

    std::vector<std::uint32_t> synapse_node;
    synapse_node.reserve(doc.net->synapses.size());
    for (const auto& s : doc.net->synapses) synapse_node.push_back(node_of[*net.find(s.to)]);

    std::set<model::neuron_index> reported;
    for (const auto& o : net.outputs) reported.insert(o.neurons.begin(), o.neurons.end());
    std::vector<bool> recorded(net.neuron_count(), false);
    for (auto i : net.recorded) recorded[i] = true;

    std::vector<model::node_config> configs(n);
    auto lists = split_lists(plan, n);
    const auto history = model::longest_delay(*doc.net);
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
        c.history = history;
        c.epoch = epoch;
        c.run = run;
        c.share = share_of(*doc.net, synapse_node, static_cast<std::uint32_t>(v), lists);
    }
    // Each node gets the listed spikes of its own spike-source neurons, inline.
    for (std::size_t k = 0; k < doc.net->populations.size(); ++k) {
        const auto& source = doc.net->populations[k];
        if (source.params.model != model::neuron_model::spike_source) continue;
        const auto first = net.groups[net.group_index.at(source.id)].first;
        for (const auto& s : source.spikes)
            configs[node_of[first + static_cast<model::neuron_index>(s.index)]].share->populations[k].spikes.push_back(s);
    }
    for (model::neuron_index i = 0; i < net.neuron_count(); ++i) {
        configs[node_of[i]].neurons.push_back({net.neuron_name(i), i, windows_ms[i], net.groups[net.group_of[i]].seed,
                                               reported.count(i) > 0, recorded[i], net.member_params(i)});
    }
    // Dense projections split by rows: each node computes the rows of its own targets and
    // reads every source.
    for (const auto& d : net.dense) {
        std::vector<model::dense_rows> parts(n);
        const std::size_t cols = d.sources.size();
        for (std::size_t r = 0; r < d.targets.size(); ++r) {
            auto& part = parts[node_of[d.targets[r]]];
            part.targets.push_back(d.targets[r]);
            part.rows.push_back(static_cast<std::int64_t>(r));
            part.weights.insert(part.weights.end(), d.weights.begin() + static_cast<std::ptrdiff_t>(r * cols),
                                d.weights.begin() + static_cast<std::ptrdiff_t>((r + 1) * cols));
        }
        for (std::size_t v = 0; v < n; ++v) {
            if (parts[v].targets.empty()) continue;
            parts[v].sources.assign(d.sources.begin(), d.sources.end());
            parts[v].delay = d.delay;
            parts[v].projection_rows = static_cast<std::int64_t>(d.targets.size());
            configs[v].dense.push_back(std::move(parts[v]));
        }
    }
    // Peers: what each pair of nodes sends the other every tick, ascending by neuron.
    const auto reads = remote_reads(pieces_of(*doc.net), node_of, n);
    // flows[a][b]: the neurons of node a that node b reads, ascending.
    std::vector<std::vector<std::vector<std::int64_t>>> flows(n, std::vector<std::vector<std::int64_t>>(n));
    for (model::neuron_index i = 0; i < node_of.size(); ++i)
        for (std::size_t b = 0; b < n; ++b)
            if (reads[b][i]) flows[node_of[i]][b].push_back(i);
    for (std::size_t v = 0; v < n; ++v)
        for (std::size_t other = 0; other < n; ++other) {
            if (other == v) continue;
            const auto& sends = flows[v][other];
            const auto& receives = flows[other][v];
            if (sends.empty() && receives.empty()) continue;
            std::vector<std::string> via;
            for (auto hop : topo.route(v, other)) via.push_back(topo.id(hop));
            double emulated = 0;
            for (std::size_t k = 1; k < via.size(); ++k) emulated += emulate_delay(doc.clu->links, via[k - 1], via[k]);
            const auto& peer_node = doc.clu->nodes[other];
            configs[v].peers.push_back({peer_node.id, peer_node.host, peer_node.port, via, latency[v * n + other], emulated,
                                        sends, receives});
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
    auto by_document_order = [&](const model::node_config& a, const model::node_config& b) {
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

std::string config_hash(const model::node_config& config) {
    model::node_config own = config;
    own.children.clear();
    return protocol::sha256_hex(protocol::serialize(own));
}

}  // namespace dnnc::plan
