#pragma once
// The nodes' compute time per tick, from their tick reports (private to dnnc_node_server):
// what the status shows per node and what <run rebalance="auto"> acts on. Every `interval`
// it takes each node's compute time over the ticks it completed since the last interval;
// when the slowest node's time per tick stays above `threshold` x the nodes' mean for
// `after`, it says so once (due), with the times, and starts watching anew.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace dnnc::node_server {

class load_watch {
public:
    using clock = std::chrono::steady_clock;
    load_watch(std::size_t nodes, double threshold, std::chrono::milliseconds after,
               std::chrono::milliseconds interval = std::chrono::milliseconds(500), clock::time_point now = clock::now());

    // Node v's compute time since its run began (ns) and the last tick it completed.
    void report(std::size_t v, std::int64_t compute_ns, std::int64_t completed);
    // Each node's compute time per tick over the last interval, in ms (empty until an
    // interval in which every node completed ticks).
    const std::vector<double>& ms_per_tick() const { return ms_per_tick_; }
    // Closes the interval when it has lasted long enough; when the imbalance has held for
    // `after`, the times per tick (once; the watch then starts over).
    std::optional<std::vector<double>> due(clock::time_point now = clock::now());

private:
    struct counts {
        std::int64_t compute_ns = 0, completed = -1;
    };
    double threshold_;
    std::chrono::milliseconds after_, interval_;
    std::vector<counts> now_, at_start_;  // latest, and at the interval's start
    clock::time_point interval_start_;
    std::optional<clock::time_point> imbalanced_since_;
    std::vector<double> ms_per_tick_;
};

}  // namespace dnnc::node_server
