#pragma once
// Quality of an assignment of vertices to physical nodes: the one module used by the CLI,
// the tests and the benchmarks. With W the total vertex weight, c_i node i's capacity,
// load_i the weight on node i and hops(a, b) the link distance between nodes:
//   edge_cut              = Σ w(u,v) over edges whose ends are on different nodes
//   communication_volume  = Σ_v |{node(u) : u ~ v} \ {node(v)}|, the values sent per tick
//                           when each neuron sends its output once to each remote node
//   max_imbalance         = max_i load_i / (c_i / Σc · W)   (1 is perfect balance)
//   condition-1 violation = an edge between two nodes that are not linked
//   hop_weighted_cut      = Σ w(u,v) · hops(node(u), node(v))
//   traffic_i             = Σ w(u,v) · hops over cut edges with an end on node i
//   tick_cost             = max_i (load_i / c_i + hop_cost · traffic_i)
//   link_traffic_l        = Σ w(u,v) over cut edges whose route (link_routes) takes link l
//   max_link_load         = max_l link_traffic_l / link capacity_l over links with a
//                           capacity. Edge weight per capacity unit: compare it between
//                           placements on one cluster, not as a rate.
// Both only when some link has a capacity (has_link_capacities): link_traffic is empty and
// max_link_load 0 otherwise.
// tick_cost is a model, not a measurement: a node's tick is its compute time (weight over
// capacity) plus the time to move its share of the traffic, the slowest node sets the pace.
#include "dnnc/partitioner/graph.hpp"
#include "dnnc/partitioner/partition.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace dnnc::partitioner {

struct metrics_options {
    double hop_cost = 1.0;  // tick-cost units per unit of edge weight per hop
    std::size_t max_listed_violations = std::numeric_limits<std::size_t>::max();
};

struct violating_edge {
    vertex_id u, v;  // u < v
    std::uint32_t node_u, node_v;
    weight_t weight;
};

struct quality {
    weight_t edge_cut = 0;
    weight_t communication_volume = 0;
    std::vector<weight_t> load;      // per node
    std::vector<weight_t> traffic;   // per node
    double max_imbalance = 0;
    std::size_t violation_count = 0;
    std::vector<violating_edge> violations;  // the first max_listed_violations, by u then v
    weight_t hop_weighted_cut = 0;
    double tick_cost = 0;
    std::vector<weight_t> link_traffic;  // per link of the cluster, or empty (see above)
    double max_link_load = 0;
};

// node_of_vertex[v] < cluster.size(); the cluster must pass check_physical_cluster.
quality evaluate(const graph& g, const std::vector<std::uint32_t>& node_of_vertex,
                 const physical_cluster& cluster, const metrics_options& options = {});

// A partition on its own: parts are nodes of equal capacity, all linked to each other.
quality evaluate(const graph& g, const partition& p, const metrics_options& options = {});

// The cost of moving vertex v: migration_cost[v], or its weight when migration_cost is empty.
inline double migration_cost_of(const graph& g, const std::vector<double>& migration_cost, vertex_id v) {
    return migration_cost.empty() ? static_cast<double>(g.vertex_weight(v)) : migration_cost[v];
}

// Migration volume from `before` to `after`: Σ migration_cost_of(v) over the vertices whose
// part changed. A vertex with before.part_of[v] >= before.parts had no part and costs nothing.
// Throws usage_error when a partition or a non-empty migration_cost has another size than g.
double migration_volume(const graph& g, const partition& before, const partition& after,
                        const std::vector<double>& migration_cost = {});

}  // namespace dnnc::partitioner
