#pragma once
// Whether a planned network fits in the memory of the nodes it is planned onto (private to
// dnnc_node_server), checked by the lead before anything is sent to them.
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/status.hpp"

#include <optional>
#include <vector>

namespace dnnc::node_server {

// What each node of `plan` would hold (sim::bytes_needed for its share, and its rules'
// state) against what `statuses` (per node of the cluster; none for a node that did not
// answer) report: usage_error for a node past its own limit (--memory-limit), or for the
// nodes of one machine (the loopback's all count as one) that would need more than 90% of
// what it has available, plus, with `replace`, what the networks they hold now take.
void check_memory_fit(const plan::network_plan& plan, const std::vector<std::optional<protocol::node_status>>& statuses, bool replace);

}  // namespace dnnc::node_server
