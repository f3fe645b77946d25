#pragma once
// A connection between nodes (or a client and a node), private to dnnc_node_server: plain
// TCP, or TLS over TCP when the node or client has a tls_config (tls.hpp). It reads and
// writes like an Asio stream, so Asio's composed operations (async_read, async_write) take
// it either way.
#include "dnnc/node_server/tls.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>

#include <utility>
#include <variant>

namespace dnnc::node_server {

class link_stream {
public:
    using tcp = boost::asio::ip::tcp;
    using tls_stream = boost::asio::ssl::stream<tcp::socket>;
    using executor_type = tcp::socket::executor_type;

    // A connection to make (client side): TLS when `tls` is given.
    link_stream(const executor_type& executor, const tls_config* tls) : tls_(tls), stream_(std::in_place_type<tcp::socket>, executor) {
        reset();
    }
    // An accepted connection (server side): TLS when `tls` serves.
    link_stream(tcp::socket accepted, const tls_config* tls) : stream_(std::in_place_type<tcp::socket>, std::move(accepted)) {
        if (!tls || !tls->serves()) return;
        tcp::socket socket = std::move(std::get<tcp::socket>(stream_));
        stream_.emplace<tls_stream>(std::move(socket), tls->server());
    }

    // A client's fresh stream for a new connection (a TLS session cannot be reused).
    void reset() {
        const auto executor = get_executor();
        if (tls_)
            stream_.emplace<tls_stream>(executor, tls_->client());
        else
            stream_.emplace<tcp::socket>(executor);
    }

    bool tls() const { return std::holds_alternative<tls_stream>(stream_); }
    // The TCP connection under it (connect, options, close).
    tcp::socket& socket() {
        return tls() ? std::get<tls_stream>(stream_).next_layer() : std::get<tcp::socket>(stream_);
    }
    executor_type get_executor() { return socket().get_executor(); }

    // The TLS handshake (nothing on plain TCP); a client checks the node's certificate for
    // `host`.
    template <class Handler>
    void async_handshake_as_client(const std::string& host, Handler&& handler) {
        if (!tls()) return done_at_once(std::forward<Handler>(handler));
        auto& s = std::get<tls_stream>(stream_);
        s.set_verify_callback(boost::asio::ssl::host_name_verification(host));
        s.async_handshake(boost::asio::ssl::stream_base::client, std::forward<Handler>(handler));
    }
    template <class Handler>
    void async_handshake_as_server(Handler&& handler) {
        if (!tls()) return done_at_once(std::forward<Handler>(handler));
        std::get<tls_stream>(stream_).async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
    }

    template <class Buffers, class Handler>
    void async_read_some(const Buffers& buffers, Handler&& handler) {
        std::visit([&](auto& s) { s.async_read_some(buffers, std::forward<Handler>(handler)); }, stream_);
    }
    template <class Buffers, class Handler>
    void async_write_some(const Buffers& buffers, Handler&& handler) {
        std::visit([&](auto& s) { s.async_write_some(buffers, std::forward<Handler>(handler)); }, stream_);
    }

    void close() {
        boost::system::error_code ignored;
        socket().shutdown(tcp::socket::shutdown_both, ignored);
        socket().close(ignored);
    }

private:
    using variant = std::variant<tcp::socket, tls_stream>;

    // Calls `handler` with success, later, on its own executor (a strand keeps it).
    template <class Handler>
    void done_at_once(Handler&& handler) {
        const auto executor = boost::asio::get_associated_executor(handler, get_executor());
        boost::asio::post(executor, [h = std::forward<Handler>(handler)]() mutable { h(boost::system::error_code()); });
    }

    const tls_config* tls_ = nullptr;  // a client's
    variant stream_;
};

}  // namespace dnnc::node_server
