#pragma once
// dnnc-node's server: a Boost.Asio TCP acceptor with its io_context run on a thread pool.
// Each connection reads frames and hands each to the module registered for its message
// type; a module answers through a responder, at once or later from any thread. A frame
// whose framing is broken (bad magic, oversize, failed authentication) closes only that
// connection; a module's error becomes an error_reply and the connection stays.
#include "dnnc/node_server/tls.hpp"
#include "dnnc/protocol/frame.hpp"

#include <cstdint>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::node_server {

struct server_options {
    std::string bind = "127.0.0.1";
    std::uint16_t port = 0;  // 0: the system picks one; see server::port()
    // Non-empty: every frame must carry a valid HMAC tag. Empty: only connections from this
    // machine (loopback) are accepted, whatever the address bound.
    std::string secret;
    // Handlers never block (long work goes to tasks), so one thread serves; more threads
    // made every frame wake another thread (4 local nodes on 2 cores ticked 2.4x slower).
    std::size_t threads = 1;
    std::uint32_t max_payload = protocol::default_max_payload;
    // A connection is unproven until its peer proves itself: with a secret, by a request
    // tagged with the session's key (a hello alone proves nothing: it can be a replayed
    // one); without one, by any complete frame. Unproven connections share their own quota:
    // when it is full, the oldest unproven one (preferring those without a handshake) is
    // closed for the newcomer, so strangers crowd out only each other.
    std::size_t max_unproven_connections = 64;
    // Proven connections: in all, and from one address. A connection proving itself beyond
    // these gets an error reply and is closed.
    std::size_t max_connections = 1024;
    std::size_t max_connections_per_address = 256;
    // A connection that sends no byte for this long is closed unless a reply to it is still
    // being worked on; one not proven yet, after first_frame_timeout.
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(10)};
    std::chrono::milliseconds first_frame_timeout{std::chrono::seconds(10)};
    // With a certificate: connections are TLS (tls.hpp); a peer that does not speak it is
    // dropped at its handshake.
    std::shared_ptr<const tls_config> tls;
};

// The error_reply that says why a request failed: flagged as a refusal (protocol::
// refusal_flag) when `e` is a usage_error or config_error, the request's own fault.
protocol::frame error_reply_for(const std::exception& e);

// Sends the reply to a request. Call it exactly once; the request id is filled in.
using responder = std::function<void(protocol::frame reply)>;

class module {
public:
    virtual ~module() = default;
    virtual std::vector<protocol::message_type> handles() const = 0;
    // Throwing a dnnc::error replies error_reply with its message. One-way messages
    // (protocol::is_one_way) get no reply: the module must not respond to them.
    virtual void handle(const protocol::frame& request, responder respond) = 0;
    // Called once when the server stops, before its threads are joined.
    virtual void stop() {}
};

class server {
public:
    explicit server(server_options options);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Adding a module needs no change here: it names the message types it handles.
    void add_module(std::shared_ptr<module> m);
    // A connection whose first frame (after the hello, with a secret) is of type `opening`
    // leaves the server after that frame: its socket (a descriptor `take` then owns, with
    // nothing after the frame read from it) and its authentication go to `take`, on a
    // server thread. The frame anywhere later closes the connection. Call before start().
    using connection_taker = std::function<void(const protocol::frame& opening, int socket, protocol::frame_auth auth)>;
    void hand_over(protocol::message_type opening, connection_taker take);
    // Binds and starts the threads; throws io_error when the address cannot be bound.
    void start();
    std::uint16_t port() const;
    // Blocks until stop() is called (from a module, a signal handler or another thread).
    void wait();
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::node_server
