#pragma once
// Whether a lockstep run can go on (private to dnnc_node_server): every node must answer,
// and a packet a peer has sent (it has completed that tick) that has not come after a
// heartbeat timeout is lost: TCP does not lose bytes, so the link itself broke.
#include "dnnc/plan/topology.hpp"
#include "dnnc/protocol/status.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

// Why the run cannot go on, naming the node or the link; none while it can. `alive(v)`:
// node v answers heartbeats; `waiting(v)`: what its tick in progress waits for, as
// {"tick", "ms", "peers": [id...]} (null: nothing, or not known); `nodes[v].completed`: the
// last tick it reported.
std::optional<std::string> lockstep_breach(const plan::topology& topo, const std::function<bool(std::size_t)>& alive,
                                           const std::function<nlohmann::json(std::size_t)>& waiting,
                                           const std::vector<protocol::node_progress>& nodes, double heartbeat_timeout_ms);

}  // namespace dnnc::node_server
