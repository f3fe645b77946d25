#include "dnnc/plan/planning_graph.hpp"

#include "dense_units.hpp"

#include "dnnc/partitioner/assign.hpp"
#include "dnnc/partitioner/physical.hpp"
#include "dnnc/core/error.hpp"
#include "dnnc/model/resolve.hpp"
#include "dnnc/model/rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace dnnc::plan {

namespace {

using partitioner::vertex_id;
using partitioner::weight_t;
using model::neuron_index;
using model::neuron_range;

struct resolved_projection {
    const model::projection* p;
    neuron_range from, to;
    bool drawn = false;  // a small random projection whose synapses the graph holds one by one
    bool grown = false;  // one pair of extents of a projection between grown groups
};

// A projection per pair of its groups' extents (resolve.hpp): one pair unless a group grew.
// The graph estimates a grown projection's pairs as if each were a projection of its own
// (never drawn), and a one-to-one one by its first extents only: an estimate for the
// partitioner, not the wiring (plan.cpp's pieces cover every pair).
std::vector<resolved_projection> resolve_projections(const model::network& net, const model::symbol_table& symbols) {
    std::vector<resolved_projection> out;
    for (const auto& ref : net.connection_order)
        if (ref.kind == model::connection_ref::type::projection) {
            const auto& p = net.projections[ref.index];
            const auto from = symbols.extents(p.from, p.where), to = symbols.extents(p.to, p.where);
            const bool grown = from.size() > 1 || to.size() > 1;
            for (const auto& f : from)
                for (const auto& t : to) {
                    if (grown && p.kind == model::projection_kind::one_to_one && (f.born > 0 || t.born > 0)) continue;
                    out.push_back({&p, {f.first, f.size}, {t.first, t.size}, false, grown});
                }
        }
    return out;
}

// Every population's extents, in index order.
std::vector<neuron_range> population_extents(const model::network& net, const model::symbol_table& symbols) {
    std::vector<neuron_range> out;
    for (const auto& p : net.populations)
        for (const auto& x : symbols.extents(p.id, p.where)) out.push_back({x.first, x.size});
    std::sort(out.begin(), out.end(), [](const neuron_range& a, const neuron_range& b) { return a.first < b.first; });
    return out;
}

// The chance that a given source reaches a given target: 1 for `all`, p for `random`,
// indegree / sources for `fixed-indegree`, outdegree / targets for `fixed-outdegree`,
// n / pairs for `fixed-total-number` and connections / pairs for `list` (whose connections
// the graph spreads evenly over its ranges: it holds no list).
double connection_probability(const resolved_projection& r) {
    const auto share = [](const std::optional<std::int64_t>& k, double of) {
        return of <= 0 ? 0.0 : std::min(1.0, static_cast<double>(std::max<std::int64_t>(0, k.value_or(0))) / of);
    };
    const auto from = static_cast<double>(r.from.size), to = static_cast<double>(r.to.size);
    switch (r.p->kind) {
    case model::projection_kind::random: return r.p->p.value_or(0);
    case model::projection_kind::fixed_indegree: return share(r.p->indegree, from);
    case model::projection_kind::fixed_outdegree: return share(r.p->outdegree, to);
    case model::projection_kind::fixed_total_number: return share(r.p->total, from * to);
    case model::projection_kind::list: return share(static_cast<std::int64_t>(r.p->connections.size()), from * to);
    default: return 1.0;
    }
}

bool drawable(const resolved_projection& r) {
    switch (r.p->kind) {
    case model::projection_kind::random:
    case model::projection_kind::fixed_indegree:
    case model::projection_kind::fixed_outdegree:
    case model::projection_kind::fixed_total_number: return true;
    default: return false;
    }
}

double expected_synapses(const resolved_projection& r) {
    const double pairs = static_cast<double>(r.from.size) * static_cast<double>(r.to.size);
    return connection_probability(r) * pairs;
}

// The random projections (`random`, `fixed-indegree`) to draw: the smallest first, while their synapses together fit
// in the budget. Their rows are the nodes' rows (synapse_rows), so the partitioner sees the
// sample the network will run, not only its expectation: on sparse projections that is
// where a good cut comes from. Whatever the network's size, the lead draws at most
// `max_drawn` synapses.
void choose_drawn(std::vector<resolved_projection>& projections, std::size_t max_drawn) {
    std::vector<resolved_projection*> random;
    for (auto& r : projections)
        if (drawable(r) && !r.grown) random.push_back(&r);
    std::stable_sort(random.begin(), random.end(),
                     [](const auto* a, const auto* b) { return expected_synapses(*a) < expected_synapses(*b); });
    double drawn = 0;
    for (auto* r : random) {
        // Allow for the sample lying a few standard deviations above its expectation.
        const double most = expected_synapses(*r) + 6 * std::sqrt(expected_synapses(*r)) + 16;
        if (drawn + most > static_cast<double>(max_drawn)) break;
        drawn += most;
        r->drawn = true;
    }
}

// The rows of one projection, as the nodes draw them.
model::synapse_rows rows_of(const model::network& net, const model::projection& p) {
    model::network alone;
    alone.dt = net.dt;
    alone.neurons = net.neurons;
    alone.populations = net.populations;
    alone.synapse_models = net.synapse_models;  // the rows resolve the model p names
    alone.projections = {p};
    alone.connection_order = {{model::connection_ref::type::projection, 0}};
    return model::synapse_rows(alone);
}

// The chunk: the smallest power of two for which the estimated graph fits the budget. A range
// of n members spans about n / chunk + 1 segments; every pair of segments of an `all` or
// `random` projection may get an edge, a one-to-one projection pairs them along its range,
// and a dense projection joins each source segment to the few units that hold its rows.
std::uint64_t choose_chunk(const std::vector<neuron_range>& populations, const std::vector<resolved_projection>& projections,
                           const planning_options& options) {
    for (std::uint64_t chunk = 1;; chunk *= 2) {
        auto spans = [&](std::uint64_t n) { return static_cast<double>((n + chunk - 1) / chunk + 1); };
        double vertices = 0, edges = 0;
        for (const auto& p : populations) vertices += spans(p.size) - 1;
        for (const auto& r : projections) {
            vertices += 2;
            switch (r.p->kind) {
            case model::projection_kind::all:
            case model::projection_kind::random:
            case model::projection_kind::fixed_indegree:
            case model::projection_kind::fixed_outdegree:
            case model::projection_kind::fixed_total_number:
            case model::projection_kind::list:
                edges += r.drawn ? expected_synapses(r) : spans(r.from.size) * spans(r.to.size);
                break;
            case model::projection_kind::one_to_one: edges += spans(r.from.size) + spans(r.to.size); break;
            case model::projection_kind::dense: edges += spans(r.from.size) * std::min(spans(r.to.size), 64.0); break;
            }
        }
        if ((vertices <= static_cast<double>(options.max_vertices) && edges <= static_cast<double>(options.max_edges)) ||
            chunk >= (std::uint64_t{1} << 40))
            return chunk;
    }
}

// Segment boundaries: every explicit neuron, population chunks, projection range ends, and
// the boundaries inside one-to-one ranges mirrored between source and target.
std::vector<neuron_index> cut_points(const model::network& net, const std::vector<neuron_range>& populations,
                                     const std::vector<resolved_projection>& projections, std::uint64_t chunk, std::size_t max_cuts) {
    std::vector<std::uint64_t> cuts;
    for (std::uint64_t i = 0; i <= net.neurons.size(); ++i) cuts.push_back(i);
    for (const auto& p : populations) {
        for (auto x = p.first; x < p.first + p.size; x += chunk) cuts.push_back(x);
        cuts.push_back(p.first + p.size);
    }
    for (const auto& r : projections)
        for (const auto& range : {r.from, r.to}) {
            cuts.push_back(range.first);
            cuts.push_back(range.first + range.size);
        }
    auto tidy = [&] {
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    };
    tidy();
    // Mirroring until nothing changes aligns chains of one-to-one projections; a bound on
    // the passes and the cuts keeps crossed, shifted ranges from cutting everything.
    for (int pass = 0; pass < 16 && cuts.size() < 4 * max_cuts; ++pass) {
        const std::size_t before = cuts.size();
        for (const auto& r : projections) {
            if (r.p->kind != model::projection_kind::one_to_one) continue;
            std::vector<std::uint64_t> mirrored;
            auto mirror = [&](neuron_range from, neuron_range to) {
                auto c = std::upper_bound(cuts.begin(), cuts.end(), from.first);
                for (; c != cuts.end() && *c < from.first + from.size; ++c) mirrored.push_back(to.first + (*c - from.first));
            };
            mirror(r.to, r.from);
            mirror(r.from, r.to);
            cuts.insert(cuts.end(), mirrored.begin(), mirrored.end());
            tidy();
        }
        if (cuts.size() == before) break;
    }
    return {cuts.begin(), cuts.end()};
}

weight_t rounded_up_to_one(double w) { return std::max<weight_t>(1, static_cast<weight_t>(std::llround(w))); }

}  // namespace

std::size_t planning_graph::segment_of(neuron_index neuron) const {
    return static_cast<std::size_t>(std::upper_bound(segment_first.begin(), segment_first.end(), neuron) -
                                    segment_first.begin()) - 1;
}

std::vector<std::uint32_t> planning_graph::spread(const std::vector<std::uint32_t>& node_of_unit) const {
    std::vector<std::uint32_t> node_of_neuron(neuron_count());
    for (std::size_t k = 0; k < segment_count(); ++k)
        std::fill(node_of_neuron.begin() + segment_first[k], node_of_neuron.begin() + segment_first[k + 1],
                  node_of_unit.at(unit_of_segment[k]));
    return node_of_neuron;
}

std::string planning_graph::name(const model::expanded_network& neurons, vertex_id unit) const {
    const std::string first = neurons.neuron_name(unit_first[unit]);
    return unit_size[unit] == 1 ? first : first + " +" + std::to_string(unit_size[unit] - 1);
}

partitioner::physical_cluster physical_of(const model::cluster& model) {
    partitioner::physical_cluster cluster;
    std::map<std::string, std::uint32_t> index;
    for (const auto& node : model.nodes) {
        index.emplace(node.id, static_cast<std::uint32_t>(cluster.size()));
        cluster.names.push_back(node.id);
        cluster.capacity.push_back(node.capacity);
    }
    std::vector<diagnostic> problems;
    for (const auto& link : model.links) {
        const auto from = index.find(link.from);
        const auto to = index.find(link.to);
        if (from == index.end() || to == index.end()) {
            const auto& missing = from == index.end() ? link.from : link.to;
            problems.push_back({link.where, "link names unknown node '" + missing + "'"});
            continue;
        }
        cluster.links.emplace_back(from->second, to->second);
        cluster.link_capacity.push_back(link.bandwidth_bps.value_or(std::numeric_limits<double>::infinity()));
    }
    // Empty unless some link declares a bandwidth: placements then stay as without capacities.
    if (!partitioner::has_link_capacities(cluster)) cluster.link_capacity.clear();
    if (!problems.empty()) throw config_error(std::move(problems));
    partitioner::check_physical_cluster(cluster);
    return cluster;
}

planning_graph planning_graph_of(const model::network& net, const partitioner::physical_cluster& cluster,
                                 const planning_options& options) {
    if (options.fan_in_share < 1) throw usage_error("planning graph: the fan-in share must be at least 1");
    if (cluster.size() == 0) throw usage_error("planning graph: the cluster has no node");
    const model::symbol_table symbols(net);
    auto projections = resolve_projections(net, symbols);
    choose_drawn(projections, options.max_drawn);
    const auto populations = population_extents(net, symbols);

    planning_graph out;
    out.chunk = choose_chunk(populations, projections, options);
    out.segment_first = cut_points(net, populations, projections, out.chunk, options.max_vertices);
    const std::size_t segments = out.segment_first.size() - 1;
    auto size_of = [&](std::size_t k) { return static_cast<double>(out.segment_first[k + 1] - out.segment_first[k]); };
    // The segments that tile a range (its ends are cut points).
    auto segments_of = [&](neuron_range r) {
        const std::size_t first = out.segment_of(static_cast<neuron_index>(r.first));
        return std::make_pair(first, r.size == 0 ? first : out.segment_of(static_cast<neuron_index>(r.first + r.size - 1)) + 1);
    };

    // Incoming synapses per segment and the traffic between segments, by rule.
    std::vector<double> incoming(segments, 0.0);
    struct segment_edge {
        std::size_t a, b;
        double w;
    };
    std::vector<segment_edge> edges;
    for (const auto& r : projections) {
        const auto& p = *r.p;
        const auto [f0, f1] = segments_of(r.from);
        const auto [t0, t1] = segments_of(r.to);
        switch (p.kind) {
        case model::projection_kind::random:
        case model::projection_kind::fixed_indegree:
        case model::projection_kind::fixed_outdegree:
        case model::projection_kind::fixed_total_number:
            if (r.drawn) {
                const auto rows = rows_of(net, p);
                for (auto t = r.to.first; t < r.to.first + r.to.size; ++t) {
                    const auto b = out.segment_of(static_cast<neuron_index>(t));
                    rows.for_each(static_cast<neuron_index>(t), [&](neuron_index source, float, std::uint16_t, std::size_t) {
                        incoming[b] += 1;
                        edges.push_back({out.segment_of(source), b, 1.0});
                    });
                }
                break;
            }
            [[fallthrough]];
        case model::projection_kind::all:
        case model::projection_kind::list: {
            const double prob = connection_probability(r);
            if (prob <= 0) break;
            for (auto b = t0; b < t1; ++b)
                for (auto a = f0; a < f1; ++a) {
                    // Segments are disjoint: a neuron is both source and target only when a == b.
                    const double pairs = size_of(a) * size_of(b) - (!p.autapses && a == b ? size_of(a) : 0.0);
                    if (pairs <= 0) continue;
                    incoming[b] += prob * pairs;
                    edges.push_back({a, b, prob * pairs});
                }
            break;
        }
        case model::projection_kind::one_to_one: {
            if (!p.autapses && r.from.first == r.to.first) break;
            for (std::uint64_t offset = 0; offset < r.to.size;) {
                const auto a = out.segment_of(static_cast<neuron_index>(r.from.first + offset));
                const auto b = out.segment_of(static_cast<neuron_index>(r.to.first + offset));
                const std::uint64_t run = std::min(out.segment_first[a + 1] - (r.from.first + offset),
                                                   out.segment_first[b + 1] - (r.to.first + offset));
                incoming[b] += static_cast<double>(run);
                edges.push_back({a, b, static_cast<double>(run)});
                offset += run;
            }
            break;
        }
        case model::projection_kind::dense:
            for (auto b = t0; b < t1; ++b) incoming[b] += size_of(b) * static_cast<double>(r.from.size);
            break;  // its edges join the units that hold its rows, below
        }
    }
    {
        // Explicit synapses: parallel ones add to the fan-in, and count once as traffic.
        std::vector<std::pair<neuron_index, neuron_index>> pairs;
        pairs.reserve(net.synapses.size());
        for (const auto& s : net.synapses) {
            const auto from = static_cast<neuron_index>(symbols.range(s.from, s.where).first);
            const auto to = static_cast<neuron_index>(symbols.range(s.to, s.where).first);
            incoming[out.segment_of(to)] += 1;
            pairs.emplace_back(from, to);
        }
        std::sort(pairs.begin(), pairs.end());
        pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
        for (const auto& [from, to] : pairs) edges.push_back({out.segment_of(from), out.segment_of(to), 1.0});
    }
    std::vector<weight_t> weight(segments);
    for (std::size_t k = 0; k < segments; ++k)
        weight[k] = static_cast<weight_t>(size_of(k)) +
                    static_cast<weight_t>(std::llround(incoming[k] / static_cast<double>(options.fan_in_share)));

    // Units: dense targets grouped whole or in row blocks, every other segment on its own.
    std::vector<detail::dense_targets> dense;
    for (const auto& r : projections) {
        if (r.p->kind != model::projection_kind::dense) continue;
        const auto [t0, t1] = segments_of(r.to);
        detail::dense_targets d{{}, r.p->split_rows};
        for (auto b = t0; b < t1; ++b) d.items.push_back(b);
        dense.push_back(std::move(d));
    }
    const auto grouped = detail::group_units(weight, dense, cluster);
    out.unit_of_segment = grouped.unit_of_item;
    for (auto first : grouped.first_item) out.unit_first.push_back(out.segment_first[first]);
    out.unit_size.assign(out.unit_first.size(), 0);
    for (std::size_t k = 0; k < segments; ++k) out.unit_size[out.unit_of_segment[k]] += out.segment_first[k + 1] - out.segment_first[k];

    const std::size_t units = out.unit_first.size();
    partitioner::graph_builder builder(units);
    std::vector<weight_t> unit_weight(units, 0);
    for (std::size_t k = 0; k < segments; ++k) unit_weight[out.unit_of_segment[k]] += weight[k];
    for (vertex_id u = 0; u < units; ++u) builder.set_vertex_weight(u, unit_weight[u]);
    for (const auto& e : edges) builder.add_edge(out.unit_of_segment[e.a], out.unit_of_segment[e.b], rounded_up_to_one(e.w));
    std::vector<vertex_id> row_units;
    for (const auto& r : projections) {
        if (r.p->kind != model::projection_kind::dense) continue;
        const auto [t0, t1] = segments_of(r.to);
        row_units.clear();
        for (auto b = t0; b < t1; ++b) row_units.push_back(out.unit_of_segment[b]);
        std::sort(row_units.begin(), row_units.end());
        row_units.erase(std::unique(row_units.begin(), row_units.end()), row_units.end());
        const auto [f0, f1] = segments_of(r.from);
        for (auto a = f0; a < f1; ++a)
            for (vertex_id rows : row_units) builder.add_edge(out.unit_of_segment[a], rows, static_cast<weight_t>(size_of(a)));
    }
    out.g = std::move(builder).build();
    return out;
}

placed_units place(const planning_graph& graph, const partitioner::physical_cluster& cluster,
                   const partitioner::partition_options& options, const partitioner::metrics_options& metrics,
                   const partitioner::current_assignment* current) {
    placed_units out;
    if (graph.g.vertex_count() < cluster.size()) {
        // More nodes than units: the partitioner cannot make one part per node, so units go
        // round-robin and the remaining nodes idle.
        for (std::size_t u = 0; u < graph.g.vertex_count(); ++u) {
            const bool placed = current && current->node_of_vertex.at(u) < cluster.size();
            out.node_of_unit.push_back(placed ? current->node_of_vertex[u] : static_cast<std::uint32_t>(u % cluster.size()));
        }
        out.quality = partitioner::evaluate(graph.g, out.node_of_unit, cluster, metrics);
        return out;
    }
    partitioner::assignment a = partitioner::assign(graph.g, cluster, options, metrics, current);
    out.node_of_unit = std::move(a.place.node_of_vertex);
    out.quality = std::move(a.metrics);
    return out;
}

}  // namespace dnnc::plan
