#pragma once
// The cluster as the lead's status shows it (private to dnnc_node_server): every node with
// its roles, address, neurons, how long its heartbeats have been silent and the time its
// ticks take; the links (link_statuses), the wait windows, each population's spread over
// the nodes, the cut and the imbalance.
#include "lead/lead_state.hpp"

#include "dnnc/protocol/status.hpp"

#include <map>
#include <optional>
#include <string>

namespace dnnc::node_server {

// A page served on every address (0.0.0.0, ::) is reached at its node's host.
std::string reachable_page(const std::string& page, const std::string& host);

// The lead's status of `state`'s cluster. `subleads`: node -> the sub-lead it is reached
// through; `page`: the lead's own live page (empty: none); `progress`: the run's, when
// there is one. Counts the populations' spread into `state` the first time.
protocol::lead_status cluster_status_of(lead_state& state, const std::map<std::string, std::string>& subleads, const std::string& page,
                                        const std::optional<protocol::run_progress>& progress);

}  // namespace dnnc::node_server
