#include "dnnc/sim/runner.hpp"

#include <algorithm>
#include <thread>

namespace dnnc::sim {

using clock_type = std::chrono::steady_clock;

runner::runner(engine& e, transport& t, runner_options options, tick_observer observer)
    : engine_(e),
      transport_(t),
      options_(options),
      observer_(std::move(observer)),
      deliver_([this](std::size_t peer, packet& p) { receive_reusing(peer, p); }),
      pending_(e.spec().peers.size()),
      outgoing_(pending_.size()),
      completed_(e.next_tick() - 1),
      read_through_(e.next_tick() - 1) {
    for (const auto& n : e.spec().neurons) window_ms_ = std::max(window_ms_, n.window_ms);
    if (options_.sync == model::sync_mode::lockstep) lag_ = std::max<tick_t>(1, e.remote_delay());
    stats_.sent_to.assign(pending_.size(), 0);
    stats_.late_from.assign(pending_.size(), 0);
    stats_.missing_from.assign(pending_.size(), 0);
    sent_now_.assign(pending_.size(), 0);
}

namespace {
constexpr std::chrono::microseconds poll_before_sleeping{50};
// The longest a runner sleeps in transport::collect before looking at packets pushed
// through receive() and at stop().
constexpr std::chrono::microseconds longest_nap{1000};
}  // namespace

void runner::receive_reusing(std::size_t peer, packet& p) {
    if (peer >= pending_.size()) throw protocol_error("packet from an unknown peer");
    // Checked here, on the receiving side's thread: a malformed packet must not reach the
    // engine, where it would stop the runner.
    const auto count = engine_.receive_count(peer);
    if (p.dense && p.values.size() != count)
        throw protocol_error("peer '" + engine_.spec().peers[peer].id + "' sent " + std::to_string(p.values.size()) +
                             " values for tick " + std::to_string(p.tick) + ", expected " + std::to_string(count));
    if (!p.dense)
        for (const auto& [position, value] : p.nonzero)
            if (position >= count)
                throw protocol_error("peer '" + engine_.spec().peers[peer].id + "' sent a value for position " +
                                     std::to_string(position) + " of " + std::to_string(count));
    std::lock_guard<std::mutex> lock(mutex_);
    // The packet of tick k is read by tick k + lag_; once the engine has the peers' packets
    // of tick k it is too late. A peer further ahead than max_pending_packets ticks (only a
    // window run's fast node, or a peer gone wrong: in lockstep none is more than lag_ ahead)
    // is not kept either.
    auto& queue = pending_[peer];
    const auto held = queue.find(p.tick);
    if (p.tick <= read_through_ || (queue.size() >= max_pending_packets && held == queue.end())) {
        stats_.values_dropped += static_cast<std::int64_t>(p.dense ? p.values.size() : p.nonzero.size());
        ++stats_.late_from[peer];
        return;
    }
    if (held != queue.end()) {  // a second packet for the tick replaces the first
        std::swap(held->second.content, p);
    } else {
        auto node = spare_node();
        node.key() = p.tick;
        std::swap(node.mapped().content, p);
        node.mapped().at = clock_type::now();
        queue.insert(std::move(node));
    }
    changed_.notify_all();
}

runner::packet_queue::node_type runner::spare_node() {
    if (spare_.empty()) {
        packet_queue fresh;
        return fresh.extract(fresh.emplace().first);
    }
    auto node = std::move(spare_.back());
    spare_.pop_back();
    return node;
}

std::optional<clock_type::time_point> runner::first_arrival(tick_t k) const {
    std::optional<clock_type::time_point> first;
    for (const auto& q : pending_)
        if (const auto it = q.find(k); it != q.end() && (!first || it->second.at < *first)) first = it->second.at;
    return first;
}

void runner::add_input(global_index neuron, tick_t t, float value, std::int64_t lane) {
    if (!engine_.is_local(neuron)) throw usage_error("neuron " + std::to_string(neuron) + " is not on this node");
    if (lane != engine::all_lanes && (lane < 0 || lane >= std::int64_t{engine_.batch()}))
        throw usage_error("input lane " + std::to_string(lane) + " is out of range (batch " + std::to_string(engine_.batch()) + ")");
    std::lock_guard<std::mutex> lock(mutex_);
    if (t <= completed_ || (t == completed_ + 1 && computing_))
        throw usage_error("input for tick " + std::to_string(t) + " arrived after that tick was computed");
    inputs_.push_back({neuron, t, value, lane});
}

tick_t runner::hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    granted_ = std::min(granted_, completed_ + (computing_ ? 1 : 0));
    changed_.notify_all();
    return granted_;
}

void runner::grant(tick_t last) {
    std::lock_guard<std::mutex> lock(mutex_);
    granted_ = std::max(granted_, last);
    changed_.notify_all();
}

tick_t runner::granted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return granted_;
}

tick_t runner::completed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_;
}

void runner::stop() {
    stopping_ = true;
    std::lock_guard<std::mutex> lock(mutex_);
    changed_.notify_all();
}

void runner::inspect_paused(const std::function<void(const engine&)>& inspect) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (computing_ || granted_ > completed_)
        throw usage_error("the network is running; freeze it first (tick " + std::to_string(completed_ + 1) + " is under way)");
    inspect(engine_);
}

void runner::modify_paused(const std::function<void(engine&)>& modify) {
    inspect_paused([&](const engine&) {
        modify(engine_);
        // New delays may have shortened the engine's remote delay: from the next tick on it
        // reads the packets in flight sooner (a lag never grows: it would wait for packets
        // the engine has read).
        if (options_.sync == model::sync_mode::lockstep) lag_ = std::min(lag_, std::max<tick_t>(1, engine_.remote_delay()));
    });
}

runner_stats runner::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

void runner::wait_for_inputs(std::unique_lock<std::mutex>& lock, tick_t t) {
    // Outputs of ticks before the first are in the history already. Tick t reads the packets
    // of the ticks after read_through_ up to t - lag_: one, but after the lag shrank.
    if (t - lag_ <= read_through_ || pending_.empty()) return;
    auto all_arrived = [&] {
        return std::all_of(pending_.begin(), pending_.end(), [&](const auto& q) {
            for (tick_t k = read_through_ + 1; k <= t - lag_; ++k)
                if (q.count(k) == 0) return false;
            return true;
        });
    };
    const bool lockstep = options_.sync == model::sync_mode::lockstep;
    const auto began = clock_type::now();
    const auto window = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double, std::milli>(window_ms_));
    // Window mode waits from the first packet of t - lag_ (or from now) until the window closes.
    auto deadline = [&] {
        if (lockstep) return clock_type::time_point::max();
        return first_arrival(t - lag_).value_or(began) + window;
    };
    waiting_since_ = began;
    // Peers' packets usually follow within microseconds: poll a while, yielding the core to
    // the threads that bring them, before sleeping (waking a thread costs more).
    while (!stopping_ && !all_arrived()) {
        const auto now = clock_type::now();
        const auto until = deadline();
        if (now >= until) break;
        const bool polling = now - began < poll_before_sleeping;
        const auto nap = polling ? std::chrono::microseconds(0)
                                 : std::min(longest_nap, std::chrono::ceil<std::chrono::microseconds>(until - now));
        lock.unlock();
        const bool collected = transport_.collect(deliver_, nap);
        if (polling) std::this_thread::yield();
        lock.lock();
        if (collected || polling || all_arrived()) continue;
        if (lockstep)
            changed_.wait(lock, [&] { return stopping_ || all_arrived(); });
        else
            changed_.wait_until(lock, until);
    }
    waiting_since_.reset();
    if (!lockstep)
        for (std::size_t p = 0; p < pending_.size(); ++p)
            if (!pending_[p].count(t - lag_)) {
                ++stats_.packets_missing;
                ++stats_.missing_from[p];
            }
}

std::optional<runner::wait_state> runner::waiting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!waiting_since_) return std::nullopt;
    wait_state w;
    w.packets_of = read_through_ + 1;
    w.waited_ms = std::chrono::duration<double, std::milli>(clock_type::now() - *waiting_since_).count();
    for (std::size_t p = 0; p < pending_.size(); ++p)
        if (!pending_[p].count(w.packets_of)) w.peers.push_back(p);
    return w;
}

bool runner::step_once(std::unique_lock<std::mutex>& lock) {
    changed_.wait(lock, [&] { return stopping_ || granted_ > completed_; });
    if (stopping_) return false;
    const tick_t t = completed_ + 1;
    computing_ = true;  // from here on the tick completes even if the clock holds
    wait_for_inputs(lock, t);
    if (stopping_) return false;
    for (std::size_t p = 0; p < pending_.size(); ++p) {
        auto& q = pending_[p];
        while (!q.empty() && q.begin()->first <= t - lag_) {
            auto node = q.extract(q.begin());
            if (node.key() > read_through_)
                ready_.emplace_back(p, std::move(node));
            else
                spare_.push_back(std::move(node));
        }
    }
    read_through_ = std::max(read_through_, t - lag_);
    std::swap(inputs_, inputs_now_);
    inputs_.clear();
    lock.unlock();

    const auto computing_since = std::chrono::steady_clock::now();
    for (const auto& in : inputs_now_) engine_.add_input(in.neuron, in.tick, in.value, in.lane);
    for (const auto& [peer, node] : ready_) {
        const auto& p = node.mapped().content;
        if (p.dense)
            engine_.deliver(peer, p.tick, p.values);
        else
            engine_.deliver_nonzero(peer, p.tick, p.nonzero);
    }
    engine_.compute();
    std::int64_t sent = 0;
    for (std::size_t peer = 0; peer < pending_.size(); ++peer) {
        packet& out = outgoing_[peer];
        out.tick = t;
        out.dense = options_.send == model::send_mode::always;
        if (out.dense)
            engine_.outgoing(peer, out.values);
        else
            engine_.outgoing_nonzero(peer, out.nonzero);
        sent_now_[peer] = static_cast<std::int64_t>(out.dense ? out.values.size() : out.nonzero.size());
        sent += sent_now_[peer];
        transport_.send(peer, out);
    }
    const auto computed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - computing_since).count();

    lock.lock();
    stats_.compute_ns += computed_ns;
    for (auto& [peer, node] : ready_) spare_.push_back(std::move(node));
    ready_.clear();
    computing_ = false;
    completed_ = t;
    ++stats_.ticks;
    stats_.values_sent += sent;
    for (std::size_t peer = 0; peer < sent_now_.size(); ++peer) stats_.sent_to[peer] += sent_now_[peer];
    changed_.notify_all();
    // Observed once marked complete: whoever hears of tick t from the observer (the lead,
    // from a tick report) may act on it at once, e.g. capture a held node's states.
    if (observer_) {
        lock.unlock();
        observer_(t, engine_);
        lock.lock();
    }
    return true;
}

void runner::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (step_once(lock)) {
    }
}

void runner::run_granted() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_ && completed_ < granted_)
        if (!step_once(lock)) return;
}

// ---- in-process exchange ----

struct local_exchange::impl {
    struct node_transport final : transport {
        impl* owner = nullptr;
        std::size_t from = 0;
        void send(std::size_t peer, const packet& p) override { owner->route(from, peer, p); }
    };
    runner_options options;
    std::vector<std::string> ids;
    std::vector<engine> engines;
    std::vector<node_transport> transports;
    std::vector<std::unique_ptr<runner>> runners;
    std::vector<runner::tick_observer> observers;

    void route(std::size_t from, std::size_t peer, const packet& p) {
        const std::string& to_id = engines[from].spec().peers[peer].id;
        const auto to = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), to_id) - ids.begin());
        const auto& back = engines[to].spec().peers;
        const auto slot = static_cast<std::size_t>(
            std::find_if(back.begin(), back.end(), [&](const peer_spec& s) { return s.id == ids[from]; }) - back.begin());
        runners[to]->receive(slot, p);
    }
};

local_exchange::local_exchange(std::vector<engine_spec> specs, runner_options options) : impl_(std::make_unique<impl>()) {
    auto& m = *impl_;
    m.options = options;
    for (std::size_t n = 0; n < specs.size(); ++n) {
        m.ids.push_back(std::to_string(n));
        m.engines.emplace_back(specs[n]);
    }
    m.transports.resize(specs.size());
    m.observers.resize(specs.size());
    for (std::size_t n = 0; n < specs.size(); ++n) {
        m.transports[n].owner = &m;
        m.transports[n].from = n;
    }
}

local_exchange::~local_exchange() = default;

void local_exchange::observe(std::size_t node, runner::tick_observer observer) { impl_->observers.at(node) = std::move(observer); }

engine& local_exchange::node(std::size_t n) { return impl_->engines.at(n); }

void local_exchange::add_input(global_index neuron, tick_t t, float value, std::int64_t lane) {
    for (auto& e : impl_->engines)
        if (e.is_local(neuron)) return e.add_input(neuron, t, value, lane);
    throw usage_error("no node has neuron " + std::to_string(neuron));
}

void local_exchange::run_until(tick_t last) {
    auto& m = *impl_;
    if (m.runners.empty())
        for (std::size_t n = 0; n < m.engines.size(); ++n)
            m.runners.push_back(std::make_unique<runner>(m.engines[n], m.transports[n], m.options, m.observers[n]));
    std::vector<std::thread> threads;
    for (auto& r : m.runners) {
        r->grant(last);
        threads.emplace_back([&r] { r->run_granted(); });
    }
    for (auto& t : threads) t.join();
}

runner_stats local_exchange::stats(std::size_t node) const { return impl_->runners.at(node)->stats(); }

}  // namespace dnnc::sim
