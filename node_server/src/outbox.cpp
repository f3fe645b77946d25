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
#include <thread>

namespace dnnc::node_server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

namespace {

// All state is touched only on the outbox's io thread.
class destination : public std::enable_shared_from_this<destination> {
public:
    destination(asio::io_context& io, endpoint to, std::atomic<std::uint64_t>& lost)
        : io_(io), socket_(io), timer_(io), to_(std::move(to)), lost_(lost) {}

    void push(std::string bytes, clock_type::time_point due) {
        queue_.push_back({due, std::move(bytes)});
        if (!busy_) pump();
    }

private:
    struct item {
        clock_type::time_point due;
        std::string bytes;
    };

    void pump() {
        if (queue_.empty()) {
            busy_ = false;
            return;
        }
        busy_ = true;
        if (!socket_.is_open()) return connect();
        if (clock_type::now() < queue_.front().due) {
            timer_.expires_at(queue_.front().due);
            timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) { self->pump(); });
            return;
        }
        asio::async_write(socket_, asio::buffer(queue_.front().bytes),
                          [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                              if (ec) return self->fail(ec.message());
                              self->queue_.pop_front();
                              self->pump();
                          });
    }

    void connect() {
        auto resolver = std::make_shared<tcp::resolver>(io_);
        resolver->async_resolve(to_.host, std::to_string(to_.port),
                                [self = shared_from_this(), resolver](const boost::system::error_code& ec,
                                                                      const tcp::resolver::results_type& results) {
                                    if (ec) return self->fail(ec.message());
                                    asio::async_connect(self->socket_, results,
                                                        [self](const boost::system::error_code& e, const tcp::endpoint&) {
                                                            if (e) return self->fail(e.message());
                                                            boost::system::error_code ignored;
                                                            self->socket_.set_option(tcp::no_delay(true), ignored);
                                                            self->pump();
                                                        });
                                });
    }

    // The destination is gone: drop what waits for it; the next frame tries again.
    void fail(const std::string& why) {
        DNNC_LOG(debug, "cannot send to " << to_.text() << ": " << why);
        lost_ += queue_.size();
        queue_.clear();
        boost::system::error_code ignored;
        socket_.close(ignored);
        busy_ = false;
    }

    asio::io_context& io_;
    tcp::socket socket_;
    asio::steady_timer timer_;
    endpoint to_;
    std::atomic<std::uint64_t>& lost_;
    std::deque<item> queue_;
    bool busy_ = false;
};

}  // namespace

struct outbox::impl {
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
    std::map<std::string, std::shared_ptr<destination>> destinations;
    std::atomic<std::uint64_t> lost{0};
    std::thread thread{[this] { io.run(); }};
};

outbox::outbox() : impl_(std::make_unique<impl>()) {}

outbox::~outbox() {
    impl_->work.reset();
    asio::post(impl_->io, [this] { impl_->io.stop(); });
    impl_->thread.join();
}

void outbox::send(const endpoint& to, std::string frame_bytes, double delay_ms) {
    const auto due = clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                             std::chrono::duration<double, std::milli>(delay_ms));
    asio::post(impl_->io, [this, to, bytes = std::move(frame_bytes), due]() mutable {
        auto& d = impl_->destinations[to.text()];
        if (!d) d = std::make_shared<destination>(impl_->io, to, impl_->lost);
        d->push(std::move(bytes), due);
    });
}

std::uint64_t outbox::frames_lost() const { return impl_->lost; }

}  // namespace dnnc::node_server
