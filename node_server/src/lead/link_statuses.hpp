#pragma once
// The cluster's links as the lead's status shows them (private to dnnc_node_server).
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"
#include "dnnc/protocol/status.hpp"

#include <vector>

namespace dnnc::node_server {

// One entry per measured link (`times`): its times as measured, its bandwidth as `declared`
// (the document's links) give it, and, with a run's `progress` (null: none), what its
// nodes' tick reports count both ways: values and bytes sent, packets late and missing by
// sender (counted where they arrive).
std::vector<protocol::link_status> link_statuses(const plan::topology& topo, const std::vector<plan::link_time>& times,
                                                 const std::vector<model::cluster_link>& declared,
                                                 const protocol::run_progress* progress);

}  // namespace dnnc::node_server
