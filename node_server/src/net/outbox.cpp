#include "dnnc/node_server/outbox.hpp"

#include "dnnc/node_server/log.hpp"
#include "net/link_stream.hpp"
#include "net/relays.hpp"
#include "net/run_handlers.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace dnnc::node_server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

// One destination's connection and queue. A frame due now goes straight out from the
// sender's thread when nothing waits before it (no thread hand-off: the usual case, and the
// one a lockstep tick waits on); otherwise it queues for the io thread, which connects,
// holds frames until due and writes them in order. Invariant: the socket is written by the
// sender only while `busy_` is false, and by the io thread only while it is true; both
// are guarded by `mutex_`, so the two never write at once and frames keep their order.
class destination : public std::enable_shared_from_this<destination> {
public:
    destination(asio::io_context& io, endpoint to, const std::string& secret, const std::optional<protocol::frame>& opening,
                const tls_config* tls, std::atomic<std::uint64_t>& lost)
        : io_(io), stream_(io.get_executor(), tls), timer_(io), handshake_timer_(io), to_(std::move(to)), secret_(secret),
          opening_(opening), lost_(lost) {}

    // Any thread.
    void push(protocol::frame f, clock_type::time_point due) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!busy_ && !stream_.tls() && stream_.socket().is_open() && due <= clock_type::now()) {
            std::string bytes = auth_.encode(f);
            const std::size_t written = write_now(bytes);
            if (written == bytes.size()) return;
            bytes.erase(0, written);  // the rest goes in order, from the io thread
            queue_.push_back({due, {}, std::move(bytes)});
        } else {
            queue_.push_back({due, std::move(f), {}});
        }
        if (!busy_) {
            busy_ = true;
            asio::post(io_, [self = shared_from_this()] { self->pump(); });
        }
    }

    // The connection closes and what waits is dropped, uncounted (outbox::forget).
    void close() {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.clear();
        stream_.close();
        busy_ = false;
    }

private:
    // A frame waiting to leave: encoded when it is written (the tag binds the connection's
    // session and the frame's place in it), or already encoded bytes left over from a
    // partial write.
    struct item {
        clock_type::time_point due;
        std::optional<protocol::frame> frame;
        std::string bytes;
    };

    // Writes what the socket takes without blocking (it is in non-blocking mode from its
    // connection on); a broken connection is closed (the io thread reconnects for the next
    // frame) and the frame counts as lost.
    std::size_t write_now(const std::string& bytes) {
        boost::system::error_code ec;
        std::size_t written = 0;
        while (!ec && written < bytes.size()) {
            written += stream_.socket().write_some(asio::buffer(bytes.data() + written, bytes.size() - written), ec);
            if (ec == asio::error::interrupted) ec.clear();
        }
        if (ec == asio::error::would_block || ec == asio::error::try_again) return written;
        if (ec) {
            DNNC_LOG(debug, "cannot send to " << to_.text() << ": " << ec.message());
            ++lost_;
            stream_.close();
            return bytes.size();
        }
        return written;
    }

    // The io thread, while busy_.
    void pump() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (queue_.empty()) {
            busy_ = false;
            return;
        }
        if (!stream_.socket().is_open()) return connect();
        if (clock_type::now() < queue_.front().due) {
            timer_.expires_at(queue_.front().due);
            timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) { self->pump(); });
            return;
        }
        auto& front = queue_.front();
        if (front.frame) {
            front.bytes = auth_.encode(*front.frame);
            front.frame.reset();
        }
        asio::async_write(stream_, asio::buffer(front.bytes),
                          [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                              {
                                  std::lock_guard<std::mutex> guard(self->mutex_);
                                  if (ec) return self->fail(ec.message());
                                  self->queue_.pop_front();
                              }
                              self->pump();
                          });
    }

    void connect() {
        stream_.reset();
        auto resolver = std::make_shared<tcp::resolver>(io_);
        const auto at = relays::connect_to(to_);  // `to_` itself, or its route's forwarder
        resolver->async_resolve(at.host, std::to_string(at.port),
                                [self = shared_from_this(), resolver](const boost::system::error_code& ec,
                                                                      const tcp::resolver::results_type& results) {
                                    if (ec) return self->give_up(ec.message());
                                    asio::async_connect(self->stream_.socket(), results,
                                                        [self](const boost::system::error_code& e, const tcp::endpoint&) {
                                                            if (e) return self->give_up(e.message());
                                                            self->start_session();
                                                        });
                                });
    }

    // On a connection just made, on the io thread: the TLS handshake, then the hello
    // exchange (frame_auth), within handshake_timeout; then the queue.
    void start_session() {
        boost::system::error_code ec;
        stream_.socket().set_option(tcp::no_delay(true), ec);
        starting_ = true;
        handshake_timer_.expires_after(handshake_timeout);
        handshake_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
            if (!e && self->starting_) self->stream_.close();  // the steps below fail with operation_aborted
        });
        stream_.async_handshake_as_client(to_.host, [self = shared_from_this()](const boost::system::error_code& e) {
            if (e) return self->give_up("TLS handshake failed: " + e.message());
            self->auth_ = protocol::frame_auth(self->secret_, protocol::frame_auth::side::client);
            if (!self->auth_.required()) return self->session_ready();
            self->hello_ = self->auth_.hello();
            asio::async_write(self->stream_, asio::buffer(self->hello_), [self](const boost::system::error_code& e2, std::size_t) {
                if (e2) return self->give_up(e2.message());
                self->hello_.assign(protocol::frame_header_size, '\0');
                asio::async_read(self->stream_, asio::buffer(self->hello_), [self](const boost::system::error_code& e3, std::size_t) {
                    if (e3) return self->give_up(e3.message());
                    try {
                        const auto h = protocol::decode_header(self->hello_, protocol::pre_auth_max_payload, true);
                        auto body = std::make_shared<std::string>(h.body_size(), '\0');
                        asio::async_read(self->stream_, asio::buffer(*body), [self, h, body](const boost::system::error_code& e4, std::size_t) {
                            if (e4) return self->give_up(e4.message());
                            try {
                                self->auth_.accept(self->auth_.decode(h, self->hello_, *body));
                            } catch (const std::exception& refused) {
                                return self->give_up(refused.what());
                            }
                            self->session_ready();
                        });
                    } catch (const std::exception& broken) {
                        self->give_up(broken.what());
                    }
                });
            });
        });
    }

    void session_ready() {
        starting_ = false;
        handshake_timer_.cancel();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            // Plain TCP is written without blocking from here on, also by senders.
            boost::system::error_code ec;
            if (!stream_.tls()) stream_.socket().native_non_blocking(true, ec);
            if (opening_) queue_.push_front({clock_type::now(), *opening_, {}});
        }
        pump();
    }

    void give_up(const std::string& why) {
        starting_ = false;
        handshake_timer_.cancel();
        std::lock_guard<std::mutex> lock(mutex_);
        fail("no session: " + why);
    }

    // Under mutex_: the destination is gone; drop what waits for it; the next frame tries again.
    void fail(const std::string& why) {
        DNNC_LOG(debug, "cannot send to " << to_.text() << ": " << why);
        lost_ += queue_.size();
        queue_.clear();
        stream_.close();
        busy_ = false;
    }

    asio::io_context& io_;
    std::mutex mutex_;
    link_stream stream_;
    protocol::frame_auth auth_;  // of the open connection
    std::string hello_;          // the hello, then its reply's header, while the session starts
    bool starting_ = false;      // between connecting and session_ready (the io thread's)
    asio::steady_timer timer_, handshake_timer_;
    endpoint to_;
    const std::string& secret_;                        // the outbox's
    const std::optional<protocol::frame>& opening_;    // the outbox's
    std::atomic<std::uint64_t>& lost_;
    std::deque<item> queue_;
    bool busy_ = false;
    static constexpr std::chrono::seconds handshake_timeout{5};
};

}  // namespace

struct outbox::impl {
    std::string secret;
    std::optional<protocol::frame> opening;
    std::shared_ptr<const tls_config> tls;
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
    std::mutex mutex;  // of destinations
    std::map<std::string, std::shared_ptr<destination>> destinations;
    std::atomic<std::uint64_t> lost{0};
    std::thread thread{[this] { run_handlers(io, "signal outbox"); }};
};

outbox::outbox(std::string secret, std::optional<protocol::frame> opening, std::shared_ptr<const tls_config> tls)
    : impl_(std::make_unique<impl>()) {
    impl_->secret = std::move(secret);
    impl_->opening = std::move(opening);
    impl_->tls = std::move(tls);
}

outbox::~outbox() {
    impl_->work.reset();
    asio::post(impl_->io, [this] { impl_->io.stop(); });
    impl_->thread.join();
}

void outbox::send(const endpoint& to, protocol::frame f, double delay_ms) {
    const auto due = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                             std::chrono::duration<double, std::milli>(delay_ms));
    std::shared_ptr<destination> d;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        auto& slot = impl_->destinations[to.text()];
        if (!slot) slot = std::make_shared<destination>(impl_->io, to, impl_->secret, impl_->opening, impl_->tls.get(), impl_->lost);
        d = slot;
    }
    d->push(std::move(f), due);
}

void outbox::forget(const endpoint& to) {
    std::shared_ptr<destination> gone;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        const auto it = impl_->destinations.find(to.text());
        if (it == impl_->destinations.end()) return;
        gone = std::move(it->second);
        impl_->destinations.erase(it);
    }
    asio::post(impl_->io, [gone] { gone->close(); });
}

std::uint64_t outbox::frames_lost() const { return impl_->lost; }

}  // namespace dnnc::node_server
