#pragma once
// An update of a frozen network's parameters, weights or delays (dnnc update; private to
// dnnc_node_server): what each node is sent when synapses change, and the lead's plan taking
// the update once every node has.
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"

#include <map>
#include <string>
#include <vector>

namespace dnnc::node_server {

// Each node's share of `net`, an update of `plan`'s network that changes weights, as an
// install gives it (plan::build_configs): the wiring with the new weights, lists cut to the
// node's neurons; serialised, by node id.
std::map<std::string, std::string> updated_shares(const plan::network_plan& plan, const plan::topology& topo,
                                                  const std::vector<plan::link_time>& times, const std::vector<double>& windows,
                                                  std::uint64_t epoch, const model::network& net);

// What an update sends each node: the update's parameters, or, when it changes synapses
// (weights, delays or synapse models: `resynapsed`), the node's share (updated_shares).
struct update_bodies {
    bool redelayed = false;  // delays change: new ones may reach as far back as the nodes keep output
    bool resynapsed = false;
    std::string parameters;
    std::map<std::string, std::string> shares;
    const std::string& for_node(const std::string& id) const { return resynapsed ? shares.at(id) : parameters; }
};
// `update` checked (model::check_network, and check_update against `plan`'s network with
// `history` ticks of output kept) and what it sends each node; the arguments as
// updated_shares'.
update_bodies update_bodies_of(const plan::network_plan& plan, const plan::topology& topo, const std::vector<plan::link_time>& times,
                               const std::vector<double>& windows, std::uint64_t epoch, std::uint16_t history,
                               const model::network& update);

// `plan` takes `update` (checked against it: protocol::check_update): its neurons',
// populations' and generators' parameters and, when `resynapsed`, its projections, synapses
// and synapse models; its expanded groups and generators follow.
void take_update(plan::network_plan& plan, model::network update, bool resynapsed);

}  // namespace dnnc::node_server
