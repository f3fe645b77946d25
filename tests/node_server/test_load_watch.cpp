// The lead's watch over the nodes' time per tick (load_watch.hpp): compute and CPU wait per
// tick over each interval, a re-balance due only when the slowest node stays above the
// threshold for the whole wait, once, and no judgement over an interval in which a node
// did not tick.
#include "lead/load_watch.hpp"

#include <catch2/catch.hpp>

using dnnc::node_server::load_watch;
using namespace std::chrono_literals;

namespace {
// Each interval of 500 ms, node v computes 100 ticks in ms[v] x 100 ms and waits
// waited[v] x 100 ms for a CPU (none when not given).
struct fed_watch {
    load_watch watch;
    load_watch::clock::time_point t;
    std::vector<std::int64_t> ns, wait_ns, ticks;
    fed_watch(std::size_t nodes, double threshold, std::chrono::milliseconds after)
        : watch(nodes, threshold, after, 500ms, load_watch::clock::time_point{}), t{}, ns(nodes, 0), wait_ns(nodes, 0), ticks(nodes, -1) {}
    std::optional<dnnc::node_server::tick_times> interval(const std::vector<double>& ms, const std::vector<double>& waited = {}) {
        t += 500ms;
        for (std::size_t v = 0; v < ms.size(); ++v) {
            ns[v] += static_cast<std::int64_t>(ms[v] * 100 * 1e6);
            if (v < waited.size()) wait_ns[v] += static_cast<std::int64_t>(waited[v] * 100 * 1e6);
            ticks[v] += 100;
            watch.report(v, ns[v], wait_ns[v], ticks[v]);
        }
        return watch.due(t);
    }
};
}  // namespace

TEST_CASE("a re-balance is due once the slowest node has stayed above the threshold for the whole wait") {
    fed_watch f(3, 1.15, 1000ms);
    CHECK_FALSE(f.interval({1, 1, 1}));
    REQUIRE(f.watch.ms_per_tick().size() == 3);
    CHECK(f.watch.ms_per_tick()[0] == Approx(1.0));
    CHECK_FALSE(f.interval({1, 1, 2}));  // imbalanced for 500 ms
    const auto due = f.interval({1, 1, 2});  // and for 1,000
    REQUIRE(due);
    CHECK(due->ms[2] == Approx(2.0));
    CHECK(due->ms[0] == Approx(1.0));
    // Once: the watch starts over.
    CHECK_FALSE(f.interval({1, 1, 2}));
    CHECK(f.interval({1, 1, 2}));
}

TEST_CASE("an imbalance that does not last, or stays under the threshold, is no reason to move") {
    fed_watch f(2, 1.15, 1000ms);
    CHECK_FALSE(f.interval({1, 1.2}));  // 1.2 / 1.1 = 1.09: under the threshold
    CHECK_FALSE(f.interval({1, 1.2}));
    CHECK_FALSE(f.interval({1, 1.2}));
    CHECK_FALSE(f.interval({1, 3}));
    CHECK_FALSE(f.interval({1, 1}));  // gone before the wait was over
    CHECK_FALSE(f.interval({1, 3}));
    CHECK(f.interval({1, 3}));
}

TEST_CASE("an interval in which a node did not tick (frozen) is not judged, and the wait starts after it") {
    fed_watch f(2, 1.15, 1000ms);
    CHECK_FALSE(f.interval({1, 3}));
    f.t += 500ms;  // a freeze: no node ticks
    CHECK_FALSE(f.watch.due(f.t));
    CHECK_FALSE(f.interval({1, 3}));
    CHECK(f.interval({1, 3}));
    // An interval shorter than 500 ms is not closed.
    f.ns[0] += 1000000000;
    f.ticks[0] += 1;
    f.watch.report(0, f.ns[0], f.wait_ns[0], f.ticks[0]);
    CHECK_FALSE(f.watch.due(f.t + 100ms));
    CHECK(f.watch.ms_per_tick()[1] == Approx(3.0));
}

TEST_CASE("a node that computes as fast as the others but waits for a CPU is the slow one") {
    fed_watch f(3, 1.15, 1000ms);
    CHECK_FALSE(f.interval({1, 1, 1}, {0.1, 0.1, 2}));
    REQUIRE(f.watch.cpu_wait_ms_per_tick().size() == 3);
    CHECK(f.watch.cpu_wait_ms_per_tick()[2] == Approx(2.0));
    CHECK(f.watch.ms_per_tick()[2] == Approx(3.0));
    CHECK(f.watch.ms_per_tick()[0] == Approx(1.1));
    const auto due = f.interval({1, 1, 1}, {0.1, 0.1, 2});  // imbalanced for 1,000 ms
    REQUIRE(due);
    CHECK(due->ms[2] == Approx(3.0));
    CHECK(due->cpu_wait_ms[2] == Approx(2.0));
    // Without the waits the three are equal: nothing is due.
    fed_watch even(3, 1.15, 1000ms);
    for (int k = 0; k < 4; ++k) CHECK_FALSE(even.interval({1, 1, 1}));
}

TEST_CASE("the next step by load: damped capacities, a drain of a node slow by itself, or a stop") {
    using dnnc::node_server::load_step;
    using dnnc::node_server::next_load_step;
    using dnnc::node_server::node_load;
    // n2 takes 4 ms a tick, the others 1 (mean 2): n0 and n1 scale by sqrt(2/1), n2 by
    // sqrt(2/4), and the three keep their total; n3 has no neurons and keeps its capacity.
    const std::vector<node_load> first{{"n0", 1, 100, 1}, {"n1", 1, 100, 1}, {"n2", 1, 100, 4}, {"n3", 2, 0, 0}};
    const auto step = next_load_step(first, {}, 0);
    REQUIRE(step.what == load_step::kind::rescale);
    REQUIRE(step.capacity.size() == 4);
    CHECK(step.capacity[0] == Approx(step.capacity[1]));
    CHECK(step.capacity[2] < step.capacity[0]);
    CHECK(step.capacity[0] / step.capacity[2] == Approx(2.0).epsilon(0.01));
    CHECK(step.capacity[0] + step.capacity[1] + step.capacity[2] == Approx(3.0).epsilon(0.01));
    CHECK(step.capacity[3] == 2);

    // The move took neurons from n2 and its ticks stayed as slow, waiting for a CPU far longer
    // than the others: it leaves the run.
    const std::vector<node_load> then_slow{{"n0", 1.2, 130, 1.1, 0.2}, {"n1", 1.2, 130, 1.1, 0.3}, {"n2", 0.6, 40, 3.9, 3}, {"n3", 2, 0, 0}};
    const auto drain = next_load_step(then_slow, first, 0);
    CHECK(drain.what == load_step::kind::drain);
    CHECK(drain.node == 2);
    // Unless it is the lead, which cannot leave: moving stops.
    CHECK(next_load_step(then_slow, first, 2).what == load_step::kind::stop);
    // So it does when n2 waits for a CPU no more than the others: its slowness is not the
    // CPU's, and neither more neurons moved nor a drain is known to help.
    auto not_starved = then_slow;
    not_starved[2].cpu_wait_ms_per_tick = 0.35;  // under 1.5 x the others' mean (0.25)
    CHECK(next_load_step(not_starved, first, 0).what == load_step::kind::stop);
    // Nor does a node whose wait is many times the others' but a sliver of its time per tick
    // (nodes with cores of their own): 0.05 ms of 3.9.
    auto own_cores = then_slow;
    for (auto& n : own_cores) n.cpu_wait_ms_per_tick /= 60;
    CHECK(next_load_step(own_cores, first, 0).what == load_step::kind::stop);

    // The move made n2 faster (its time fell by more than 10%): the next step rescales again.
    const std::vector<node_load> then_faster{{"n0", 1.2, 130, 1.2}, {"n1", 1.2, 130, 1.2}, {"n2", 0.6, 40, 2.5}, {"n3", 2, 0, 0}};
    CHECK(next_load_step(then_faster, first, 0).what == load_step::kind::rescale);

    // The slowest node is another one now, and no faster than the slowest was: moving stops.
    const std::vector<node_load> worse{{"n0", 1.2, 130, 4.2}, {"n1", 1.2, 130, 1.2}, {"n2", 0.6, 40, 1.5}, {"n3", 2, 0, 0}};
    CHECK(next_load_step(worse, first, 1).what == load_step::kind::stop);

    // Nothing measured: nothing to do but stop.
    CHECK(next_load_step({{"n0", 1, 100, 0}}, {}, 0).what == load_step::kind::stop);
}

TEST_CASE("a move by load that paused the run P lets the next come P / share later, so the pauses keep to their share") {
    using dnnc::node_server::next_load_move;
    const load_watch::clock::time_point moved{};
    CHECK(next_load_move(moved, 1000, 0.02) == moved + 50s);  // the default share: 1 s of pause, 50 s to the next
    CHECK(next_load_move(moved, 800, 1) == moved + 800ms);
    CHECK(next_load_move(moved, 0, 0.02) == moved);  // nothing moved, nothing paused: no wait
    // Moves as early as the rule allows pause the run for share of the time between them.
    const auto next = next_load_move(moved, 1500, 0.1);
    CHECK(std::chrono::duration<double, std::milli>(next - moved).count() * 0.1 == Approx(1500));
}

TEST_CASE("a node without neurons is not judged: next to nothing per tick makes no other node slow") {
    fed_watch f(3, 1.15, 1000ms);
    f.watch.judge_only({true, true, false});
    for (int i = 0; i < 5; ++i) CHECK_FALSE(f.interval({1, 1, 0.01}));
    CHECK(f.watch.ms_per_tick().size() == 3);  // still shown
    CHECK_FALSE(f.interval({1, 2, 0.01}));
    CHECK(f.interval({1, 2, 0.01}));  // the nodes that hold neurons are still judged
    // Judged as before, the idle node would have made a re-balance due every wait.
    fed_watch every(3, 1.15, 1000ms);
    CHECK_FALSE(every.interval({1, 1, 0.01}));
    CHECK(every.interval({1, 1, 0.01}));
}

TEST_CASE("moves by load wait for the pauses' share, keep the loads they were made from, and end once stopped") {
    using clock = load_watch::clock;
    dnnc::node_server::load_moves moves;
    const auto t0 = clock::now();
    CHECK(moves.may_move(t0));
    CHECK(moves.at_last_move().empty());
    moves.moved({{"a", 1, 10, 2.0, 0.0}}, t0, 100, 0.02);  // 100 ms of pause: the next 5 s later
    CHECK_FALSE(moves.may_move(t0 + std::chrono::seconds(4)));
    CHECK(moves.may_move(t0 + std::chrono::seconds(5)));
    REQUIRE(moves.at_last_move().size() == 1);
    CHECK(moves.at_last_move()[0].id == "a");
    moves.stop();
    CHECK_FALSE(moves.may_move(t0 + std::chrono::hours(1)));
    moves = {};
    CHECK(moves.may_move(t0));
}
