#pragma once
// The node's live page (private to dnnc_node_server; docs/live.md): a small HTTP/1.1 server
// on Boost.Beast with its own acceptor, io_context and thread, apart from the node's frame
// server, so that a browser never shares a thread with the cluster's frames and a slow
// browser cannot delay a tick. It serves the page built into the binary, the node's status
// as JSON, a stream of status (server-sent events, at most one event per period for all
// readers together), a peek at the recorded spikes the lead holds, the clock's commands, and
// a snapshot of the frozen network, streamed a piece at a time (a chunked response).
//
// Everything it holds is bounded before the client is known: request header and body
// sizes, the number of connections, how long a connection may take to send a request.
// With a token, every path answers 401 unless the request carries it (Authorization:
// Bearer, or ?token=), and the connection closes after the 401. Without a token, only
// clients on this machine are served.
//
// Connections that have not yet sent an authorised request (strangers, or clients still
// sending their first) share a small quota of their own; when it is full, the oldest of
// them is closed to make room for the newest. A stranger can thus never hold the slots
// that clients with the token use: at least max_connections - max_unproven_connections
// stay for them.
#include "dnnc/protocol/control_plane.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dnnc::node_server {

struct http_options {
    std::string bind = "127.0.0.1";
    std::uint16_t port = 0;  // 0: the system picks one; see http_server::port()
    // Non-empty: every request must carry one of these (the token, or the secret itself).
    std::string token;
    std::string secret;
    std::size_t max_connections = 64;
    // Of those, how many may be held by connections without an authorised request yet.
    std::size_t max_unproven_connections = 16;
    std::size_t max_header_bytes = 8192;
    std::size_t max_body_bytes = 65536;
    // A connection must deliver each request within this long, or it is closed.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(15)};
    // At most one status event per this long, whatever the number of readers.
    std::chrono::milliseconds event_period{250};
};

// What the page shows and does, supplied by the node. `status` and `spikes` run on the
// server's thread and must not block on other nodes; `control` may take long: it is given a
// callback to call once, from any thread, with the reply or an error.
struct http_handlers {
    std::function<nlohmann::json()> status;
    std::function<nlohmann::json(const nlohmann::json& request)> spikes;
    using done = std::function<void(int http_status, nlohmann::json reply)>;
    std::function<void(const protocol::control_request& command, done)> control;
    // A piece of the binary snapshot of the frozen network (.dnncs), as the lead serves it
    // (lead_run::snapshot_piece_at): `from` 0 takes the snapshot, later pieces read on while
    // the network stays at its tick; `buffer` (the previous piece) is reused for the piece's
    // bytes. `done` is called once, from any thread.
    struct snapshot_piece {
        int http_status = 200;      // else `error` says why
        std::uint64_t total = 0;    // the snapshot's bytes
        std::uint64_t capture = 0;  // which capture of the lead's they are of (lead_run::snapshot_piece)
        std::string bytes, error;
    };
    using done_piece = std::function<void(snapshot_piece)>;
    std::function<void(std::uint64_t from, std::size_t count, std::string buffer, done_piece)> snapshot;
};

class http_server {
public:
    http_server(http_options options, http_handlers handlers);
    ~http_server();
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    // Binds and starts the thread; throws io_error when the address cannot be bound.
    void start();
    std::uint16_t port() const;
    void stop();

    struct impl;  // its connections reach it (http_server.cpp)

private:
    std::shared_ptr<impl> impl_;
};

// The page (HTML with its script and styles inline; nothing is fetched from elsewhere).
const std::string& live_page();
// The page with `status` in it, as the status it was served with.
std::string live_page_with(const nlohmann::json& status);

}  // namespace dnnc::node_server
