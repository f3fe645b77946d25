#include "dnnc/node_server/server.hpp"

#include "dnnc/node_server/log.hpp"
#include "net/link_stream.hpp"
#include "net/run_handlers.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <sys/socket.h>

namespace dnnc::node_server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

using dispatch_table = std::map<protocol::message_type, std::shared_ptr<module>>;
using handover_table = std::map<protocol::message_type, server::connection_taker>;

bool is_loopback(const asio::ip::address& a) {
    if (a.is_v6() && a.to_v6().is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
    return a.is_loopback();
}

class session : public std::enable_shared_from_this<session> {
public:
    // Asked once, when the connection proves itself: the reason it may not stay, or nothing.
    using admission = std::function<std::string()>;

    session(tcp::socket socket, const server_options& options, const dispatch_table& table,
            const handover_table& handovers, admission on_proven, std::function<void(const std::shared_ptr<session>&)> on_close)
        : stream_(std::move(socket), options.tls.get()),
          strand_(asio::make_strand(stream_.get_executor())),
          idle_(strand_),
          options_(options),
          table_(table),
          handovers_(handovers),
          on_proven_(std::move(on_proven)),
          on_close_(std::move(on_close)),
          auth_(options.secret, protocol::frame_auth::side::server) {
        boost::system::error_code ec;
        const auto remote = stream_.socket().remote_endpoint(ec);
        peer_ = ec ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
    }

    void start() {
        asio::post(strand_, [self = shared_from_this()] {
            self->touch();
            // Within the first frame's time: a TLS handshake first, when the node serves TLS.
            self->stream_.async_handshake_as_server(asio::bind_executor(self->strand_, [self](const boost::system::error_code& ec) {
                if (ec) return self->reject("TLS handshake failed: " + ec.message());
                self->read_header();
            }));
        });
    }

    void close() {
        asio::post(strand_, [self = shared_from_this()] { self->stream_.close(); });
    }

    // Whether the peer has proven itself: a request authenticated with the session's key
    // (with a secret), or any complete frame (without one). A hello alone proves nothing:
    // a captured one can be replayed.
    bool trusted() const { return trusted_; }
    // Whether it has completed a handshake (its hello answered): not idle, at least.
    bool handshaken() const { return handshaken_; }

    void send(protocol::frame reply) {
        // Encoded on the strand, in the order written: the tag binds the sequence number.
        asio::post(strand_, [self = shared_from_this(), reply = std::move(reply)]() mutable {
            --self->working_;
            if (self->closing_) return;
            std::string bytes;
            try {
                bytes = self->auth_.encode(reply);
            } catch (const protocol_error& e) {
                return self->reject(std::string("cannot send a reply: ") + e.what());
            }
            self->queue(std::move(bytes));
        });
    }

private:
    void read_header() {
        asio::async_read(stream_, asio::buffer(header_),
                         asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                             if (ec) return self->finish();
                             self->touch();
                             try {
                                 self->current_ = protocol::decode_header(
                                     std::string_view(self->header_.data(), self->header_.size()),
                                     self->options_.max_payload, !self->options_.secret.empty());
                             } catch (const protocol_error& e) {
                                 // The id where a request's id would be, so that its sender
                                 // takes the refusal as the reply it waits for.
                                 std::uint64_t id = 0;
                                 for (int k = 7; k >= 0; --k)
                                     id = (id << 8) | static_cast<unsigned char>(self->header_[static_cast<std::size_t>(8 + k)]);
                                 return self->refuse(e.what(), id);
                             }
                             if (!self->proven_ && self->current_.payload_length > protocol::pre_auth_max_payload)
                                 return self->refuse("a frame of " + std::to_string(self->current_.payload_length) +
                                                     " bytes before the sender proved itself (the limit is " +
                                                     std::to_string(protocol::pre_auth_max_payload) + ")",
                                                     self->current_.request_id);
                             self->body_.clear();
                             self->read_body();
                         }));
    }

    // The body in chunks as it arrives: memory follows the bytes a peer sends, not the
    // length its header declares.
    void read_body() {
        const std::size_t have = body_.size(), want = current_.body_size();
        if (have == want) return body_read();
        const std::size_t chunk = std::min(want - have, body_chunk);
        body_.resize(have + chunk);
        asio::async_read(stream_, asio::buffer(body_.data() + have, chunk),
                         asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                             if (ec) return self->finish();
                             self->touch();
                             self->read_body();
                         }));
    }

    void body_read() {
        protocol::frame request;
        try {
            request = auth_.decode(current_, std::string_view(header_.data(), header_.size()), body_);
        } catch (const protocol_error& e) {
            return refuse(e.what(), current_.request_id);
        }
        if (request.type == protocol::message_type::hello) {
            // The session's start (decode let it through only as the first frame): answered
            // here, never dispatched.
            try {
                queue(auth_.answer(request));
            } catch (const protocol_error& e) {
                return refuse(e.what(), request.request_id);
            }
            proven_ = true;
            handshaken_ = true;
            return read_header();
        }
        proven_ = true;
        if (!trusted_) {
            if (const auto refused = on_proven_(); !refused.empty()) return refuse(refused, request.request_id);
            trusted_ = true;
            touch();  // idle_timeout from here on
        }
        // Small bodies keep their buffer for the next frame (signal packets come every
        // tick); a large one's memory goes back.
        body_.clear();
        if (body_.capacity() > keep_body_capacity) body_.shrink_to_fit();
        const bool first = requests_read_++ == 0;
        if (const auto h = handovers_.find(request.type); h != handovers_.end()) {
            if (!first) return reject(std::string(protocol::to_string(request.type)) + " frame after the connection's first");
            return leave(request, h->second);
        }
        dispatch(std::move(request));
        read_header();
    }

    void dispatch(protocol::frame request) {
        const auto id = request.request_id;
        auto reply_once = [self = shared_from_this(), id](protocol::frame reply) {
            reply.request_id = id;
            self->send(std::move(reply));
        };
        const auto it = table_.find(request.type);
        if (it == table_.end() && protocol::is_one_way(request.type)) return;
        if (!protocol::is_one_way(request.type)) ++working_;  // until send() has its reply
        if (it == table_.end()) {
            reply_once({protocol::message_type::error_reply, 0, id,
                        std::string("this node has no module for ") + protocol::to_string(request.type) + " frames"});
            return;
        }
        DNNC_LOG(debug, "frame " << protocol::to_string(request.type) << " #" << id << " from " << peer_ << " ("
                                 << request.payload.size() << " bytes)");
        const auto type = request.type;
        try {
            it->second->handle(request, reply_once);
        } catch (const std::exception& e) {
            if (protocol::is_one_way(type))
                DNNC_LOG(warn, protocol::to_string(type) << " frame from " << peer_ << " rejected: " << e.what());
            else
                reply_once(error_reply_for(e));
        }
    }

    // The connection goes to `take` with nothing read past `opening` (reads ask for exact
    // sizes), and the session's authentication with it. A plain TCP socket goes as it is;
    // a TLS one stays here and relays what it decrypts into a socket pair whose other end
    // goes instead, and what the taker writes back, so that the taker reads and writes
    // plain frames either way.
    void leave(const protocol::frame& opening, const server::connection_taker& take) {
        if (!outbox_.empty()) return reject("a connection handed over with replies still to write");
        DNNC_LOG(debug, "connection from " << peer_ << " handed over after its " << protocol::to_string(opening.type)
                                           << " frame");
        if (stream_.tls()) {
            int pair[2];
            if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
                return reject(std::string("cannot hand the connection over: ") + std::strerror(errno));
            relay_ = std::make_unique<asio::local::stream_protocol::socket>(stream_.get_executor(), asio::local::stream_protocol(),
                                                                            pair[0]);
            idle_.cancel();  // a signal link may be quiet for long; its taker watches it
            take(opening, pair[1], std::move(auth_));
            relay_back();
            return relay_next();
        }
        boost::system::error_code ec;
        const int fd = stream_.socket().release(ec);
        if (ec) return reject("cannot hand the connection over: " + ec.message());
        take(opening, fd, std::move(auth_));
        finish();
    }

    void relay_next() {
        stream_.async_read_some(
            asio::buffer(relay_buffer_),
            asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                if (ec) return self->finish();
                asio::async_write(*self->relay_, asio::buffer(self->relay_buffer_.data(), n),
                                  asio::bind_executor(self->strand_, [self](const boost::system::error_code& e, std::size_t) {
                                      if (e) return self->finish();
                                      self->relay_next();
                                  }));
            }));
    }

    void relay_back() {
        if (!back_buffer_) back_buffer_ = std::make_unique<std::array<char, 64 * 1024>>();
        relay_->async_read_some(
            asio::buffer(*back_buffer_),
            asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                if (ec) return self->finish();
                asio::async_write(self->stream_, asio::buffer(self->back_buffer_->data(), n),
                                  asio::bind_executor(self->strand_, [self](const boost::system::error_code& e, std::size_t) {
                                      if (e) return self->finish();
                                      self->relay_back();
                                  }));
            }));
    }

    // Restarts the idle clock: first_frame_timeout until the peer has proven itself, then
    // idle_timeout. When it runs out with no reply owed, the connection goes.
    void touch() {
        idle_.expires_after(trusted_ ? options_.idle_timeout : options_.first_frame_timeout);
        idle_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            if (ec == asio::error::operation_aborted || !self->stream_.socket().is_open() || self->relay_) return;
            if (self->working_ > 0) return self->touch();
            self->reject(self->trusted_ ? "idle" : "not proven in time");
        });
    }

    // Broken framing: the stream cannot be resynchronised, so the connection goes.
    void reject(const std::string& why) {
        DNNC_LOG(warn, "dropping connection from " << peer_ << ": " << why);
        finish();
    }

    // A frame refused (broken, oversized, not authentic): the peer is told why in an
    // untagged error reply, since it may not share the secret, and the connection closes
    // once that is written.
    void refuse(const std::string& why, std::uint64_t request_id) {
        DNNC_LOG(warn, "refusing a frame from " << peer_ << " and closing the connection: " << why);
        closing_ = true;
        queue(protocol::encode_frame({protocol::message_type::error_reply, 0, request_id, why}));
    }

    void queue(std::string bytes) {
        outbox_.push_back(std::move(bytes));
        if (outbox_.size() == 1) write_next();
    }

    void write_next() {
        asio::async_write(stream_, asio::buffer(outbox_.front()),
                          asio::bind_executor(strand_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                              if (ec) return self->finish();
                              self->outbox_.pop_front();
                              if (!self->outbox_.empty()) return self->write_next();
                              if (self->closing_) self->finish();
                          }));
    }

    void finish() {
        boost::system::error_code ignored;
        idle_.cancel();
        stream_.socket().close(ignored);
        if (relay_) relay_->close(ignored);
        if (on_close_) {
            auto callback = std::move(on_close_);
            on_close_ = nullptr;
            callback(shared_from_this());
        }
    }

    link_stream stream_;
    asio::strand<link_stream::executor_type> strand_;
    asio::steady_timer idle_;
    const server_options& options_;
    const dispatch_table& table_;
    const handover_table& handovers_;
    std::size_t requests_read_ = 0;  // frames other than the hello
    bool proven_ = options_.secret.empty();  // a frame with a valid tag has arrived (or none is needed)
    std::atomic<bool> trusted_{false};       // trusted(): read by the server's admission
    std::atomic<bool> handshaken_{false};
    std::size_t working_ = 0;                // requests whose reply is not sent yet
    bool closing_ = false;                   // refused: the last frame out is its error reply
    admission on_proven_;
    std::function<void(const std::shared_ptr<session>&)> on_close_;
    protocol::frame_auth auth_;
    std::string peer_;
    std::array<char, protocol::frame_header_size> header_{};
    protocol::frame_header current_{};
    std::string body_;
    static constexpr std::size_t keep_body_capacity = 64 * 1024;
    static constexpr std::size_t body_chunk = 64 * 1024;
    std::deque<std::string> outbox_;
    std::unique_ptr<asio::local::stream_protocol::socket> relay_;  // a TLS signal link's plain end
    std::array<char, 64 * 1024> relay_buffer_{};
    std::unique_ptr<std::array<char, 64 * 1024>> back_buffer_;  // the taker's bytes back, over TLS
};

}  // namespace

struct server::impl {
    server_options options;
    asio::io_context io;
    tcp::acceptor acceptor{io};
    dispatch_table table;
    handover_table handovers;
    std::vector<std::shared_ptr<module>> modules;
    std::vector<std::thread> threads;
    std::mutex mutex;
    std::condition_variable stopped_cv;
    bool stopped = false;
    std::set<std::shared_ptr<session>> sessions;

    // Sessions whose peer has proven itself: how many, and how many by peer address.
    std::size_t trusted = 0;
    std::map<std::string, std::size_t> per_address;
    // The others, oldest first (those gone or trusted since are dropped as they are met).
    std::deque<std::weak_ptr<session>> unproven;
    asio::steady_timer accept_pause{io};

    void accept() {
        acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
            if (ec == asio::error::operation_aborted) return;
            if (ec) {
                // Out of descriptors (EMFILE, ENFILE) or another failure: try again shortly
                // instead of spinning on it.
                DNNC_LOG(warn, "cannot accept a connection: " << ec.message());
                accept_pause.expires_after(std::chrono::milliseconds(100));
                accept_pause.async_wait([this](const boost::system::error_code& e) {
                    if (!e) accept();
                });
                return;
            }
            admit(std::move(socket));
            accept();
        });
    }

    // A session for every connection (from this machine only, without a secret). It starts
    // unproven; when the unproven quota is full, the oldest unproven session that has not
    // completed a handshake (or, failing one, the oldest) is closed to make room. So
    // strangers crowd out only each other, and the caps below count proven peers only.
    void admit(tcp::socket socket) {
        boost::system::error_code ec;
        const auto remote = socket.remote_endpoint(ec);
        if (ec) return;
        const std::string address = remote.address().to_string();
        if (options.secret.empty() && !is_loopback(remote.address())) {
            DNNC_LOG(warn, "refusing a connection from " << address
                                                         << ": a node without a cluster secret serves only this machine");
            socket.close(ec);
            return;
        }
        std::lock_guard<std::mutex> lock(mutex);
        unproven.erase(std::remove_if(unproven.begin(), unproven.end(),
                                      [](const std::weak_ptr<session>& w) {
                                          const auto s = w.lock();
                                          return !s || s->trusted();
                                      }),
                       unproven.end());
        if (!unproven.empty() && unproven.size() >= options.max_unproven_connections) {
            auto victim = std::find_if(unproven.begin(), unproven.end(), [](const std::weak_ptr<session>& w) {
                const auto s = w.lock();
                return s && !s->handshaken();
            });
            if (victim == unproven.end()) victim = unproven.begin();
            DNNC_LOG(debug, unproven.size() << " connections have not proven themselves: closing the oldest for one from "
                                           << address);
            if (const auto v = victim->lock()) v->close();
            unproven.erase(victim);
        }
        socket.set_option(tcp::no_delay(true), ec);
        auto s = std::make_shared<session>(
            std::move(socket), options, table, handovers,
            [this, address] { return admit_proven(address); },
            [this, address](const std::shared_ptr<session>& gone) {
                std::lock_guard<std::mutex> guard(mutex);
                sessions.erase(gone);
                if (!gone->trusted()) return;
                --trusted;
                if (--per_address[address] == 0) per_address.erase(address);
            });
        sessions.insert(s);
        unproven.push_back(s);
        s->start();
    }

    // A session from `address` has proven itself: it stays within the caps on proven peers.
    std::string admit_proven(const std::string& address) {
        std::lock_guard<std::mutex> lock(mutex);
        auto& from_address = per_address[address];
        if (trusted >= options.max_connections || from_address >= options.max_connections_per_address) {
            if (from_address == 0) per_address.erase(address);
            return "this node holds " + std::to_string(trusted) + " connections, " + std::to_string(from_address) +
                   " of them from " + address + " (the limits are " + std::to_string(options.max_connections) + " and " +
                   std::to_string(options.max_connections_per_address) + ")";
        }
        ++trusted;
        ++from_address;
        return {};
    }
};

protocol::frame error_reply_for(const std::exception& e) {
    const bool refusal = dynamic_cast<const usage_error*>(&e) || dynamic_cast<const config_error*>(&e);
    return {protocol::message_type::error_reply, refusal ? protocol::refusal_flag : std::uint16_t{0}, 0, e.what()};
}

server::server(server_options options) : impl_(std::make_unique<impl>()) { impl_->options = std::move(options); }

server::~server() {
    stop();
    for (auto& t : impl_->threads)
        if (t.joinable()) t.join();
}

void server::add_module(std::shared_ptr<module> m) {
    for (auto type : m->handles()) impl_->table[type] = m;
    impl_->modules.push_back(std::move(m));
}

void server::hand_over(protocol::message_type opening, connection_taker take) {
    impl_->handovers[opening] = std::move(take);
}

void server::start() {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(impl_->options.bind, ec);
    if (ec) throw usage_error("--bind: '" + impl_->options.bind + "' is not an IP address");
    const tcp::endpoint at(address, impl_->options.port);
    auto& acceptor = impl_->acceptor;
    acceptor.open(at.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(at, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
        throw io_error("cannot listen on " + impl_->options.bind + ":" + std::to_string(impl_->options.port) + ": " +
                       ec.message());
    impl_->accept();
    for (std::size_t i = 0; i < std::max<std::size_t>(1, impl_->options.threads); ++i)
        impl_->threads.emplace_back([this] { run_handlers(impl_->io, "frame server"); });
}

std::uint16_t server::port() const { return impl_->acceptor.local_endpoint().port(); }

void server::wait() {
    std::unique_lock<std::mutex> lock(impl_->mutex);
    impl_->stopped_cv.wait(lock, [this] { return impl_->stopped; });
}

void server::stop() {
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        if (impl_->stopped) return;
        impl_->stopped = true;
    }
    for (auto& m : impl_->modules) m->stop();
    // Give replies in flight (a shutdown's own reply) a moment, then close everything.
    auto timer = std::make_shared<asio::steady_timer>(impl_->io, std::chrono::milliseconds(100));
    timer->async_wait([this, timer](const boost::system::error_code&) {
        boost::system::error_code ignored;
        impl_->acceptor.close(ignored);
        {
            std::lock_guard<std::mutex> lock(impl_->mutex);
            for (const auto& s : impl_->sessions) s->close();
        }
        asio::post(impl_->io, [this] { impl_->io.stop(); });
    });
    impl_->stopped_cv.notify_all();
}

}  // namespace dnnc::node_server
