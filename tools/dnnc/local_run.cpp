#include "local_run.hpp"

#include <filesystem>
#include <iostream>

namespace dnnc::cli {

protocol::cluster local_cluster_of(int k) {
    protocol::cluster c;
    c.lead = "n0";
    for (int i = 0; i < k; ++i) c.nodes.push_back({"n" + std::to_string(i), "127.0.0.1", 0, 1.0, {}});
    for (int i = 0; i < k; ++i)
        for (int j = i + 1; j < k; ++j) c.links.push_back({c.nodes[i].id, c.nodes[j].id, 0.0, {}});
    return c;
}

cluster_session::cluster_session(const protocol::cluster& clu, const std::string& config,
                                 const node_server::launch_options& launch)
    : cluster_(node_server::start_local_cluster(clu, config, launch)) {}

cluster_session::~cluster_session() {
    const bool failed = std::uncaught_exceptions() > unwinding_;
    node_server::stop_local_cluster(cluster_, failed ? node_server::node_logs::keep : node_server::node_logs::remove);
    if (failed && !cluster_.nodes.empty())
        std::cerr << "dnnc: the nodes' logs are in "
                  << std::filesystem::path(cluster_.nodes.front().log_file).parent_path().string() << '\n';
}

protocol::cluster cluster_session::listening(protocol::cluster clu) const {
    for (auto& node : clu.nodes)
        for (const auto& started : cluster_.nodes)
            if (started.id == node.id) node.port = started.at.port;
    return clu;
}

std::vector<int> cluster_session::pids() const {
    std::vector<int> list;
    for (const auto& n : cluster_.nodes) list.push_back(n.pid);
    return list;
}

}  // namespace dnnc::cli
