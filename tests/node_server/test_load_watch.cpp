// The lead's watch over the nodes' compute time per tick (load_watch.hpp): the times per
// tick over each interval, a re-balance due only when the slowest node stays above the
// threshold for the whole wait, once, and no judgement over an interval in which a node
// did not tick.
#include "load_watch.hpp"

#include <catch2/catch.hpp>

using dnnc::node_server::load_watch;
using namespace std::chrono_literals;

namespace {
// Each interval of 500 ms, node v computes 100 ticks in ms[v] x 100 ms.
struct fed_watch {
    load_watch watch;
    load_watch::clock::time_point t;
    std::vector<std::int64_t> ns, ticks;
    fed_watch(std::size_t nodes, double threshold, std::chrono::milliseconds after)
        : watch(nodes, threshold, after, 500ms, load_watch::clock::time_point{}), t{}, ns(nodes, 0), ticks(nodes, -1) {}
    std::optional<std::vector<double>> interval(const std::vector<double>& ms) {
        t += 500ms;
        for (std::size_t v = 0; v < ms.size(); ++v) {
            ns[v] += static_cast<std::int64_t>(ms[v] * 100 * 1e6);
            ticks[v] += 100;
            watch.report(v, ns[v], ticks[v]);
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
    CHECK((*due)[2] == Approx(2.0));
    CHECK((*due)[0] == Approx(1.0));
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
    f.watch.report(0, f.ns[0], f.ticks[0]);
    CHECK_FALSE(f.watch.due(f.t + 100ms));
    CHECK(f.watch.ms_per_tick()[1] == Approx(3.0));
}
