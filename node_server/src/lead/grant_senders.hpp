#pragma once
// How the lead's clock reaches the nodes in window mode (private to dnnc_node_server): a
// thread per node sends it the clock's newest grant (older ones not yet sent are
// superseded), and sends it again until the node takes it or a newer one comes; a request
// (a hold) waits until that node's sender is idle and goes in its place. A node that does
// not answer holds up none of the others.
#include "dnnc/protocol/control_plane.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dnnc::node_server {

class grant_senders {
public:
    // A clock request to node v; returns its reply.
    using clock_link = std::function<protocol::clock_reply(std::size_t node, protocol::clock_request)>;

    grant_senders(std::size_t nodes, clock_link clock);
    ~grant_senders();  // stops the senders
    grant_senders(const grant_senders&) = delete;
    grant_senders& operator=(const grant_senders&) = delete;

    // Every node is to be granted the ticks up to `last`.
    void grant(std::int64_t last);
    // One clock request to node v, in order with the grants posted to it.
    protocol::clock_reply request(std::size_t v, const protocol::clock_request& request);

private:
    struct sender {
        std::int64_t pending = -1;  // the newest grant not yet taken; -1: none
        bool busy = false;          // a clock request to the node is under way
        std::thread thread;
    };
    void send(std::size_t v);  // node v's sender thread

    clock_link clock_;
    std::mutex mutex_;
    std::condition_variable changed_;
    bool stop_ = false;
    std::vector<sender> senders_;
};

}  // namespace dnnc::node_server
