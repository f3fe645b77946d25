#include "dnnc/node_server/outbox.hpp"

#include "dnnc/node_server/log.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
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
                std::atomic<std::uint64_t>& lost)
        : io_(io), socket_(io), timer_(io), to_(std::move(to)), secret_(secret), opening_(opening), lost_(lost) {}

    // Any thread.
    void push(protocol::frame f, clock_type::time_point due) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!busy_ && socket_.is_open() && due <= clock_type::now()) {
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
            written += socket_.write_some(asio::buffer(bytes.data() + written, bytes.size() - written), ec);
            if (ec == asio::error::interrupted) ec.clear();
        }
        if (ec == asio::error::would_block || ec == asio::error::try_again) return written;
        if (ec) {
            DNNC_LOG(debug, "cannot send to " << to_.text() << ": " << ec.message());
            ++lost_;
            boost::system::error_code ignored;
            socket_.close(ignored);
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
        if (!socket_.is_open()) return connect();
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
        asio::async_write(socket_, asio::buffer(front.bytes),
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
        auto resolver = std::make_shared<tcp::resolver>(io_);
        resolver->async_resolve(to_.host, std::to_string(to_.port),
                                [self = shared_from_this(), resolver](const boost::system::error_code& ec,
                                                                      const tcp::resolver::results_type& results) {
                                    if (ec) {
                                        std::lock_guard<std::mutex> lock(self->mutex_);
                                        return self->fail(ec.message());
                                    }
                                    asio::async_connect(self->socket_, results,
                                                        [self](const boost::system::error_code& e, const tcp::endpoint&) {
                                                            {
                                                                std::lock_guard<std::mutex> lock(self->mutex_);
                                                                if (e) return self->fail(e.message());
                                                                if (!self->start_session()) return;
                                                                if (self->opening_)
                                                                    self->queue_.push_front({clock_type::now(), *self->opening_, {}});
                                                            }
                                                            self->pump();
                                                        });
                                });
    }

    // Under mutex_, on a connection just made: the hello exchange (frame_auth), done with
    // blocking calls bounded by a receive timeout, then non-blocking mode for good.
    bool start_session() {
        boost::system::error_code ec;
        socket_.set_option(tcp::no_delay(true), ec);
        auth_ = protocol::frame_auth(secret_, protocol::frame_auth::side::client);
        if (auth_.required()) {
            const auto deadline = clock_type::now() + handshake_timeout;
            try {
                asio::write(socket_, asio::buffer(auth_.hello()), ec);
                if (ec) throw protocol_error(ec.message());
                std::string header(protocol::frame_header_size, '\0');
                read_within(header, deadline);
                const auto h = protocol::decode_header(header, protocol::pre_auth_max_payload, true);
                std::string body(h.body_size(), '\0');
                read_within(body, deadline);
                auth_.accept(auth_.decode(h, header, body));
            } catch (const std::exception& e) {
                fail(std::string("no session: ") + e.what());
                return false;
            }
        }
        socket_.native_non_blocking(true, ec);
        return true;
    }

    // Fills `bytes` from the socket, waiting at most until `deadline`.
    void read_within(std::string& bytes, clock_type::time_point deadline) {
        const int fd = socket_.native_handle();
        for (std::size_t got = 0; got < bytes.size();) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
            pollfd p{fd, POLLIN, 0};
            if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) throw protocol_error("no hello reply in time");
            const ssize_t n = ::recv(fd, bytes.data() + got, bytes.size() - got, MSG_DONTWAIT);
            if (n == 0) throw protocol_error("connection closed by the peer");
            if (n < 0 && errno != EAGAIN && errno != EINTR) throw protocol_error(std::strerror(errno));
            if (n > 0) got += static_cast<std::size_t>(n);
        }
    }

    // Under mutex_: the destination is gone; drop what waits for it; the next frame tries again.
    void fail(const std::string& why) {
        DNNC_LOG(debug, "cannot send to " << to_.text() << ": " << why);
        lost_ += queue_.size();
        queue_.clear();
        boost::system::error_code ignored;
        socket_.close(ignored);
        busy_ = false;
    }

    asio::io_context& io_;
    std::mutex mutex_;
    tcp::socket socket_;
    protocol::frame_auth auth_;  // of the open socket
    asio::steady_timer timer_;
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
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
    std::mutex mutex;  // of destinations
    std::map<std::string, std::shared_ptr<destination>> destinations;
    std::atomic<std::uint64_t> lost{0};
    std::thread thread{[this] { io.run(); }};
};

outbox::outbox(std::string secret, std::optional<protocol::frame> opening) : impl_(std::make_unique<impl>()) {
    impl_->secret = std::move(secret);
    impl_->opening = std::move(opening);
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
        if (!slot) slot = std::make_shared<destination>(impl_->io, to, impl_->secret, impl_->opening, impl_->lost);
        d = slot;
    }
    d->push(std::move(f), due);
}

std::uint64_t outbox::frames_lost() const { return impl_->lost; }

}  // namespace dnnc::node_server
