#pragma once
// The lead's heartbeats to the other nodes of its network (private to dnnc_node_server): a
// thread per node sends the same beat every quarter of the heartbeat timeout (20 to 500 ms)
// and waits half the timeout (at least 10 ms) for the answer, which it hands to the lead,
// or the failure. The lead counts a node silent from its last answer.
#include "dnnc/model/model.hpp"
#include "dnnc/node_server/node.hpp"

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace dnnc::node_server {

class heartbeat_sender {
public:
    struct handlers {
        // Node v answered with `beat` (its reply's JSON; {} when empty); false: send it no more
        // beats (it serves another lead). An exception counts as a failure.
        std::function<bool(std::size_t v, const nlohmann::json& beat)> answered;
        // No answer from node v, or one that is not JSON: `why`.
        std::function<void(std::size_t v, const std::string& why)> failed;
    };

    // Beats carrying `payload` to every node of `cluster` but `lead`, through connections of
    // their own (options' secret and TLS).
    heartbeat_sender(const node_options& options, const model::cluster& cluster, std::size_t lead, std::string payload,
                     double heartbeat_timeout_ms, handlers on);
    // Stops the threads and waits for them (each ends within a beat's wait).
    ~heartbeat_sender();
    heartbeat_sender(const heartbeat_sender&) = delete;
    heartbeat_sender& operator=(const heartbeat_sender&) = delete;

    // No more beats; returns at once.
    void stop();

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    bool stopping_ = false;
    std::list<std::thread> threads_;
};

}  // namespace dnnc::node_server
