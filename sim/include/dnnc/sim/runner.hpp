#pragma once
// Drives one node's engine tick by tick over a transport, under the sync rules:
//   lockstep: tick t is computed only when every peer's packet of tick t-D has arrived,
//             D being the shortest delay with which the node reads a remote neuron (each
//             peer sends one packet per tick, empty or not): with D > 1 a node runs up to
//             D ticks ahead of its peers, so ticks overlap instead of waiting on each
//             round trip;
//   window:   tick t waits for the peers' packets of tick t-1 at most the node's wait
//             window (the largest of its neurons' windows) after the first of them
//             arrived, or after it began waiting; what is missing counts as 0, packets
//             that come later are dropped and counted.
// Per tick: deliver the packets of t-D (window: t-1), compute t, send t to every peer,
// report t. New delays between two ticks may shorten D (never lengthen it): the next tick
// then reads every packet from the one after the last read up to its own t-D.
// Ticks run up to the horizon the clock grants; the runner then waits for more.
#include "dnnc/sim/engine.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace dnnc::sim {

// One packet: a node's outputs for one peer at one tick, all of them (dense, in the peer's
// receive order) or the non-zero ones as (position, value).
struct packet {
    tick_t tick = 0;
    bool dense = true;
    std::vector<float> values;
    std::vector<std::pair<std::uint32_t, float>> nonzero;
};

class transport {
public:
    // Takes the packet's contents and leaves it holding a spent packet's buffers
    // (runner::receive_reusing).
    using receiver = std::function<void(std::size_t peer, packet& p)>;
    virtual ~transport() = default;
    virtual void send(std::size_t peer, const packet& p) = 0;
    // A transport whose packets the runner's own thread picks up overrides this: it hands
    // every packet that has arrived to `deliver`, first waiting up to `wait` when none has,
    // and returns true. By default packets come only through runner::receive, from
    // another thread.
    virtual bool collect(const receiver& deliver, std::chrono::microseconds wait) {
        (void)deliver, (void)wait;
        return false;
    }
};

struct runner_stats {
    std::int64_t ticks = 0;
    std::int64_t values_sent = 0;
    std::int64_t values_dropped = 0;  // arrived after their wait window (window mode)
    std::int64_t packets_missing = 0;  // not there when a window closed (window mode)
    // Wall time spent computing ticks (delivering, updating, sending), not waiting for
    // peers or the clock, in ns.
    std::int64_t compute_ns = 0;
    std::vector<std::int64_t> sent_to;  // values sent to each peer (the spec's peer order)
    // Per peer, in the same order (window mode): packets dropped because they came after
    // their tick was computed (or beyond max_pending_packets), and packets not there when
    // a window closed.
    std::vector<std::int64_t> late_from, missing_from;
};

struct runner_options {
    model::sync_mode sync = model::sync_mode::lockstep;
    model::send_mode send = model::send_mode::always;
};

class runner {
public:
    // Called after each tick, once completed() includes it, with the engine, so the caller
    // can read outputs.
    using tick_observer = std::function<void(tick_t, const engine&)>;

    runner(engine& e, transport& t, runner_options options, tick_observer observer = {});

    // From the transport's receiving side, any thread. Throws protocol_error for a packet
    // that does not fit this node (wrong count or position): the caller drops it. Packets
    // too late for their tick, or beyond max_pending_packets waiting from one peer, are
    // dropped and counted (values_dropped).
    static constexpr std::size_t max_pending_packets = 65536;
    void receive(std::size_t peer, packet p) { receive_reusing(peer, p); }
    // The same, but p is left holding the buffers of a packet already delivered (or, when
    // it is dropped or refused, its own): a transport that decodes every packet into one
    // such object allocates nothing per tick once the buffers have grown.
    void receive_reusing(std::size_t peer, packet& p);

    // External input for a local neuron (one lane, or every lane) at a tick not yet
    // computed (any thread).
    void add_input(global_index neuron, tick_t t, float value, std::int64_t lane = engine::all_lanes);

    // Ticks up to and including `last` may run. Never lowers an earlier grant.
    void grant(tick_t last);
    // Freezing: no tick after the one in progress (or the last completed) may start.
    // Returns the new horizon.
    tick_t hold();
    tick_t granted() const;
    // The last tick computed (-1 before the first).
    tick_t completed() const;

    // Runs ticks as they are granted until stop().
    void run();
    // Computes granted ticks until the grant is used up, then returns (tests, one thread).
    void run_granted();
    void stop();
    bool stopped() const { return stopping_; }

    // Runs `inspect` on the engine while no tick is in progress and none may start;
    // throws usage_error unless the runner is paused at its horizon (frozen).
    void inspect_paused(const std::function<void(const engine&)>& inspect) const;
    // The same for a change to the engine between two ticks (engine::set_parameters,
    // engine::set_synapses); in lockstep the lag follows a remote delay that new delays shortened.
    void modify_paused(const std::function<void(engine&)>& modify);

    runner_stats stats() const;

    // What the tick in progress waits for: the peers' packets of tick `packets_of`, since
    // `waited_ms` ago, from `peers` (those not there yet). Nothing when no tick waits.
    struct wait_state {
        tick_t packets_of = 0;
        double waited_ms = 0;
        std::vector<std::size_t> peers;
    };
    std::optional<wait_state> waiting() const;

private:
    struct arrived_packet {
        packet content;
        std::chrono::steady_clock::time_point at;
    };
    using packet_queue = std::map<tick_t, arrived_packet>;

    bool step_once(std::unique_lock<std::mutex>& lock);  // false when stopped
    void wait_for_inputs(std::unique_lock<std::mutex>& lock, tick_t t);
    // Window mode: when the first of the peers' packets of tick k arrived, if one has.
    std::optional<std::chrono::steady_clock::time_point> first_arrival(tick_t k) const;
    packet_queue::node_type spare_node();

    engine& engine_;
    transport& transport_;
    runner_options options_;
    tick_observer observer_;
    transport::receiver deliver_;  // receive(), for transport::collect
    double window_ms_ = 0;
    tick_t lag_ = 1;  // tick t reads the peers' packets of tick t - lag_

    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::vector<packet_queue> pending_;  // per peer, by tick
    // Nothing is allocated per tick once these have grown: a packet's map node is recycled
    // through spare_ (its buffers with it), ready_ and outgoing_ keep their capacity.
    std::vector<packet_queue::node_type> spare_;
    std::vector<std::pair<std::size_t, packet_queue::node_type>> ready_;  // the tick's packets, by peer
    std::vector<packet> outgoing_;  // per peer
    struct input {
        global_index neuron;
        tick_t tick;
        float value;
        std::int64_t lane;
    };
    std::vector<input> inputs_, inputs_now_;
    tick_t granted_ = -1;
    tick_t completed_ = -1;
    // The peers' packets up to this tick are in the engine (before the first tick: in the
    // history it started from); tick t reads those after it up to t - lag_.
    tick_t read_through_ = -1;
    bool computing_ = false;  // tick completed_ + 1 is being computed
    std::optional<std::chrono::steady_clock::time_point> waiting_since_;  // a tick waits for packets
    std::atomic<bool> stopping_{false};
    runner_stats stats_;
    std::vector<std::int64_t> sent_now_;  // of the tick being sent, per peer
};

// Several engines in one process, joined by in-memory queues: the in-process transport, for
// tests and for checking a partition without sockets. Runs every engine's runner on its
// own thread up to `last` and returns the outputs each observer saw.
class local_exchange {
public:
    explicit local_exchange(std::vector<engine_spec> specs, runner_options options = {});
    ~local_exchange();
    // Node n's observer; set before run.
    void observe(std::size_t node, runner::tick_observer observer);
    engine& node(std::size_t n);
    void add_input(global_index neuron, tick_t t, float value, std::int64_t lane = engine::all_lanes);
    // Runs every node through tick `last`.
    void run_until(tick_t last);
    runner_stats stats(std::size_t node) const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace dnnc::sim
