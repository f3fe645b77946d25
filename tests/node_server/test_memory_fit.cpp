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

// Drawn weights and delays cost what an engine holds of them (docs/simulation.md, memory
// layout): 4 bytes of source slot and delay, 8 of compact fan-out entry with the weight, about
// 1.5 while building; 2 fewer with half weights. The full-scale microcircuit on one node.
TEST_CASE("a share of drawn weights and delays is counted at the bytes an engine holds of it") {
    auto doc = protocol::load_document(std::string(DNNC_SOURCE_DIR) + "/examples/microcircuit/microcircuit.xml");
    doc.clu = model::cluster{"c", {{"n0", "127.0.0.1", 0, 1, {}}}, {}, {}};
    auto fits = [&](double bytes_per_synapse) {
        const auto plan = plan::plan_network(doc);
        const auto synapses = plan::loads_of(plan).at(0).synapses;
        REQUIRE(synapses > 2.9e8);
        std::vector<std::optional<protocol::node_status>> statuses{protocol::node_status{}};
        statuses[0]->memory = {64 * gib, static_cast<std::uint64_t>(bytes_per_synapse * synapses), 0};
        try {
            check_memory_fit(plan, statuses, false);
            return true;
        } catch (const usage_error&) {
            return false;
        }
    };
    CHECK(fits(13.6));  // the engine peaks at 13.1 (BENCHMARKS.md); 23 were counted before
    CHECK_FALSE(fits(13.4));
    doc.run->half_weights = true;
    CHECK(fits(11.6));
    CHECK_FALSE(fits(11.4));
    doc.net->projections.front().synapse_model = "stdp_synapse";  // a rule changes weights: 12-byte entries, weights in the rows
    CHECK_FALSE(fits(19.4));
    CHECK(fits(19.6));
}
