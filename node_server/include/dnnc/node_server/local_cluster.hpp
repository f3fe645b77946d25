#pragma once
// Which nodes of a cluster this machine can start itself: those on the loopback range.
#include "dnnc/protocol/model.hpp"

#include <string>
#include <vector>

namespace dnnc::node_server {

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

std::vector<const protocol::cluster_node*> local_nodes(const protocol::cluster& clu);

}  // namespace dnnc::node_server
