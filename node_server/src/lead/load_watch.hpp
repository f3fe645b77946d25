#pragma once
// The nodes' time per tick, from their tick reports (private to dnnc_node_server): what the
// status shows per node and what <run rebalance="auto"> acts on. A node's time per tick is
// its compute time plus the time its runner waited for a CPU it was ready to run on (a node
// held back by other processes or by a CPU quota computes as fast as the others but starts
// its ticks late). Every `interval` it takes each node's times over the ticks it completed
// since the last interval; when the slowest node's time per tick stays above `threshold` x
// the nodes' mean for `after`, it says so once (due), with the times, and starts watching
// anew.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::node_server {

// Each node's time per tick (compute and CPU wait) and the CPU wait's part, in ms.
struct tick_times {
    std::vector<double> ms, cpu_wait_ms;
};

class load_watch {
public:
    using clock = std::chrono::steady_clock;
    load_watch(std::size_t nodes, double threshold, std::chrono::milliseconds after,
               std::chrono::milliseconds interval = std::chrono::milliseconds(500), clock::time_point now = clock::now());

    // Only the nodes marked here are judged (those that hold neurons: a node left idle, for
    // a slow link or with more nodes than units, computes next to nothing and would make
    // every other one look slow); all are until this is called.
    void judge_only(std::vector<bool> judged) { judged_ = std::move(judged); }
    // Node v's compute time and CPU wait since its run began (ns) and the last tick it
    // completed.
    void report(std::size_t v, std::int64_t compute_ns, std::int64_t cpu_wait_ns, std::int64_t completed);
    // Each node's time per tick (compute and CPU wait) over the last interval, in ms (empty
    // until an interval in which every node completed ticks), and the CPU wait's part.
    const std::vector<double>& ms_per_tick() const { return ms_per_tick_; }
    const std::vector<double>& cpu_wait_ms_per_tick() const { return cpu_wait_ms_per_tick_; }
    // Closes the interval when it has lasted long enough; when the imbalance has held for
    // `after`, the times per tick (once; the watch then starts over).
    std::optional<tick_times> due(clock::time_point now = clock::now());

private:
    struct counts {
        std::int64_t compute_ns = 0, cpu_wait_ns = 0, completed = -1;
    };
    double threshold_;
    std::chrono::milliseconds after_, interval_;
    std::vector<counts> now_, at_start_;  // latest, and at the interval's start
    clock::time_point interval_start_;
    std::optional<clock::time_point> imbalanced_since_;
    std::vector<bool> judged_;  // empty: every node
    std::vector<double> ms_per_tick_, cpu_wait_ms_per_tick_;
};

// What the lead does about an imbalance the watch found (<run rebalance="auto">), from each
// node's capacity, neurons and time per tick now and as they were when it last moved neurons
// by load:
// - rescale: a node slower per tick than the mean gets less capacity, a faster one more, by
//   the square root of the ratio and at most a factor 2 a step (a tick's fixed costs do not
//   shrink with its load, so capacities in proportion to load per ms would starve a lightly
//   loaded node further each time); the nodes measured keep their capacities' total between
//   them, and one without neurons (or not measured) keeps its own;
// - drain: the slowest node lost neurons at the last move, its time per tick did not fall
//   with them (by 10% or more), and it waits for a CPU half as long again as the others do
//   and for a quarter of its time per tick at least:
//   its ticks are slow by themselves (its packets and the clock, on a CPU held back by a
//   quota or by other processes), and it leaves the run;
// - stop: that node is the lead (which cannot leave), or it does not wait for a CPU more than
//   the others, or the last move did not make the slowest node's time per tick fall by 5%:
//   moving more neurons would not help.
struct node_load {
    std::string id;
    double capacity = 1;
    std::int64_t neurons = 0;
    double ms_per_tick = 0;
    double cpu_wait_ms_per_tick = 0;
};
struct load_step {
    enum class kind { rescale, drain, stop } what = kind::stop;
    std::vector<double> capacity;  // rescale: each node's, in the order given
    std::size_t node = 0;          // drain: which
};
load_step next_load_step(const std::vector<node_load>& now, const std::vector<node_load>& at_last_move, std::size_t lead);

// The earliest time of the next move by load after one that ended at `moved` and paused the
// run for `paused_ms`: paused_ms / share later, so that the moves pause the run for at most
// `share` of it (<run rebalance-pause-share>), however often the nodes fall out of balance.
load_watch::clock::time_point next_load_move(load_watch::clock::time_point moved, double paused_ms, double share);

// The lead's moves by load for one placement of a network (rebalance="auto"): the nodes as
// they were at the last move, whether moving by load has stopped, and when the next move may
// come (next_load_move). Not locked: the lead calls it under its own lock.
class load_moves {
public:
    // Whether a move by load may be made at `now`.
    bool may_move(load_watch::clock::time_point now) const { return !stopped_ && (!next_ || now >= *next_); }
    const std::vector<node_load>& at_last_move() const { return last_; }
    // No more moves by load: they would not make the slowest node faster.
    void stop() { stopped_ = true; }
    // A move by load made from `loads` ended at `now`, having paused the run `paused_ms`;
    // `share`: the pauses' share of the run.
    void moved(std::vector<node_load> loads, load_watch::clock::time_point now, double paused_ms, double share) {
        last_ = std::move(loads);
        next_ = next_load_move(now, paused_ms, share);
    }

private:
    std::vector<node_load> last_;
    bool stopped_ = false;
    std::optional<load_watch::clock::time_point> next_;
};

}  // namespace dnnc::node_server
