#include "dnnc/node_server/local_cluster.hpp"

#include <boost/asio/ip/address.hpp>

namespace dnnc::node_server {

bool is_loopback_host(const std::string& host) {
    if (host == "localhost") return true;
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(host, ec);
    return !ec && address.is_loopback();
}

std::vector<const protocol::cluster_node*> local_nodes(const protocol::cluster& clu) {
    std::vector<const protocol::cluster_node*> result;
    for (const auto& node : clu.nodes)
        if (is_loopback_host(node.host)) result.push_back(&node);
    return result;
}

}  // namespace dnnc::node_server
