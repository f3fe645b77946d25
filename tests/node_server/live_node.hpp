#pragma once
// A node of a test's cluster, in-process and serving on a free loopback port, with the
// cluster's secret.
#include "dnnc/node_server/node.hpp"

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

}  // namespace dnnc::test
