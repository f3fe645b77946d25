#pragma once
// Weight histograms between the lead and its nodes (private to dnnc_node_server; the bins
// themselves in sim/weight_histogram.hpp). A weight-bins frame asks a node to bin its own
// plastic synapses, and the lead adds the nodes' replies:
//   request {"bins": B, "groups": [[lo, hi, [element, ...]], ...]}: for each group of
//     connection elements, B bins over [lo, hi] (B = 0: the count, least and greatest
//     weight only);
//   reply {"groups": [[count, min, max, [bin counts...]], ...]}, in the request's order (min
//     and max null when the node has no synapse of the group).
#include "dnnc/sim/weight_histogram.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace dnnc::node_server {

// The bins of the lead's histograms (docs/live.md, "Weights"), and the most bins a request
// may ask for in all, so that a reply stays small.
inline constexpr std::size_t weight_histogram_bins = 20;
inline constexpr std::size_t max_weight_bins = std::size_t{1} << 20;

// Histograms of groups of connection elements: histograms[k] of the plastic synapses of
// elements[k]; every histogram has the same number of bins.
struct weight_groups {
    std::vector<sim::weight_histogram> histograms;
    std::vector<std::vector<std::size_t>> elements;
};

nlohmann::json weight_bins_request(const weight_groups& wanted);
// Empty histograms as a request asks them; protocol_error beyond max_weight_bins or for a
// range that is not finite, lo <= hi.
weight_groups parse_weight_bins_request(const nlohmann::json& request);
nlohmann::json weight_bins_reply(const std::vector<sim::weight_histogram>& binned);
// Adds a node's reply to `total`, the histograms it was asked for (protocol_error when the
// reply does not fit them).
void add_weight_bins_reply(const nlohmann::json& reply, std::vector<sim::weight_histogram>& total);

}  // namespace dnnc::node_server
