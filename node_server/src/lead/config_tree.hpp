#pragma once
// The configs a lead sends down the broadcast tree (private to dnnc_node_server): every
// node's, built from the lead's state of its network, and the nodes' acknowledgements checked
// against them.
#include "lead/lead_state.hpp"

#include "dnnc/model/model.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace dnnc::node_server {

// Each link's measured one-way latency, by link (0 where none was measured).
std::vector<double> link_latencies(const lead_state& state);

// Every node's config for `state`'s network under a fresh epoch, down the broadcast tree from
// the lead (plan::build_configs), with the links' compression decided; a node reached
// through a sub-lead (`subleads`: node -> sub-lead) is told to reach the lead back through
// it. `state` takes the epoch and the history the configs keep, and the lead's first child
// as its standby.
model::node_config node_configs_of(lead_state& state, const std::map<std::string, std::string>& subleads);

// The nodes' acknowledgements of the configs of `root`, each with the hash of the config it
// took: error naming a node whose hash is not its config's, or one that did not acknowledge.
void check_acks(const model::node_config& root, const nlohmann::json& acks);

// The nodes of `state` as an install's reply lists them, in node order, from their acks:
// [{id, neurons, hash (of the config it took; "" without an ack), kept (its engine), prepared
// (built ahead)}].
nlohmann::json installed_nodes(const lead_state& state, const nlohmann::json& acks);

}  // namespace dnnc::node_server
