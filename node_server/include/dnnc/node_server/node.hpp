#pragma once
// A dnnc node: the server with the neural-network module (submit, configure, probe) and the
// admin module (status, heartbeat, shutdown). A node that receives a submit becomes the
// lead: it partitions, measures link latencies with source-routed probes, builds the node
// configs with wait windows and fans them out along the broadcast tree, then watches the
// other nodes with heartbeats.
#include "dnnc/node_server/server.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace dnnc::node_server {

struct node_options {
    server_options server;
    // Extra delay (ms) this node holds back everything it sends to the given peer node id,
    // on top of the emulate-delay of the link in the cluster config.
    std::map<std::string, double> emulate_delay_ms;
    // Where dense projections run: "cpu" or "cuda" (see sim::resolve_device).
    std::string device = "cpu";
    // How long a call to another node (a subtree's configure, a probe) may take.
    std::chrono::milliseconds call_timeout{60000};
};

class node {
public:
    explicit node(node_options options);
    ~node();
    void start();
    std::uint16_t port() const;
    void wait();
    void stop();

    struct impl;  // public only so that the modules in node.cpp can name it

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::node_server
