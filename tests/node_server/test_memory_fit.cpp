// A planned network against the memory its nodes report: a node past its own limit, or the
// nodes of one machine past what it has, refuse the network with a clear error; what the
// networks being replaced hold counts as free.
#include "lead/memory_fit.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

using namespace dnnc;
using namespace dnnc::node_server;
using Catch::Matchers::Contains;

namespace {

constexpr std::uint64_t gib = std::uint64_t{1} << 30;

// Brunel's small network on three local nodes, each saying it may use `limit` and that the
// machine has `available`, its current network holding `network`.
struct brunel_on_three {
    plan::network_plan plan = plan::plan_network(protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/brunel/brunel_small.xml"));
    std::vector<std::optional<protocol::node_status>> statuses;
    brunel_on_three(std::uint64_t available, std::uint64_t limit, std::uint64_t network = 0) {
        for (int v = 0; v < 3; ++v) {
            auto& s = statuses.emplace_back(protocol::node_status{});
            s->memory = {available, limit, network};
        }
    }
};

}  // namespace

TEST_CASE("a network that fits its nodes' memory passes") {
    brunel_on_three ample(16 * gib, 0);
    CHECK_NOTHROW(check_memory_fit(ample.plan, ample.statuses, false));
    brunel_on_three unsaid(0, 0);  // a machine that does not say what it has
    CHECK_NOTHROW(check_memory_fit(unsaid.plan, unsaid.statuses, false));
}

TEST_CASE("a node's own memory limit refuses a share past it, naming the node") {
    brunel_on_three tight(16 * gib, 16 * gib);
    tight.statuses[1]->memory.limit = 1024;
    CHECK_THROWS_WITH(check_memory_fit(tight.plan, tight.statuses, false), Contains("node n1 would hold about") && Contains("--memory-limit"));
    tight.statuses[1].reset();  // a node that did not answer is not judged here
    CHECK_NOTHROW(check_memory_fit(tight.plan, tight.statuses, false));
}

TEST_CASE("the nodes of one machine together must fit what it has, counting what a replaced network frees") {
    brunel_on_three small(1024, 0, 16 * gib);
    CHECK_THROWS_AS(check_memory_fit(small.plan, small.statuses, false), usage_error);
    CHECK_THROWS_WITH(check_memory_fit(small.plan, small.statuses, false), Contains("nodes n0, n1, n2 on this machine"));
    CHECK_NOTHROW(check_memory_fit(small.plan, small.statuses, true));  // replacing frees what they hold
}
