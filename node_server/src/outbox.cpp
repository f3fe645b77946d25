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
    destination(asio::io_context& io, endpoint to, const std::string& opening, std::atomic<std::uint64_t>& lost)
        : io_(io), socket_(io), timer_(io), to_(std::move(to)), opening_(opening), lost_(lost) {}

    // Any thread.
    void push(std::string bytes, clock_type::time_point due) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!busy_ && socket_.is_open() && due <= clock_type::now()) {
            const std::size_t written = write_now(bytes);
            if (written == bytes.size()) return;
            bytes.erase(0, written);  // the rest goes in order, from the io thread
        }
        queue_.push_back({due, std::move(bytes)});
        if (!busy_) {
            busy_ = true;
            asio::post(io_, [self = shared_from_this()] { self->pump(); });
        }
    }

private:
    struct item {
        clock_type::time_point due;
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
        asio::async_write(socket_, asio::buffer(queue_.front().bytes),
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
                                                                boost::system::error_code ignored;
                                                                self->socket_.set_option(tcp::no_delay(true), ignored);
                                                                self->socket_.native_non_blocking(true, ignored);
                                                                if (!self->opening_.empty())
                                                                    self->queue_.push_front({clock_type::now(), self->opening_});
                                                            }
                                                            self->pump();
                                                        });
                                });
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
    asio::steady_timer timer_;
    endpoint to_;
    const std::string& opening_;  // the outbox's
    std::atomic<std::uint64_t>& lost_;
    std::deque<item> queue_;
    bool busy_ = false;
};

}  // namespace

struct outbox::impl {
    std::string opening;
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
    std::mutex mutex;  // of destinations
    std::map<std::string, std::shared_ptr<destination>> destinations;
    std::atomic<std::uint64_t> lost{0};
    std::thread thread{[this] { io.run(); }};
};

outbox::outbox(std::string opening) : impl_(std::make_unique<impl>()) { impl_->opening = std::move(opening); }

outbox::~outbox() {
    impl_->work.reset();
    asio::post(impl_->io, [this] { impl_->io.stop(); });
    impl_->thread.join();
}

void outbox::send(const endpoint& to, std::string frame_bytes, double delay_ms) {
    const auto due = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                             std::chrono::duration<double, std::milli>(delay_ms));
    std::shared_ptr<destination> d;
    {
        std::lock_guard<std::mutex> lock(impl_->mutex);
        auto& slot = impl_->destinations[to.text()];
        if (!slot) slot = std::make_shared<destination>(impl_->io, to, impl_->opening, impl_->lost);
        d = slot;
    }
    d->push(std::move(frame_bytes), due);
}

std::uint64_t outbox::frames_lost() const { return impl_->lost; }

}  // namespace dnnc::node_server
