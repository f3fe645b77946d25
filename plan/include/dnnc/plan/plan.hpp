#pragma once
// What the lead decides before anything is sent: which node runs which neuron, and each
// node's config (its neurons with wait windows, the share of the network their incoming
// synapses expand from, its dense rows, routes to its peers), nested along the broadcast
// tree. Everything here follows the document's size and the neuron count, never the
// synapse count: rule-based projections are planned from their rules (planning_graph.hpp)
// and expanded only by the nodes that hold their target rows.
#include "dnnc/model/expand.hpp"
#include "dnnc/partitioner/metrics.hpp"
#include "dnnc/plan/planning_graph.hpp"
#include "dnnc/plan/topology.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::plan {

struct network_plan {
    model::document doc;  // its cluster's lead is the node that plans
    // The neurons (numbering, groups, inputs, outputs) and the dense blocks; no synapses.
    model::expanded_network net;
    std::vector<std::uint32_t> node_of_neuron;  // cluster node index per neuron
    partitioner::quality quality;
    std::vector<std::size_t> neurons_per_node;
    // Why some nodes hold no neuron although the network has enough for all (slow_links.hpp);
    // empty when none was left idle for its links.
    std::string placement_note;
};

// The last partition a lead computed, with what it was computed from. Partitioning is
// deterministic, so when the same network goes onto the same cluster again (a restore on
// the cluster it was saved from, a submit --replace) reusing it only saves time.
struct partition_memo {
    std::string key;  // SHA-256 of the network, cluster and run settings (and of the current placement)
    std::vector<std::uint32_t> node_of_neuron;
    partitioner::quality quality;
    std::string placement_note;
};

// The neurons (numbering, groups, inputs, outputs) and the dense blocks of a network, its
// dense weights read (files relative to `document_file`) or drawn: the network expanded
// without a synapse or rule-based projection.
model::expanded_network neurons_and_dense_blocks(const model::network& net, const std::string& document_file);

// Where a running network's neurons are, for a re-plan that should move few of them (a
// growth, a re-balance, a node that joins or leaves): per neuron, its node as an index into
// `nodes` (ids; the cluster planned onto may have others, or lack some); a neuron past the
// end (grown since) or on a node the cluster lacks is on no node yet. Moving a unit costs
// its neurons' incoming synapses (fan_in_share x its planning weight, which is its neurons +
// their synapses / fan_in_share) x migration_weight in units of edge cut
// (partitioner::migration_options): at 1, moving a synapse weighs as much as cutting one,
// which keeps the neurons that need not move in place (tests/plan/test_replan.cpp); lower
// weights trade more moves for a smaller cut.
struct current_placement {
    std::vector<std::uint32_t> node_of_neuron;
    std::vector<std::string> nodes;
    double migration_weight = 1.0;
};
// Where `plan` put its neurons.
current_placement placement_of(const network_plan& plan);

// Checks that the document has a network and a cluster, builds the planning graph of the
// network and partitions it with the default (multilevel) strategy onto the cluster's nodes. With a
// current placement, the partition starts from it instead (multilevel_repartition; a unit is
// where most of its neurons are); it may not place more neurons than the network has
// (usage_error). With a memo, a partition of the same network onto the same cluster from the
// same placement (or none) is reused, and the memo then holds this one: a re-balance plans
// its proposal while the network runs, and the install that applies it reuses it. When some
// link declares a bandwidth, nodes behind links too slow for what they would exchange may be
// left without neurons (slow_links.hpp; placement_note says which and why).
network_plan plan_network(model::document doc, partition_memo* memo = nullptr, const current_placement* current = nullptr);

// What each node will hold of a network, from the rules: its neurons, its incoming synapses
// (exact for every rule but `random`, whose expected count it is) and its dense weights.
struct node_load {
    std::uint64_t neurons = 0;
    double synapses = 0;
    std::uint64_t dense_weights = 0;
    // Whether its synapses keep a weight and a delay each: some projection of the network
    // draws them from a distribution, or some connection is plastic (every node's share
    // holds every projection).
    bool values_per_synapse = false;
    // Whether some synapse model of the network is plastic: its weights then stay in the rows
    // beside fan-out entries that name each synapse (docs/simulation.md, memory layout).
    bool plastic = false;
    // What synapse rules keep per synapse beyond the weight (tsodyks2_synapse: w, x, u).
    double rule_state_bytes = 0;
    // An upper bound on its longest row (one neuron's incoming synapses): exact for the rules
    // that fix a row's length, six standard deviations past the mean for those that draw it.
    double longest_row = 0;
};
std::vector<node_load> loads_of(const network_plan& plan);
// The same for any placement of `net` (node_of: a node index below `nodes` per neuron).
std::vector<node_load> loads_of(const model::network& net, const std::vector<std::uint32_t>& node_of, std::size_t nodes);

// The emulated delay of the link between nodes a and b (0 when there is none).
double emulate_delay(const std::vector<model::cluster_link>& links, const std::string& a, const std::string& b);
// The bandwidth (bits/s) the first <link> between nodes a and b that declares one declares.
std::optional<double> declared_bandwidth(const std::vector<model::cluster_link>& links, const std::string& a, const std::string& b);

// Wait window of each neuron (ms): window-factor x the largest path latency among the nodes
// its inputs may come from + window-margin; 0 for a neuron whose inputs are all local. For
// `all` and `random` projections, every node that holds part of the source range counts.
std::vector<double> wait_windows(const network_plan& plan, const topology& topo, const std::vector<double>& link_latency_ms);

// The broadcast tree: node order is the lead, then the others in document order; the node
// at position p > 0 hangs below position (p - 1) / fan_out. Returns each node's parent
// (the lead's is itself).
std::vector<std::size_t> broadcast_parents(const topology& topo, std::size_t fan_out);

// Every node's config, nested along the broadcast tree; the result is the lead's. Every
// config carries `epoch` (node_config::epoch).
model::node_config build_configs(const network_plan& plan, const topology& topo, const std::vector<double>& link_latency_ms,
                                    const std::vector<double>& windows_ms, std::uint64_t epoch = 0);

// A new epoch, never 0.
std::uint64_t draw_epoch();

// The hash a node reports for the config it installed: SHA-256 of the config without its
// nested children.
std::string config_hash(const model::node_config& config);

}  // namespace dnnc::plan
