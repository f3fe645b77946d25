#include "http/http_server.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/node_server/log.hpp"
#include "net/run_handlers.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <openssl/crypto.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <set>
#include <thread>
#include <vector>

namespace dnnc::node_server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;

namespace {

class session;

bool same_secret(const std::string& given, const std::string& expected) {
    return !expected.empty() && given.size() == expected.size() &&
           CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

// "a=1&b=2" -> the value of `key`, if present (no percent-decoding: tokens are hex).
std::optional<std::string> query_value(const std::string& query, const std::string& key) {
    std::size_t at = 0;
    while (at <= query.size()) {
        const auto end = std::min(query.find('&', at), query.size());
        const auto pair = query.substr(at, end - at);
        const auto eq = pair.find('=');
        if (pair.substr(0, eq) == key) return eq == std::string::npos ? std::string() : pair.substr(eq + 1);
        at = end + 1;
    }
    return std::nullopt;
}

bool is_loopback(const asio::ip::address& a) {
    if (a.is_loopback()) return true;
    return a.is_v6() && a.to_v6().is_v4_mapped() && a.to_v6().to_v4().is_loopback();
}

}  // namespace

struct http_server::impl {
    http_options options;
    http_handlers handlers;
    std::atomic<std::size_t> connections{0};
    std::uint16_t bound_port = 0;
    asio::io_context io;  // after what its pending handlers (sessions) use
    tcp::acceptor acceptor{io};
    asio::steady_timer ticker{io};
    // The server's thread only: the readers of the event stream (they hold sockets of `io`),
    // and the connections without an authorised request yet, oldest first.
    std::vector<std::shared_ptr<session>> readers;
    std::deque<std::weak_ptr<session>> unproven;
    std::thread thread;

    impl(http_options o, http_handlers h) : options(std::move(o)), handlers(std::move(h)) {}
    void accept();
    void admit(tcp::socket socket);
    void tick();
};

namespace {

using response = http::response<http::string_body>;

// The snapshot travels in pieces of this size, as `dnnc snapshot` reads it.
constexpr std::size_t snapshot_piece_bytes = 1u << 20;

// One connection: requests in turn (keep-alive), or, after GET /api/events, a stream of
// events written by the server's ticker. One write in flight at a time.
class session : public std::enable_shared_from_this<session> {
public:
    session(tcp::socket socket, http_server::impl& srv) : stream_(std::move(socket)), srv_(srv) { ++srv_.connections; }
    ~session() { --srv_.connections; }

    void read() {
        parser_.emplace();
        parser_->header_limit(static_cast<std::uint32_t>(srv_.options.max_header_bytes));
        parser_->body_limit(srv_.options.max_body_bytes);
        stream_.expires_after(srv_.options.request_timeout);
        http::async_read(stream_, buffer_, *parser_,
                         [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    // An event for a reader of the stream; dropped when the last one is still being written
    // (a slow reader gets fewer events, never a queue), and the connection closed when that
    // write has taken longer than the request timeout.
    void push(const std::shared_ptr<const std::string>& event) {
        if (closed_) return;
        if (writing_) {
            if (std::chrono::steady_clock::now() - write_started_ > srv_.options.request_timeout) close();
            return;
        }
        write_raw(event, false);
    }
    bool streaming() const { return streaming_ && !closed_; }
    // Whether a request with the token (or any request, without one) has come.
    bool proven() const { return proven_; }

    void close() {
        if (closed_) return;
        closed_ = true;
        beast::error_code ignored;
        stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
        stream_.socket().close(ignored);
    }

private:
    void on_read(beast::error_code ec) {
        if (!ec) {
            handle(parser_->release());
            return;
        }
        if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
            ec.category() != http::make_error_code(http::error::bad_method).category()) {
            close();
            return;
        }
        {  // the request itself is malformed or too large: say so, then close
            const auto status = ec == http::error::header_limit ? http::status::request_header_fields_too_large
                                : ec == http::error::body_limit ? http::status::payload_too_large
                                                                : http::status::bad_request;
            send(reply(status, {{"error", ec.message()}}, 11), true);
        }
    }

    static response reply(http::status status, const json& body, unsigned version) {
        response res{status, version};
        res.set(http::field::content_type, "application/json");
        res.set(http::field::cache_control, "no-store");
        res.body() = body.dump();
        return res;
    }

    bool authorised(const http::request<http::string_body>& req, const std::string& query) const {
        const auto& o = srv_.options;
        if (o.token.empty()) return true;
        std::string given;
        if (const auto it = req.find(http::field::authorization); it != req.end()) {
            const std::string value(it->value());
            if (value.rfind("Bearer ", 0) == 0) given = value.substr(7);
        }
        if (given.empty()) given = query_value(query, "token").value_or("");
        return same_secret(given, o.token) || same_secret(given, o.secret);
    }

    void handle(http::request<http::string_body> req) {
        const std::string target(req.target());
        const auto question = target.find('?');
        const std::string path = target.substr(0, question);
        const std::string query = question == std::string::npos ? "" : target.substr(question + 1);
        const unsigned v = req.version();
        const bool close_after = !req.keep_alive();
        if (!authorised(req, query)) {
            auto res = reply(http::status::unauthorized, {{"error", "this node's page needs its token (docs/live.md)"}}, v);
            res.set(http::field::www_authenticate, "Bearer");
            send(std::move(res), true);
            return;
        }
        proven_ = true;
        const bool get = req.method() == http::verb::get;
        const bool known = path == "/" || path == "/index.html" || path == "/api/status" || path == "/api/spikes" ||
                           path == "/api/events" || path == "/api/control" || path == "/api/snapshot";
        if (!known) {
            send(reply(http::status::not_found, {{"error", "no such page: " + path}}, v), close_after);
            return;
        }
        if ((path == "/api/control") != (req.method() == http::verb::post) || (!get && path != "/api/control")) {
            send(reply(http::status::method_not_allowed, {{"error", "method not allowed"}}, v), close_after);
            return;
        }
        try {
            if (path == "/" || path == "/index.html") {
                response res{http::status::ok, v};
                res.set(http::field::content_type, "text/html; charset=utf-8");
                res.set(http::field::cache_control, "no-store");
                res.set("Content-Security-Policy",
                        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                        "connect-src 'self'; img-src 'self' data:");
                res.body() = live_page_with(srv_.handlers.status());
                send(std::move(res), close_after);
            } else if (path == "/api/status") {
                send(reply(http::status::ok, srv_.handlers.status(), v), close_after);
            } else if (path == "/api/spikes") {
                json request = json::object();
                if (const auto from = query_value(query, "from")) request["from"] = std::stoll(*from);
                send(reply(http::status::ok, srv_.handlers.spikes(request), v), close_after);
            } else if (path == "/api/events") {
                start_events();
            } else if (path == "/api/snapshot") {
                snapshot(v, close_after);
            } else {
                control(json::parse(req.body()), v, close_after);
            }
        } catch (const json::exception& e) {
            send(reply(http::status::bad_request, {{"error", e.what()}}, v), close_after);
        } catch (const std::logic_error& e) {  // std::stoll
            send(reply(http::status::bad_request, {{"error", e.what()}}, v), close_after);
        } catch (const std::exception& e) {
            send(reply(http::status::internal_server_error, {{"error", e.what()}}, v), close_after);
        }
    }

    // The clock's commands only (a step of one tick unless it says; a checkpoint now);
    // others (input, recover) stay with dnnc.
    void control(json command, unsigned v, bool close_after) {
        using kind = protocol::control_request::kind;
        static const std::set<kind> allowed{kind::start, kind::resume, kind::freeze, kind::step, kind::checkpoint};
        const json name = command.is_object() ? command.value("command", json()) : json();
        if (name == "step" && !command.contains("ticks")) command["ticks"] = 1;
        protocol::control_request request;
        try {
            // The name first: a command the page may not send is refused as such, whatever its fields.
            if (!name.is_string() || std::none_of(allowed.begin(), allowed.end(), [&](kind k) { return name == protocol::to_string(k); }))
                throw usage_error("command must be one of start, resume, freeze, step, checkpoint");
            request = protocol::decode_control_request(command);
        } catch (const usage_error& e) {
            send(reply(http::status::bad_request, {{"error", e.what()}}, v), close_after);
            return;
        }
        if (request.what == kind::checkpoint) {
            request = protocol::control_request(kind::checkpoint);
            request.now = true;
        }
        srv_.handlers.control(request, [self = shared_from_this(), v, close_after](int status, json answer) {
            asio::post(self->srv_.io, [self, v, close_after, status, answer = std::move(answer)] {
                self->send(reply(static_cast<http::status>(status), answer, v), close_after);
            });
        });
    }

    // GET /api/snapshot streams the lead's snapshot pieces as the chunks of one response,
    // asking for the next piece only once the last is written, into the last one's storage:
    // neither the lead nor this server holds more than a piece, whatever the snapshot's size
    // (and a piece read on a new thread each time allocates nothing there), and each write has
    // the request timeout, not the whole download. An error before the first byte is a JSON
    // answer; one after it (the network unfrozen, or on to another tick), or a piece of
    // another capture (another client's, after an update), ends the connection without the
    // last chunk, so that the client sees a broken download, never a complete file mixing
    // two states.
    void snapshot(unsigned v, bool close_after) {
        if (v < 11) {  // HTTP/1.0 has no chunks: its client would take their framing for the file
            send(reply(http::status::http_version_not_supported, {{"error", "the snapshot streams in chunks: ask with HTTP/1.1"}}, v),
                 true);
            return;
        }
        next_piece(0, {}, v, close_after);
    }

    void next_piece(std::uint64_t from, std::string buffer, unsigned v, bool close_after) {
        auto then = [self = shared_from_this(), from, v, close_after](http_handlers::snapshot_piece piece) {
            asio::post(self->srv_.io, [self, from, v, close_after, piece = std::move(piece)]() mutable {
                self->write_piece(from, v, close_after, std::move(piece));
            });
        };
        srv_.handlers.snapshot(from, snapshot_piece_bytes, std::move(buffer), std::move(then));
    }

    void write_piece(std::uint64_t from, unsigned v, bool close_after, http_handlers::snapshot_piece piece) {
        if (closed_) return;
        if (piece.http_status != 200 && from == 0) {
            send(reply(static_cast<http::status>(piece.http_status), {{"error", piece.error}}, v), close_after);
            return;
        }
        if (from == 0) capture_ = piece.capture;
        if (piece.http_status != 200 || piece.bytes.empty() || piece.capture != capture_) {
            const std::string why = !piece.error.empty()       ? piece.error
                                    : piece.capture != capture_ ? "the snapshot was taken again meanwhile"
                                                                : "an empty piece";
            DNNC_LOG(warn, "live page: snapshot download ended after " << from << " of " << piece.total << " bytes: " << why);
            close();
            return;
        }
        auto bytes = std::make_shared<std::string>(std::move(piece.bytes));
        const auto next = from + bytes->size();
        if (from > 0) {
            write_chunk(bytes, next, piece.total, v, close_after);
            return;
        }
        // The first piece: the head, then the piece as the first chunk.
        auto head = std::make_shared<http::response<http::empty_body>>(http::status::ok, v);
        head->set(http::field::content_type, "application/octet-stream");
        head->set(http::field::cache_control, "no-store");
        head->set(http::field::content_disposition, "attachment; filename=\"snapshot.dnncs\"");
        head->keep_alive(!close_after);
        head->chunked(true);
        auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*head);
        stream_.expires_after(srv_.options.request_timeout);
        http::async_write_header(stream_, *serializer,
                                 [self = shared_from_this(), head, serializer, bytes, next, total = piece.total, v, close_after](
                                     beast::error_code ec, std::size_t) {
                                     if (ec) {
                                         self->close();
                                         return;
                                     }
                                     self->write_chunk(bytes, next, total, v, close_after);
                                 });
    }

    // A piece as a chunk, then the next piece, or after the last one, the last chunk.
    void write_chunk(const std::shared_ptr<std::string>& bytes, std::uint64_t next, std::uint64_t total, unsigned v, bool close_after) {
        stream_.expires_after(srv_.options.request_timeout);
        asio::async_write(stream_, http::make_chunk(asio::buffer(*bytes)),
                          [self = shared_from_this(), bytes, next, total, v, close_after](beast::error_code ec, std::size_t) {
                              if (ec) {
                                  self->close();
                              } else if (next < total) {
                                  self->next_piece(next, std::move(*bytes), v, close_after);  // written: its storage serves again
                              } else {
                                  self->stream_.expires_after(self->srv_.options.request_timeout);
                                  asio::async_write(self->stream_, http::make_chunk_last(),
                                                    [self, close_after](beast::error_code last_ec, std::size_t) {
                                                        if (last_ec || close_after) {
                                                            self->close();
                                                            return;
                                                        }
                                                        self->read();
                                                    });
                              }
                          });
    }

    void send(response res, bool close_after) {
        res.keep_alive(!close_after);
        res.prepare_payload();
        auto held = std::make_shared<response>(std::move(res));
        stream_.expires_after(srv_.options.request_timeout);
        http::async_write(stream_, *held, [self = shared_from_this(), held, close_after](beast::error_code ec, std::size_t) {
            if (ec || close_after) {
                self->close();
                return;
            }
            self->read();
        });
    }

    void start_events() {
        streaming_ = true;
        stream_.expires_never();
        auto header = std::make_shared<const std::string>(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
            "retry: 1000\n\n");
        write_raw(header, true);
    }

    void write_raw(const std::shared_ptr<const std::string>& bytes, bool then_subscribe) {
        writing_ = true;
        write_started_ = std::chrono::steady_clock::now();
        asio::async_write(stream_.socket(), asio::buffer(*bytes),
                          [self = shared_from_this(), bytes, then_subscribe](beast::error_code ec, std::size_t) {
                              self->writing_ = false;
                              if (ec) {
                                  self->close();
                                  return;
                              }
                              if (then_subscribe) self->srv_.readers.push_back(self);
                          });
    }

    beast::tcp_stream stream_;
    http_server::impl& srv_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    bool streaming_ = false, writing_ = false, closed_ = false, proven_ = false;
    std::uint64_t capture_ = 0;  // of the snapshot being sent
    std::chrono::steady_clock::time_point write_started_;
};

}  // namespace

void http_server::impl::accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted) return;
        if (!ec) {
            beast::error_code peer_ec;
            const auto peer = socket.remote_endpoint(peer_ec);
            // Without a token the page is this machine's only, like the node itself.
            if (!peer_ec && (!options.token.empty() || is_loopback(peer.address())))
                admit(std::move(socket));
            else
                socket.close(peer_ec);
        }
        accept();
    });
}

// A new connection is unproven. It is admitted while there is room; when the unproven
// quota or the cap is reached, the oldest unproven connection is closed for it, and only
// when every connection is proven is the new one refused.
void http_server::impl::admit(tcp::socket socket) {
    const auto gone = [](const std::weak_ptr<session>& w) {
        const auto s = w.lock();
        return !s || s->proven();
    };
    unproven.erase(std::remove_if(unproven.begin(), unproven.end(), gone), unproven.end());
    if (unproven.size() >= options.max_unproven_connections || connections >= options.max_connections) {
        if (unproven.empty()) {
            beast::error_code ignored;
            socket.close(ignored);
            return;
        }
        unproven.front().lock()->close();
        unproven.pop_front();
    }
    auto s = std::make_shared<session>(std::move(socket), *this);
    unproven.push_back(s);
    s->read();
}

// Status is computed once per period for all readers together, and only when there are any.
void http_server::impl::tick() {
    ticker.expires_after(options.event_period);
    ticker.async_wait([this](beast::error_code ec) {
        if (ec) return;
        std::vector<std::shared_ptr<session>> live;
        for (auto& s : readers)
            if (s->streaming()) live.push_back(std::move(s));
        readers = live;
        if (!live.empty()) {
            std::shared_ptr<const std::string> event;
            try {
                event = std::make_shared<const std::string>("data: " + handlers.status().dump() + "\n\n");
            } catch (const std::exception& e) {
                event = std::make_shared<const std::string>("data: " + json{{"error", e.what()}}.dump() + "\n\n");
            }
            for (const auto& s : live) s->push(event);
        }
        tick();
    });
}

http_server::http_server(http_options options, http_handlers handlers)
    : impl_(std::make_shared<impl>(std::move(options), std::move(handlers))) {}

http_server::~http_server() { stop(); }

void http_server::start() {
    auto& i = *impl_;
    beast::error_code ec;
    const auto address = asio::ip::make_address(i.options.bind, ec);
    if (ec) throw usage_error("--http-bind: '" + i.options.bind + "' is not an IP address");
    const tcp::endpoint at{address, i.options.port};
    i.acceptor.open(at.protocol(), ec);
    if (!ec) i.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) i.acceptor.bind(at, ec);
    if (!ec) i.acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw io_error("cannot serve the live page on " + i.options.bind + ":" + std::to_string(i.options.port) + ": " + ec.message());
    i.bound_port = i.acceptor.local_endpoint().port();
    i.accept();
    i.tick();
    i.thread = std::thread([&i] { run_handlers(i.io, "live page"); });
}

std::uint16_t http_server::port() const { return impl_->bound_port; }

void http_server::stop() {
    auto& i = *impl_;
    if (!i.thread.joinable()) return;
    asio::post(i.io, [&i] {
        beast::error_code ignored;
        i.acceptor.close(ignored);
        i.ticker.cancel();
        i.readers.clear();
        i.io.stop();
    });
    i.thread.join();
}

}  // namespace dnnc::node_server
