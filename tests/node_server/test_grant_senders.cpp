// Window mode's clock transport: each node gets the clock's newest grant, a node that does
// not answer holds up none of the others and is granted again once it answers, and a
// request goes in order with the grants.
#include "lead/grant_senders.hpp"

#include "dnnc/core/error.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

using namespace dnnc;
using namespace dnnc::node_server;
using namespace std::chrono_literals;
using protocol::clock_request;

namespace {

// Two fake nodes: what each took (grants, and requests as -kind - 1), node 1 refusing
// while `down`.
struct fake_nodes {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::vector<std::int64_t>> taken{2};
    std::atomic<bool> down{false};
    protocol::clock_reply clock(std::size_t v, const clock_request& r) {
        if (v == 1 && down) throw error("node 1 stopped");
        std::lock_guard<std::mutex> lock(mutex);
        taken[v].push_back(r.what == clock_request::kind::grant ? r.grant : -static_cast<std::int64_t>(r.what) - 1);
        changed.notify_all();
        return {r.grant, r.grant};
    }
    // Waits until node v's last taken grant is `tick`.
    bool wait_for(std::size_t v, std::int64_t tick) {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, 5s, [&] { return !taken[v].empty() && taken[v].back() == tick; });
    }
};

}  // namespace

TEST_CASE("grant senders give every node the newest grant, ascending") {
    fake_nodes nodes;
    grant_senders grants(2, [&](std::size_t v, clock_request r) { return nodes.clock(v, r); });
    for (std::int64_t t = 0; t < 100; ++t) grants.grant(t);
    REQUIRE(nodes.wait_for(0, 99));
    REQUIRE(nodes.wait_for(1, 99));
    std::lock_guard<std::mutex> lock(nodes.mutex);
    for (const auto& taken : nodes.taken) CHECK(std::is_sorted(taken.begin(), taken.end()));  // superseded, never reordered
}

TEST_CASE("grant senders go on without a node that does not answer, and grant it again when it does") {
    fake_nodes nodes;
    nodes.down = true;
    grant_senders grants(2, [&](std::size_t v, clock_request r) { return nodes.clock(v, r); });
    grants.grant(5);
    REQUIRE(nodes.wait_for(0, 5));
    grants.grant(9);
    REQUIRE(nodes.wait_for(0, 9));
    {
        std::lock_guard<std::mutex> lock(nodes.mutex);
        CHECK(nodes.taken[1].empty());
    }
    nodes.down = false;
    REQUIRE(nodes.wait_for(1, 9));  // the newest grant, after a pause
}

TEST_CASE("grant senders pass a request on in order with the grants, and its failure to the caller") {
    fake_nodes nodes;
    grant_senders grants(2, [&](std::size_t v, clock_request r) { return nodes.clock(v, r); });
    grants.grant(3);
    REQUIRE(nodes.wait_for(0, 3));
    grants.request(0, clock_request{clock_request::kind::hold, 0, {}});
    {
        std::lock_guard<std::mutex> lock(nodes.mutex);
        CHECK(nodes.taken[0].back() == -static_cast<std::int64_t>(clock_request::kind::hold) - 1);
    }
    REQUIRE(nodes.wait_for(1, 3));
    nodes.down = true;
    CHECK_THROWS_AS(grants.request(1, clock_request{clock_request::kind::ask, 0, {}}), error);
}
