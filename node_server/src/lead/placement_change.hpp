#pragma once
// What a change of a running network's placement or cluster means (private to
// dnnc_node_server: the lead's re-balance, join, drain and recovery): which neurons moved,
// which link times still hold, which nodes are still joined.
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/status.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dnnc::node_server {

// How the neurons of `after` sit compared with `before` (by node id): the neurons on another
// node than before (grown ones not counted), and each node's count before and after, in
// the cluster's order, then the nodes that left.
protocol::move_record placement_change(const plan::current_placement& before, const plan::network_plan& after);

// The link times measured on `before` for `after`'s links, found by their ends: each link is
// its own (its latency and throughput; a round trip stays as measured on the old probe route).
// None when `after` has a node at another address or a link that `before` lacks or has
// otherwise: that must be measured.
std::optional<std::vector<plan::link_time>> carried_link_times(const model::cluster& before,
                                                               const std::vector<plan::link_time>& times,
                                                               const model::cluster& after);

// The nodes of `cluster` that some chain of links joins to node `from`, the nodes in
// `left_out` and their links left out.
std::set<std::string> reached_from(const model::cluster& cluster, const std::string& from, const std::set<std::string>& left_out);

}  // namespace dnnc::node_server
