#pragma once
// Placement around slow links: a node whose links are too slow for what it would exchange is
// left without neurons when the network, by an estimate of a tick's time, runs faster
// without it (docs/planning.md, "Slow links"). Pure code, no sockets.
//
// The estimate, for a placement on a cluster whose links declare bandwidths:
//   compute  = the busiest node's tick_compute_ms (compression.hpp) × the cluster's mean
//              capacity / its capacity
//   transfer = the busiest link's time to carry a tick's packets, the larger direction:
//              8 × bytes / its declared bandwidth (a link that declares none costs nothing).
//              A packet from node a to node b carries what the configs' peer routes will
//              (every output b reads from a) and crosses every link of the route from a to b:
//              dense with send="always"; with send="nonzero", as many values as are expected
//              to be non-zero, a spiking neuron's at assumed_rate_hz, any other's always
//   tick     = compute + transfer (a lockstep tick computes, then exchanges)
// The search: from the placement on every node, try leaving either end of the busiest link
// idle as well (never the lead, never a node without which the others' links no longer join
// them all), place the network on the remaining nodes, and keep the try with the shortest
// estimate if it is at most keep_share of the best so far; repeat until no try is kept. The
// estimate is rough (its constants are not measured on the cluster), hence the margin.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/model.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::plan {

inline constexpr double assumed_rate_hz = 20;
inline constexpr double keep_share = 0.75;

struct tick_estimate {
    double compute_ms = 0, transfer_ms = 0;
    std::optional<std::size_t> busiest_link;  // into topology(clu)'s links: the one that sets transfer_ms
    double total_ms() const { return compute_ms + transfer_ms; }
};

// The estimate for `node_of_neuron` (an index into clu.nodes per neuron of `neurons`, the
// network's expansion without synapses: plan.hpp, neurons_and_dense_blocks).
tick_estimate estimate_tick(const model::network& net, const model::expanded_network& neurons, const model::cluster& clu,
                            const model::run_settings& run, const std::vector<std::uint32_t>& node_of_neuron);

// Places the network on `sub` (clu with some nodes and their links left out), giving an
// index into sub.nodes per neuron.
using sub_cluster_placer = std::function<std::vector<std::uint32_t>(const model::cluster& sub)>;

struct slow_link_choice {
    std::vector<std::uint32_t> node_of_neuron;  // indices into clu.nodes
    std::vector<std::string> idle;              // the nodes left without neurons, in the order the search left them
    tick_estimate before, after;                // of the placement on every node, and of the one chosen
};

// The search above, from `everywhere` (the placement on every node of clu); returns it
// unchanged, with no idle node, when no link declares a bandwidth or no try is kept.
slow_link_choice place_around_slow_links(const model::network& net, const model::expanded_network& neurons,
                                         const model::cluster& clu, const model::run_settings& run,
                                         std::vector<std::uint32_t> everywhere, const sub_cluster_placer& place_on);

// One line for the lead's log and `dnnc partition`: which nodes stay idle and why.
std::string describe(const slow_link_choice& choice, const model::cluster& clu);

}  // namespace dnnc::plan
