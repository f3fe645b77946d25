#include "lead/grant_senders.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace dnnc::node_server {

grant_senders::grant_senders(std::size_t nodes, clock_link clock) : clock_(std::move(clock)), senders_(nodes) {
    for (std::size_t v = 0; v < senders_.size(); ++v) senders_[v].thread = std::thread([this, v] { send(v); });
}

grant_senders::~grant_senders() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    for (auto& s : senders_)
        if (s.thread.joinable()) s.thread.join();
}

void grant_senders::send(std::size_t v) {
    auto& s = senders_[v];
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
        changed_.wait(lock, [&] { return stop_ || (s.pending >= 0 && !s.busy); });
        if (stop_) return;
        const auto last = std::exchange(s.pending, -1);
        s.busy = true;
        lock.unlock();
        bool taken = true;
        try {
            clock_(v, protocol::clock_request{protocol::clock_request::kind::grant, last, {}});
        } catch (const std::exception&) {
            taken = false;  // stopped, dead or cut off: the run goes on without it meanwhile
        }
        lock.lock();
        s.busy = false;
        changed_.notify_all();
        if (taken) continue;
        if (s.pending < last) s.pending = last;
        // Again after a pause: a node that comes back is granted the clock's newest tick
        // at once, and computes the ticks it missed as fast as it can.
        changed_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stop_; });
    }
}

void grant_senders::grant(std::int64_t last) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& s : senders_) s.pending = std::max(s.pending, last);
    }
    changed_.notify_all();
}

protocol::clock_reply grant_senders::request(std::size_t v, const protocol::clock_request& request) {
    auto& s = senders_[v];
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return !s.busy; });
        s.pending = -1;  // a hold supersedes the grants not yet sent; a grant, the older ones
        s.busy = true;
    }
    auto idle = [&] {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            s.busy = false;
        }
        changed_.notify_all();
    };
    try {
        auto reply = clock_(v, request);
        idle();
        return reply;
    } catch (...) {
        idle();
        throw;
    }
}

}  // namespace dnnc::node_server
