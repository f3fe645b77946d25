#pragma once
// What running a network on this machine takes, shared by `dnnc run` and the Python module:
// a cluster of K local nodes, and a session that takes a started cluster down however the
// run ends.
#include "dnnc/node_server/local_cluster.hpp"
#include "dnnc/protocol/model.hpp"

#include <exception>
#include <string>

namespace dnnc::cli {

// K local nodes, every pair linked; port 0: each node picks a free one when it starts.
protocol::cluster local_cluster_of(int k);

// Starts the local nodes of a cluster, and stops them when it goes (the nodes' logs stay,
// and their folder is said on standard error, when it goes while an exception unwinds).
class cluster_session {
public:
    cluster_session(const protocol::cluster& clu, const std::string& config, const node_server::launch_options& launch);
    ~cluster_session();
    cluster_session(const cluster_session&) = delete;
    cluster_session& operator=(const cluster_session&) = delete;

    // `clu` with the ports its nodes listen on.
    protocol::cluster listening(protocol::cluster clu) const;
    // The secret the nodes were started with (the run's own when none was given).
    const std::string& secret_file() const { return cluster_.secret_file; }
    // The process ids of the nodes.
    std::vector<int> pids() const;

private:
    node_server::local_cluster cluster_;
    int unwinding_ = std::uncaught_exceptions();
};

}  // namespace dnnc::cli
