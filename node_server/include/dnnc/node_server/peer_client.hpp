#pragma once
// Request/reply calls to other nodes over TCP, one persistent connection per endpoint and
// one call at a time on it, each with a deadline. Used by the lead (fan-out, probes,
// heartbeats), by nodes forwarding configs and probes, and by the command-line tools.
#include "dnnc/node_server/tls.hpp"
#include "dnnc/protocol/frame.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace dnnc::node_server {

// The peer answered with an error_reply: a refusal, not a transport failure.
struct remote_error : error {
    using error::error;
};
// The peer refused the request itself (protocol::refusal_flag): bad input, not a failure.
struct remote_refusal : remote_error {
    using remote_error::remote_error;
};

struct endpoint {
    std::string host;
    std::uint16_t port = 0;
    std::string text() const { return host + ":" + std::to_string(port); }
};

// "HOST:PORT" -> endpoint; throws usage_error.
endpoint parse_endpoint(const std::string& text);

class peer_client {
public:
    // With `tls`, every connection is TLS and the node's certificate is checked (tls.hpp).
    explicit peer_client(std::string secret = {}, std::uint32_t max_payload = protocol::default_max_payload,
                         std::shared_ptr<const tls_config> tls = nullptr);
    ~peer_client();
    peer_client(const peer_client&) = delete;
    peer_client& operator=(const peer_client&) = delete;

    // Sends `request` (its request id is assigned here) and returns the reply. Throws
    // io_error when the peer cannot be reached or does not answer in time (the connection
    // is then dropped), remote_error when it replies with error_reply.
    protocol::frame call(const endpoint& to, protocol::frame request, std::chrono::milliseconds timeout);

    // A call whose work grows with what it asks (a share to install, states to restore or
    // capture, a replica): no limit on how long the work takes. While it waits, the peer is
    // sent a heartbeat every quarter of `silence` on a connection of its own; the call fails
    // (io_error) only once the peer has answered none (not even with a refusal) for
    // `silence`.
    protocol::frame call_while_alive(const endpoint& to, protocol::frame request, std::chrono::milliseconds silence);

    // Drops the connection to `to`, if any.
    void forget(const endpoint& to);

private:
    // Until when a call waits for its reply, looked at again while it waits when it moves,
    // and what a call that waited in vain says.
    struct patience {
        std::function<std::chrono::steady_clock::time_point()> deadline;
        bool moves = false;
        std::function<std::string()> why;
    };
    protocol::frame call_with(const endpoint& to, protocol::frame request, const patience& wait);

    struct connection;
    std::shared_ptr<connection> connection_to(const endpoint& to);

    std::string secret_;
    std::uint32_t max_payload_;
    std::shared_ptr<const tls_config> tls_;
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<connection>> connections_;
};

}  // namespace dnnc::node_server
