#include "client.hpp"

namespace dnnc::cli {

protocol::frame call_node(const client_options& o, const std::string& address, protocol::frame request) {
    const auto to = node_server::parse_endpoint(address);
    node_server::peer_client client(o.secret());
    return client.call(to, std::move(request), o.timeout());
}

}  // namespace dnnc::cli
