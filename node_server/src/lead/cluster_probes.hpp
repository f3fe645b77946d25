#pragma once
// The lead's questions to the nodes of a cluster (private to dnnc_node_server): which of
// them this node is; which answer, straight or through a sub-lead (relays.hpp); the links'
// latencies and throughput, measured with source-routed probes; whether a plan fits the
// memory they report.
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"
#include "worker/worker.hpp"

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace dnnc::node_server {

// The bytes a throughput probe carries across a link (measure_links); with a run's
// `throughput-probes` T, a link costs 2 × T × this much traffic at each submit.
inline constexpr std::size_t throughput_probe_load = std::size_t{256} << 10;

class cluster_probes {
public:
    cluster_probes(const node_options& options, const server& srv, peer_client& calls, worker& own)
        : options_(options), srv_(srv), calls_(calls), own_(own) {}

    // This node's place among `clu`'s nodes (by its port and address; loopback addresses
    // match each other); usage_error when it is none of them.
    std::size_t find_self(const model::cluster& clu) const;
    // Nodes of `clu` this node has no route to are reached through a sub-lead: the first
    // node linked to one in the document that this node reaches (directly, or in an earlier
    // round through its own sub-lead) and that carries a heartbeat on to it. Returns the
    // nodes (besides those in `skip`) reached no way.
    std::set<std::string> reach_nodes(const model::cluster& clu, const std::set<std::string>& skip);
    // node -> the sub-lead it is reached through, as the last reach_nodes found.
    std::map<std::string, std::string> subleads() const;
    // The link times of `plan`'s cluster: latencies, then throughput.
    std::vector<plan::link_time> measure_links(const plan::network_plan& plan, const plan::topology& topo);
    // The network of `plan` fits in the memory its nodes report (check_memory_fit); the
    // nodes are asked, this one's worker too.
    void check_memory(const plan::network_plan& plan, bool replace);

private:
    double probe_once(const plan::network_plan& plan, const std::vector<std::size_t>& path, std::size_t load = 0);

    const node_options& options_;
    const server& srv_;
    peer_client& calls_;
    worker& own_;
    mutable std::mutex mutex_;
    std::map<std::string, std::string> subleads_;
};

}  // namespace dnnc::node_server
