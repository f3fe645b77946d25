#pragma once
// A node of a test's cluster, in-process and serving on a free loopback port, with the
// cluster's secret; and the parts a lead of such a cluster is made of.
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/server.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "dnnc/protocol/frame.hpp"
#include "tasks.hpp"
#include "worker/worker.hpp"

#include <memory>
#include <string>

namespace dnnc::test {

inline const std::string cluster_secret = "a secret of this cluster";

inline std::unique_ptr<node_server::node> live_node() {
    node_server::node_options options;
    options.server.secret = cluster_secret;
    auto n = std::make_unique<node_server::node>(options);
    n->start();
    return n;
}

// The lead's own parts, as a node has them: its server, calls, and worker (private to
// dnnc_node_server: for the tests of its private units).
struct lead_parts {
    lead_parts() {
        options.server.secret = cluster_secret;
        srv = std::make_unique<node_server::server>(options.server);
        own = std::make_shared<node_server::worker>(options, calls, inbox, tasks, node_server::worker::hooks{});
        srv->add_module(own);  // probes come back to the lead
        srv->start();
    }
    node_server::node_options options;
    node_server::peer_client calls{cluster_secret};
    node_server::signal_inbox inbox{protocol::default_max_payload};
    node_server::task_pool tasks;
    std::shared_ptr<node_server::worker> own;
    std::unique_ptr<node_server::server> srv;  // stops first, before the parts its modules use
};

}  // namespace dnnc::test
