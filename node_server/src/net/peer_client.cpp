#include "dnnc/node_server/peer_client.hpp"

#include "net/link_stream.hpp"
#include "net/relays.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <condition_variable>
#include <thread>

namespace dnnc::node_server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

endpoint parse_endpoint(const std::string& text) {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
        throw usage_error("'" + text + "' is not HOST:PORT");
    std::string host = text.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    int port = 0;
    try {
        std::size_t used = 0;
        port = std::stoi(text.substr(colon + 1), &used);
        if (used != text.size() - colon - 1) port = -1;
    } catch (const std::exception&) {
        port = -1;
    }
    if (port < 1 || port > 65535) throw usage_error("'" + text + "': the port must be a number in 1..65535");
    return {host, static_cast<std::uint16_t>(port)};
}

// A connection owns its io_context, so a call can run it until its own deadline.
struct peer_client::connection {
    explicit connection(const tls_config* tls) : stream(io.get_executor(), tls) {}
    asio::io_context io;
    link_stream stream;
    protocol::frame_auth auth;  // of the open socket
    std::mutex mutex;  // one call at a time

    // Runs the io_context until `done` or the deadline, which may move while it waits; on
    // timeout the socket is closed.
    void run_until(const std::atomic<bool>& done, const patience& wait) {
        io.restart();
        while (!done) {
            const auto now = std::chrono::steady_clock::now(), until = wait.deadline();
            if (now >= until) break;
            // A moving deadline is looked at again at least every 50 ms.
            if (io.run_one_until(wait.moves ? std::min(until, now + std::chrono::milliseconds(50)) : until) == 0 && io.stopped())
                break;
        }
        if (!done) {
            boost::system::error_code ignored;
            stream.socket().close(ignored);
            io.restart();
            io.run();
            throw io_error(wait.why());
        }
    }
};

peer_client::peer_client(std::string secret, std::uint32_t max_payload, std::shared_ptr<const tls_config> tls)
    : secret_(std::move(secret)), max_payload_(max_payload), tls_(std::move(tls)) {}

peer_client::~peer_client() = default;

std::shared_ptr<peer_client::connection> peer_client::connection_to(const endpoint& to) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& c = connections_[to.text()];
    if (!c) c = std::make_shared<connection>(tls_.get());
    return c;
}

void peer_client::forget(const endpoint& to) {
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.erase(to.text());
}

namespace {

// The peer closed the connection (a TLS peer may close without its close_notify).
bool closed_by_peer(const boost::system::error_code& ec) {
    return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

// One frame read back after writing `bytes`, with its header checked (untagged frames let
// through: a node that refuses a frame says why without a tag).
struct received {
    std::string header = std::string(protocol::frame_header_size, '\0');
    std::string body;
    protocol::frame_header h{};
};

}  // namespace

protocol::frame peer_client::call(const endpoint& to, protocol::frame request, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    return call_with(to, std::move(request), {[deadline] { return deadline; }, false, [] { return std::string("timed out"); }});
}

protocol::frame peer_client::call_while_alive(const endpoint& to, protocol::frame request, std::chrono::milliseconds silence) {
    using clock = std::chrono::steady_clock;
    std::atomic<clock::rep> heard{clock::now().time_since_epoch().count()};  // the last answer (or the start)
    std::mutex mutex;
    std::condition_variable changed;
    bool answered = false;
    std::thread watch([&, secret = secret_, max_payload = max_payload_, tls = tls_] {
        peer_client pinger(secret, max_payload, tls);
        const auto every = std::max(silence / 4, std::chrono::milliseconds(1));
        std::unique_lock<std::mutex> lock(mutex);
        while (!changed.wait_for(lock, every, [&] { return answered; })) {
            lock.unlock();
            try {
                pinger.call(to, protocol::frame{protocol::message_type::heartbeat, 0, 0, {}}, silence);
                heard = clock::now().time_since_epoch().count();
            } catch (const remote_error&) {
                heard = clock::now().time_since_epoch().count();  // a refusal is an answer too
            } catch (const std::exception&) {
                // Silent, for now: the call gives up once the silence has lasted.
            }
            lock.lock();
        }
    });
    auto stop_watching = [&] {
        {
            std::lock_guard<std::mutex> lock(mutex);
            answered = true;
        }
        changed.notify_all();
        watch.join();
    };
    const patience wait{[&] { return clock::time_point(clock::duration(heard.load())) + silence; }, true, [silence] {
                            return "silent for " + std::to_string(silence.count()) + " ms (no answer, not even to heartbeats)";
                        }};
    try {
        auto reply = call_with(to, std::move(request), wait);
        stop_watching();
        return reply;
    } catch (...) {
        stop_watching();
        throw;
    }
}

protocol::frame peer_client::call_with(const endpoint& to, protocol::frame request, const patience& wait) {
    static std::atomic<std::uint64_t> next_id{1};
    request.request_id = next_id++;
    const std::shared_ptr<connection> c = connection_to(to);
    std::lock_guard<std::mutex> lock(c->mutex);
    const std::string where = " (" + to.text() + ")";
    // Writes `bytes` and reads one frame; ec says how the transport failed.
    auto exchange = [&](const std::string& bytes, received& r, boost::system::error_code& ec) {
        std::atomic<bool> done{false};
        asio::async_write(c->stream, asio::buffer(bytes), [&](const boost::system::error_code& e, std::size_t) {
            if (e) {
                ec = e;
                done = true;
                return;
            }
            asio::async_read(c->stream, asio::buffer(r.header), [&](const boost::system::error_code& e2, std::size_t) {
                if (e2) {
                    ec = e2;
                    done = true;
                    return;
                }
                try {
                    r.h = protocol::decode_header(r.header, max_payload_, false);
                } catch (const protocol_error&) {
                    ec = asio::error::invalid_argument;
                    done = true;
                    return;
                }
                r.body.resize(r.h.body_size());
                asio::async_read(c->stream, asio::buffer(r.body), [&](const boost::system::error_code& e3, std::size_t) {
                    ec = e3;
                    done = true;
                });
            });
        });
        c->run_until(done, wait);
    };
    // A refusal comes untagged; anything else must pass the connection's authentication.
    auto open_reply = [&](const received& r) {
        if (c->auth.required() && !(r.h.flags & protocol::authenticated_flag)) {
            c->stream.socket().close();
            const auto refusal = protocol::decode_body(r.h, r.header, r.body, {});
            if (refusal.type != protocol::message_type::error_reply) throw protocol_error("the reply is not authenticated");
            throw io_error("the node refused the frame: " + refusal.payload);
        }
        return c->auth.decode(r.h, r.header, r.body);
    };
    // A cached connection the peer has since closed fails at once; it is retried once.
    for (int attempt = 0;; ++attempt) {
    const bool reused = c->stream.socket().is_open();
    try {
        boost::system::error_code ec;
        if (!c->stream.socket().is_open()) {
            std::atomic<bool> done{false};
            tcp::resolver resolver(c->io);
            const auto at = relays::connect_to(to);  // `to` itself, or its route's forwarder
            const auto endpoints = resolver.resolve(at.host, std::to_string(at.port), ec);
            if (ec) throw io_error("cannot resolve " + at.host + ": " + ec.message());
            c->stream.reset();
            asio::async_connect(c->stream.socket(), endpoints, [&](const boost::system::error_code& e, const tcp::endpoint&) {
                ec = e;
                done = true;
            });
            c->run_until(done, wait);
            if (ec) {
                c->stream.socket().close();
                throw io_error("cannot connect: " + ec.message());
            }
            c->stream.socket().set_option(tcp::no_delay(true));
            if (c->stream.tls()) {
                std::atomic<bool> shaken{false};
                c->stream.async_handshake_as_client(to.host, [&](const boost::system::error_code& e) {
                    ec = e;
                    shaken = true;
                });
                c->run_until(shaken, wait);
                if (ec) {
                    c->stream.socket().close();
                    throw io_error("TLS handshake failed: " + ec.message());
                }
            }
            // A new connection starts its session (frame_auth) before anything else.
            c->auth = protocol::frame_auth(secret_, protocol::frame_auth::side::client);
            if (c->auth.required()) {
                received hello;
                exchange(c->auth.hello(), hello, ec);
                if (ec) {
                    c->stream.socket().close();
                    throw io_error(closed_by_peer(ec) ? std::string("connection closed by the peer") : ec.message());
                }
                c->auth.accept(open_reply(hello));
            }
        }
        received r;
        exchange(c->auth.encode(request), r, ec);
        if (ec) {
            c->stream.socket().close();
            const bool stale = closed_by_peer(ec) || ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
            if (stale && reused && attempt == 0) continue;
            throw io_error(closed_by_peer(ec) ? std::string("connection closed by the peer") : ec.message());
        }
        protocol::frame reply = open_reply(r);
        if (reply.request_id != request.request_id) {
            c->stream.socket().close();
            throw io_error("reply does not match the request");
        }
        if (reply.type == protocol::message_type::error_reply) {
            if (reply.flags & protocol::refusal_flag) throw remote_refusal(reply.payload);
            throw remote_error(reply.payload);
        }
        return reply;
    } catch (const remote_error&) {
        throw;
    } catch (const protocol_error& e) {
        c->stream.socket().close();
        throw io_error(std::string(e.what()) + where);
    } catch (const io_error& e) {
        throw io_error(std::string(e.what()) + where);
    }
    }
}

}  // namespace dnnc::node_server
