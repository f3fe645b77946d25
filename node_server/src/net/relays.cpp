#include "net/relays.hpp"

#include "dnnc/node_server/log.hpp"
#include "net/link_stream.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

namespace dnnc::node_server::relays {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr auto open_timeout = std::chrono::seconds(10);  // to connect on and hear the reply

// One asynchronous step of a connection's opening, on the thread that opens it: `start`
// is given the handler, and `io` runs until it has been called; its error code.
template <class Start>
boost::system::error_code step(asio::io_context& io, Start start) {
    boost::system::error_code ec;
    bool done = false;
    start([&](const boost::system::error_code& e, auto&&...) {
        ec = e;
        done = true;
    });
    io.restart();
    while (!done && io.run_one() > 0) {
    }
    return ec;
}

// Bytes from `from` to `to`, a piece at a time, until either fails; then `stop`.
template <class From, class To, class Stop>
void forward(From& from, To& to, std::array<char, 64 * 1024>& buffer, Stop& stop) {
    from.async_read_some(asio::buffer(buffer), [&](const boost::system::error_code& ec, std::size_t n) {
        if (ec) return stop();
        asio::async_write(to, asio::buffer(buffer.data(), n), [&](const boost::system::error_code& e, std::size_t) {
            if (e) return stop();
            forward(from, to, buffer, stop);
        });
    });
}

void close_quietly(link_stream& s) { s.close(); }
template <class Stream>
void close_quietly(Stream& s) {
    boost::system::error_code ignored;
    s.close(ignored);
}

// Carries bytes both ways between `a` and `b` until one end closes, then closes both.
template <class A, class B>
void carry_both_ways(asio::io_context& io, A& a, B& b) {
    auto buffers = std::make_unique<std::array<std::array<char, 64 * 1024>, 2>>();
    bool stopped = false;
    auto stop = [&] {
        if (stopped) return;
        stopped = true;
        close_quietly(a);
        close_quietly(b);
    };
    forward(a, b, (*buffers)[0], stop);
    forward(b, a, (*buffers)[1], stop);
    io.restart();
    io.run();
}

// One frame read from `stream` (its header checked, untagged ones let through: a refusal
// comes untagged) and decoded by `auth`; a refusal or an untagged frame where one is owed
// throws io_error with what it said.
template <class Stream>
protocol::frame read_reply(asio::io_context& io, Stream& stream, protocol::frame_auth& auth) {
    std::string header(protocol::frame_header_size, '\0'), body;
    auto read = [&](std::string& into) {
        if (const auto ec = step(io, [&](auto handler) { asio::async_read(stream, asio::buffer(into), handler); }))
            throw io_error("no reply: " + ec.message());
    };
    read(header);
    const auto h = protocol::decode_header(header, protocol::pre_auth_max_payload, false);
    body.resize(h.body_size());
    read(body);
    if (auth.required() && !(h.flags & protocol::authenticated_flag))
        throw io_error("refused: " + protocol::decode_body(h, header, body, {}).payload);
    auto reply = auth.decode(h, header, body);
    if (reply.type == protocol::message_type::error_reply) throw io_error("refused: " + reply.payload);
    return reply;
}

template <class Stream>
void write_bytes(asio::io_context& io, Stream& stream, const std::string& bytes) {
    if (const auto ec = step(io, [&](auto handler) { asio::async_write(stream, asio::buffer(bytes), handler); }))
        throw io_error(ec.message());
}

// Connects `socket` to `to` (resolved), within the io_context's run.
void connect(asio::io_context& io, tcp::socket& socket, const endpoint& to) {
    boost::system::error_code ec;
    tcp::resolver resolver(io);
    const auto found = resolver.resolve(to.host, std::to_string(to.port), ec);
    if (ec) throw io_error("cannot resolve " + to.host + ": " + ec.message());
    ec = step(io, [&](auto handler) { asio::async_connect(socket, found, handler); });
    if (ec) throw io_error("cannot connect to " + to.text() + ": " + ec.message());
    socket.set_option(tcp::no_delay(true), ec);
}

// Closes `socket` when the opening has not finished by then.
struct opening_deadline {
    asio::steady_timer timer;
    template <class Socket>
    opening_deadline(asio::io_context& io, Socket& socket) : timer(io, open_timeout) {
        timer.async_wait([&socket](const boost::system::error_code& ec) {
            boost::system::error_code ignored;
            if (!ec) socket.close(ignored);
        });
    }
};

// A route's forwarder: a listener on the loopback whose connections it opens through the
// sub-lead, each on a thread of its own.
class forwarder {
public:
    forwarder(endpoint to, endpoint via, std::string secret, std::shared_ptr<const tls_config> tls)
        : to_(std::move(to)), via_(std::move(via)), secret_(std::move(secret)), tls_(std::move(tls)) {
        acceptor_.open(tcp::v4());
        acceptor_.bind({asio::ip::address_v4::loopback(), 0});
        acceptor_.listen();
        accept();
        thread_ = std::thread([this] { io_.run(); });
    }
    ~forwarder() {
        asio::post(io_, [this] {
            boost::system::error_code ignored;
            acceptor_.close(ignored);
        });
        thread_.join();
    }
    endpoint at() const { return {"127.0.0.1", acceptor_.local_endpoint().port()}; }
    const endpoint& via() const { return via_; }

private:
    void accept() {
        acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
            if (!ec) {
                boost::system::error_code ignored;
                const int fd = socket.release(ignored);
                if (fd >= 0) std::thread(open, to_, via_, secret_, tls_, fd).detach();
            }
            accept();
        });
    }

    // The connection `fd` opened through `via` to `to`, then carried.
    static void open(endpoint to, endpoint via, std::string secret, std::shared_ptr<const tls_config> tls, int fd) {
        asio::io_context io;
        tcp::socket local(io, tcp::v4(), fd);
        link_stream up(io.get_executor(), tls.get());
        try {
            opening_deadline deadline(io, up.socket());
            connect(io, up.socket(), connect_to(via));  // a sub-lead that is itself served through one
            const auto ec = step(io, [&](auto handler) { up.async_handshake_as_client(via.host, handler); });
            if (ec) throw io_error("TLS handshake failed: " + ec.message());
            protocol::frame_auth auth(secret, protocol::frame_auth::side::client);
            if (auth.required()) {
                write_bytes(io, up, auth.hello());
                auth.accept(read_reply(io, up, auth));
            }
            write_bytes(io, up, auth.encode({protocol::message_type::relay, 0, 1, to.text()}));
            read_reply(io, up, auth);
            deadline.timer.cancel();
        } catch (const std::exception& e) {
            DNNC_LOG(warn, "cannot reach " << to.text() << " through " << via.text() << ": " << e.what());
            return;  // both sockets close as they go
        }
        carry_both_ways(io, local, up);
    }

    endpoint to_, via_;
    std::string secret_;
    std::shared_ptr<const tls_config> tls_;
    asio::io_context io_;
    tcp::acceptor acceptor_{io_};
    std::thread thread_;
};

std::mutex routes_mutex;
std::map<std::string, std::shared_ptr<forwarder>>& routes() {
    static std::map<std::string, std::shared_ptr<forwarder>> table;
    return table;
}

std::atomic<std::size_t> carried{0};

}  // namespace

void route(const endpoint& to, const endpoint& via, const std::string& secret, std::shared_ptr<const tls_config> tls) {
    auto f = std::make_shared<forwarder>(to, via, secret, std::move(tls));
    std::shared_ptr<forwarder> earlier;
    {
        std::lock_guard<std::mutex> lock(routes_mutex);
        earlier = std::exchange(routes()[to.text()], std::move(f));
    }
    DNNC_LOG(info, "reaching " << to.text() << " through " << via.text());
}

void unroute(const endpoint& to) {
    std::shared_ptr<forwarder> gone;
    std::lock_guard<std::mutex> lock(routes_mutex);
    if (const auto it = routes().find(to.text()); it != routes().end()) {
        gone = std::move(it->second);
        routes().erase(it);
    }
}

endpoint connect_to(const endpoint& to) {
    std::lock_guard<std::mutex> lock(routes_mutex);
    const auto it = routes().find(to.text());
    return it == routes().end() ? to : it->second->at();
}

std::optional<endpoint> via(const endpoint& to) {
    std::lock_guard<std::mutex> lock(routes_mutex);
    const auto it = routes().find(to.text());
    if (it == routes().end()) return std::nullopt;
    return it->second->via();
}

void carry(const protocol::frame& opening, int socket, protocol::frame_auth auth) {
    std::thread([request_id = opening.request_id, target = opening.payload, socket, auth = std::move(auth)]() mutable {
        asio::io_context io;
        asio::posix::stream_descriptor in(io, socket);
        tcp::socket out(io);
        const bool over = ++carried > max_carried;
        try {
            if (over) throw usage_error("this node carries " + std::to_string(max_carried) + " connections for others already");
            const auto to = parse_endpoint(target);
            opening_deadline deadline(io, out);
            try {
                connect(io, out, to);
            } catch (const io_error&) {
                // A target this node reaches only through its own sub-lead (a chain of them).
                // Straight first: a route here may be another process's view of the same
                // cluster (one process holds both ends in tests), and must not loop back.
                if (!via(to)) throw;
                boost::system::error_code ignored;
                out.close(ignored);
                connect(io, out, connect_to(to));
            }
            deadline.timer.cancel();
            write_bytes(io, in, auth.encode({protocol::message_type::relay_reply, 0, request_id, {}}));
        } catch (const std::exception& e) {
            DNNC_LOG(warn, "not carrying a connection to " << target << ": " << e.what());
            try {
                write_bytes(io, in, auth.encode({protocol::message_type::error_reply, protocol::refusal_flag, request_id, e.what()}));
            } catch (const std::exception&) {
            }
            --carried;
            return;
        }
        carry_both_ways(io, in, out);
        --carried;
    }).detach();
}

}  // namespace dnnc::node_server::relays
